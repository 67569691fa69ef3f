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
//
// Also MatMul(A, W) -> Flatten / Reshape to [rows, C] -> BatchNormalization
// (LeViT's Linear + BatchNorm1d: 48 BNs, a third of its CPU time): W's
// columns are scaled and the shift becomes an Add on the MatMul's output,
// before the reshape, which FuseMatMulBias then folds into a Gemm. Conditions:
// W a constant f32 [K, C], the reshape keeps the last axis (C) and yields a
// 2-D [rows, C], the reshape's output has the BN as its one reader, the
// MatMul's output is read by the reshape and Shape nodes alone, and neither
// is a graph output.
//
// And Concat(Conv_1, ..., Conv_k, axis 1) -> BatchNormalization (MixNet's
// mixed-kernel depthwise convs: 34 BNs after their Concat): each Conv takes
// its own slice of the BN's channels, and the Concat takes over the BN's
// output. Every Concat input must come from a distinct Conv read by the
// Concat alone, with no fused activation, no graph output among them.
#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "graph/passes/passes.h"
#include "graph/passes/pattern_util.h"

namespace braid {
namespace {

using pass_util::BatchNormParams;
using pass_util::ReadBatchNorm;

// The MatMul -> reshape -> BN form (file comment).
bool TryFoldMatMul(Graph& graph, NodeId bn_id, const pass_util::GraphUses& uses,
                   pass_util::NameAllocator& names, std::vector<bool>& remove) {
  const Node& bn = graph.node(bn_id);
  const ValueId flat = bn.inputs[0];
  const NodeId reshape_id = graph.value(flat).producer;
  if (reshape_id == kNoNode || remove[reshape_id]) return false;
  const Node& reshape = graph.node(reshape_id);
  if (reshape.op_type != "Flatten" && reshape.op_type != "Reshape") return false;
  if (reshape.outputs.size() != 1 || reshape.inputs.empty()) return false;
  const ValueId x = reshape.inputs[0];
  if (x == kNoValue || uses.IsGraphOutput(x)) return false;
  // Besides the reshape, only Shape may read x (the export's reshape back to
  // [N, T, C] takes its shape), which the rewrite leaves as it was.
  bool reshape_reads = false;
  for (NodeId reader : uses.Readers(x)) {
    if (reader == reshape_id) reshape_reads = true;
    else if (graph.node(reader).op_type != "Shape") return false;
  }
  if (!reshape_reads) return false;
  const NodeId matmul_id = graph.value(x).producer;
  if (matmul_id == kNoNode || remove[matmul_id]) return false;
  const Node& matmul = graph.node(matmul_id);
  if (matmul.op_type != "MatMul" || matmul.inputs.size() != 2 || matmul.outputs.size() != 1 ||
      !matmul.attrs.map().empty())
    return false;
  const ValueId w = matmul.inputs[1];
  const std::optional<std::vector<int64_t>> w_dims = pass_util::ConstantF32Dims(graph, w);
  if (!w_dims || w_dims->size() != 2) return false;
  const int64_t channels = (*w_dims)[1];
  // The reshape keeps the channel axis last: x [..., C] -> [rows, C].
  const Value& xv = graph.value(x);
  const Value& fv = graph.value(flat);
  if (!xv.has_shape || !fv.has_shape || xv.shape.empty() || fv.shape.size() != 2) return false;
  if (!xv.shape.back().is_static() || xv.shape.back().extent() != channels ||
      !fv.shape[1].is_static() || fv.shape[1].extent() != channels)
    return false;
  std::optional<BatchNormParams> params = ReadBatchNorm(graph, bn, channels, uses);
  if (!params) return false;
  std::optional<std::vector<double>> weights = pass_util::ReadConstantF32(graph, w);
  if (!weights) return false;
  for (size_t i = 0; i < weights->size(); ++i)
    (*weights)[i] *= params->multiplier[i % static_cast<size_t>(channels)];
  const std::string base = matmul.name.empty() ? graph.value(w).name : matmul.name;
  const ValueId new_w = pass_util::AddF32Constant(graph, names, base + "_W_bn", *w_dims, *weights);
  const ValueId bias = pass_util::AddF32Constant(graph, names, base + "_bn_shift", {channels},
                                                    params->shift);
  Value shifted_value;
  shifted_value.name = names.Make(graph.value(x).name + "_bn");
  shifted_value.dtype = DataType::kF32;
  const ValueId shifted = graph.AddValue(std::move(shifted_value));
  pass_util::AdoptShapeIfMissing(graph, shifted, x);
  const ValueId y = bn.outputs[0];
  const std::string pin = graph.node(matmul_id).device_pin;
  Node add;
  add.name = names.Make(bn.name.empty() ? base + "/bn" : bn.name);
  add.op_type = "Add";
  add.inputs = {x, bias};
  add.outputs = {shifted};
  add.device_pin = pin;
  graph.node(matmul_id).inputs[1] = new_w;
  // The Shape readers read the shifted value (same shape), so that x keeps
  // one reader and FuseMatMulBias can take the Add.
  for (NodeId reader : uses.Readers(x))
    if (reader != reshape_id)
      for (ValueId& in : graph.node(reader).inputs)
        if (in == x) in = shifted;
  Node& reshape_node = graph.node(reshape_id);
  reshape_node.inputs[0] = shifted;
  reshape_node.outputs[0] = y;
  graph.value(y).producer = reshape_id;
  graph.value(flat).producer = kNoNode;
  graph.AddNode(std::move(add));
  remove.push_back(false);
  remove[bn_id] = true;
  return true;
}

// The Concat-of-Convs form (file comment).
bool TryFoldConcat(Graph& graph, NodeId bn_id, const pass_util::GraphUses& uses,
                   pass_util::NameAllocator& names, std::vector<bool>& remove) {
  const Node& bn = graph.node(bn_id);
  const NodeId concat_id = graph.value(bn.inputs[0]).producer;
  const Node& concat = graph.node(concat_id);
  if (concat.outputs.size() != 1 || concat.inputs.size() < 2) return false;
  const ValueId out = concat.outputs[0];
  if (!graph.value(out).has_shape) return false;
  const int64_t rank = static_cast<int64_t>(graph.value(out).shape.size());
  int64_t axis = concat.attrs.GetInt("axis", 1);
  if (axis < 0) axis += rank;
  if (axis != 1 || rank < 3) return false;
  std::vector<NodeId> convs;
  std::vector<int64_t> widths;
  int64_t channels = 0;
  for (ValueId in : concat.inputs) {
    if (in == kNoValue || uses.OnlyReader(in) != concat_id) return false;
    const NodeId conv_id = graph.value(in).producer;
    if (conv_id == kNoNode || remove[conv_id]) return false;
    const Node& conv = graph.node(conv_id);
    if (conv.op_type != "Conv" || conv.outputs.size() != 1 || conv.attrs.Has("activation"))
      return false;
    if (std::find(convs.begin(), convs.end(), conv_id) != convs.end()) return false;
    const std::optional<int64_t> width = pass_util::OutputChannels(graph, conv);
    if (!width) return false;
    convs.push_back(conv_id);
    widths.push_back(*width);
    channels += *width;
  }
  std::optional<BatchNormParams> params = ReadBatchNorm(graph, bn, channels, uses);
  if (!params) return false;
  // Check every fold can happen before changing anything.
  for (NodeId conv_id : convs) {
    const Node& conv = graph.node(conv_id);
    const ValueId w = pass_util::InputOrNone(conv, 1);
    if (!pass_util::ReadLinearBias(graph, conv) || !pass_util::ConstantF32Dims(graph, w) ||
        !pass_util::ReadConstantF32(graph, w))
      return false;
  }
  const ValueId y = bn.outputs[0];
  const std::span<const double> multiplier(params->multiplier), shift(params->shift);
  size_t first = 0;
  for (size_t i = 0; i < convs.size(); ++i) {
    const auto width = static_cast<size_t>(widths[i]);
    const ValueId conv_out = graph.node(convs[i]).outputs[0];
    if (!pass_util::FoldChannelAffine(graph, convs[i], multiplier.subspan(first, width),
                                      shift.subspan(first, width), conv_out, "_W_bn", names))
      return false;  // not reached: checked above
    first += width;
  }
  graph.node(concat_id).outputs[0] = y;
  graph.value(y).producer = concat_id;
  graph.value(out).producer = kNoNode;
  remove[bn_id] = true;
  return true;
}

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
  if (producer.op_type == "Flatten" || producer.op_type == "Reshape")
    return TryFoldMatMul(graph, bn_id, uses, names, remove);
  if (producer.op_type == "Concat") return TryFoldConcat(graph, bn_id, uses, names, remove);
  if (producer.op_type != "Conv" && producer.op_type != "Gemm") return false;
  if (producer.outputs.size() != 1 || producer.outputs[0] != x) return false;

  const std::optional<int64_t> channels = pass_util::OutputChannels(graph, producer);
  if (!channels) return false;
  std::optional<BatchNormParams> params = ReadBatchNorm(graph, bn, *channels, uses);
  if (!params) return false;
  if (!pass_util::FoldChannelAffine(graph, producer_id, params->multiplier, params->shift,
                                    bn.outputs[0], "_W_bn", names))
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
