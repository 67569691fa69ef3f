#include "kernels/params/normalization.h"

#include <string>

#include "kernels/params/parse_util.h"

namespace braid {

using params_internal::Invalid;
using params_internal::IntsToString;
using params_internal::Unsupported;

StatusOr<BatchNormParams> ParseBatchNorm(const PrepareArgs& args) {
  RETURN_IF_ERROR(params_internal::CheckArity(args, 5, 5));
  const Attributes& attrs = args.node->attrs;
  const TensorDesc& x = args.inputs[0];
  BatchNormParams p;
  p.dtype = x.dtype;
  if (x.rank() < 2)
    return Invalid(args, std::string("input ")
                             .append(x.ToString())
                             .append(" must have rank >= 2 (N, C, ...)"));
  if (attrs.GetInt("training_mode", 0) != 0)
    return Unsupported(args, "training_mode=1 (only the inference form is implemented)");
  if (attrs.GetInt("spatial", 1) == 0)
    return Unsupported(args, "spatial=0 (per-activation statistics)");
  for (size_t i = 1; i < args.outputs.size(); ++i)
    if (args.outputs[i].present())
      return Unsupported(args, "training outputs (running/saved mean and variance)");
  p.epsilon = attrs.GetFloat("epsilon", 1e-5f);
  if (!(p.epsilon >= 0.0f))
    return Invalid(args, std::string("epsilon ").append(std::to_string(p.epsilon)).append(" is negative"));
  p.batch = x.dims[0];
  p.channels = x.dims[1];
  p.spatial = params_internal::Product(x.dims, 2);
  static const char* const kNames[] = {"X", "scale", "B", "mean", "var"};
  for (size_t i = 1; i < 5; ++i) {
    const TensorDesc& t = args.inputs[i];
    if (t.dims != std::vector<int64_t>{p.channels} || t.dtype != x.dtype)
      return Invalid(args, std::string(kNames[i])
                               .append(" ")
                               .append(t.ToString())
                               .append(" is not ")
                               .append(TensorDesc{x.dtype, {p.channels}}.ToString()));
  }
  RETURN_IF_ERROR(params_internal::CheckOutput(args, x.dims, x.dtype));
  return p;
}

namespace {

// Both ops: X [N, C, ...], `groups` of C, scale and B [C] (or [groups] where
// `allow_per_group`).
StatusOr<InstanceNormParams> ParseNormPlanes(const PrepareArgs& args, int64_t groups,
                                             bool allow_per_group) {
  RETURN_IF_ERROR(params_internal::CheckArity(args, 3, 3));
  const TensorDesc& x = args.inputs[0];
  if (x.rank() < 3)
    return Invalid(args, std::string("input ").append(x.ToString()).append(" must have rank >= 3 (N, C, D1, ...)"));
  InstanceNormParams p;
  p.dtype = x.dtype;
  p.epsilon = args.node->attrs.GetFloat("epsilon", 1e-5f);
  if (!(p.epsilon >= 0.0f)) return Invalid(args, "epsilon is negative");
  p.batch = x.dims[0];
  p.channels = x.dims[1];
  p.groups = groups > 0 ? groups : p.channels;
  if (p.groups <= 0 || p.channels % p.groups != 0)
    return Invalid(args, "channels " + std::to_string(p.channels) +
                             " do not divide into num_groups " + std::to_string(p.groups));
  p.spatial = params_internal::Product(x.dims, 2);
  p.per_group_affine = allow_per_group && p.groups != p.channels &&
                       args.inputs[1].dims == std::vector<int64_t>{p.groups};
  const int64_t affine = p.per_group_affine ? p.groups : p.channels;
  static const char* const kNames[] = {"input", "scale", "B"};
  for (size_t i = 1; i < 3; ++i) {
    const TensorDesc& t = args.inputs[i];
    if (t.dims != std::vector<int64_t>{affine} || t.dtype != x.dtype)
      return Invalid(args, std::string(kNames[i]).append(" ").append(t.ToString()).append(" is not ")
                               .append(TensorDesc{x.dtype, {affine}}.ToString()));
  }
  RETURN_IF_ERROR(params_internal::CheckOutput(args, x.dims, x.dtype));
  return p;
}

}  // namespace

StatusOr<InstanceNormParams> ParseInstanceNorm(const PrepareArgs& args) {
  return ParseNormPlanes(args, 0, false);
}

StatusOr<InstanceNormParams> ParseGroupNorm(const PrepareArgs& args) {
  const int64_t groups = args.node->attrs.GetInt("num_groups", 0);
  if (groups <= 0) return Invalid(args, "num_groups must be given and positive");
  if (args.node->attrs.GetInt("stash_type", 1) != 1)
    return Unsupported(args, "stash_type other than 1 (float)");
  return ParseNormPlanes(args, groups, true);
}

int64_t LayerNormParams::BroadcastIndex(int64_t i,
                                        const std::vector<int64_t>& strides) const {
  int64_t index = 0;
  for (size_t d = normalized_dims.size(); d-- > 0;) {
    index += (i % normalized_dims[d]) * strides[d];
    i /= normalized_dims[d];
  }
  return index;
}

namespace {

// Strides of `operand` right-aligned against `dims` (0 where it broadcasts);
// false when it does not broadcast to `dims`.
bool BroadcastStrides(const std::vector<int64_t>& operand,
                      const std::vector<int64_t>& dims,
                      std::vector<int64_t>* strides, bool* full) {
  if (operand.size() > dims.size()) return false;
  const size_t lead = dims.size() - operand.size();
  strides->assign(dims.size(), 0);
  *full = true;
  int64_t step = 1;
  for (size_t d = dims.size(); d-- > 0;) {
    const int64_t e = d < lead ? 1 : operand[d - lead];
    if (e != dims[d] && e != 1) return false;
    if (e != dims[d]) *full = false;
    (*strides)[d] = e == 1 ? 0 : step;
    step *= e;
  }
  return true;
}

}  // namespace

StatusOr<LayerNormParams> ParseLayerNorm(const PrepareArgs& args) {
  RETURN_IF_ERROR(params_internal::CheckArity(args, 2, 3));
  const Attributes& attrs = args.node->attrs;
  const TensorDesc& x = args.inputs[0];
  LayerNormParams p;
  p.dtype = x.dtype;
  const int64_t axis = attrs.GetInt("axis", -1);
  std::optional<int64_t> normalized = params_internal::NormalizeAxis(axis, x.rank());
  if (!normalized)
    return Invalid(args, std::string("axis ")
                             .append(std::to_string(axis))
                             .append(" is out of range for input ")
                             .append(x.ToString()));
  p.axis = *normalized;
  if (attrs.GetInt("stash_type", 1) != 1)
    return Unsupported(args, "stash_type other than 1 (float)");
  p.epsilon = attrs.GetFloat("epsilon", 1e-5f);
  if (!(p.epsilon >= 0.0f))
    return Invalid(args, std::string("epsilon ").append(std::to_string(p.epsilon)).append(" is negative"));
  const size_t ax = static_cast<size_t>(p.axis);
  p.outer = params_internal::Product(x.dims, 0, ax);
  p.inner = params_internal::Product(x.dims, ax);
  p.normalized_dims.assign(x.dims.begin() + static_cast<std::ptrdiff_t>(ax), x.dims.end());
  const TensorDesc& scale = args.inputs[1];
  if (scale.dtype != x.dtype ||
      !BroadcastStrides(scale.dims, p.normalized_dims, &p.scale_strides, &p.scale_full))
    return Invalid(args, std::string("scale ")
                             .append(scale.ToString())
                             .append(" does not broadcast to the normalized dims ")
                             .append(IntsToString(p.normalized_dims)));
  p.has_bias = params_internal::HasInput(args, 2);
  if (p.has_bias) {
    const TensorDesc& bias = args.inputs[2];
    if (bias.dtype != x.dtype ||
        !BroadcastStrides(bias.dims, p.normalized_dims, &p.bias_strides, &p.bias_full))
      return Invalid(args, std::string("bias ")
                               .append(bias.ToString())
                               .append(" does not broadcast to the normalized dims ")
                               .append(IntsToString(p.normalized_dims)));
  } else {
    p.bias_strides.assign(p.normalized_dims.size(), 0);
  }
  RETURN_IF_ERROR(params_internal::CheckOutput(args, x.dims, x.dtype));
  if (args.outputs.size() > 3)
    return Invalid(args, std::string("expects at most 3 outputs, got ")
                             .append(std::to_string(args.outputs.size())));
  std::vector<int64_t> stats_dims(x.dims.begin(), x.dims.begin() + static_cast<std::ptrdiff_t>(ax));
  stats_dims.resize(x.dims.size(), 1);
  const TensorDesc stats{DataType::kF32, stats_dims};
  p.has_mean_output = params_internal::HasOutput(args, 1);
  p.has_inv_std_output = params_internal::HasOutput(args, 2);
  for (size_t i = 1; i <= 2; ++i)
    if (params_internal::HasOutput(args, i) && !(args.outputs[i] == stats))
      return Invalid(args, std::string(i == 1 ? "Mean" : "InvStdDev")
                               .append(" output ")
                               .append(args.outputs[i].ToString())
                               .append(" is not ")
                               .append(stats.ToString()));
  return p;
}

}  // namespace braid
