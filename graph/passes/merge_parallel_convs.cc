// MergeParallelConvs: the re-parameterizable blocks of RepVGG, MobileOne and
// FastViT, exported as parallel branches over one input summed by Adds,
// become one Conv (structural re-parameterization, done at load):
//
//   Add(ConvA(x), ConvB(x))       -> Conv(x, WA + centred WB, bA + bB)
//   Add(ConvA(x), BN(x))          -> Conv(x, WA + diag(s) at the centre,
//                                        bA + B - mean * s)
//   Add(Conv(x), x)               -> Conv(x, W + identity at the centre, b)
//   Add(branch, 0)                -> branch (a branch the block left out)
//
// and the same with Sub (the second operand negated: FastViT's RepMixer,
// x + gamma * (mixer(x) - norm(x)), merges with FoldChannelScale between two
// runs of this pass).
//
// where s = scale / sqrt(var + epsilon). Conditions: both branches read the
// same x and are read only by the Add; the Convs have constant f32 weights
// and biases, no fused activation, the same group, strides and output
// channels, dilations 1 and no auto_pad, and the smaller kernel sits
// centred in the larger one (each pad differs by half the kernel
// difference), so both compute the same output positions. A BN branch needs
// the Conv to map channel c to channel c (as many input as output channels,
// stride 1, an odd kernel padded to keep the size), and so does x itself. The Conv with the larger
// kernel keeps its name and takes over the Add's output value; chains of Adds
// merge one after another (a + b + c). Runs after FoldBatchNorm (each branch's
// own BN already folded) and before FuseActivations (the block's activation
// then fuses into the merged Conv).
#include <optional>
#include <string>
#include <vector>

#include "graph/passes/passes.h"
#include "graph/passes/pattern_util.h"

