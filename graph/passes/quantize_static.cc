// QuantizeStatic: the QDQ form of a calibrated model (see passes.h). Which
// tensors get Q -> DQ follows ONNX Runtime's QDQ quantizer for the ops
// FoldQdq turns into int8 kernels, so the result folds the same way:
//
//   x -> Conv -> y            x -> Q -> DQ -> Conv(DQ(w_q)) -> y_f32 -> Q -> DQ -> y
//
// y keeps its value id and name (the DQ now produces it), so graph outputs
// and every reader stay as they were; the producer writes a new f32 value
// the Q reads. A graph input is quantized for its readers instead.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "graph/passes/passes.h"
#include "graph/passes/pattern_util.h"

namespace braid {
namespace {

struct QuantParams {
  float scale = 1;
  uint8_t zero_point = 0;
};

// uint8 over [min(lo, 0), max(hi, 0)], so 0 is exact (padding, Relu).
QuantParams ParamsOf(const ActivationRange& r) {
  const double lo = std::min<double>(r.min, 0.0), hi = std::max<double>(r.max, 0.0);
  QuantParams p;
  p.scale = static_cast<float>((hi - lo) / 255.0);
  // An empty or denormal-width range: any scale works, and 0 would divide.
  if (!(p.scale >= std::numeric_limits<float>::min())) p.scale = 1.0f;
  p.zero_point = static_cast<uint8_t>(std::clamp(std::nearbyint(-lo / p.scale), 0.0, 255.0));
  return p;
}

// A constant f32 weight of known shape, or null.
const Value* FloatWeight(const Graph& g, const Node& n, size_t input) {
  if (input >= n.inputs.size() || n.inputs[input] == kNoValue) return nullptr;
  const Value& w = g.value(n.inputs[input]);
  if (!g.IsConstant(n.inputs[input]) || w.dtype != DataType::kF32 || !w.has_shape) return nullptr;
  return &w;
}

// Whether FoldQdq can leave `act` (a Relu / Clip node read alone from a
// quantized node's output, or that node's own fused activation) to the
// output's saturation: constant bounds around 0, which the output's
// measured range then lies within.
bool SaturationCanClip(const Graph& g, const Node& act) {
  const std::optional<std::pair<float, float>> bounds = pass_util::ClampBounds(g, act);
  return bounds && bounds->first <= 0.0f && bounds->second >= 0.0f;
}

// Why node n is not quantized, or "" with its data inputs in *data.
std::string Unquantizable(const Graph& g, const Node& n, std::vector<ValueId>* data) {
  if (n.attrs.Has("activation") && !SaturationCanClip(g, n))
    return "has a fused " + n.attrs.GetString("activation", "") +
           " (only Relu / Clip around 0 fold; run the passes with fuse_activations off)";
  if (n.outputs.size() != 1) return "has several outputs";
  const std::string& op = n.op_type;
  if (op == "Conv") {
    const Value* w = FloatWeight(g, n, 1);
    if (w == nullptr || w->shape.size() != 4) return "weights are not a constant f32 4-D tensor";
    data->push_back(n.inputs[0]);
  } else if (op == "Gemm") {
    const Value* w = FloatWeight(g, n, 1);
    if (n.attrs.GetFloat("alpha", 1.0f) != 1.0f || n.attrs.GetFloat("beta", 1.0f) != 1.0f ||
        n.attrs.GetInt("transA", 0) != 0)
      return "not a fully connected layer (alpha = beta = 1, transA = 0)";
    if (w == nullptr || w->shape.size() != 2 || !IsStatic(w->shape))
      return "B is not a constant f32 matrix";
    // FoldQdq takes C as a per-output-channel bias: [M] or [1, M], constant.
    const Dim& m = w->shape[n.attrs.GetInt("transB", 0) != 0 ? 0 : 1];
    if (n.inputs.size() > 2 && n.inputs[2] != kNoValue) {
      const Value* c = FloatWeight(g, n, 2);
      const bool per_channel =
          c != nullptr && ((c->shape.size() == 1 && c->shape[0] == m) ||
                           (c->shape.size() == 2 && c->shape[0].extent() == 1 && c->shape[1] == m));
      if (!per_channel) return "C is not a constant [M] or [1, M] bias";
    }
    data->push_back(n.inputs[0]);
  } else if (op == "MatMul") {
    const Value* w = FloatWeight(g, n, 1);
    if (w == nullptr || w->shape.size() != 2) return "B is not a constant f32 matrix";
    data->push_back(n.inputs[0]);
  } else if (op == "Add") {
    if (n.inputs.size() != 2 || g.IsConstant(n.inputs[0]) || g.IsConstant(n.inputs[1]))
      return "not a sum of two activations";
    if (g.value(n.inputs[0]).shape != g.value(n.inputs[1]).shape)
      return "operands of different shapes (a broadcast runs on the reference kernel)";
    data->assign(n.inputs.begin(), n.inputs.end());
  } else if (op == "Concat") {
    for (ValueId v : n.inputs)
      if (v == kNoValue || g.IsConstant(v)) return "has a constant input";
    data->assign(n.inputs.begin(), n.inputs.end());
  } else if (op == "MaxPool") {
    data->push_back(n.inputs[0]);
  } else {
    return "-";  // not an op that has an int8 form
  }
  for (ValueId v : *data)
    if (v == kNoValue || g.value(v).dtype != DataType::kF32)
      return "input '" + (v == kNoValue ? std::string("(absent)") : g.value(v).name) + "' is not f32";
  return "";
}

// Per output channel (`axis` 0 of Conv / Gemm weights, 1 of MatMul's B):
// scale max |w| / 127, values round(w / scale) in [-127, 127].
struct QuantizedWeights {
  std::vector<int8_t> values;
  std::vector<float> scales;
};
QuantizedWeights QuantizeWeights(const Value& w, int axis) {
  const std::span<const float> f = w.constant->as<float>();
  std::vector<int64_t> dims;
  for (const Dim& d : w.shape) dims.push_back(d.extent());
  const int64_t channels = dims[static_cast<size_t>(axis)];
  int64_t inner = 1;
  for (size_t d = static_cast<size_t>(axis) + 1; d < dims.size(); ++d) inner *= dims[d];
  auto channel_of = [&](size_t i) { return (static_cast<int64_t>(i) / inner) % channels; };
  QuantizedWeights q;
  q.scales.assign(static_cast<size_t>(channels), 0.0f);
  for (size_t i = 0; i < f.size(); ++i) {
    float& s = q.scales[static_cast<size_t>(channel_of(i))];
    s = std::max(s, std::fabs(f[i]));
  }
  for (float& s : q.scales) {
    s /= 127.0f;
    if (!(s >= std::numeric_limits<float>::min()) || !std::isfinite(s)) s = 1.0f;  // all ~0
  }
  q.values.resize(f.size());
  for (size_t i = 0; i < f.size(); ++i) {
    const float v = std::nearbyint(f[i] / q.scales[static_cast<size_t>(channel_of(i))]);
    q.values[i] = static_cast<int8_t>(std::clamp(std::isnan(v) ? 0.0f : v, -127.0f, 127.0f));
  }
  return q;
}

}  // namespace

StatusOr<StaticQuantizationReport> QuantizeStatic(Graph& graph,
                                                  const std::map<ValueId, ActivationRange>& ranges,
                                                  const StaticQuantizationOptions& options) {
  RETURN_IF_ERROR(graph.Validate().WithPrefix("QuantizeStatic"));
  const pass_util::GraphUses uses(graph);
  pass_util::NameAllocator names(graph);
  std::unordered_set<std::string> node_names = pass_util::NodeNames(graph);
  StaticQuantizationReport report;

  // 1. Nodes and the tensors to quantize (graph order, so a MaxPool's input
  // has its parameters before its output copies them).
  std::map<ValueId, QuantParams> tensors;
  std::vector<NodeId> quantized;
  std::vector<Node> originals;  // the quantized nodes as they were (float_twins)
  auto params_of = [&](ValueId v) -> std::optional<QuantParams> {
    auto known = tensors.find(v);
    if (known != tensors.end()) return known->second;
    auto r = ranges.find(v);
    if (r == ranges.end()) return std::nullopt;
    return ParamsOf(r->second);
  };
  const int num_nodes = graph.num_nodes();
  for (const auto& [name, why] : options.keep_float)
    if (!node_names.count(name))
      return InvalidArgument("QuantizeStatic: no node '" + name + "' to keep f32");
  for (NodeId id = 0; id < num_nodes; ++id) {
    const Node& n = graph.node(id);
    std::vector<ValueId> data;
    const std::string why = Unquantizable(graph, n, &data);
    if (why == "-") continue;
    if (!why.empty()) {
      report.kept_float.emplace_back(n.name, why);
      continue;
    }
    if (auto keep = options.keep_float.find(n.name); keep != options.keep_float.end()) {
      report.kept_float.emplace_back(n.name, keep->second);
      continue;
    }
    // The output, or that of a Relu or Clip that alone reads it (FoldQdq
    // then leaves the activation to the output's saturation).
    ValueId out = n.outputs[0];
    const NodeId reader = uses.OnlyReader(out);
    const bool clamp_reader =
        reader != kNoNode &&
        (graph.node(reader).op_type == "Relu" || graph.node(reader).op_type == "Clip");
    if (n.op_type != "MaxPool" && !n.attrs.Has("activation") && clamp_reader &&
        SaturationCanClip(graph, graph.node(reader)) && !graph.IsGraphOutput(out))
      out = graph.node(reader).outputs[0];
    std::vector<std::pair<ValueId, QuantParams>> chosen;
    ValueId unmeasured = kNoValue;
    for (ValueId v : data) {
      const std::optional<QuantParams> p = params_of(v);
      if (p)
        chosen.emplace_back(v, *p);
      else
        unmeasured = v;
    }
    std::optional<QuantParams> out_params = n.op_type == "MaxPool" && !chosen.empty()
                                                ? std::optional<QuantParams>(chosen[0].second)
                                                : params_of(out);
    if (!out_params) unmeasured = out;
    if (unmeasured != kNoValue) {
      report.kept_float.emplace_back(
          n.name, "tensor '" + graph.value(unmeasured).name + "' has no calibrated range");
      continue;
    }
    chosen.emplace_back(out, *out_params);
    for (const auto& [v, p] : chosen) tensors.emplace(v, p);
    if (options.float_twins) originals.push_back(n);
    quantized.push_back(id);
    report.quantized.push_back(n.name);
  }

  // 1b. A pointwise activation of a quantized tensor whose output is read in
  // f32 (SiLU before a squeeze-excitation's pooling and gate): its output
  // too, so FoldQdqLookups makes the activation a table lookup and the f32
  // readers take a DQ instead of the f32 activation. Only whole
  // activations: not a Sigmoid whose reader continues the SiLU.
  auto quantized_tensor = [&](ValueId v) { return tensors.count(v) > 0; };
  auto cone_to = [&](ValueId v) {
    return pass_util::FindPointwiseCone(graph, uses, v, quantized_tensor, kNoNode);
  };
  for (NodeId id = 0; id < num_nodes; ++id) {
    const Node& n = graph.node(id);
    if (n.outputs.size() != 1 || !pass_util::IsTabulableOp(n.op_type)) continue;
    const ValueId v = n.outputs[0];
    auto range = ranges.find(v);
    if (tensors.count(v) || graph.IsGraphOutput(v) || range == ranges.end() || !cone_to(v)) continue;
    bool extends = false;  // a reader continues the activation
    for (NodeId r : uses.Readers(v)) {
      const Node& reader = graph.node(r);
      extends = extends || (reader.outputs.size() == 1 && pass_util::IsTabulableOp(reader.op_type) &&
                            cone_to(reader.outputs[0]));
    }
    if (extends) continue;
    tensors.emplace(v, ParamsOf(range->second));
    report.activations.push_back(n.name);
  }

  // 2. Weights: a DQ of int8 per output channel in place of each f32 weight.
  for (NodeId id : quantized) {
    const Node n = graph.node(id);  // a copy: constants are added below
    if (n.op_type != "Conv" && n.op_type != "Gemm" && n.op_type != "MatMul") continue;
    const int axis = n.op_type == "MatMul" ? 1 : 0;
    Value weights = graph.value(n.inputs[1]);
    if (n.op_type == "Gemm" && n.attrs.GetInt("transB", 0) == 0) {
      // B [K, M] (a transformer's Linear after FuseMatMulBias) as [M, K] with
      // transB=1, the fully connected layer FoldQdq makes a 1x1 conv of.
      const int64_t k = weights.shape[0].extent(), m = weights.shape[1].extent();
      const std::span<const float> b = weights.constant->as<float>();
      std::vector<float> t(b.size());
      for (int64_t r = 0; r < k; ++r)
        for (int64_t c = 0; c < m; ++c) t[static_cast<size_t>(c * k + r)] = b[static_cast<size_t>(r * m + c)];
      weights.shape = StaticShape(std::vector<int64_t>{m, k});
      weights.constant = TensorData::Copy(t.data(), t.size() * sizeof(float));
      graph.node(id).attrs.Set("transB", int64_t{1});
    }
    const QuantizedWeights q = QuantizeWeights(weights, axis);
    const Shape shape = weights.shape;
    const int64_t channels = static_cast<int64_t>(q.scales.size());
    Node dq;
    dq.name = pass_util::UniqueNodeName(n.name + "/weight_dq", node_names);
    dq.op_type = "DequantizeLinear";
    dq.attrs.Set("axis", int64_t{axis});
    dq.inputs = {graph.AddConstant(names.Make(n.name + "_weight_q"), DataType::kI8, shape,
                                   TensorData::Copy(q.values.data(), q.values.size())),
                 graph.AddConstant(names.Make(n.name + "_weight_scale"), DataType::kF32,
                                   Shape{Dim(channels)},
                                   TensorData::Copy(q.scales.data(), q.scales.size() * sizeof(float))),
                 graph.AddConstant(names.Make(n.name + "_weight_zero_point"), DataType::kI8,
                                   Shape{Dim(channels)},
                                   TensorData::Copy(std::vector<int8_t>(q.scales.size(), 0).data(),
                                                    q.scales.size()))};
    dq.outputs = {graph.AddValue(names.Make(n.name + "_weight_dq"))};
    const ValueId dequantized = dq.outputs[0];
    graph.AddNode(std::move(dq));
    graph.node(id).inputs[1] = dequantized;
  }

  // 3. Activations: Q -> DQ on each chosen tensor.
  const std::set<ValueId> inputs(graph.inputs().begin(), graph.inputs().end());
  std::map<ValueId, ValueId> unquantized;  // a quantized tensor -> the f32 value its Q reads
  for (const auto& [v, p] : tensors) {
    const std::string base = graph.value(v).name.empty() ? "t" + std::to_string(v) : graph.value(v).name;
    const ValueId scale = graph.AddConstant(names.Make(base + "_scale"), DataType::kF32, Shape{},
                                            TensorData::Copy(&p.scale, sizeof(float)));
    const ValueId zero = graph.AddConstant(names.Make(base + "_zero_point"), DataType::kU8, Shape{},
                                           TensorData::Copy(&p.zero_point, 1));
    ValueId source = v, result = v;
    if (inputs.count(v)) {
      result = graph.AddValue(names.Make(base + "_dq"));
      graph.ReplaceAllUses(v, result);
    } else {
      // The producer writes a new value; the DQ takes over v.
      source = graph.AddValue(names.Make(base + "_f32"));
      const NodeId producer = graph.value(v).producer;
      std::vector<ValueId>& outs = graph.node(producer).outputs;
      std::replace(outs.begin(), outs.end(), v, source);
      graph.value(source).producer = producer;
    }
    unquantized[v] = source;
    Node q, dq;
    q.name = pass_util::UniqueNodeName(base + "/quantize", node_names);
    q.op_type = "QuantizeLinear";
    q.inputs = {source, scale, zero};
    q.outputs = {graph.AddValue(names.Make(base + "_q"))};
    dq.name = pass_util::UniqueNodeName(base + "/dequantize", node_names);
    dq.op_type = "DequantizeLinear";
    dq.inputs = {q.outputs[0], scale, zero};
    dq.outputs = {result};
    graph.AddNode(std::move(q));
    graph.AddNode(std::move(dq));
    ++report.tensors;
  }

  // 4. Twins: each quantized node as it was, reading the f32 values.
  for (size_t k = 0; k < originals.size(); ++k) {
    Node twin = originals[k];
    twin.name = pass_util::UniqueNodeName(twin.name + "/float_twin", node_names);
    for (ValueId& v : twin.inputs) {
      auto source = unquantized.find(v);
      if (source != unquantized.end()) v = source->second;
    }
    twin.outputs = {graph.AddValue(names.Make(originals[k].name + "_float_twin"))};
    report.twins.push_back({originals[k].name, originals[k].op_type,
                            graph.node(quantized[k]).outputs[0], twin.outputs[0]});
    graph.AddNode(std::move(twin));
  }
  RETURN_IF_ERROR(pass_util::FinishPass(graph, "QuantizeStatic"));
  return report;
}

}  // namespace braid
