// Reference GridSample (opset 16, f32, 4-D) as ONNX's reference and PyTorch
// compute it. grid[n, h, w] = (x, y) in [-1, 1] maps to input pixel
// coordinates: ((v + 1) * size - 1) / 2, or (v + 1) / 2 * (size - 1) with
// align_corners. A coordinate outside [-0.5, size - 0.5] ([0, size - 1] with
// align_corners) is first clamped (border) or reflected (reflection); then
//   nearest:  the pixel at the coordinates rounded half to even;
//   bilinear: 2x2 taps, weights 1 - t and t;
//   bicubic:  4x4 taps, Keys' cubic with A = -0.75;
// where a tap outside the image reads 0 (zeros), the nearest edge pixel
// (border) or its reflection (reflection). Weights and sums in double.
// Attributes and shapes: kernels/params/grid_sample.h (shared with the CUDA
// plan, whose device math, kernels/device_math/data.h, computes the same way).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <memory>

#include "kernels/backend.h"
#include "kernels/params/grid_sample.h"

namespace braid {
namespace {

using SampleMode = GridSampleMode;
using Padding = GridSamplePadding;

// Reflects x by the near border until it lies within [low, high].
double Reflect(double x, double low, double high) {
  const double range = high - low;
  if (range <= 0) return low;
  if (x < low) {
    const double dx = low - x;
    const auto n = static_cast<int64_t>(dx / range);
    const double r = dx - static_cast<double>(n) * range;
    return n % 2 == 0 ? low + r : high - r;
  }
  if (x > high) {
    const double dx = x - high;
    const auto n = static_cast<int64_t>(dx / range);
    const double r = dx - static_cast<double>(n) * range;
    return n % 2 == 0 ? high - r : low + r;
  }
  return x;
}

// Keys' cubic convolution weights of the taps at -1, 0, 1, 2 for offset t in [0, 1).
std::array<double, 4> CubicWeights(double t) {
  constexpr double a = -0.75;
  const double t1 = t + 1, t2 = 1 - t, t3 = 2 - t;
  return {((a * t1 - 5 * a) * t1 + 8 * a) * t1 - 4 * a, ((a + 2) * t - (a + 3)) * t * t + 1,
          ((a + 2) * t2 - (a + 3)) * t2 * t2 + 1, ((a * t3 - 5 * a) * t3 + 8 * a) * t3 - 4 * a};
}

class ReferenceGridSample final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(const GridSampleParams p, ParseGridSample(args));
    mode_ = p.mode;
    padding_ = p.padding;
    align_corners_ = p.align_corners;
    batch_ = p.batch;
    channels_ = p.channels;
    height_ = p.height;
    width_ = p.width;
    out_h_ = p.out_h;
    out_w_ = p.out_w;
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    const float* x = static_cast<const float*>(args.src[0]);
    const float* grid = static_cast<const float*>(args.src[1]);
    float* y = static_cast<float*>(args.dst[0]);
    for (int64_t n = 0; n < batch_; ++n)
      for (int64_t c = 0; c < channels_; ++c) {
        const float* plane = x + (n * channels_ + c) * height_ * width_;
        for (int64_t i = 0; i < out_h_ * out_w_; ++i) {
          const float* g = grid + (n * out_h_ * out_w_ + i) * 2;
          *y++ = static_cast<float>(Sample(plane, Source(g[1], height_), Source(g[0], width_)));
        }
      }
    return Status::Ok();
  }

 private:
  double Low() const { return align_corners_ ? 0.0 : -0.5; }
  double High(int64_t size) const {
    return align_corners_ ? static_cast<double>(size - 1) : static_cast<double>(size) - 0.5;
  }

  // The pixel coordinate a normalized grid value names, rounded for nearest
  // and brought inside the image for border / reflection padding.
  double Source(float normalized, int64_t size) const {
    const double v = normalized;
    double s = align_corners_ ? (v + 1) / 2 * static_cast<double>(size - 1)
                              : ((v + 1) * static_cast<double>(size) - 1) / 2;
    if (mode_ == SampleMode::kNearest) s = std::nearbyint(s);
    if (s < Low() || s > High(size)) {
      if (padding_ == Padding::kBorder) s = std::clamp(s, 0.0, static_cast<double>(size - 1));
      if (padding_ == Padding::kReflection) s = Reflect(s, Low(), High(size));
    }
    return s;
  }

  // Index of tap i on an axis of `size`, or -1 where zeros padding reads 0.
  int64_t Tap(int64_t i, int64_t size) const {
    if (i >= 0 && i < size) return i;
    switch (padding_) {
      case Padding::kZeros: return -1;
      case Padding::kBorder: return std::clamp<int64_t>(i, 0, size - 1);
      case Padding::kReflection:
        return std::clamp<int64_t>(
            static_cast<int64_t>(Reflect(static_cast<double>(i), Low(), High(size))), 0, size - 1);
    }
    return -1;
  }

  double Pixel(const float* plane, int64_t row, int64_t column) const {
    row = Tap(row, height_);
    column = Tap(column, width_);
    return row < 0 || column < 0 ? 0.0 : plane[row * width_ + column];
  }

  double Sample(const float* plane, double sy, double sx) const {
    if (mode_ == SampleMode::kNearest)
      return Pixel(plane, static_cast<int64_t>(sy), static_cast<int64_t>(sx));
    const double fy = std::floor(sy), fx = std::floor(sx);
    const auto y0 = static_cast<int64_t>(fy), x0 = static_cast<int64_t>(fx);
    const double ty = sy - fy, tx = sx - fx;
    if (mode_ == SampleMode::kLinear) {
      const double wy[2] = {1 - ty, ty}, wx[2] = {1 - tx, tx};
      double sum = 0;
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) sum += wy[i] * wx[j] * Pixel(plane, y0 + i, x0 + j);
      return sum;
    }
    const std::array<double, 4> wy = CubicWeights(ty), wx = CubicWeights(tx);
    double sum = 0;
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j)
        sum += wy[static_cast<size_t>(i)] * wx[static_cast<size_t>(j)] *
               Pixel(plane, y0 - 1 + i, x0 - 1 + j);
    return sum;
  }

  SampleMode mode_ = SampleMode::kLinear;
  Padding padding_ = Padding::kZeros;
  bool align_corners_ = false;
  int64_t batch_ = 0, channels_ = 0, height_ = 0, width_ = 0, out_h_ = 0, out_w_ = 0;
};

}  // namespace

void RegisterReferenceGridSample(KernelRegistry& registry) {
  registry.Register({"GridSample", DeviceKind::kCpu, "reference", 0,
                     [] { return std::make_unique<ReferenceGridSample>(); }});
}

}  // namespace braid
