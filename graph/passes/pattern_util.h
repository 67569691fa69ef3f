// Helpers shared by the rewriting passes (identity removal, BN folding,
// activation fusion): reading constants, checking that a value is private to
// a pattern, allocating fresh value names and rewriting Conv/Gemm biases.
//
//   pass_util::GraphUses uses(graph);
//   if (uses.OnlyReader(conv.outputs[0]) == bn_id) { ... }
//   pass_util::NameAllocator names(graph);
//   ValueId w = pass_util::AddF32Constant(graph, names, "conv0_W", shape, v);
#ifndef BRAID_GRAPH_PASSES_PATTERN_UTIL_H_
#define BRAID_GRAPH_PASSES_PATTERN_UTIL_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "graph/ir.h"

namespace braid::pass_util {

// Readers of every value plus graph-output flags, computed once per pass.
// Rewrites invalidate it; passes only query values they have not touched yet.
class GraphUses {
 public:
  explicit GraphUses(const Graph& graph);

  const std::vector<NodeId>& Readers(ValueId v) const { return readers_[v]; }
  bool IsGraphOutput(ValueId v) const { return is_output_[v]; }
  // The single node reading `v` (listed once), when `v` is not a graph output;
  // kNoNode otherwise.
  NodeId OnlyReader(ValueId v) const;

 private:
  std::vector<std::vector<NodeId>> readers_;
  std::vector<bool> is_output_;
};

// Node input `index`, or kNoValue when the node has fewer inputs.
inline ValueId InputOrNone(const Node& node, size_t index) {
  return index < node.inputs.size() ? node.inputs[index] : kNoValue;
}

// The static extents of a constant f32 value; nullopt if `v` is absent, not a
// constant, not f32, has a symbolic or missing shape, or its byte size does
// not match the shape.
std::optional<std::vector<int64_t>> ConstantF32Dims(const Graph& graph,
                                                    ValueId v);
// The elements of a constant f32 value widened to double (same conditions).
std::optional<std::vector<double>> ReadConstantF32(const Graph& graph,
                                                   ValueId v);

// The elements of a constant int64 value (any shape), or nullopt when `v` is
// absent or not an int64 constant.
std::optional<std::vector<int64_t>> ReadConstantI64(const Graph& graph, ValueId v);

// Produces value names not yet used in the graph ("base", "base_1", ...).
class NameAllocator {
 public:
  explicit NameAllocator(const Graph& graph);
  std::string Make(const std::string& base);

