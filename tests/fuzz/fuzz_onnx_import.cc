// The ONNX importer on arbitrary bytes, then the conversion passes on what it
// accepts: clean errors or a valid graph, never a crash.
#include <cstddef>
#include <cstdint>

#include "graph/onnx_importer.h"
#include "graph/passes/passes.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  braid::StatusOr<braid::Graph> graph = braid::ImportOnnxBytes(data, size, "fuzz.onnx");
  if (!graph.ok()) return 0;
  braid::fuzz::Require(graph->Validate(), "an imported graph validates");
  if (braid::RunDefaultPasses(*graph).ok())
    braid::fuzz::Require(graph->Validate(), "a converted graph validates");
  return 0;
}
