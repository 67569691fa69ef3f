#include "api/model_loader.h"

#include <fstream>

#include "graph/annotate.h"
#include "graph/braid_format.h"
#include "graph/onnx_importer.h"
#include "graph/passes/passes.h"
#include "models/builtin.h"

namespace braid {
namespace {

// The first bytes of a file, to tell .braid from .onnx by content.
StatusOr<std::string> ReadPrefix(const std::string& path, size_t n) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot open file");
  std::string buf(n, '\0');
  in.read(buf.data(), static_cast<std::streamsize>(n));
  buf.resize(static_cast<size_t>(in.gcount()));
  return buf;
}

}  // namespace

StatusOr<LoadedGraph> LoadGraph(const std::string& model,
                                const LoadGraphOptions& options) {
  LoadedGraph loaded;
  if (model.rfind(kBuiltinPrefix, 0) == 0) {
    ASSIGN_OR_RETURN(loaded.graph,
                     BuildBuiltinModel(model.substr(sizeof(kBuiltinPrefix) - 1)));
    loaded.source = ModelSource::kBuiltin;
    return loaded;
  }
  ASSIGN_OR_RETURN(std::string prefix, ReadPrefix(model, 16));
  if (LooksLikeBraid(prefix.data(), prefix.size())) {
    ASSIGN_OR_RETURN(loaded.graph, LoadBraidFile(model));
    loaded.source = ModelSource::kBraid;
    return loaded;
  }
  OnnxImportOptions onnx_options;
  onnx_options.reject_unsupported_ops = options.reject_unsupported_ops;
  ASSIGN_OR_RETURN(loaded.graph, ImportOnnxFile(model, onnx_options));
  loaded.source = ModelSource::kOnnx;
  return loaded;
}

StatusOr<Graph> LoadGraphForExecution(const std::string& model, bool fuse) {
  ASSIGN_OR_RETURN(LoadedGraph loaded, LoadGraph(model));
  if (loaded.source != ModelSource::kBraid) {
    PassOptions passes;
    passes.fuse = fuse;
    RETURN_IF_ERROR(RunDefaultPasses(loaded.graph, passes).WithPrefix(model));
    RETURN_IF_ERROR(Annotate(loaded.graph).WithPrefix(model));
  }
  return std::move(loaded.graph);
}

}  // namespace braid
