// FoldBatchNorm: Conv/Gemm -> BatchNormalization (inference form) becomes one
// Conv/Gemm with rescaled constants:
//
//   s[c]  = scale[c] / sqrt(var[c] + epsilon)
//   W'    = W * s[c]                    (every weight of output channel c)
//   bias' = (bias - mean[c]) * s[c] + B[c]
//
// Conditions: the BN parameters and the weight (and bias, if any) are f32
// constants, the Conv/Gemm output is read only by the BN and is not a graph
// output, and the producer carries no fused activation yet. W' and bias' are
// new constant values; the old weight stays for any other node sharing it.
// The folded node takes over the BN's output value, so its name survives.
#include <string>
#include <vector>

#include "graph/passes/passes.h"
#include "graph/passes/pattern_util.h"

namespace braid {
namespace {

using pass_util::BatchNormParams;
using pass_util::ReadBatchNorm;

// Tries to fold BN node `bn_id`; returns true when the graph was rewritten.
bool TryFold(Graph& graph, NodeId bn_id, const pass_util::GraphUses& uses,
             pass_util::NameAllocator& names, std::vector<bool>& remove) {
  const Node& bn = graph.node(bn_id);
  if (bn.inputs.empty() || bn.outputs.empty() || bn.outputs[0] == kNoValue)
    return false;
  const ValueId x = bn.inputs[0];
  if (x == kNoValue || uses.OnlyReader(x) != bn_id) return false;
  const NodeId producer_id = graph.value(x).producer;
  if (producer_id == kNoNode || remove[producer_id]) return false;
  const Node& producer = graph.node(producer_id);
  if (producer.op_type != "Conv" && producer.op_type != "Gemm") return false;
  if (producer.outputs.size() != 1 || producer.outputs[0] != x) return false;

  const std::optional<int64_t> channels = pass_util::OutputChannels(graph, producer);
  if (!channels) return false;
  std::optional<BatchNormParams> params = ReadBatchNorm(graph, bn, *channels, uses);
  if (!params) return false;
  std::vector<double> shift(params->multiplier.size());
  for (size_t c = 0; c < shift.size(); ++c)
    shift[c] = params->bias[c] - params->mean[c] * params->multiplier[c];
  if (!pass_util::FoldChannelAffine(graph, producer_id, params->multiplier, shift, bn.outputs[0],
                                    "_W_bn", names))
    return false;
  remove[bn_id] = true;
  return true;
}

}  // namespace

Status FoldBatchNorm(Graph& graph) {
  RETURN_IF_ERROR(graph.Validate().WithPrefix("FoldBatchNorm"));
  // Each fold touches only its own private Conv->BN pair (the Conv output has
  // the BN as sole reader), so one readers table serves the whole sweep.
  const pass_util::GraphUses uses(graph);
  pass_util::NameAllocator names(graph);
  std::vector<bool> remove(static_cast<size_t>(graph.num_nodes()), false);
  for (NodeId id = 0; id < graph.num_nodes(); ++id)
    if (graph.node(id).op_type == "BatchNormalization")
      TryFold(graph, id, uses, names, remove);
  graph.RemoveNodes(remove);
  return pass_util::FinishPass(graph, "FoldBatchNorm");
}

}  // namespace braid
