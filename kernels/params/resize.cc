#include "kernels/params/resize.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/params/parse_util.h"

namespace braid {
namespace {

double CubicKernel(double x, double a) {  // Keys' cubic convolution
  x = std::fabs(x);
  if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0;
}

// The weights of the neighbours of a coordinate whose fraction past `base`
// is `ratio` (in (0, 1]), for the mode; `scale` < 1 widens antialias kernels.
std::vector<double> Weights(const ResizeAttributes& a, double ratio, double scale) {
  switch (a.mode) {
    case ResizeMode::kNearest: {
      if (ratio == 1) return {0, 1};
      switch (a.nearest) {
        case ResizeNearest::kRoundPreferFloor: return {ratio <= 0.5 ? 1.0 : 0.0, ratio > 0.5 ? 1.0 : 0.0};
        case ResizeNearest::kRoundPreferCeil: return {ratio < 0.5 ? 1.0 : 0.0, ratio >= 0.5 ? 1.0 : 0.0};
        case ResizeNearest::kFloor: return {1, 0};
        case ResizeNearest::kCeil: return {0, 1};
        case ResizeNearest::kSimple: break;  // handled by the caller
      }
      return {0, 1};
    }
    case ResizeMode::kLinear: {
      if (!a.antialias) return {1 - ratio, ratio};
      const double s = std::min(scale, 1.0);
      const auto start = static_cast<int64_t>(std::floor(-1 / s) + 1);
      const int64_t footprint = 2 - 2 * start;
      std::vector<double> w;
      double sum = 0;
      for (int64_t k = 0; k < footprint; ++k) {
        const double v = std::clamp(1 - std::fabs((static_cast<double>(start + k) - ratio) * s), 0.0, 1.0);
        w.push_back(v);
        sum += v;
      }
      for (double& v : w) v /= sum;
      return w;
    }
    case ResizeMode::kCubic: {
      const double A = a.cubic_coeff_a;
      if (!a.antialias) {
        const double r1 = ratio + 1, q = 1 - ratio, q1 = q + 1;
        return {((A * r1 - 5 * A) * r1 + 8 * A) * r1 - 4 * A,
                ((A + 2) * ratio - (A + 3)) * ratio * ratio + 1,
                ((A + 2) * q - (A + 3)) * q * q + 1,
                ((A * q1 - 5 * A) * q1 + 8 * A) * q1 - 4 * A};
      }
      const double s = std::min(scale, 1.0);
      const auto start = static_cast<int64_t>(std::floor(-2 / s) + 1);
      const int64_t end = 2 - start;
      std::vector<double> w;
      double sum = 0;
      for (int64_t i = start; i < end; ++i) {
        const double v = CubicKernel(s * (static_cast<double>(i) - ratio), A);
        w.push_back(v);
        sum += v;
      }
      for (double& v : w) v /= sum;
      return w;
    }
  }
  return {0, 1};
}

// The input coordinate of output coordinate `o` (the onnx reference's
// transforms; `out_width` is scale * in_len, not rounded).
double InputCoordinate(const ResizeAttributes& a, double o, double scale, int64_t in_len,
                       int64_t out_len, double roi_start, double roi_end) {
  const double in = static_cast<double>(in_len);
  const double out_width = scale * in;
  switch (a.coordinates) {
    case ResizeCoordinates::kHalfPixel: return (o + 0.5) / scale - 0.5;
    case ResizeCoordinates::kHalfPixelSymmetric: {
      const double adjustment = static_cast<double>(out_len) / out_width;
      const double offset = in / 2 * (1 - adjustment);
      return offset + (o + 0.5) / scale - 0.5;
    }
    case ResizeCoordinates::kPytorchHalfPixel:
      return out_width == 1 ? 0.0 : (o + 0.5) / scale - 0.5;
    case ResizeCoordinates::kAlignCorners:
      return out_width == 1 ? 0.0 : o * (in - 1) / (out_width - 1);
    case ResizeCoordinates::kAsymmetric: return o / scale;
    case ResizeCoordinates::kTfHalfPixelForNn: return (o + 0.5) / scale;
    case ResizeCoordinates::kTfCropAndResize: {
      const double x = out_width == 1 ? (roi_end - roi_start) * (in - 1) / 2
                                      : o * (roi_end - roi_start) * (in - 1) / (out_width - 1);
      return x + roi_start * (in - 1);
    }
  }
  return o / scale;
}


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

ResizeAxisMap BuildResizeAxis(const ResizeAttributes& a, int64_t in_len, int64_t out_len,
                              double scale, double roi_start, double roi_end) {
  ResizeAxisMap m;
  m.first.resize(static_cast<size_t>(out_len));
  m.count.resize(static_cast<size_t>(out_len));
  m.outside.assign(static_cast<size_t>(out_len), 0);
  auto add = [&](int64_t index, double weight) {
    m.taps.push_back({std::clamp<int64_t>(index, 0, in_len - 1), weight});
  };
  for (int64_t o = 0; o < out_len; ++o) {
    const auto u = static_cast<size_t>(o);
    m.first[u] = m.taps.size();
    const double x =
        InputCoordinate(a, static_cast<double>(o), scale, in_len, out_len, roi_start, roi_end);
    if (a.coordinates == ResizeCoordinates::kTfCropAndResize &&
        (x < 0 || x > static_cast<double>(in_len - 1))) {
      m.outside[u] = 1;
      m.identity = false;
      continue;
    }
    if (a.mode == ResizeMode::kNearest && a.nearest == ResizeNearest::kSimple) {
      add(static_cast<int64_t>(scale < 1 ? std::ceil(x) : std::floor(x)), 1.0);
    } else {
      const double floor_x = std::floor(x);
      // The reference leans left: an integer x is the right end of (x-1, x].
      const double base = x == floor_x ? floor_x - 1 : floor_x;
      const double ratio = x - base;
      std::vector<double> w = Weights(a, ratio, scale);
      const auto n = static_cast<int64_t>(w.size());
      const int64_t pad = (n + 1) / 2;
      int64_t start = static_cast<int64_t>(base) - n / 2 + 1;
      start = std::clamp(start, -pad, in_len - 1 + pad - (n - 1));
      if (a.exclude_outside) {
        double sum = 0;
        for (int64_t k = 0; k < n; ++k) {
          const int64_t idx = start + k;
          if (idx < 0 || idx >= in_len) w[static_cast<size_t>(k)] = 0;
          sum += w[static_cast<size_t>(k)];
        }
        if (sum != 0)
          for (double& v : w) v /= sum;
      }
      for (int64_t k = 0; k < n; ++k)
        if (w[static_cast<size_t>(k)] != 0) add(start + k, w[static_cast<size_t>(k)]);
      if (m.taps.size() == m.first[u]) add(start, 0.0);  // every weight excluded: 0
    }
    m.count[u] = static_cast<uint32_t>(m.taps.size() - m.first[u]);
    if (m.count[u] != 1 || m.taps[m.first[u]].index != o || m.taps[m.first[u]].weight != 1.0)
      m.identity = false;
  }
  if (in_len != out_len) m.identity = false;
  return m;
}


}  // namespace braid
