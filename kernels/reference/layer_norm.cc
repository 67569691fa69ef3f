// Reference LayerNormalization (opset 17): per row of the trailing
// dims[axis:], mean and (biased) variance in double, then
// y = (x - mean) * inv_std_dev * scale + bias with broadcast scale/bias;
// optional Mean and InvStdDev outputs (f32).
#include <cmath>
#include <memory>
#include <string>

#include "kernels/backend.h"
#include "kernels/params/normalization.h"

namespace braid {
namespace {

class ReferenceLayerNorm final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(p_, ParseLayerNorm(args));
    if (p_.dtype != DataType::kF32)
      return Unimplemented(args.Where() +
                           ": reference LayerNormalization supports f32 only, not " +
                           DataTypeName(p_.dtype));
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    const float* x = static_cast<const float*>(args.src[0]);
    const float* scale = static_cast<const float*>(args.src[1]);
    const float* bias = p_.has_bias ? static_cast<const float*>(args.src[2]) : nullptr;
    float* y = static_cast<float*>(args.dst[0]);
    float* mean_out = p_.has_mean_output ? static_cast<float*>(args.dst[1]) : nullptr;
    float* inv_std_out = p_.has_inv_std_output ? static_cast<float*>(args.dst[2]) : nullptr;
    for (int64_t row = 0; row < p_.outer; ++row) {
      const float* xr = x + row * p_.inner;
      float* yr = y + row * p_.inner;
      double sum = 0.0;
      for (int64_t i = 0; i < p_.inner; ++i) sum += xr[i];
      const double mean = sum / static_cast<double>(p_.inner);
      double sq = 0.0;
      for (int64_t i = 0; i < p_.inner; ++i) sq += (xr[i] - mean) * (xr[i] - mean);
      const double variance = sq / static_cast<double>(p_.inner);
      const double inv_std = 1.0 / std::sqrt(variance + p_.epsilon);
      for (int64_t i = 0; i < p_.inner; ++i) {
        double v = (xr[i] - mean) * inv_std * scale[p_.ScaleIndex(i)];
        if (bias != nullptr) v += bias[p_.BiasIndex(i)];
        yr[i] = static_cast<float>(v);
      }
      if (mean_out != nullptr) mean_out[row] = static_cast<float>(mean);
      if (inv_std_out != nullptr) inv_std_out[row] = static_cast<float>(inv_std);
    }
    return Status::Ok();
  }

 private:
  LayerNormParams p_;
};

}  // namespace

void RegisterReferenceLayerNorm(KernelRegistry& registry) {
  registry.Register({"LayerNormalization", DeviceKind::kCpu, "reference", 0,
                     [] { return std::make_unique<ReferenceLayerNorm>(); }});
}

}  // namespace braid
