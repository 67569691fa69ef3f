// Per-node cost tags. The FLOP rules are documented in docs/annotation.md;
// keep the two in step.
#include "graph/annotate.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "graph/op_schema.h"

namespace braid {
namespace {

// FLOPs per output element of an op priced per element (the schema's
// elementwise_flops; 0 when it is not) and of an activation the fusion pass
// folds into Conv / Gemm ("activation" attribute: an op name, or SiLU, which
// is Sigmoid then Mul).
double ElementwiseFlops(std::string_view op) {
  if (op == "SiLU") return ElementwiseFlops("Sigmoid") + ElementwiseFlops("Mul");
  const OpSchema* schema = FindOpSchema(op);
  return schema == nullptr ? 0 : schema->elementwise_flops;
}

// FLOPs per element of ops that normalize or reduce along an axis.
constexpr double kBatchNormFlops = 2;  // folds into a scale and a shift
constexpr double kSoftmaxFlops = 5;    // max, subtract, exp, sum, divide
constexpr double kLayerNormFlops = 8;  // mean, variance, normalize, affine

bool IsGlobalPool(std::string_view op) { return op.starts_with("Global") && op.ends_with("Pool"); }

class NodeCost {
 public:
  NodeCost(const Graph& graph, const Node& node) : graph_(graph), node_(node) {}

  Status CheckShapes() const {
    auto check = [&](ValueId id, const char* role) -> Status {
      if (id == kNoValue || graph_.value(id).has_shape) return Status::Ok();
      return FailedPrecondition("node '" + node_.name + "' (" + node_.op_type +
                                "): " + role + " '" + graph_.value(id).name +
                                "' has no shape; run InferShapes first");
    };
    for (ValueId in : node_.inputs) RETURN_IF_ERROR(check(in, "input"));
    for (ValueId out : node_.outputs) RETURN_IF_ERROR(check(out, "output"));
    return Status::Ok();
  }

  double Flops() const {
    const std::string& op = node_.op_type;
    const OpFamily family = FamilyOf(op);
    if (op == "Conv") return ConvFlops() + EpilogueFlops();
    if (op == "ConvTranspose") return ConvTransposeFlops() + EpilogueFlops();
    if (op == "Gemm") return GemmFlops() + EpilogueFlops();
    if (op == "MatMul") return MatMulFlops() + EpilogueFlops();
    // Integer products count as their float ones; QLinear* add the
    // requantization (multiply, round, add, clamp) per output.
    if (op == "ConvInteger") return ConvFlops();
    if (op == "QLinearConv") return ConvFlops(3) + 4 * OutputElements();
    if (op == "MatMulInteger") return MatMulFlops();
    if (op == "QLinearMatMul") return MatMulFlops() + 4 * OutputElements();
    if (op == "BatchNormalization") return kBatchNormFlops * OutputElements();
    if (op == "Softmax" || op == "LogSoftmax")
      return kSoftmaxFlops * OutputElements();
    if (op == "LayerNormalization" || op == "InstanceNormalization" ||
        op == "GroupNormalization")
      return kLayerNormFlops * OutputElements();
    if (family == OpFamily::kPool && !IsGlobalPool(op)) {
      double window = 1;
      for (int64_t k : node_.attrs.GetInts("kernel_shape"))
        window *= static_cast<double>(k);
      return window * OutputElements();
    }
    if (family == OpFamily::kPool || family == OpFamily::kReduce) return InputElements(0);
    if (const double per_element = ElementwiseFlops(op); per_element > 0) {
      // Variadic Sum/Max/Min/Mean combine n inputs with n-1 operations.
      int operands = 0;
      for (ValueId in : node_.inputs) operands += in != kNoValue ? 1 : 0;
      const bool variadic =
          op == "Sum" || op == "Max" || op == "Min" || op == "Mean";
      const double steps = variadic && operands > 2 ? operands - 1 : 1;
      // A fused activation (the residual Add -> Relu) costs its own FLOPs.
      return per_element * steps * OutputElements() + ActivationFlops();
    }
    if (op == "Resize" || op == "Upsample") {
      // Per output element: a weighted sum over 2 neighbours per resized
      // axis (linear) or 4 (cubic), two axes as in images; nearest copies.
      const std::string mode = node_.attrs.GetString("mode", "nearest");
      if (mode == "linear" || mode == "bilinear") return 8 * OutputElements();
      if (mode == "cubic") return 32 * OutputElements();
      return 0;
    }
    if (op == "RNN" || op == "GRU" || op == "LSTM") {
      // The input and recurrent products of every gate, step and direction:
      // 2 * (seq * batch) * directions * gates*hidden * (input + hidden).
      const double input = InputDim(0, -1), hidden = InputDim(2, -1);
      const double steps = input > 0 ? InputElements(0) / input : 0;
      return 2 * steps * InputDim(1, 0) * InputDim(1, 1) * (input + hidden);
    }
    if (op == "RoiAlign") {
      // Per output element about 4 samples of 4 weighted taps (the grid is
      // data dependent when sampling_ratio is 0).
      const int64_t ratio = node_.attrs.GetInt("sampling_ratio", 0);
      const double samples = ratio > 0 ? static_cast<double>(ratio * ratio) : 4;
      return 8 * samples * OutputElements();
    }
    // Data movement (Reshape, Transpose, Concat, Gather, ...) and unknown ops.
    return 0;
  }

