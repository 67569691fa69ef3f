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
#include <cmath>
#include <string>
#include <vector>

#include "graph/passes/passes.h"
#include "graph/passes/pattern_util.h"

namespace braid {
namespace {

using pass_util::BatchNormParams;
using pass_util::InputOrNone;
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
  const bool is_conv = producer.op_type == "Conv";
  if (!is_conv && producer.op_type != "Gemm") return false;
  if (producer.outputs.size() != 1 || producer.outputs[0] != x) return false;
  if (producer.attrs.Has("activation")) return false;  // BN would follow it

  const ValueId w = InputOrNone(producer, 1);
  std::optional<std::vector<int64_t>> w_dims =
      pass_util::ConstantF32Dims(graph, w);
  std::optional<std::vector<double>> weights =
      pass_util::ReadConstantF32(graph, w);
  std::optional<pass_util::LinearBias> bias =
      pass_util::ReadLinearBias(graph, producer);
  if (!w_dims || !weights || !bias) return false;
  const int64_t channels = bias->channels;
  std::optional<BatchNormParams> params = ReadBatchNorm(graph, bn, channels, uses);
  if (!params) return false;

  // Weight element i belongs to output channel i / per_channel, except for
  // Gemm with transB=0 ([K,M]) where it is i % M.
  const bool channel_last =
      !is_conv && producer.attrs.GetInt("transB", 0) == 0;
  const size_t per_channel = weights->size() / static_cast<size_t>(channels);
  for (size_t i = 0; i < weights->size(); ++i) {
    const size_t c = channel_last ? i % static_cast<size_t>(channels)
                                  : i / per_channel;
    (*weights)[i] *= params->multiplier[c];
  }
  for (size_t i = 0; i < bias->values.size(); ++i) {
    const size_t c = i % static_cast<size_t>(channels);
    bias->values[i] = (bias->values[i] - params->mean[c]) *
                          params->multiplier[c] +
                      params->bias[c];
  }

  const ValueId y = bn.outputs[0];
  const std::string base = producer.name.empty() ? graph.value(w).name
                                                  : producer.name;
  const ValueId new_w =
      pass_util::AddF32Constant(graph, names, base + "_W_bn", *w_dims, *weights);
  pass_util::WriteLinearBias(graph, producer_id, *bias, names);
  Node& folded = graph.node(producer_id);
  folded.inputs[1] = new_w;
  folded.outputs[0] = y;
  graph.value(y).producer = producer_id;
  pass_util::AdoptShapeIfMissing(graph, y, x);
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
