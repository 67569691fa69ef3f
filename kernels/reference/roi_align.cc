// Reference RoiAlign (opsets 10, 16; f32) as ONNX's reference and ONNX
// Runtime compute it. A roi (x1, y1, x2, y2) is scaled by spatial_scale and
// shifted by -0.5 under half_pixel (opset 16's default; opset 10 is
// output_half_pixel: no shift, and extents at least 1). Each of the
// output_height x output_width bins averages (avg) or takes the largest
// weighted tap of (max) a grid of bilinear samples: sampling_ratio per side,
// or ceil(bin extent) with sampling_ratio 0. A sample beyond [-1, size] on an
// axis reads 0; one in [-1, 0] reads the edge.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>

#include "kernels/backend.h"
#include "kernels/params/parse_util.h"

namespace braid {
namespace {

class ReferenceRoiAlign final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    RETURN_IF_ERROR(params_internal::CheckArity(args, 3, 3));
    const TensorDesc& x = args.inputs[0];
    const TensorDesc& rois = args.inputs[1];
    const TensorDesc& batch = args.inputs[2];
    if (x.dtype != DataType::kF32 || rois.dtype != DataType::kF32)
      return params_internal::Unsupported(args, "reference RoiAlign supports f32 only");
    if (x.rank() != 4 || rois.rank() != 2 || rois.dims[1] != 4 || batch.rank() != 1 ||
        batch.dims[0] != rois.dims[0] || batch.dtype != DataType::kI64)
      return params_internal::Invalid(args, "X " + x.ToString() + ", rois " + rois.ToString() +
                                                ", batch_indices " + batch.ToString() +
                                                " must be [N, C, H, W], [R, 4], i64 [R]");
    const Attributes& attrs = args.node->attrs;
    const std::string mode = attrs.GetString("mode", "avg");
    if (mode != "avg" && mode != "max")
      return params_internal::Invalid(args, "mode '" + mode + "' must be avg or max");
    max_ = mode == "max";
    const std::string ctm = attrs.GetString(
        "coordinate_transformation_mode",
        params_internal::EffectiveOpset(args) >= 16 ? "half_pixel" : "output_half_pixel");
    if (ctm != "half_pixel" && ctm != "output_half_pixel")
      return params_internal::Invalid(args, "coordinate_transformation_mode '" + ctm +
                                                "' must be half_pixel or output_half_pixel");
    half_pixel_ = ctm == "half_pixel";
    out_h_ = attrs.GetInt("output_height", 1);
    out_w_ = attrs.GetInt("output_width", 1);
    sampling_ratio_ = attrs.GetInt("sampling_ratio", 0);
    scale_ = attrs.GetFloat("spatial_scale", 1.0f);
    if (out_h_ <= 0 || out_w_ <= 0 || sampling_ratio_ < 0)
      return params_internal::Invalid(args, "output_height " + std::to_string(out_h_) + ", output_width " +
                                                std::to_string(out_w_) + ", sampling_ratio " +
                                                std::to_string(sampling_ratio_) +
                                                " (extents positive, sampling_ratio >= 0)");
    batch_ = x.dims[0];
    channels_ = x.dims[1];
    height_ = x.dims[2];
    width_ = x.dims[3];
    num_rois_ = rois.dims[0];
    RETURN_IF_ERROR(params_internal::CheckOutput(args, {num_rois_, channels_, out_h_, out_w_}, DataType::kF32));
    where_ = args.Where();
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    const auto* x = static_cast<const float*>(args.src[0]);
    const auto* rois = static_cast<const float*>(args.src[1]);
    const auto* batch = static_cast<const int64_t*>(args.src[2]);
    auto* y = static_cast<float*>(args.dst[0]);
    const double offset = half_pixel_ ? 0.5 : 0.0;
    for (int64_t r = 0; r < num_rois_; ++r) {
      if (batch[r] < 0 || batch[r] >= batch_)
        return InvalidArgument(where_ + ": batch_indices[" + std::to_string(r) + "] = " +
                               std::to_string(batch[r]) + " outside [0, " + std::to_string(batch_) + ")");
      const float* roi = rois + r * 4;
      const double x0 = roi[0] * scale_ - offset, y0 = roi[1] * scale_ - offset;
      double roi_w = roi[2] * scale_ - offset - x0, roi_h = roi[3] * scale_ - offset - y0;
      if (!half_pixel_) {
        roi_w = std::max(roi_w, 1.0);
        roi_h = std::max(roi_h, 1.0);
      }
      const double bin_h = roi_h / static_cast<double>(out_h_), bin_w = roi_w / static_cast<double>(out_w_);
      const int64_t grid_h = sampling_ratio_ > 0 ? sampling_ratio_ : static_cast<int64_t>(std::ceil(roi_h / static_cast<double>(out_h_)));
      const int64_t grid_w = sampling_ratio_ > 0 ? sampling_ratio_ : static_cast<int64_t>(std::ceil(roi_w / static_cast<double>(out_w_)));
      const double count = static_cast<double>(std::max<int64_t>(grid_h * grid_w, 1));
      for (int64_t c = 0; c < channels_; ++c) {
        const float* plane = x + (batch[r] * channels_ + c) * height_ * width_;
        for (int64_t ph = 0; ph < out_h_; ++ph)
          for (int64_t pw = 0; pw < out_w_; ++pw) {
            double sum = 0, best = 0;
            bool first = true;
            for (int64_t iy = 0; iy < grid_h; ++iy) {
              const double sy = y0 + static_cast<double>(ph) * bin_h +
                                (static_cast<double>(iy) + 0.5) * bin_h / static_cast<double>(grid_h);
              for (int64_t ix = 0; ix < grid_w; ++ix) {
                const double sx = x0 + static_cast<double>(pw) * bin_w +
                                  (static_cast<double>(ix) + 0.5) * bin_w / static_cast<double>(grid_w);
                const Taps t = Bilinear(sy, sx);
                double v[4] = {0, 0, 0, 0};
                for (int k = 0; k < 4; ++k) v[k] = t.w[k] * plane[t.pos[k]];
                sum += v[0] + v[1] + v[2] + v[3];
                const double m = std::max(std::max(v[0], v[1]), std::max(v[2], v[3]));
                best = first ? m : std::max(best, m);
                first = false;
              }
            }
            *y++ = static_cast<float>(max_ ? best : sum / count);
          }
      }
    }
    return Status::Ok();
  }

