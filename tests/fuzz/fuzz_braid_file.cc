// The .braid loader on arbitrary bytes: a clean error or a graph that
// validates and whose shapes infer (the loader's semantic checks promise it).
#include <cstddef>
#include <cstdint>

#include "graph/braid_format.h"
#include "graph/passes/passes.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  braid::StatusOr<braid::Graph> graph = braid::LoadBraidBytes(data, size);
  if (!graph.ok()) return 0;
  braid::fuzz::Require(graph->Validate(), "a loaded .braid graph validates");
  // Shape inference may refuse a graph the loader accepted (an op's
  // attributes out of range): an error is fine, a crash is not.
  (void)braid::InferShapes(*graph);
  return 0;
}
