#include "models/graph_builder.h"

#include <cmath>
#include <numbers>
#include <utility>

namespace braid {

uint64_t SplitMix64::Next() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

double SplitMix64::NextUnit() {
  constexpr double kStep = 1.0 / (1 << 24);
  return (static_cast<double>(Next() >> 40) + 0.5) * kStep;
}

namespace {

uint64_t HashName(const std::string& name) {  // FNV-1a, 64 bit
  uint64_t h = 0xCBF29CE484222325ULL;
  for (char c : name) {
    h ^= static_cast<uint8_t>(c);
    h *= 0x100000001B3ULL;
  }
  return h;
}

int64_t Product(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

Shape ToShape(const std::vector<int64_t>& dims) {
  return Shape(dims.begin(), dims.end());
}

}  // namespace

GraphBuilder::GraphBuilder(std::string graph_name, uint64_t seed)
    : seed_(seed) {
  graph_.name() = std::move(graph_name);
  graph_.set_opset(17);
}

GraphBuilder::Scope GraphBuilder::Enter(const std::string& module) {
  saved_.emplace_back(module_path_, node_prefix_);
  module_path_ = module_path_.empty() ? module : module_path_ + "." + module;
  node_prefix_ += "/" + module_path_;
  return Scope(this);
}

void GraphBuilder::ExitModule() {
  module_path_ = std::move(saved_.back().first);
  node_prefix_ = std::move(saved_.back().second);
  saved_.pop_back();
}

std::string GraphBuilder::UniqueName(const std::string& base) {
  std::string name = base;
  for (int i = 1; used_names_.count(name) != 0; ++i)
    name = base + "_" + std::to_string(i);
  used_names_.insert(name);
  return name;
}

std::string GraphBuilder::ParamName(const std::string& module,
                                    const std::string& leaf) const {
  std::string path = module_path_;
  if (!module.empty()) path = path.empty() ? module : path + "." + module;
  return path.empty() ? leaf : path + "." + leaf;
}

std::string GraphBuilder::NodeName(const std::string& module,
                                   const std::string& op_type) {
  std::string name = node_prefix_;
  if (!module.empty()) name += "/" + module;
  return UniqueName(name + "/" + op_type);
}

ValueId GraphBuilder::Input(const std::string& name, Shape shape) {
  used_names_.insert(name);
  int64_t c = shape.size() > 1 && shape[1].is_static() ? shape[1].extent() : -1;
  ValueId v = graph_.AddInput(name, DataType::kF32, std::move(shape));
  channels_[v] = c;
  return v;
}

void GraphBuilder::Output(ValueId value, const std::string& name, Shape shape) {
  Value& v = graph_.value(value);
  used_names_.erase(v.name);
  v.name = name;
  used_names_.insert(name);
  v.dtype = DataType::kF32;
  v.shape = std::move(shape);
  v.has_shape = true;
  graph_.outputs().push_back(value);
}

int64_t GraphBuilder::channels(ValueId v) const {
  auto it = channels_.find(v);
  return it == channels_.end() ? -1 : it->second;
}

// ---- constants --------------------------------------------------------------

ValueId GraphBuilder::RandomUniform(const std::string& name,
                                    const std::vector<int64_t>& dims, float lo,
                                    float hi) {
  std::string unique = UniqueName(name);
  SplitMix64 rng(seed_ ^ HashName(unique));
  rng.Next();  // decorrelate nearby seeds before the first draw
  const auto count = static_cast<size_t>(Product(dims));
  TensorData data = TensorData::Allocate(count * sizeof(float));
  std::span<float> out = data.mutable_as<float>();
  for (size_t i = 0; i < count; ++i)
    out[i] = static_cast<float>(lo + (static_cast<double>(hi) - lo) *
                                         rng.NextUnit());
  return graph_.AddConstant(unique, DataType::kF32, ToShape(dims),
                            std::move(data));
}

ValueId GraphBuilder::ConstantF32(const std::string& name,
                                  const std::vector<int64_t>& dims,
                                  const std::vector<float>& values) {
  return graph_.AddConstant(
      UniqueName(name), DataType::kF32, ToShape(dims),
      TensorData::Copy(values.data(), values.size() * sizeof(float)));
}

ValueId GraphBuilder::ConstantI64(const std::string& name,
                                  const std::vector<int64_t>& dims,
                                  const std::vector<int64_t>& values) {
  return graph_.AddConstant(
      UniqueName(name), DataType::kI64, ToShape(dims),
      TensorData::Copy(values.data(), values.size() * sizeof(int64_t)));
}

ValueId GraphBuilder::ScalarF32(const std::string& name, float value) {
  return ConstantF32(name, {}, {value});
}

// ---- generic node -----------------------------------------------------------

ValueId GraphBuilder::Op(const std::string& op_type,
                         const std::vector<ValueId>& inputs, Attributes attrs,
                         const std::string& module) {
  Node node;
  node.name = NodeName(module, op_type);
  node.op_type = op_type;
  node.inputs = inputs;
  node.attrs = std::move(attrs);
  ValueId out = graph_.AddValue(UniqueName(node.name + "_output_0"));
  node.outputs = {out};
  graph_.AddNode(std::move(node));
  // Most ops keep the channel count of their first input.
  if (!inputs.empty()) channels_[out] = channels(inputs[0]);
  return out;
}

// ---- layers with weights ----------------------------------------------------

ValueId GraphBuilder::Conv(ValueId x, const std::string& module,
                           const ConvSpec& spec) {
  const int64_t in_channels = channels(x);
  const int64_t in_per_group = in_channels / spec.groups;
  const int64_t fan_in = in_per_group * spec.kernel * spec.kernel;
  const auto weight_bound = static_cast<float>(std::sqrt(6.0 / fan_in));
  std::vector<ValueId> inputs = {
      x,
      RandomUniform(ParamName(module, "weight"),
                    {spec.out_channels, in_per_group, spec.kernel, spec.kernel},
                    -weight_bound, weight_bound)};
  if (spec.bias) {
    const auto bias_bound = static_cast<float>(1.0 / std::sqrt(fan_in));
    inputs.push_back(RandomUniform(ParamName(module, "bias"),
                                   {spec.out_channels}, -bias_bound,
                                   bias_bound));
  }
  Attributes attrs;
  attrs.Set("dilations", std::vector<int64_t>{1, 1});
  attrs.Set("group", spec.groups);
  attrs.Set("kernel_shape", std::vector<int64_t>{spec.kernel, spec.kernel});
  attrs.Set("pads",
            std::vector<int64_t>{spec.pad, spec.pad, spec.pad, spec.pad});
  attrs.Set("strides", std::vector<int64_t>{spec.stride, spec.stride});
  ValueId y = Op("Conv", inputs, std::move(attrs), module);
  channels_[y] = spec.out_channels;
  return y;
}

ValueId GraphBuilder::BatchNorm(ValueId x, const std::string& module,
                                const BatchNormInit& init) {
  const std::vector<int64_t> dims = {channels(x)};
  std::vector<ValueId> inputs = {
      x,
      RandomUniform(ParamName(module, "weight"), dims, init.gamma_lo,
                    init.gamma_hi),
      RandomUniform(ParamName(module, "bias"), dims, init.beta_lo,
                    init.beta_hi),
      RandomUniform(ParamName(module, "running_mean"), dims, init.mean_lo,
                    init.mean_hi),
      RandomUniform(ParamName(module, "running_var"), dims, init.var_lo,
                    init.var_hi)};
  Attributes attrs;
  attrs.Set("epsilon", 1e-5f);
  attrs.Set("momentum", 0.9f);
  return Op("BatchNormalization", inputs, std::move(attrs), module);
}

ValueId GraphBuilder::GroupNorm(ValueId x, const std::string& module, int64_t num_groups) {
  const std::vector<int64_t> dims = {channels(x)};
  std::vector<ValueId> inputs = {x, RandomUniform(ParamName(module, "weight"), dims, 0.8f, 1.2f),
                                 RandomUniform(ParamName(module, "bias"), dims, -0.1f, 0.1f)};
  Attributes attrs;
  attrs.Set("num_groups", num_groups);
  attrs.Set("epsilon", 1e-5f);
  return Op("GroupNormalization", inputs, std::move(attrs), module);
}

ValueId GraphBuilder::Linear(ValueId x, const std::string& module,
                             int64_t in_features, int64_t out_features) {
  const auto bound = static_cast<float>(1.0 / std::sqrt(in_features));
  std::vector<ValueId> inputs = {
      x,
      RandomUniform(ParamName(module, "weight"), {out_features, in_features},
                    -bound, bound),
      RandomUniform(ParamName(module, "bias"), {out_features}, -bound, bound)};
  Attributes attrs;
  attrs.Set("alpha", 1.0f);
  attrs.Set("beta", 1.0f);
  attrs.Set("transB", int64_t{1});
  ValueId y = Op("Gemm", inputs, std::move(attrs), module);
  channels_[y] = out_features;
  return y;
}

ValueId GraphBuilder::LinearMatMul(ValueId x, const std::string& module,
                                   int64_t in_features, int64_t out_features) {
  const auto bound = static_cast<float>(1.0 / std::sqrt(in_features));
  ValueId weight = RandomUniform(ParamName(module, "weight"),
                                 {in_features, out_features}, -bound, bound);
  ValueId bias =
      RandomUniform(ParamName(module, "bias"), {out_features}, -bound, bound);
  ValueId y = Op("MatMul", {x, weight}, {}, module);
  return Op("Add", {bias, y}, {}, module);
}

ValueId GraphBuilder::LayerNorm(ValueId x, const std::string& module,
                                int64_t dim, float epsilon) {
  ValueId scale = RandomUniform(ParamName(module, "weight"), {dim}, 0.8f, 1.2f);
  ValueId bias = RandomUniform(ParamName(module, "bias"), {dim}, -0.1f, 0.1f);
  Attributes attrs;
  attrs.Set("axis", int64_t{-1});
  attrs.Set("epsilon", epsilon);
  return Op("LayerNormalization", {x, scale, bias}, std::move(attrs), module);
}

// ---- ops without weights ----------------------------------------------------

ValueId GraphBuilder::Relu(ValueId x, const std::string& module) {
  return Op("Relu", {x}, {}, module);
}

ValueId GraphBuilder::Relu6(ValueId x, const std::string& module) {
  // Opset 11+ Clip takes its bounds as (constant) inputs.
  std::string base = node_prefix_ + (module.empty() ? "" : "/" + module);
  ValueId lo = ScalarF32(base + "/Constant_min", 0.0f);
  ValueId hi = ScalarF32(base + "/Constant_max", 6.0f);
  return Op("Clip", {x, lo, hi}, {}, module);
}

ValueId GraphBuilder::Add(ValueId a, ValueId b, const std::string& module) {
  return Op("Add", {a, b}, {}, module);
}

ValueId GraphBuilder::Mul(ValueId a, ValueId b, const std::string& module) {
  return Op("Mul", {a, b}, {}, module);
}

ValueId GraphBuilder::MaxPool(ValueId x, const std::string& module,
                              int64_t kernel, int64_t stride, int64_t pad,
                              bool ceil_mode) {
  Attributes attrs;
  attrs.Set("ceil_mode", int64_t{ceil_mode ? 1 : 0});
  attrs.Set("kernel_shape", std::vector<int64_t>{kernel, kernel});
  attrs.Set("pads", std::vector<int64_t>{pad, pad, pad, pad});
  attrs.Set("strides", std::vector<int64_t>{stride, stride});
  return Op("MaxPool", {x}, std::move(attrs), module);
}

ValueId GraphBuilder::GlobalAveragePool(ValueId x, const std::string& module) {
  return Op("GlobalAveragePool", {x}, {}, module);
}

ValueId GraphBuilder::Flatten(ValueId x, int64_t axis) {
  Attributes attrs;
  attrs.Set("axis", axis);
  return Op("Flatten", {x}, std::move(attrs));
}

ValueId GraphBuilder::Concat(const std::vector<ValueId>& xs, int64_t axis,
                             const std::string& module) {
  Attributes attrs;
  attrs.Set("axis", axis);
  ValueId y = Op("Concat", xs, std::move(attrs), module);
  if (axis == 1) {
    int64_t total = 0;
    for (ValueId x : xs) total = channels(x) < 0 ? -1 : total + channels(x);
    channels_[y] = total;
  }
  return y;
}

ValueId GraphBuilder::MatMul(ValueId a, ValueId b, const std::string& module) {
  return Op("MatMul", {a, b}, {}, module);
}

ValueId GraphBuilder::Softmax(ValueId x, int64_t axis,
                              const std::string& module) {
  Attributes attrs;
  attrs.Set("axis", axis);
  return Op("Softmax", {x}, std::move(attrs), module);
}

ValueId GraphBuilder::Reshape(ValueId x, const std::vector<int64_t>& shape,
                              const std::string& module) {
  std::string base = node_prefix_ + (module.empty() ? "" : "/" + module);
  ValueId shape_value = ConstantI64(
      base + "/Constant_shape", {static_cast<int64_t>(shape.size())}, shape);
  return Op("Reshape", {x, shape_value}, {}, module);
}

ValueId GraphBuilder::Transpose(ValueId x, const std::vector<int64_t>& perm,
                                const std::string& module) {
  Attributes attrs;
  attrs.Set("perm", perm);
  return Op("Transpose", {x}, std::move(attrs), module);
}

ValueId GraphBuilder::Erf(ValueId x, const std::string& module) {
  return Op("Erf", {x}, {}, module);
}

ValueId GraphBuilder::Gather(ValueId x, int64_t index,
                             const std::vector<int64_t>& index_dims,
                             int64_t axis, const std::string& module) {
  std::string base = node_prefix_ + (module.empty() ? "" : "/" + module);
  ValueId indices = ConstantI64(base + "/Constant_index", index_dims, {index});
  Attributes attrs;
  attrs.Set("axis", axis);
  return Op("Gather", {x, indices}, std::move(attrs), module);
}

ValueId GraphBuilder::Gelu(ValueId x, const std::string& module) {
  std::string base = node_prefix_ + (module.empty() ? "" : "/" + module);
  ValueId inv_sqrt2 = ScalarF32(base + "/Constant_inv_sqrt2",
                                static_cast<float>(1.0 / std::numbers::sqrt2));
  ValueId one = ScalarF32(base + "/Constant_one", 1.0f);
  ValueId half = ScalarF32(base + "/Constant_half", 0.5f);
  ValueId scaled = Mul(x, inv_sqrt2, module);
  ValueId erf = Erf(scaled, module);
  ValueId shifted = Add(erf, one, module);
  ValueId gated = Mul(x, shifted, module);
  return Mul(gated, half, module);
}

Graph GraphBuilder::Finish() && { return std::move(graph_); }

}  // namespace braid
