// BatchNormalization (inference), braid's own CPU kernel: one multiply-add per
// element, y = x * a[c] + b[c] with a = scale / sqrt(var + epsilon) and
// b = B - mean * a, computed once at Prepare when the four parameters are
// constants (the usual case) and per Run into the workspace otherwise.
// Plain [N, C, ...] and channels-last 4-D tensors. The BatchNormalization
// left after FoldBatchNorm follows no Conv (DenseNet's pre-activation
// blocks, after a Concat or Add): oneDNN 2.6 ran it as [N, C, spatial] at
// about a tenth of memory bandwidth (densenet121: 4.8 ms for a 3 MB tensor).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/host/omp_team.h"
#include "kernels/cpu/onednn_kernels.h"
#include "kernels/params/normalization.h"

namespace braid {
namespace {

class BatchNormCpu final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(const BatchNormParams p, ParseBatchNorm(args));
    if (p.dtype != DataType::kF32)
      return Unimplemented(args.Where() + ": braid's CPU batch norm handles f32 only");
    channels_last_ = args.inputs[0].layout == TensorLayout::kChannelsLast;
    if (channels_last_ != (args.outputs[0].layout == TensorLayout::kChannelsLast))
      return Unimplemented(args.Where() + ": input and output layouts differ");
    batch_ = p.batch;
    channels_ = p.channels;
    spatial_ = p.spatial;
    epsilon_ = p.epsilon;
    num_threads_ = std::max(args.num_threads, 1);
    constant_ = true;
    for (size_t i = 1; i < 5; ++i) constant_ &= args.constants[i] != nullptr;
    coefficients_.clear();
    if (constant_) {
      coefficients_.resize(static_cast<size_t>(2 * channels_));
      ComputeCoefficients(
          {reinterpret_cast<const float*>(args.constants[1]->data()),
           reinterpret_cast<const float*>(args.constants[2]->data()),
           reinterpret_cast<const float*>(args.constants[3]->data()),
           reinterpret_cast<const float*>(args.constants[4]->data())},
          coefficients_.data());
    }
    return Status::Ok();
  }

  size_t workspace_bytes() const override {
    return constant_ ? 0 : static_cast<size_t>(2 * channels_) * sizeof(float);
  }

  Status Run(const RunArgs& args) override {
    float* coefficients = coefficients_.data();
    if (!constant_) {
      coefficients = static_cast<float*>(args.workspace);
      ComputeCoefficients({static_cast<const float*>(args.src[1]),
                           static_cast<const float*>(args.src[2]),
                           static_cast<const float*>(args.src[3]),
                           static_cast<const float*>(args.src[4])},
                          coefficients);
    }
    const float* a = coefficients;
    const float* b = coefficients + channels_;
    const float* x = static_cast<const float*>(args.src[0]);
    float* y = static_cast<float*>(args.dst[0]);
    const int64_t elements = batch_ * channels_ * spatial_;
    const int threads = ThreadsFor(elements, num_threads_);
    if (channels_last_) {
      // Rows of `channels_` values, one per pixel.
      const int64_t pixels = batch_ * spatial_;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
      for (int64_t p = 0; p < pixels; ++p) {
        const float* in = x + p * channels_;
        float* out = y + p * channels_;
        for (int64_t c = 0; c < channels_; ++c) out[c] = in[c] * a[c] + b[c];
      }
      return Status::Ok();
    }
    // Planes of `spatial_` values, one per (n, c).
    const int64_t planes = batch_ * channels_;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int64_t plane = 0; plane < planes; ++plane) {
      const int64_t c = plane % channels_;
      const float scale = a[c], shift = b[c];
      const float* in = x + plane * spatial_;
      float* out = y + plane * spatial_;
      for (int64_t i = 0; i < spatial_; ++i) out[i] = in[i] * scale + shift;
    }
    return Status::Ok();
  }

 private:
  struct Parameters {
    const float* scale;
    const float* bias;
    const float* mean;
    const float* variance;
  };

  // a[c] then b[c], `channels_` each, into `out`. In double so that a
  // variance near -epsilon or a large mean loses nothing the reference keeps;
  // a negative var + epsilon gives NaN, as the formula does.
  void ComputeCoefficients(const Parameters& p, float* out) const {
    for (int64_t c = 0; c < channels_; ++c) {
      const double a = static_cast<double>(p.scale[c]) /
                       std::sqrt(static_cast<double>(p.variance[c]) + epsilon_);
      out[c] = static_cast<float>(a);
      out[channels_ + c] = static_cast<float>(p.bias[c] - static_cast<double>(p.mean[c]) * a);
    }
  }

  bool channels_last_ = false;
  bool constant_ = false;
  int64_t batch_ = 0, channels_ = 0, spatial_ = 1;
  double epsilon_ = 1e-5;
  int num_threads_ = 1;
  std::vector<float> coefficients_;  // a then b, when the parameters are constants
};

}  // namespace

std::unique_ptr<Kernel> CreateBatchNormCpu() { return std::make_unique<BatchNormCpu>(); }

}  // namespace braid
