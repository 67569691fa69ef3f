// Reference Resize (opsets 10-19) and Upsample (7-9), float32: ONNX's
// interpolation (the onnx reference, onnx/reference/ops/op_resize.py) in
// double precision. Per axis and output coordinate: the input coordinate from
// the coordinate transformation mode; its neighbours (2 for nearest and
// linear, 4 for cubic, more with antialias when shrinking), chosen as the
// reference does (the n positions closest to it, the window kept inside the
// axis padded by n/2 with its edge values); and their weights. The N-D value
// is the sum over the neighbours of every resized axis of the product of the
// weights (the interpolation is separable). tf_crop_and_resize gives
// extrapolation_value where the coordinate leaves the input. Upsample and
// Resize-10 use asymmetric coordinates and ONNX Runtime's nearest rounding of
// those versions (floor when enlarging, ceil when shrinking).
#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "kernels/params/resize.h"
#include "kernels/reference/data_kernel_util.h"

namespace braid::reference {
namespace {

constexpr int kMaxRank = 8;

// One axis: per output coordinate, a run of taps (input index, weight).
struct AxisMap {
  struct Tap {
    int64_t index = 0;
    double weight = 0;
  };
  std::vector<size_t> first;     // per output coordinate: its first tap
  std::vector<uint32_t> count;   // and how many
  std::vector<uint8_t> outside;  // tf_crop_and_resize: extrapolation_value
  std::vector<Tap> taps;
  bool identity = true;  // output coordinate o reads input o, weight 1
};

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

AxisMap BuildAxis(const ResizeAttributes& a, int64_t in_len, int64_t out_len, double scale,
                  double roi_start, double roi_end) {
  AxisMap m;
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

class ResizeKernel final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(ResizeParams p, ParseResize(args));
    const TensorDesc& in = args.inputs[0];
    if (in.dtype != DataType::kF32) return UnsupportedDtype(args, in.dtype);
    if (in.rank() > kMaxRank)
      return Unimplemented(args.Where() + ": rank " + std::to_string(in.rank()) + " above " +
                           std::to_string(kMaxRank));
    rank_ = in.rank();
    extrapolation_ = static_cast<float>(p.attributes.extrapolation_value);
    out_dims_ = args.outputs[0].dims;
    axes_.clear();
    resized_.clear();
    for (int d = 0; d < rank_; ++d) {
      const auto u = static_cast<size_t>(d);
      if (in.dims[u] == 0 && out_dims_[u] > 0)
        return InvalidArgument(args.Where() + ": resizes an empty axis to " +
                               std::to_string(out_dims_[u]));
      axes_.push_back(in.dims[u] == 0 ? AxisMap()
                                      : BuildAxis(p.attributes, in.dims[u], out_dims_[u],
                                                  p.geometry.scales[u], p.geometry.roi_start[u],
                                                  p.geometry.roi_end[u]));
      if (in.dims[u] == 0) axes_.back().identity = true;
      if (!axes_.back().identity) resized_.push_back(d);
    }
    in_strides_.assign(static_cast<size_t>(rank_), 1);
    for (int d = rank_ - 2; d >= 0; --d)
      in_strides_[static_cast<size_t>(d)] =
          in_strides_[static_cast<size_t>(d) + 1] * in.dims[static_cast<size_t>(d) + 1];
    // Nearest (every output element one input element, weight 1): a gather
    // through per-axis source offsets, a row at a time.
    gather_ = !resized_.empty();
    for (const AxisMap& m : axes_) {
      if (m.identity) continue;
      for (size_t o = 0; o < m.count.size(); ++o)
        if (m.outside[o] || m.count[o] != 1 || m.taps[m.first[o]].weight != 1.0) gather_ = false;
    }
    source_offset_.assign(static_cast<size_t>(rank_), {});
    if (gather_) {
      for (int d = 0; d < rank_; ++d) {
        const auto u = static_cast<size_t>(d);
        std::vector<int64_t>& offsets = source_offset_[u];
        const AxisMap& m = axes_[u];
        for (int64_t o = 0; o < out_dims_[u]; ++o) {
          const int64_t source = m.identity ? o : m.taps[m.first[static_cast<size_t>(o)]].index;
          offsets.push_back(source * in_strides_[u]);
        }
      }
    }
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    const auto* src = static_cast<const float*>(args.src[0]);
    auto* dst = static_cast<float*>(args.dst[0]);
    int64_t total = 1;
    for (int64_t d : out_dims_) total *= d;
    if (total == 0) return Status::Ok();
    std::array<int64_t, kMaxRank> idx{};
    if (gather_) return Gather(src, dst, total);
    const size_t k = resized_.size();
    for (int64_t flat = 0; flat < total; ++flat) {
      int64_t base = 0;
      bool outside = false;
      for (int d = 0; d < rank_; ++d) {
        const auto u = static_cast<size_t>(d);
        if (axes_[u].identity) {
          base += idx[u] * in_strides_[u];
        } else if (axes_[u].outside[static_cast<size_t>(idx[u])]) {
          outside = true;
        }
      }
      if (outside) {
        dst[flat] = extrapolation_;
      } else {
        // Every combination of the resized axes' taps.
        std::array<uint32_t, kMaxRank> t{};
        double acc = 0;
        while (true) {
          double w = 1;
          int64_t offset = base;
          for (size_t j = 0; j < k; ++j) {
            const auto axis = static_cast<size_t>(resized_[j]);
            const AxisMap& m = axes_[axis];
            const AxisMap::Tap& tap = m.taps[m.first[static_cast<size_t>(idx[axis])] + t[j]];
            w *= tap.weight;
            offset += tap.index * in_strides_[axis];
          }
          acc += w * static_cast<double>(src[offset]);
          size_t j = k;
          while (j > 0) {
            const auto axis = static_cast<size_t>(resized_[j - 1]);
            if (++t[j - 1] < axes_[axis].count[static_cast<size_t>(idx[axis])]) break;
            t[j - 1] = 0;
            --j;
          }
          if (j == 0) break;
        }
        dst[flat] = static_cast<float>(acc);
      }
      for (int d = rank_ - 1; d >= 0; --d) {
        const auto u = static_cast<size_t>(d);
        if (++idx[u] < out_dims_[u]) break;
        idx[u] = 0;
      }
    }
    return Status::Ok();
  }

