#include "graph/ops/conv_transpose_geometry.h"

#include <string>

#include "graph/passes/shape_inference.h"

namespace braid {
namespace {

constexpr int64_t kMaxExtent = int64_t{1} << 31;

std::string Ints(const std::vector<int64_t>& v) { return IntsToString(v); }

}  // namespace

StatusOr<ConvTransposeGeometry> ComputeConvTransposeGeometry(const Attributes& attrs,
                                                             std::span<const int64_t> in_spatial,
                                                             std::span<const int64_t> weight_kernel) {
  const size_t n = in_spatial.size();
  ConvTransposeGeometry g;
  const std::vector<int64_t> ones(n, 1), zeros(n, 0);
  g.kernel = attrs.GetInts("kernel_shape", {weight_kernel.begin(), weight_kernel.end()});
  g.strides = attrs.GetInts("strides", ones);
  g.dilations = attrs.GetInts("dilations", ones);
  g.output_padding = attrs.GetInts("output_padding", zeros);
  const std::vector<int64_t> pads = attrs.GetInts("pads", std::vector<int64_t>(2 * n, 0));
  const std::vector<int64_t> output_shape = attrs.GetInts("output_shape");
  const std::string auto_pad = attrs.GetString("auto_pad", "NOTSET");
  if (g.kernel != std::vector<int64_t>(weight_kernel.begin(), weight_kernel.end()))
    return InvalidArgument("kernel_shape " + Ints(g.kernel) + " does not match the weight's " +
                           Ints({weight_kernel.begin(), weight_kernel.end()}));
  if (g.strides.size() != n || g.dilations.size() != n || g.output_padding.size() != n ||
      pads.size() != 2 * n)
    return InvalidArgument("strides " + Ints(g.strides) + ", dilations " + Ints(g.dilations) +
                           ", output_padding " + Ints(g.output_padding) + " or pads " +
                           Ints(pads) + " do not fit " + std::to_string(n) + " spatial axes");
  if (!output_shape.empty() && output_shape.size() != n)
    return InvalidArgument("output_shape " + Ints(output_shape) + " does not fit " +
                           std::to_string(n) + " spatial axes");
  for (int64_t v : output_shape)
    if (v < 0 || v > kMaxExtent)
      return InvalidArgument("output_shape " + Ints(output_shape) + " must be in [0, 2^31]");
  for (int64_t v : pads)
    if (v < 0 || v > kMaxExtent)
      return InvalidArgument("pads " + Ints(pads) + " must be in [0, 2^31]");
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" &&
      auto_pad != "SAME_LOWER")
    return InvalidArgument("unknown auto_pad '" + auto_pad + "'");
  for (size_t i = 0; i < n; ++i) {
    if (g.strides[i] <= 0 || g.dilations[i] <= 0 || g.kernel[i] <= 0 || g.output_padding[i] < 0 ||
        in_spatial[i] < 0 || g.strides[i] > kMaxExtent || g.dilations[i] > kMaxExtent ||
        g.kernel[i] > kMaxExtent || in_spatial[i] > kMaxExtent || g.output_padding[i] > kMaxExtent)
      return InvalidArgument("strides " + Ints(g.strides) + ", dilations " + Ints(g.dilations) +
                             ", kernel " + Ints(g.kernel) + " and output_padding " +
                             Ints(g.output_padding) + " must be positive (padding >= 0) and below 2^31");
    if (g.output_padding[i] >= g.strides[i] && g.output_padding[i] >= g.dilations[i])
      return InvalidArgument("output_padding " + Ints(g.output_padding) +
                             " must be smaller than the stride or the dilation");
  }
  g.pads_begin.assign(n, 0);
  g.pads_end.assign(n, 0);
  g.out_spatial.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    // The output before any padding is taken off.
    const int64_t full = g.strides[i] * (in_spatial[i] - 1) + g.output_padding[i] +
                         (g.kernel[i] - 1) * g.dilations[i] + 1;
    int64_t target = -1;
    if (!output_shape.empty()) {
      target = output_shape[i];
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      target = in_spatial[i] * g.strides[i];
    }
    if (target >= 0) {
      // Negative when the output asked for is past the full one (an
      // output_shape, or SAME with a stride above the dilated kernel).
      const int64_t total = full - target;
      // Floor division, as ONNX's reference: a negative total leaves its
      // extra at the end.
      const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
      if (auto_pad == "SAME_UPPER") {
        g.pads_begin[i] = half;
        g.pads_end[i] = total - half;
      } else {
        g.pads_begin[i] = total - half;
        g.pads_end[i] = half;
      }
      g.out_spatial[i] = target;
    } else {
      if (auto_pad == "NOTSET") {
        g.pads_begin[i] = pads[i];
        g.pads_end[i] = pads[n + i];
      }
      g.out_spatial[i] = full - g.pads_begin[i] - g.pads_end[i];
    }
    if (g.out_spatial[i] < 0 || g.out_spatial[i] > kMaxExtent)
      return InvalidArgument("the output's spatial extent " + std::to_string(g.out_spatial[i]) +
                             " is out of range (pads " + Ints(pads) + ")");
  }
  return g;
}

}  // namespace braid
