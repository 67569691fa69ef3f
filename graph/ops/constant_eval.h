// Internal to braid_graph: small reference evaluators used by constant
// folding (graph/passes/fold_constants.cc). The graph layer cannot use
// kernels/, so these are plain loops over constant tensors.
#ifndef BRAID_GRAPH_OPS_CONSTANT_EVAL_H_
#define BRAID_GRAPH_OPS_CONSTANT_EVAL_H_

#include <cstddef>
#include <vector>

#include "graph/ir.h"

namespace braid {

// Default cap on the bytes one folded node may produce, so that folding never
// duplicates large weights.
inline constexpr size_t kMaxFoldedBytes = size_t{16} << 20;

// FoldConstants with an explicit output size cap.
Status FoldConstants(Graph& graph, size_t max_output_bytes);

namespace ops {

// True when EvaluateConstantNode covers `op_type`.
bool CanEvaluateConstant(const std::string& op_type);

// Computes the outputs of `node` whose present inputs are all constants. The
// output values must already carry their inferred static shapes and dtypes.
// Returns one TensorData per node output (empty for omitted outputs), or
// UNIMPLEMENTED when the op/dtype combination is not covered.
StatusOr<std::vector<TensorData>> EvaluateConstantNode(const Graph& graph,
                                                       const Node& node);

}  // namespace ops
}  // namespace braid

#endif  // BRAID_GRAPH_OPS_CONSTANT_EVAL_H_
