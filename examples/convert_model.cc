// Converts a model to .braid with braid's graph API and prints its five most
// expensive nodes: what `braid convert` + `braid inspect` do, in one page.
//
//   build/examples/convert_model builtin:resnet18 /tmp/resnet18.braid
//   build/examples/convert_model model.onnx model.braid
#include <algorithm>
#include <cstdio>
#include <string>

#include "graph/annotate.h"
#include "graph/braid_format.h"
#include "graph/onnx_importer.h"
#include "graph/passes/passes.h"
#include "models/builtin.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s MODEL.onnx|builtin:NAME OUT.braid\n", argv[0]);
    return 2;
  }
  const std::string in = argv[1];
  const std::string out = argv[2];

  // 1. Import: an ONNX file, or a reference architecture built in code.
  const std::string prefix = braid::kBuiltinPrefix;
  braid::StatusOr<braid::Graph> graph =
      in.rfind(prefix, 0) == 0 ? braid::BuildBuiltinModel(in.substr(prefix.size()))
                               : braid::ImportOnnxFile(in);
  if (!graph.ok()) {
    std::fprintf(stderr, "%s\n", graph.status().ToString().c_str());
    return 2;
  }

  // 2. Shapes, constant folding, BatchNorm folding, bias + activation fusion.
  if (braid::Status s = braid::RunDefaultPasses(*graph); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 2;
  }

  // 3. FLOPs, bytes moved, intensity and weight sparsity per node.
  if (braid::Status s = braid::Annotate(*graph); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 2;
  }

  // 4. Write the .braid file and map it back (weights are used in place).
  if (braid::Status s = braid::SaveBraidFile(*graph, out); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  braid::StatusOr<braid::Graph> loaded = braid::LoadBraidFile(out);
  if (!loaded.ok()) {
    std::fprintf(stderr, "%s\n", loaded.status().ToString().c_str());
    return 1;
  }

  // 5. The five nodes with the most FLOPs.
  std::vector<const braid::Node*> nodes;
  for (const braid::Node& n : loaded->nodes()) nodes.push_back(&n);
  std::sort(nodes.begin(), nodes.end(), [](const braid::Node* a, const braid::Node* b) {
    return a->annotation.flops > b->annotation.flops;
  });
  const braid::ModelTotals totals = braid::ComputeTotals(*loaded);
  std::printf("%s: %d nodes, %.3f GFLOPs, %.2f M params\n", out.c_str(), totals.nodes,
              totals.flops / 1e9, totals.params / 1e6);
  for (size_t i = 0; i < std::min<size_t>(5, nodes.size()); ++i) {
    const braid::Annotation& a = nodes[i]->annotation;
    std::printf("  %-12s %-40s %8.4f GFLOPs %7.2f FLOP/B\n", nodes[i]->op_type.c_str(),
                nodes[i]->name.c_str(), a.flops / 1e9, a.intensity);
  }
  return 0;
}
