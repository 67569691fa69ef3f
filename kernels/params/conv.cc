#include "kernels/params/conv.h"

#include <string>

#include "kernels/params/parse_util.h"

namespace braid {

namespace params_internal {

StatusOr<Window> ResolveWindow(const PrepareArgs& args,
                               const std::vector<int64_t>& in_spatial,
                               const std::vector<int64_t>& kernel,
                               bool ceil_mode) {
  const Attributes& attrs = args.node->attrs;
  const size_t k = kernel.size();
  Window w;
  w.strides = attrs.GetInts("strides", std::vector<int64_t>(k, 1));
  w.dilations = attrs.GetInts("dilations", std::vector<int64_t>(k, 1));
  const std::vector<int64_t> pads =
      attrs.GetInts("pads", std::vector<int64_t>(2 * k, 0));
  const std::string auto_pad = attrs.GetString("auto_pad", "NOTSET");
  if (w.strides.size() != k || w.dilations.size() != k || pads.size() != 2 * k)
    return Invalid(args, std::string("strides ")
                             .append(IntsToString(w.strides))
                             .append(", dilations ")
                             .append(IntsToString(w.dilations))
                             .append(" or pads ")
                             .append(IntsToString(pads))
                             .append(" do not match ")
                             .append(std::to_string(k))
                             .append(" spatial dimensions"));
  for (size_t i = 0; i < k; ++i) {
    if (kernel[i] <= 0 || w.strides[i] <= 0 || w.dilations[i] <= 0)
      return Invalid(args, std::string("kernel ")
                               .append(IntsToString(kernel))
                               .append(", strides ")
                               .append(IntsToString(w.strides))
                               .append(" and dilations ")
                               .append(IntsToString(w.dilations))
                               .append(" must be positive"));
    if (pads[i] < 0 || pads[i + k] < 0)
      return Invalid(args, std::string("negative pads ").append(IntsToString(pads)));
  }
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  if (!same && auto_pad != "NOTSET" && auto_pad != "VALID")
    return Invalid(args, std::string("unknown auto_pad '").append(auto_pad).append("'"));
  w.pads_begin.resize(k);
  w.pads_end.resize(k);
  w.out.resize(k);
  for (size_t i = 0; i < k; ++i) {
    const int64_t in = in_spatial[i];
    const int64_t s = w.strides[i];
    // Attributes are untrusted: every step that could overflow is checked
    // (all terms are >= 0 here).
    int64_t effective = 0;
    if (__builtin_mul_overflow(kernel[i] - 1, w.dilations[i], &effective) ||
        __builtin_add_overflow(effective, 1, &effective))
      return Invalid(args, std::string("kernel ")
                               .append(IntsToString(kernel))
                               .append(" with dilations ")
                               .append(IntsToString(w.dilations))
                               .append(" overflows"));
    if (same) {
      // Output ceil(in / s); the total padding needed to reach it is split
      // with the odd element at the end (UPPER) or the beginning (LOWER).
      const int64_t out = in == 0 ? 0 : (in - 1) / s + 1;
      int64_t total = 0;
      if (out > 0 && (__builtin_mul_overflow(out - 1, s, &total) ||
                      __builtin_add_overflow(total, effective - in, &total)))
        return Invalid(args, "SAME padding overflows");
      if (total < 0) total = 0;
      const int64_t small = total / 2, large = total - total / 2;
      w.pads_begin[i] = auto_pad == "SAME_UPPER" ? small : large;
      w.pads_end[i] = auto_pad == "SAME_UPPER" ? large : small;
      w.out[i] = out;
      continue;
    }
    w.pads_begin[i] = auto_pad == "VALID" ? 0 : pads[i];
    w.pads_end[i] = auto_pad == "VALID" ? 0 : pads[i + k];
    int64_t padded = 0;
    if (__builtin_add_overflow(in, w.pads_begin[i], &padded) ||
        __builtin_add_overflow(padded, w.pads_end[i], &padded))
      return Invalid(args, std::string("pads ").append(IntsToString(pads)).append(" overflow"));
    const int64_t span = padded - effective;
    if (span < 0)
      return Invalid(args, std::string("kernel extent ")
                               .append(std::to_string(effective))
                               .append(" exceeds the padded input ")
                               .append(std::to_string(padded))
                               .append(" in spatial dim ")
                               .append(std::to_string(i)));
    if (ceil_mode) {
      int64_t out = span / s + (span % s != 0 ? 1 : 0) + 1;
      // The last window must start inside the input or its begin padding
      // (PyTorch and ONNX Runtime agree on this rule).
      int64_t last_start = 0;
      if (__builtin_mul_overflow(out - 1, s, &last_start) ||
          last_start >= in + w.pads_begin[i])
        --out;
      w.out[i] = out;
    } else {
      w.out[i] = span / s + 1;
    }
  }
  return w;
}

}  // namespace params_internal

using params_internal::Invalid;
using params_internal::IntsToString;
using params_internal::Product;

int64_t ConvParams::in_spatial_size() const { return Product(in_spatial); }
int64_t ConvParams::out_spatial_size() const { return Product(out_spatial); }
int64_t ConvParams::kernel_size() const { return Product(kernel); }

StatusOr<ConvParams> ParseConv(const PrepareArgs& args) {
  RETURN_IF_ERROR(params_internal::CheckArity(args, 2, 3));
  const TensorDesc& x = args.inputs[0];
  const TensorDesc& w = args.inputs[1];
  ConvParams p;
  p.dtype = x.dtype;
  if (x.rank() < 3)
    return Invalid(args, std::string("input ")
                             .append(x.ToString())
                             .append(" must have rank >= 3 (N, C, spatial...)"));
  if (w.rank() != x.rank())
    return Invalid(args, std::string("weight ")
                             .append(w.ToString())
                             .append(" rank differs from input ")
                             .append(x.ToString()));
  if (w.dtype != x.dtype)
    return Invalid(args, std::string("weight dtype ")
                             .append(DataTypeName(w.dtype))
                             .append(" differs from input dtype ")
                             .append(DataTypeName(x.dtype)));
  for (int64_t d : x.dims)
    if (d < 0) return Invalid(args, std::string("negative dim in input ").append(x.ToString()));
  for (int64_t d : w.dims)
    if (d <= 0) return Invalid(args, std::string("weight ").append(w.ToString()).append(" has a non-positive dim"));
  p.spatial_rank = x.rank() - 2;
  p.batch = x.dims[0];
  p.in_channels = x.dims[1];
  p.out_channels = w.dims[0];
  p.groups = args.node->attrs.GetInt("group", 1);
  if (p.groups <= 0)
    return Invalid(args, std::string("group ").append(std::to_string(p.groups)).append(" must be positive"));
  if (p.out_channels % p.groups != 0)
    return Invalid(args, std::string("output channels ")
                             .append(std::to_string(p.out_channels))
                             .append(" are not divisible by group ")
                             .append(std::to_string(p.groups)));
  p.in_channels_per_group = w.dims[1];
  if (p.in_channels % p.groups != 0 || p.in_channels / p.groups != p.in_channels_per_group)
    return Invalid(args, std::string("input channels ")
                             .append(std::to_string(p.in_channels))
                             .append(" do not match weight channels ")
                             .append(std::to_string(p.in_channels_per_group))
                             .append(" x group ")
                             .append(std::to_string(p.groups)));
  p.out_channels_per_group = p.out_channels / p.groups;
  p.in_spatial.assign(x.dims.begin() + 2, x.dims.end());
  p.kernel.assign(w.dims.begin() + 2, w.dims.end());
  const std::vector<int64_t> kernel_shape =
      args.node->attrs.GetInts("kernel_shape", p.kernel);
  if (kernel_shape != p.kernel)
    return Invalid(args, std::string("kernel_shape ")
                             .append(IntsToString(kernel_shape))
                             .append(" does not match the weight ")
                             .append(w.ToString()));
  p.has_bias = params_internal::HasInput(args, 2);
  if (p.has_bias) {
    const TensorDesc& b = args.inputs[2];
    if (b.dims != std::vector<int64_t>{p.out_channels} || b.dtype != x.dtype)
      return Invalid(args, std::string("bias ")
                               .append(b.ToString())
                               .append(" is not ")
                               .append(TensorDesc{x.dtype, {p.out_channels}}.ToString()));
  }
  ASSIGN_OR_RETURN(params_internal::Window win,
                   params_internal::ResolveWindow(args, p.in_spatial, p.kernel,
                                                  /*ceil_mode=*/false));
  p.strides = std::move(win.strides);
  p.dilations = std::move(win.dilations);
  p.pads_begin = std::move(win.pads_begin);
  p.pads_end = std::move(win.pads_end);
  p.out_spatial = std::move(win.out);
  ASSIGN_OR_RETURN(p.activation, ParseFusedActivation(args));
  ASSIGN_OR_RETURN(p.precision, params_internal::ParsePrecision(args, x.dtype));
  std::vector<int64_t> out_dims{p.batch, p.out_channels};
  out_dims.insert(out_dims.end(), p.out_spatial.begin(), p.out_spatial.end());
  RETURN_IF_ERROR(params_internal::CheckOutput(args, out_dims, x.dtype));
  return p;
}

}  // namespace braid