 private:
  struct Taps {
    int64_t pos[4] = {0, 0, 0, 0};
    double w[4] = {0, 0, 0, 0};
  };

  // ONNX Runtime's bilinear taps: zero weights outside [-1, size], the
  // coordinate clamped to 0 below it and to the last pixel past it.
  Taps Bilinear(double sy, double sx) const {
    Taps t;
    if (sy < -1.0 || sy > static_cast<double>(height_) || sx < -1.0 || sx > static_cast<double>(width_))
      return t;
    sy = std::max(sy, 0.0);
    sx = std::max(sx, 0.0);
    auto y_low = static_cast<int64_t>(sy), x_low = static_cast<int64_t>(sx);
    int64_t y_high = y_low + 1, x_high = x_low + 1;
    if (y_low >= height_ - 1) {
      y_high = y_low = height_ - 1;
      sy = static_cast<double>(y_low);
    }
    if (x_low >= width_ - 1) {
      x_high = x_low = width_ - 1;
      sx = static_cast<double>(x_low);
    }
    const double ly = sy - static_cast<double>(y_low), lx = sx - static_cast<double>(x_low);
    const double hy = 1 - ly, hx = 1 - lx;
    t.pos[0] = y_low * width_ + x_low;
    t.pos[1] = y_low * width_ + x_high;
    t.pos[2] = y_high * width_ + x_low;
    t.pos[3] = y_high * width_ + x_high;
    t.w[0] = hy * hx;
    t.w[1] = hy * lx;
    t.w[2] = ly * hx;
    t.w[3] = ly * lx;
    return t;
  }

  bool max_ = false, half_pixel_ = true;
  int64_t out_h_ = 1, out_w_ = 1, sampling_ratio_ = 0;
  float scale_ = 1;
  int64_t batch_ = 0, channels_ = 0, height_ = 0, width_ = 0, num_rois_ = 0;
  std::string where_;
};

}  // namespace

void RegisterReferenceRoiAlign(KernelRegistry& registry) {
  registry.Register({"RoiAlign", DeviceKind::kCpu, "reference", 0,
                     [] { return std::make_unique<ReferenceRoiAlign>(); }});
}

}  // namespace braid