 private:
  std::unordered_set<std::string> used_;
};

// Adds a new f32 constant (values narrowed from double). Never shares or
// mutates existing TensorData.
ValueId AddF32Constant(Graph& graph, NameAllocator& names,
                       const std::string& base, std::vector<int64_t> dims,
                       std::span<const double> values);
// Adds a new 1-D int64 constant (a Reshape's target shape).
ValueId AddI64Constant(Graph& graph, NameAllocator& names, const std::string& base,
                       std::span<const int64_t> values);

// `base`, or "base_1", "base_2", ... : the first not in `used`, which it
// joins (node names; NameAllocator is for values).
std::string UniqueNodeName(const std::string& base, std::unordered_set<std::string>& used);
// Every node name in the graph: the `used` set a rewriting pass starts from.
std::unordered_set<std::string> NodeNames(const Graph& graph);

// Adds a new f32 value named from `base` with `shape`, or without a shape
// (inferred later) when nullopt.
ValueId AddF32Value(Graph& graph, NameAllocator& names, const std::string& base,
                    std::optional<Shape> shape);

// Copies dtype and shape from `from` to `to` when `to` has no shape yet, so
// a value that takes over a producer keeps the facts known about it.
void AdoptShapeIfMissing(Graph& graph, ValueId to, ValueId from);

// A Clip bound: the constant single-element f32 input `input` (1 min, 2
// max), else the pre-opset-11 attribute `attr`, else `fallback`; nullopt
// when the input is not constant.
std::optional<float> ClipBound(const Graph& graph, const Node& clip, size_t input, const char* attr,
                               float fallback);

// The [lo, hi] a Relu or Clip node clamps to, or that a node's fused
// "activation" Relu / Clip clamps its output to (+-inf where open); nullopt
// for anything else or bounds that are not constant.
std::optional<std::pair<float, float>> ClampBounds(const Graph& graph, const Node& node);

// Output channels of a Conv (weight dim 0) or Gemm (B dim 1, or dim 0 when
// transB=1). Needs the weight's shape; nullopt when it is unknown.
std::optional<int64_t> OutputChannels(const Graph& graph, const Node& node);

// The additive bias of a Conv or Gemm, as a constant that broadcasts over
// the output: `values` has shape `dims`, whose last extent is `channels` and
// whose element i belongs to output channel i % channels. Conv: input 2
// ([M]; zeros when absent). Gemm: beta * C with C a scalar, [M], [1,M] or
// [N,M] (zeros [M] when absent; a scalar C is expanded to [M]).
struct LinearBias {
  std::vector<int64_t> dims;
  std::vector<double> values;
  int64_t channels = 0;
};
// nullopt when the bias is not a constant f32 of a supported shape, or the
// output channel count is unknown.
std::optional<LinearBias> ReadLinearBias(const Graph& graph, const Node& node);
// Stores `bias` as a new constant bias input of node `id` (creating input 2
// when absent; Gemm's beta becomes 1).
void WriteLinearBias(Graph& graph, NodeId id, const LinearBias& bias,
                     NameAllocator& names);

// An inference-form BatchNormalization as y = x * multiplier[c] + shift[c]:
// multiplier = scale / sqrt(var + epsilon), shift = bias - mean * multiplier.
struct BatchNormParams {
  std::vector<double> multiplier;
  std::vector<double> shift;
};
// The per-channel parameters of `bn` over `channels` channels, or nullopt
// when it cannot be folded away: training mode or used statistics outputs,
// spatial=0, parameters that are not f32 constants of `channels` elements,
// var + epsilon not positive.
std::optional<BatchNormParams> ReadBatchNorm(const Graph& graph, const Node& bn,
                                             int64_t channels, const GraphUses& uses);

// A constant f32 operand of an elementwise op after Conv / Gemm `producer`
// as one value per output channel (of `channels`), or nullopt when it is not
// a pure output-channel broadcast of the producer's output: a single element,
// or dims right-aligned against the output rank (Gemm 2, Conv the weight's)
// that are 1 except on the channel axis 1. A plain [M] after a Conv aligns
// with the width axis, so it is none.
std::optional<std::vector<double>> ChannelConstant(const Graph& graph, const Node& producer,
                                                   ValueId operand, int64_t channels);

// Folds y[c] = x[c] * multiplier[c] + shift[c] into Conv / Gemm `producer_id`
// (weights scaled per output channel, bias * multiplier + shift, as new
// constants; the weight named <node><weight_suffix>) and makes it produce `y`
// in place of its output. False, with the graph unchanged, when its weight
// or bias is not a constant it can rewrite or it carries a fused activation.
bool FoldChannelAffine(Graph& graph, NodeId producer_id, std::span<const double> multiplier,
                       std::span<const double> shift, ValueId y, const std::string& weight_suffix,
                       NameAllocator& names);

// Validates and re-sorts a rewritten graph, prefixing errors with the pass.
Status FinishPass(Graph& graph, const char* pass_name);

// Pointwise f32 ops a 256-entry table can stand for: each output element
// depends only on the same input element (with scalar constants beside it),
// and FoldConstants evaluates them.
bool IsTabulableOp(const std::string& op_type);

// The nodes computing `sink` pointwise from one value (the cone's source,
// where `is_source` first holds walking back): views and tabulable ops whose
// other inputs are f32 scalar constants, at most 16, each output read only
// inside the cone and no graph output, the sink read only by `sink_reader`
// (kNoNode: by anything); the source and the sink of one shape. FoldQdqLookups
// makes a table of Q(f(DQ(x))); QuantizeStatic quantizes such an f's output.
struct PointwiseCone {
  std::vector<NodeId> nodes;  // graph (topological) order
  ValueId source = kNoValue;
};
std::optional<PointwiseCone> FindPointwiseCone(const Graph& graph, const GraphUses& uses,
                                               ValueId sink,
                                               const std::function<bool(ValueId)>& is_source,
                                               NodeId sink_reader);

}  // namespace braid::pass_util

#endif  // BRAID_GRAPH_PASSES_PATTERN_UTIL_H_
