// The one model loader: Session::Open, the C API, the Python binding, the CLI
// and the profiling library all come through here.
//
//   ASSIGN_OR_RETURN(braid::LoadedGraph raw, braid::LoadGraph("m.onnx"));      // as imported
//   ASSIGN_OR_RETURN(braid::Graph g, braid::LoadGraphForExecution("m.onnx")); // passes + annotations
//
// A model is "builtin:NAME" (models/builtin.h), a .braid file (recognised by
// its leading bytes, not its extension) or an ONNX file. It lives above
// runtime/ (which runs the Graph it is given and never names a model), so
// "builtin:" names resolve here and the runtime does not link the model zoo.
#ifndef BRAID_API_MODEL_LOADER_H_
#define BRAID_API_MODEL_LOADER_H_

#include <string>

#include "graph/ir.h"

namespace braid {

enum class ModelSource { kOnnx, kBraid, kBuiltin };

struct LoadedGraph {
  Graph graph;
  ModelSource source = ModelSource::kOnnx;
};

struct LoadGraphOptions {
  // False keeps unsupported ONNX ops in the graph (for `braid inspect`).
  bool reject_unsupported_ops = true;
};

// The graph as stored or imported: no passes run.
StatusOr<LoadedGraph> LoadGraph(const std::string& model,
                                const LoadGraphOptions& options = {});

// The graph ready to plan: ONNX and built-in graphs go through
// RunDefaultPasses (fuse: BN folding and activation fusion) and Annotate;
// a .braid file was converted already and is used as stored.
StatusOr<Graph> LoadGraphForExecution(const std::string& model, bool fuse = true);

}  // namespace braid

#endif  // BRAID_API_MODEL_LOADER_H_