namespace braid {
namespace {

using pass_util::GraphUses;
using pass_util::InputOrNone;

// A Conv whose weights and bias are constants this pass can rewrite. The
// structure is read first; the constants (LoadConstants) only for a pair that
// merges, so a residual Add beside a Conv copies no weights.
struct ConvBranch {
  NodeId id = kNoNode;
  std::vector<int64_t> w_dims;  // [M, C/group, k...]
  std::vector<double> weights;  // after LoadConstants
  pass_util::LinearBias bias;   // after LoadConstants
  std::vector<int64_t> strides, pads;
  int64_t group = 1;
};

std::optional<ConvBranch> ReadConv(const Graph& graph, NodeId id) {
  const Node& conv = graph.node(id);
  if (conv.op_type != "Conv" || conv.outputs.size() != 1 || conv.inputs.size() < 2) return {};
  if (conv.attrs.Has("activation")) return {};
  // A merged conv has one precision: convs already marked (a .braid
  // converted again) stay as they are.
  if (conv.attrs.Has("precision")) return {};
  const std::string auto_pad = conv.attrs.GetString("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "") return {};
  ConvBranch b;
  b.id = id;
  std::optional<std::vector<int64_t>> dims = pass_util::ConstantF32Dims(graph, conv.inputs[1]);
  if (!dims || dims->size() < 3) return {};
  const size_t spatial = dims->size() - 2;
  b.w_dims = std::move(*dims);
  b.group = conv.attrs.GetInt("group", 1);
  b.strides = conv.attrs.GetInts("strides", std::vector<int64_t>(spatial, 1));
  b.pads = conv.attrs.GetInts("pads", std::vector<int64_t>(2 * spatial, 0));
  for (int64_t d : conv.attrs.GetInts("dilations", std::vector<int64_t>(spatial, 1)))
    if (d != 1) return {};
  if (b.strides.size() != spatial || b.pads.size() != 2 * spatial) return {};
  return b;
}

// Reads the weights and the bias of `b`; false when they are not constants
// this pass can rewrite.
bool LoadConstants(const Graph& graph, ConvBranch& b) {
  const Node& conv = graph.node(b.id);
  std::optional<std::vector<double>> weights = pass_util::ReadConstantF32(graph, conv.inputs[1]);
  std::optional<pass_util::LinearBias> bias = pass_util::ReadLinearBias(graph, conv);
  if (!weights || !bias) return false;
  b.weights = std::move(*weights);
  b.bias = std::move(*bias);
  return true;
}

bool IsZeroScalar(const Graph& graph, ValueId v) {
  std::optional<std::vector<int64_t>> dims = pass_util::ConstantF32Dims(graph, v);
  if (!dims || dims->size() > 1 || (dims->size() == 1 && (*dims)[0] != 1)) return false;
  std::optional<std::vector<double>> values = pass_util::ReadConstantF32(graph, v);
  return values && values->size() == 1 && (*values)[0] == 0.0;
}

// Offset of `small`'s kernel inside `big`'s per spatial axis, when `small`
// is centred in `big` with matching pads; nullopt otherwise.
std::optional<std::vector<int64_t>> CentredOffset(const ConvBranch& big, const ConvBranch& small) {
  const size_t spatial = big.w_dims.size() - 2;
  std::vector<int64_t> offset(spatial);
  for (size_t a = 0; a < spatial; ++a) {
    const int64_t diff = big.w_dims[2 + a] - small.w_dims[2 + a];
    if (diff < 0 || diff % 2 != 0) return std::nullopt;
    offset[a] = diff / 2;
    if (big.pads[a] - small.pads[a] != offset[a] ||
        big.pads[spatial + a] - small.pads[spatial + a] != offset[a])
      return std::nullopt;
  }
  return offset;
}

void Negate(ConvBranch& conv) {
  for (double& w : conv.weights) w = -w;
  for (double& b : conv.bias.values) b = -b;
}

// Adds `sign` x `small`'s weights into `big`'s at `offset` (same [M, C/group]
// dims), and its bias.
void AddCentred(ConvBranch& big, const ConvBranch& small, const std::vector<int64_t>& offset,
                double sign) {
  const size_t spatial = offset.size();
  const int64_t outer = big.w_dims[0] * big.w_dims[1];
  int64_t small_inner = 1, big_inner = 1;
  for (size_t a = 0; a < spatial; ++a) {
    small_inner *= small.w_dims[2 + a];
    big_inner *= big.w_dims[2 + a];
  }
  std::vector<int64_t> index(spatial);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < small_inner; ++i) {
      int64_t rest = i, big_pos = 0;
      for (size_t a = spatial; a-- > 0;) {
        index[a] = rest % small.w_dims[2 + a];
        rest /= small.w_dims[2 + a];
      }
      for (size_t a = 0; a < spatial; ++a)
        big_pos = big_pos * big.w_dims[2 + a] + index[a] + offset[a];
      big.weights[static_cast<size_t>(o * big_inner + big_pos)] +=
          sign * small.weights[static_cast<size_t>(o * small_inner + i)];
    }
  }
  for (size_t c = 0; c < big.bias.values.size(); ++c)
    big.bias.values[c] += sign * small.bias.values[c];
}

// Adds `sign` x BN(x) into `conv` as a centre tap from channel c to channel
// c (the identity x is a BN with multiplier 1 and no shift).
bool AddBatchNorm(ConvBranch& conv, const pass_util::BatchNormParams& bn, double sign) {
  const size_t spatial = conv.w_dims.size() - 2;
  const int64_t out_channels = conv.w_dims[0];
  const int64_t per_group = conv.w_dims[1];  // input channels per group
  if (out_channels != per_group * conv.group) return false;  // as many in as out
  int64_t inner = 1, centre = 0;
  for (size_t a = 0; a < spatial; ++a) {
    const int64_t k = conv.w_dims[2 + a];
    if (k % 2 == 0 || conv.strides[a] != 1 || conv.pads[a] != k / 2 ||
        conv.pads[spatial + a] != k / 2)
      return false;
    inner *= k;
    centre = centre * k + k / 2;
  }
  for (int64_t c = 0; c < out_channels; ++c) {
    const size_t i = static_cast<size_t>((c * per_group + c % per_group) * inner + centre);
    const size_t k = static_cast<size_t>(c);
    conv.weights[i] += sign * bn.multiplier[k];
    conv.bias.values[k] += sign * bn.shift[k];
  }
  return true;
}

// The producer of `v` when `v` is read by `add_id` alone and it is not gone.
NodeId PrivateProducer(const Graph& graph, const GraphUses& uses, ValueId v, NodeId add_id,
                       const std::vector<bool>& remove) {
  if (v == kNoValue || uses.OnlyReader(v) != add_id) return kNoNode;
  const NodeId p = graph.value(v).producer;
  return p == kNoNode || remove[p] ? kNoNode : p;
}

// Merges the branches of Add `add_id`; true when the graph was rewritten.
bool TryMerge(Graph& graph, NodeId add_id, const GraphUses& uses,
              pass_util::NameAllocator& names, std::vector<bool>& remove) {
  const Node& add = graph.node(add_id);
  if (add.inputs.size() != 2 || add.outputs.size() != 1 || add.outputs[0] == kNoValue) return false;
  if (add.attrs.Has("activation")) return false;
  const ValueId sum = add.outputs[0];
  // Add(branch, 0) or Sub(branch, 0): the branch takes over the sum.
  for (int k = 0; k < (add.op_type == "Sub" ? 1 : 2); ++k) {
    if (!IsZeroScalar(graph, add.inputs[static_cast<size_t>(1 - k)])) continue;
    const ValueId kept = add.inputs[static_cast<size_t>(k)];
    const NodeId p = PrivateProducer(graph, uses, kept, add_id, remove);
    if (p == kNoNode || graph.node(p).outputs.empty() || graph.node(p).outputs[0] != kept)
      return false;
    const std::string& op = graph.node(p).op_type;
    if (op != "Conv" && op != "BatchNormalization") return false;
    if (!graph.value(kept).has_shape || !graph.value(sum).has_shape ||
        graph.value(kept).shape != graph.value(sum).shape || graph.value(kept).dtype != DataType::kF32)
      return false;
    graph.node(p).outputs[0] = sum;
    graph.value(sum).producer = p;
    remove[add_id] = true;
    return true;
  }
  // Sub(a, b) = a + (-1) b.
  const double sign[2] = {1.0, add.op_type == "Sub" ? -1.0 : 1.0};
  NodeId branch[2];
  for (size_t k = 0; k < 2; ++k)
    branch[k] = PrivateProducer(graph, uses, add.inputs[k], add_id, remove);
  // Which operand is a Conv to merge into (the larger kernel for two Convs).
  std::optional<ConvBranch> conv[2];
  for (size_t k = 0; k < 2; ++k)
    if (branch[k] != kNoNode && graph.node(branch[k]).outputs[0] == add.inputs[k])
      conv[k] = ReadConv(graph, branch[k]);
  size_t anchor = 2;
  std::optional<std::vector<int64_t>> offset;
  if (conv[0] && conv[1]) {
    const ConvBranch& a = *conv[0];
    const ConvBranch& b = *conv[1];
    if (branch[0] == branch[1] || graph.node(a.id).inputs[0] != graph.node(b.id).inputs[0] ||
        a.group != b.group || a.strides != b.strides || a.w_dims.size() != b.w_dims.size() ||
        a.w_dims[0] != b.w_dims[0] || a.w_dims[1] != b.w_dims[1])
      return false;
    offset = CentredOffset(a, b);
    anchor = 0;
    if (!offset) {
      offset = CentredOffset(b, a);
      anchor = 1;
    }
    if (!offset) return false;
  } else if (conv[0] || conv[1]) {
    anchor = conv[0] ? 0 : 1;
  } else {
    return false;
  }
  const size_t k_other = 1 - anchor;
  if (!LoadConstants(graph, *conv[anchor]) || (offset && !LoadConstants(graph, *conv[k_other])))
    return false;
  ConvBranch merged = std::move(*conv[anchor]);
  const ValueId x = graph.node(merged.id).inputs[0];
  if (sign[anchor] < 0) Negate(merged);
  NodeId other = kNoNode;  // removed with the Add
  if (offset) {
    AddCentred(merged, *conv[k_other], *offset, sign[k_other]);
    other = branch[k_other];
  } else if (add.inputs[k_other] == x) {
    // The block's identity branch: x itself.
    pass_util::BatchNormParams identity;
    identity.multiplier.assign(static_cast<size_t>(merged.w_dims[0]), 1.0);
    identity.shift.assign(identity.multiplier.size(), 0.0);
    if (!AddBatchNorm(merged, identity, sign[k_other])) return false;
  } else {
    other = branch[k_other];
    if (other == kNoNode) return false;
    const Node& bn = graph.node(other);
    if (bn.op_type != "BatchNormalization" || bn.inputs.empty() || bn.inputs[0] != x ||
        bn.outputs[0] != add.inputs[k_other])
      return false;
    std::optional<pass_util::BatchNormParams> params =
        pass_util::ReadBatchNorm(graph, bn, merged.w_dims[0], uses);
    if (!params || !AddBatchNorm(merged, *params, sign[k_other])) return false;
  }
  const ValueId w = pass_util::AddF32Constant(graph, names, graph.node(merged.id).name + "_W_merged",
                                              merged.w_dims, merged.weights);
  pass_util::WriteLinearBias(graph, merged.id, merged.bias, names);
  Node& node = graph.node(merged.id);
  const ValueId produced = node.outputs[0];
  node.inputs[1] = w;
  node.outputs[0] = sum;
  graph.value(sum).producer = merged.id;
  pass_util::AdoptShapeIfMissing(graph, sum, produced);
  if (other != kNoNode) remove[other] = true;
  remove[add_id] = true;
  return true;
}

}  // namespace

Status MergeParallelConvs(Graph& graph) {
  RETURN_IF_ERROR(graph.Validate().WithPrefix("MergeParallelConvs"));
  // Nodes are in topological order, so an inner Add of a chain merges before
  // the outer one reads its (now merged) Conv. A merge rewires only values
  // private to its Add, so one readers table serves the sweep.
  const GraphUses uses(graph);
  pass_util::NameAllocator names(graph);
  std::vector<bool> remove(static_cast<size_t>(graph.num_nodes()), false);
  for (NodeId id = 0; id < graph.num_nodes(); ++id)
    if (!remove[id] && (graph.node(id).op_type == "Add" || graph.node(id).op_type == "Sub"))
      TryMerge(graph, id, uses, names, remove);
  graph.RemoveNodes(remove);
  return pass_util::FinishPass(graph, "MergeParallelConvs");
}

}  // namespace braid
