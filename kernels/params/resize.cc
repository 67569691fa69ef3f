#include "kernels/params/resize.h"

#include <vector>

#include "kernels/params/parse_util.h"

namespace braid {
namespace {

// The floats of constant input `i`; empty when absent or empty. `computed`
// is set when the input is there but only known at run time.
StatusOr<std::vector<float>> ConstantFloats(const PrepareArgs& args, int i, bool* computed) {
  if (i < 0 || !params_internal::HasInput(args, static_cast<size_t>(i))) return std::vector<float>();
  const TensorDesc& desc = args.inputs[static_cast<size_t>(i)];
  if (desc.elements() == 0) return std::vector<float>();
  if (desc.dtype != DataType::kF32)
    return params_internal::Invalid(args, "input " + std::to_string(i) + " must be float32, got " +
                                              desc.ToString());
  const TensorData* data = args.constants[static_cast<size_t>(i)];
  if (data == nullptr) {
    *computed = true;
    return std::vector<float>();
  }
  std::span<const float> v = data->as<float>();
  return std::vector<float>(v.begin(), v.end());
}

}  // namespace

StatusOr<ResizeParams> ParseResize(const PrepareArgs& args) {
  using params_internal::CheckArity;
  using params_internal::EffectiveOpset;
  using params_internal::HasInput;
  using params_internal::IntsToString;
  using params_internal::Invalid;
  using params_internal::Unsupported;
  const bool upsample = args.node->op_type == "Upsample";
  RETURN_IF_ERROR(CheckArity(args, 1, upsample ? 2 : 4));
  ResizeParams p;
  StatusOr<ResizeAttributes> attributes = ParseResizeAttributes(*args.node, EffectiveOpset(args));
  if (!attributes.ok()) return Invalid(args, attributes.status().message());
  p.attributes = std::move(*attributes);
  const ResizeAttributes& a = p.attributes;
  const TensorDesc& in = args.inputs[0];
  const TensorDesc& out = args.outputs[0];
  if (out.rank() != in.rank())
    return Invalid(args, "output " + out.ToString() + " has another rank than " + in.ToString());

  bool computed = false;
  std::vector<float> scales = a.scales_attribute;
  if (a.scales_input >= 0) {
    ASSIGN_OR_RETURN(scales, ConstantFloats(args, a.scales_input, &computed));
  }
  ASSIGN_OR_RETURN(std::vector<float> roi, ConstantFloats(args, a.roi_input, &computed));
  std::vector<int64_t> sizes;
  if (scales.empty() && !computed && a.sizes_input >= 0 &&
      HasInput(args, static_cast<size_t>(a.sizes_input))) {
    const size_t s = static_cast<size_t>(a.sizes_input);
    if (args.inputs[s].dtype != DataType::kI64)
      return Invalid(args, "sizes must be int64, got " + args.inputs[s].ToString());
    if (args.constants[s] == nullptr) {
      computed = true;
    } else {
      std::span<const int64_t> v = args.constants[s]->as<int64_t>();
      sizes.assign(v.begin(), v.end());
    }
  }
  if (computed) {
    // Known only at run time: the prepared output says the extents.
    if (a.aspect != ResizeAspect::kStretch)
      return Unsupported(args, "keep_aspect_ratio_policy with sizes computed at run time");
    if (!roi.empty() || a.coordinates == ResizeCoordinates::kTfCropAndResize)
      return Unsupported(args, "tf_crop_and_resize with an roi computed at run time");
    std::vector<int64_t> axes;
    for (int64_t axis = 0; axis < in.rank(); ++axis) axes.push_back(axis);
    ResizeAttributes all_axes = a;
    all_axes.axes = axes;
    StatusOr<ResizeGeometry> g = ComputeResizeGeometry(in.dims, all_axes, {}, out.dims, {});
    if (!g.ok()) return Invalid(args, g.status().message());
    p.geometry = std::move(*g);
  } else {
    StatusOr<ResizeGeometry> g = ComputeResizeGeometry(in.dims, a, scales, sizes, roi);
    if (!g.ok()) return Invalid(args, g.status().message());
    p.geometry = std::move(*g);
  }
  if (p.geometry.out_dims != out.dims)
    return Invalid(args, "scales / sizes give " + IntsToString(p.geometry.out_dims) +
                             ", the prepared output is " + out.ToString());
  return p;
}

}  // namespace braid
