#include "graph/passes/pattern_util.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <unordered_set>
#include <utility>
#include <vector>

#include "graph/op_schema.h"

namespace braid::pass_util {

GraphUses::GraphUses(const Graph& graph)
    : readers_(graph.ComputeConsumers()),
      is_output_(static_cast<size_t>(graph.num_values()), false) {
  for (ValueId v : graph.outputs()) is_output_[v] = true;
}

NodeId GraphUses::OnlyReader(ValueId v) const {
  if (v == kNoValue || is_output_[v] || readers_[v].size() != 1) return kNoNode;
  return readers_[v][0];
}

std::optional<std::vector<int64_t>> ConstantF32Dims(const Graph& graph,
                                                    ValueId v) {
  if (!graph.IsConstant(v)) return std::nullopt;
  const Value& value = graph.value(v);
  if (value.dtype != DataType::kF32 || !value.has_shape ||
      !IsStatic(value.shape))
    return std::nullopt;
  std::vector<int64_t> dims;
  for (const Dim& d : value.shape) dims.push_back(d.extent());
  const int64_t count = ElementCount(value.shape);
  if (count < 0 ||
      value.constant->size() != static_cast<size_t>(count) * sizeof(float))
    return std::nullopt;
  return dims;
}

std::optional<std::vector<double>> ReadConstantF32(const Graph& graph,
                                                   ValueId v) {
  if (!ConstantF32Dims(graph, v)) return std::nullopt;
  const TensorData& data = *graph.value(v).constant;
  std::vector<double> out(data.size() / sizeof(float));
  // memcpy per element: constant bytes may come from an unaligned owner.
  for (size_t i = 0; i < out.size(); ++i) {
    float f;
    std::memcpy(&f, data.data() + i * sizeof(float), sizeof(float));
    out[i] = f;
  }
  return out;
}

std::optional<std::vector<int64_t>> ReadConstantI64(const Graph& graph, ValueId v) {
  if (v == kNoValue || !graph.IsConstant(v)) return std::nullopt;
  const Value& value = graph.value(v);
  if (value.dtype != DataType::kI64) return std::nullopt;
  const TensorData& data = *value.constant;
  std::vector<int64_t> out(data.size() / sizeof(int64_t));
  for (size_t i = 0; i < out.size(); ++i)
    std::memcpy(&out[i], data.data() + i * sizeof(int64_t), sizeof(int64_t));
  return out;
}

std::unordered_set<std::string> NodeNames(const Graph& graph) {
  std::unordered_set<std::string> names;
  for (const Node& n : graph.nodes()) names.insert(n.name);
  return names;
}

ValueId AddF32Value(Graph& graph, NameAllocator& names, const std::string& base,
                    std::optional<Shape> shape) {
  Value v;
  v.name = names.Make(base);
  v.dtype = DataType::kF32;
  v.has_shape = shape.has_value();
  if (shape) v.shape = std::move(*shape);
  return graph.AddValue(std::move(v));
}

NameAllocator::NameAllocator(const Graph& graph) {
  for (const Value& v : graph.values()) used_.insert(v.name);
}

std::string NameAllocator::Make(const std::string& base) {
  std::string name = base;
  for (int suffix = 1; used_.count(name) != 0; ++suffix)
    name = base + "_" + std::to_string(suffix);
  used_.insert(name);
  return name;
}

ValueId AddF32Constant(Graph& graph, NameAllocator& names,
                       const std::string& base, std::vector<int64_t> dims,
                       std::span<const double> values) {
  TensorData data = TensorData::Allocate(values.size() * sizeof(float));
  std::span<float> out = data.mutable_as<float>();
  for (size_t i = 0; i < values.size(); ++i)
    out[i] = static_cast<float>(values[i]);
  return graph.AddConstant(names.Make(base), DataType::kF32, StaticShape(dims),
                           std::move(data));
}

ValueId AddI64Constant(Graph& graph, NameAllocator& names, const std::string& base,
                       std::span<const int64_t> values) {
  TensorData data = TensorData::Allocate(values.size() * sizeof(int64_t));
  std::span<int64_t> out = data.mutable_as<int64_t>();
  for (size_t i = 0; i < values.size(); ++i) out[i] = values[i];
  return graph.AddConstant(names.Make(base), DataType::kI64,
                           Shape{Dim(static_cast<int64_t>(values.size()))}, std::move(data));
}

std::string UniqueNodeName(const std::string& base, std::unordered_set<std::string>& used) {
  std::string name = base;
  for (int k = 1; used.count(name); ++k) name = base + "_" + std::to_string(k);
  used.insert(name);
  return name;
}

void AdoptShapeIfMissing(Graph& graph, ValueId to, ValueId from) {
  if (to == kNoValue || from == kNoValue) return;
  if (graph.value(to).dtype == DataType::kUndefined)
    graph.value(to).dtype = graph.value(from).dtype;
  if (!graph.value(to).has_shape && graph.value(from).has_shape) {
    graph.value(to).shape = graph.value(from).shape;
    graph.value(to).has_shape = true;
  }
}

std::optional<int64_t> OutputChannels(const Graph& graph, const Node& node) {
  const ValueId w = InputOrNone(node, 1);
  if (w == kNoValue || !graph.value(w).has_shape) return std::nullopt;
  const Shape& shape = graph.value(w).shape;
  int dim = -1;
  if (node.op_type == "Conv" && shape.size() >= 3) {
    dim = 0;
  } else if (node.op_type == "Gemm" && shape.size() == 2) {
    dim = node.attrs.GetInt("transB", 0) != 0 ? 0 : 1;
  }
  if (dim < 0 || !shape[dim].is_static() || shape[dim].extent() <= 0)
    return std::nullopt;
  return shape[dim].extent();
}

std::optional<LinearBias> ReadLinearBias(const Graph& graph, const Node& node) {
  const std::optional<int64_t> channels = OutputChannels(graph, node);
  if (!channels) return std::nullopt;
  const int64_t m = *channels;
  LinearBias bias;
  bias.channels = m;
  const ValueId b = InputOrNone(node, 2);
  if (b == kNoValue) {
    bias.dims = {m};
    bias.values.assign(static_cast<size_t>(m), 0.0);
    return bias;
  }
  std::optional<std::vector<int64_t>> dims = ConstantF32Dims(graph, b);
  std::optional<std::vector<double>> values = ReadConstantF32(graph, b);
  if (!dims || !values) return std::nullopt;
  if (node.op_type == "Conv") {
    if (*dims != std::vector<int64_t>{m}) return std::nullopt;
    bias.dims = *dims;
    bias.values = std::move(*values);
    return bias;
  }
  // Gemm: Y = alpha * A' B' + beta * C, C unidirectionally broadcast to [N,M].
  const double beta = node.attrs.GetFloat("beta", 1.0f);
  if (values->size() == 1) {
    bias.dims = {m};
    bias.values.assign(static_cast<size_t>(m), beta * (*values)[0]);
    return bias;
  }
  if (dims->empty() || dims->size() > 2 || dims->back() != m)
    return std::nullopt;
  bias.dims = *dims;
  bias.values = std::move(*values);
  for (double& v : bias.values) v *= beta;
  return bias;
}

std::optional<std::vector<double>> ChannelConstant(const Graph& graph, const Node& producer,
                                                   ValueId operand, int64_t channels) {
  std::optional<std::vector<int64_t>> dims = ConstantF32Dims(graph, operand);
  std::optional<std::vector<double>> values = ReadConstantF32(graph, operand);
  if (!dims || !values) return std::nullopt;
  const size_t m = static_cast<size_t>(channels);
  // An operand of higher rank than the output (even [1,1,1,1,1]) would
  // change the output shape.
  const size_t rank =
      producer.op_type == "Gemm" ? 2 : graph.value(producer.inputs[1]).shape.size();
  if (dims->size() > rank) return std::nullopt;
  if (values->size() == 1) return std::vector<double>(m, (*values)[0]);
  if (values->size() != m) return std::nullopt;
  const size_t offset = rank - dims->size();
  for (size_t i = 0; i < dims->size(); ++i)
    if ((*dims)[i] != 1 && offset + i != 1) return std::nullopt;
  return values;
}

bool FoldChannelAffine(Graph& graph, NodeId producer_id, std::span<const double> multiplier,
                       std::span<const double> shift, ValueId y, const std::string& weight_suffix,
                       NameAllocator& names) {
  const Node& producer = graph.node(producer_id);
  const bool is_conv = producer.op_type == "Conv";
  if (!is_conv && producer.op_type != "Gemm") return false;
  if (producer.attrs.Has("activation")) return false;  // the affine would follow it
  const ValueId w = InputOrNone(producer, 1);
  std::optional<std::vector<int64_t>> w_dims = ConstantF32Dims(graph, w);
  std::optional<std::vector<double>> weights = ReadConstantF32(graph, w);
  std::optional<LinearBias> bias = ReadLinearBias(graph, producer);
  if (!w_dims || !weights || !bias) return false;
  const size_t channels = static_cast<size_t>(bias->channels);
  if (multiplier.size() != channels || shift.size() != channels) return false;
  // Weight element i belongs to output channel i / per_channel, except for
  // Gemm with transB=0 ([K,M]) where it is i % M.
  const bool channel_last = !is_conv && producer.attrs.GetInt("transB", 0) == 0;
  const size_t per_channel = weights->size() / channels;
  for (size_t i = 0; i < weights->size(); ++i)
    (*weights)[i] *= multiplier[channel_last ? i % channels : i / per_channel];
  for (size_t i = 0; i < bias->values.size(); ++i) {
    const size_t c = i % channels;
    bias->values[i] = bias->values[i] * multiplier[c] + shift[c];
  }
  const std::string base = producer.name.empty() ? graph.value(w).name : producer.name;
  const ValueId x = producer.outputs[0];
  const ValueId new_w = AddF32Constant(graph, names, base + weight_suffix, *w_dims, *weights);
  WriteLinearBias(graph, producer_id, *bias, names);
  Node& folded = graph.node(producer_id);
  folded.inputs[1] = new_w;
  folded.outputs[0] = y;
  graph.value(y).producer = producer_id;
  AdoptShapeIfMissing(graph, y, x);
  return true;
}

std::optional<BatchNormParams> ReadBatchNorm(const Graph& graph, const Node& bn,
                                             int64_t channels, const GraphUses& uses) {
  if (bn.inputs.size() != 5) return std::nullopt;
  if (bn.attrs.GetInt("training_mode", 0) != 0) return std::nullopt;
  // spatial=0 (opset < 9) means per-element parameters, not per-channel.
  if (bn.attrs.GetInt("spatial", 1) == 0) return std::nullopt;
  // Training-mode running statistics outputs must be unused.
  for (size_t i = 1; i < bn.outputs.size(); ++i) {
    const ValueId out = bn.outputs[i];
    if (out != kNoValue && (!uses.Readers(out).empty() || uses.IsGraphOutput(out)))
      return std::nullopt;
  }
  std::vector<double> params[4];
  for (int i = 0; i < 4; ++i) {
    std::optional<std::vector<double>> p =
        ReadConstantF32(graph, bn.inputs[1 + i]);
    if (!p || static_cast<int64_t>(p->size()) != channels) return std::nullopt;
    params[i] = std::move(*p);
  }
  const double epsilon = bn.attrs.GetFloat("epsilon", 1e-5f);
  const std::vector<double>& scale = params[0];
  const std::vector<double>& bias = params[1];
  const std::vector<double>& mean = params[2];
  const std::vector<double>& var = params[3];
  BatchNormParams out;
  out.multiplier.resize(var.size());
  out.shift.resize(var.size());
  for (size_t c = 0; c < var.size(); ++c) {
    const double denom = var[c] + epsilon;
    if (!(denom > 0)) return std::nullopt;  // would divide by zero or NaN
    out.multiplier[c] = scale[c] / std::sqrt(denom);
    out.shift[c] = bias[c] - mean[c] * out.multiplier[c];
  }
  return out;
}

void WriteLinearBias(Graph& graph, NodeId id, const LinearBias& bias,
                     NameAllocator& names) {
  const std::string base = graph.node(id).name.empty()
                               ? std::string("fused_bias")
                               : graph.node(id).name + "_bias";
  const ValueId b = AddF32Constant(graph, names, base, bias.dims, bias.values);
  Node& node = graph.node(id);
  if (node.inputs.size() < 3) node.inputs.resize(3, kNoValue);
  node.inputs[2] = b;
  if (node.op_type == "Gemm") node.attrs.Set("beta", 1.0f);
}

std::optional<float> ClipBound(const Graph& graph, const Node& clip, size_t input, const char* attr,
                               float fallback) {
  const ValueId v = InputOrNone(clip, input);
  if (v != kNoValue) {
    std::optional<std::vector<double>> value = ReadConstantF32(graph, v);
    if (!value || value->size() != 1) return std::nullopt;
    return static_cast<float>((*value)[0]);
  }
  return clip.attrs.GetFloat(attr, fallback);
}

std::optional<std::pair<float, float>> ClampBounds(const Graph& graph, const Node& node) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::string fused = node.attrs.GetString("activation", "");
  if (node.op_type == "Relu" || fused == "Relu") return std::pair{0.0f, inf};
  if (node.op_type == "Clip") {
    const std::optional<float> lo = ClipBound(graph, node, 1, "min", -inf);
    const std::optional<float> hi = ClipBound(graph, node, 2, "max", inf);
    if (!lo || !hi) return std::nullopt;
    return std::pair{*lo, *hi};
  }
  if (fused == "Clip")
    return std::pair{node.attrs.GetFloat("activation_min", -inf), node.attrs.GetFloat("activation_max", inf)};
  return std::nullopt;
}

