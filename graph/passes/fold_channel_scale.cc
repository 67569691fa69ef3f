// FoldChannelScale: Conv / Gemm -> Mul (or Div) by a constant that scales
// each output channel becomes one Conv / Gemm with scaled weights and bias:
//
//   y = (W x + b) * s[c]   ->   W' = W * s[c], b' = b * s[c]
//
// The layer scale of PoolFormer, FastViT, EfficientFormer and CaiT-style
// blocks (x + gamma * fc2(...)) is such a Mul. The constant must broadcast
// over the output channel axis only (pass_util::ChannelConstant: one
// element, [1,M,1,1] / [M,1,1] after a Conv, [M] / [1,M] after a Gemm); a
// Div's divisor must have no zero. The Conv / Gemm output must be read by the
// Mul alone, not be a graph output, and carry no fused activation. The folded
// node takes over the Mul's output value.
#include <optional>
#include <vector>

#include "graph/passes/passes.h"
#include "graph/passes/pattern_util.h"

namespace braid {
namespace {

bool TryFold(Graph& graph, NodeId mul_id, const pass_util::GraphUses& uses,
             pass_util::NameAllocator& names, std::vector<bool>& remove) {
  const Node& mul = graph.node(mul_id);
  const bool divide = mul.op_type == "Div";
  if (mul.inputs.size() != 2 || mul.outputs.size() != 1 || mul.outputs[0] == kNoValue)
    return false;
  // Div scales only when the constant is the divisor.
  for (size_t k = 0; k < (divide ? 1u : 2u); ++k) {
    const ValueId x = mul.inputs[k];
    const ValueId scale = mul.inputs[1 - k];
    if (x == kNoValue || scale == kNoValue || uses.OnlyReader(x) != mul_id) continue;
    const NodeId producer_id = graph.value(x).producer;
    if (producer_id == kNoNode || remove[producer_id]) continue;
    const Node& producer = graph.node(producer_id);
    if ((producer.op_type != "Conv" && producer.op_type != "Gemm") ||
        producer.outputs.size() != 1 || producer.outputs[0] != x)
      continue;
    const std::optional<int64_t> channels = pass_util::OutputChannels(graph, producer);
    if (!channels) continue;
    std::optional<std::vector<double>> s =
        pass_util::ChannelConstant(graph, producer, scale, *channels);
    if (!s) continue;
    if (divide) {
      bool zero = false;
      for (double& v : *s) {
        zero = zero || v == 0.0;
        v = 1.0 / v;
      }
      if (zero) continue;
    }
    const std::vector<double> shift(s->size(), 0.0);
    if (!pass_util::FoldChannelAffine(graph, producer_id, *s, shift, mul.outputs[0], "_W_scaled",
                                      names))
      continue;
    remove[mul_id] = true;
    return true;
  }
  return false;
}

}  // namespace

Status FoldChannelScale(Graph& graph) {
  RETURN_IF_ERROR(graph.Validate().WithPrefix("FoldChannelScale"));
  // Each fold rewires only its own private producer -> Mul pair.
  const pass_util::GraphUses uses(graph);
  pass_util::NameAllocator names(graph);
  std::vector<bool> remove(static_cast<size_t>(graph.num_nodes()), false);
  for (NodeId id = 0; id < graph.num_nodes(); ++id) {
    const std::string& op = graph.node(id).op_type;
    if (op == "Mul" || op == "Div") TryFold(graph, id, uses, names, remove);
  }
  graph.RemoveNodes(remove);
  return pass_util::FinishPass(graph, "FoldChannelScale");
}

}  // namespace braid