 private:
  // The nearest path: rows of the last axis through its offset table.
  Status Gather(const float* src, float* dst, int64_t total) const {
    const auto last = static_cast<size_t>(rank_ - 1);
    const int64_t row = out_dims_[last];
    const int64_t* inner = source_offset_[last].data();
    std::array<int64_t, kMaxRank> idx{};
    for (int64_t start = 0; start < total; start += row) {
      int64_t base = 0;
      for (size_t d = 0; d < last; ++d) base += source_offset_[d][static_cast<size_t>(idx[d])];
      const float* from = src + base;
      float* to = dst + start;
      for (int64_t i = 0; i < row; ++i) to[i] = from[inner[i]];
      for (int d = static_cast<int>(last) - 1; d >= 0; --d) {
        const auto u = static_cast<size_t>(d);
        if (++idx[u] < out_dims_[u]) break;
        idx[u] = 0;
      }
    }
    return Status::Ok();
  }

  int rank_ = 0;
  bool gather_ = false;
  std::vector<std::vector<int64_t>> source_offset_;  // per axis and output coordinate
  float extrapolation_ = 0;
  std::vector<int64_t> out_dims_, in_strides_;
  std::vector<AxisMap> axes_;
  std::vector<int> resized_;  // axes that are not the identity
};

}  // namespace

void RegisterResizeKernel(KernelRegistry& registry) {
  RegisterReference<ResizeKernel>(registry, "Resize");
  RegisterReference<ResizeKernel>(registry, "Upsample");
}

}  // namespace braid::reference
