// Reference BatchNormalization, inference form:
// y = scale[c] * (x - mean[c]) / sqrt(var[c] + epsilon) + B[c], computed in
// double per element.
#include <cmath>
#include <memory>
#include <string>

#include "kernels/backend.h"
#include "kernels/params/normalization.h"

namespace braid {
namespace {

class ReferenceBatchNorm final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(p_, ParseBatchNorm(args));
    if (p_.dtype != DataType::kF32)
      return Unimplemented(args.Where() +
                           ": reference BatchNormalization supports f32 only, not " +
                           DataTypeName(p_.dtype));
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    const float* x = static_cast<const float*>(args.src[0]);
    const float* scale = static_cast<const float*>(args.src[1]);
    const float* bias = static_cast<const float*>(args.src[2]);
    const float* mean = static_cast<const float*>(args.src[3]);
    const float* var = static_cast<const float*>(args.src[4]);
    float* y = static_cast<float*>(args.dst[0]);
    for (int64_t n = 0; n < p_.batch; ++n) {
      for (int64_t c = 0; c < p_.channels; ++c) {
        const double inv_std = 1.0 / std::sqrt(static_cast<double>(var[c]) + p_.epsilon);
        const int64_t base = (n * p_.channels + c) * p_.spatial;
        for (int64_t i = 0; i < p_.spatial; ++i)
          y[base + i] = static_cast<float>(scale[c] * (x[base + i] - static_cast<double>(mean[c])) *
                                               inv_std +
                                           bias[c]);
      }
    }
    return Status::Ok();
  }

 private:
  BatchNormParams p_;
};

}  // namespace

void RegisterReferenceBatchNorm(KernelRegistry& registry) {
  registry.Register({"BatchNormalization", DeviceKind::kCpu, "reference", 0,
                     [] { return std::make_unique<ReferenceBatchNorm>(); }});
}

}  // namespace braid