  double Bytes() const {
    // A value read twice by one node (Mul(x, x)) is moved once.
    std::unordered_set<ValueId> seen;
    double bytes = 0;
    auto add = [&](ValueId id) {
      if (id == kNoValue || !seen.insert(id).second) return;
      const Value& v = graph_.value(id);
      bytes += static_cast<double>(ElementCount(v.shape)) *
               static_cast<double>(DataTypeSize(v.dtype));
    };
    for (ValueId in : node_.inputs) add(in);
    for (ValueId out : node_.outputs) add(out);
    return bytes;
  }

 private:
  const Shape& ShapeOf(size_t input) const {
    return graph_.value(node_.inputs[input]).shape;
  }
  bool HasInput(size_t i) const {
    return i < node_.inputs.size() && node_.inputs[i] != kNoValue;
  }
  double InputElements(size_t i) const {
    return HasInput(i) ? static_cast<double>(ElementCount(ShapeOf(i))) : 0;
  }
  double OutputElements() const {
    if (node_.outputs.empty() || node_.outputs[0] == kNoValue) return 0;
    return static_cast<double>(
        ElementCount(graph_.value(node_.outputs[0]).shape));
  }
  // Extent of dimension `axis` (negative counts from the end) of input i;
  // symbols count as 1 like everywhere in the annotation (a product keeps
  // its numeric factor: ExtentWithSymbolsAs).
  double InputDim(size_t i, int axis) const {
    if (!HasInput(i)) return 0;
    const Shape& s = ShapeOf(i);
    const int rank = static_cast<int>(s.size());
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return 0;
    return static_cast<double>(ExtentWithSymbolsAs(s[axis]));
  }

  // Bias (a third input) and a fused activation, per output element.
  double EpilogueFlops() const {
    double flops = 0;
    if (HasInput(2) && node_.op_type != "MatMul") flops += OutputElements();
    return flops + ActivationFlops();
  }
  double ActivationFlops() const {
    const std::string activation = node_.attrs.GetString("activation", "");
    if (activation.empty()) return 0;
    const double per_element = ElementwiseFlops(activation);
    return (per_element > 0 ? per_element : 1) * OutputElements();
  }

  // 2 * Cout * spatial_out * (Cin / groups) * prod(kernel) per image: the
  // weight [Cout, Cin/groups, k...] holds exactly Cin/groups * prod(k) taps
  // per output channel.
  // `weight`: the weight's input index (3 in QLinearConv).
  double ConvFlops(size_t weight = 1) const {
    if (!HasInput(weight) || InputDim(weight, 0) <= 0) return 0;
    const double taps_per_output =
        static_cast<double>(ElementCount(ShapeOf(weight))) / InputDim(weight, 0);
    return 2 * OutputElements() * taps_per_output;
  }