Status FinishPass(Graph& graph, const char* pass_name) {
  Status status = graph.TopologicalSort();
  if (status.ok()) status = graph.Validate();
  return status.WithPrefix(pass_name);
}

bool IsTabulableOp(const std::string& op_type) {
  static const char* const kOps[] = {
      "Abs",  "Add",       "Clip",      "Div",  "Elu",     "Erf",     "Exp",     "Gelu",
      "HardSigmoid", "HardSwish", "LeakyRelu", "Log", "Max", "Min", "Mish", "Mul", "Neg", "Pow",
      "Reciprocal", "Relu", "Sigmoid", "Softplus", "Sqrt", "Sub", "Tanh"};
  return std::find(std::begin(kOps), std::end(kOps), op_type) != std::end(kOps);
}

std::optional<PointwiseCone> FindPointwiseCone(const Graph& g, const GraphUses& uses, ValueId sink,
                                               const std::function<bool(ValueId)>& is_source,
                                               NodeId sink_reader) {
  constexpr size_t kMaxNodes = 16;  // GELU's erf form is 5, SiLU 2
  PointwiseCone cone;
  std::unordered_set<NodeId> members;
  std::vector<ValueId> pending = {sink};
  while (!pending.empty()) {
    const ValueId v = pending.back();
    pending.pop_back();
    if (v != sink && is_source(v)) {
      if (cone.source != kNoValue && cone.source != v) return std::nullopt;  // two sources
      cone.source = v;
      continue;
    }
    const NodeId p = g.value(v).producer;
    if (p == kNoNode) return std::nullopt;  // a graph input
    const Node& n = g.node(p);
    if (!members.insert(p).second) continue;
    if (n.outputs.size() != 1 || members.size() > kMaxNodes) return std::nullopt;
    // A view (FuseMatMulBias' Reshapes around a transformer's GELU) moves no
    // value: the table passes through it.
    if (IsViewOp(n.op_type)) {
      pending.push_back(InputOrNone(n, 0));
      continue;
    }
    // Only what FoldConstants evaluates: exact Gelu, two-input Max / Min.
    if (!IsTabulableOp(n.op_type) ||
        (n.op_type == "Gelu" && n.attrs.GetString("approximate", "none") != "none") ||
        ((n.op_type == "Max" || n.op_type == "Min") && n.inputs.size() != 2))
      return std::nullopt;
    for (ValueId in : n.inputs) {
      if (in == kNoValue) continue;  // Clip's omitted bounds
      if (g.IsConstant(in)) {
        const Value& c = g.value(in);
        if (c.dtype != DataType::kF32 || c.constant->size() != sizeof(float)) return std::nullopt;
        continue;
      }
      pending.push_back(in);
    }
  }
  if (cone.source == kNoValue || members.empty()) return std::nullopt;
  for (NodeId p : members) {
    const ValueId out = g.node(p).outputs[0];
    if (out == sink) {
      if (sink_reader == kNoNode) continue;
      if (uses.IsGraphOutput(out)) return std::nullopt;
      for (NodeId r : uses.Readers(out))
        if (r != sink_reader) return std::nullopt;
      continue;
    }
    if (uses.IsGraphOutput(out)) return std::nullopt;
    for (NodeId r : uses.Readers(out))
      if (!members.contains(r)) return std::nullopt;
  }
  // Scalars broadcast to the source's shape, unless a constant of higher
  // rank widens it; views reshape it: the shapes must agree.
  const Value& src = g.value(cone.source);
  const Value& dst = g.value(sink);
  if (!src.has_shape || !dst.has_shape || !(src.shape == dst.shape)) return std::nullopt;
  cone.nodes.assign(members.begin(), members.end());
  std::sort(cone.nodes.begin(), cone.nodes.end());
  return cone;
}

}  // namespace braid::pass_util