  // Every input element scatters into Cout/groups * prod(kernel) outputs; the
  // weight is [Cin, Cout/groups, k...].
  double ConvTransposeFlops() const {
    if (!HasInput(1) || InputDim(1, 0) <= 0) return 0;
    const double taps_per_input =
        static_cast<double>(ElementCount(ShapeOf(1))) / InputDim(1, 0);
    return 2 * InputElements(0) * taps_per_input;
  }

  // 2 * M * N * K; the output is [M, N] and K is A's inner dimension.
  double GemmFlops() const {
    const bool trans_a = node_.attrs.GetInt("transA", 0) != 0;
    const double k = InputDim(0, trans_a ? 0 : 1);
    return 2 * OutputElements() * k;
  }

  // 2 * batch * M * N * K; the output holds batch * M * N elements and K is
  // A's last dimension (also for a 1-D A).
  double MatMulFlops() const { return 2 * OutputElements() * InputDim(0, -1); }

  const Graph& graph_;
  const Node& node_;
};

struct ConstantStats {
  int64_t elements = 0;
  int64_t zeros = 0;
};

// Exact zeros, read by dtype: for floats both +0.0 and -0.0 count.
ConstantStats CountZeros(const Value& value) {
  ConstantStats stats;
  stats.elements = ElementCount(value.shape);
  if (!value.constant) return stats;
  const TensorData& data = *value.constant;
  const size_t width = DataTypeSize(value.dtype);
  if (width == 0) return stats;
  const size_t n =
      std::min(data.size() / width, static_cast<size_t>(stats.elements));
  const std::byte* bytes = data.data();
  for (size_t i = 0; i < n; ++i) {
    const std::byte* p = bytes + i * width;
    bool zero = false;
    switch (value.dtype) {
      case DataType::kF32: {
        uint32_t bits;
        std::memcpy(&bits, p, sizeof(bits));
        zero = (bits & 0x7FFFFFFFu) == 0;
        break;
      }
      case DataType::kF16: {
        uint16_t bits;
        std::memcpy(&bits, p, sizeof(bits));
        zero = (bits & 0x7FFFu) == 0;
        break;
      }
      default: {  // integers and bool: every byte zero
        zero = true;
        for (size_t b = 0; b < width; ++b)
          if (p[b] != std::byte{0}) zero = false;
      }
    }
    if (zero) ++stats.zeros;
  }
  return stats;
}

}  // namespace

Status Annotate(Graph& graph) {
  for (Node& node : graph.nodes()) {
    NodeCost cost(graph, node);
    RETURN_IF_ERROR(cost.CheckShapes());
    Annotation& a = node.annotation;
    a.flops = cost.Flops();
    a.bytes = cost.Bytes();
    a.intensity = a.bytes > 0 ? a.flops / a.bytes : 0;
    int64_t params = 0;
    int64_t zeros = 0;
    std::unordered_set<ValueId> seen;
    for (ValueId in : node.inputs) {
      if (!graph.IsConstant(in) || !seen.insert(in).second) continue;
      ConstantStats s = CountZeros(graph.value(in));
      params += s.elements;
      zeros += s.zeros;
    }
    a.params = params;
    a.weight_sparsity =
        params > 0 ? static_cast<double>(zeros) / static_cast<double>(params)
                   : 0;
    // activation_sparsity needs the model run on inputs: Annotate leaves it
    // at -1 and runtime/activation_sparsity.h (braid convert
    // --activation-sparsity N) measures it.
  }
  return Status::Ok();
}

ModelTotals ComputeTotals(const Graph& graph) {
  ModelTotals totals;
  std::unordered_set<ValueId> constants;
  int64_t zeros = 0;
  for (const Node& node : graph.nodes()) {
    totals.flops += node.annotation.flops;
    totals.bytes += node.annotation.bytes;
    for (ValueId in : node.inputs) {
      if (!graph.IsConstant(in) || !constants.insert(in).second) continue;
      ConstantStats s = CountZeros(graph.value(in));
      totals.params += s.elements;
      zeros += s.zeros;
    }
  }
  totals.weight_sparsity =
      totals.params > 0
          ? static_cast<double>(zeros) / static_cast<double>(totals.params)
          : 0;
  totals.nodes = graph.num_nodes();
  return totals;
}

}  // namespace braid
