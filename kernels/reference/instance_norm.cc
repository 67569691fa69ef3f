// Reference InstanceNormalization (f32): per (n, c) plane, mean and population
// variance in double, then y = scale[c] * (x - mean) / sqrt(var + epsilon) + B[c].
#include <cmath>
#include <memory>
#include <string>

#include "kernels/backend.h"
#include "kernels/params/normalization.h"

namespace braid {
namespace {

class ReferenceInstanceNorm final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(p_, ParseInstanceNorm(args));
    if (p_.dtype != DataType::kF32)
      return Unimplemented(args.Where() + ": reference InstanceNormalization supports f32 only, not " +
                           DataTypeName(p_.dtype));
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    const float* x = static_cast<const float*>(args.src[0]);
    const float* scale = static_cast<const float*>(args.src[1]);
    const float* bias = static_cast<const float*>(args.src[2]);
    float* y = static_cast<float*>(args.dst[0]);
    for (int64_t plane = 0; plane < p_.batch * p_.channels; ++plane) {
      const int64_t c = plane % p_.channels;
      const float* in = x + plane * p_.spatial;
      double sum = 0;
      for (int64_t i = 0; i < p_.spatial; ++i) sum += in[i];
      const double mean = p_.spatial > 0 ? sum / static_cast<double>(p_.spatial) : 0.0;
      double squares = 0;
      for (int64_t i = 0; i < p_.spatial; ++i) squares += (in[i] - mean) * (in[i] - mean);
      const double var = p_.spatial > 0 ? squares / static_cast<double>(p_.spatial) : 0.0;
      const double a = scale[c] / std::sqrt(var + p_.epsilon);
      for (int64_t i = 0; i < p_.spatial; ++i)
        y[plane * p_.spatial + i] = static_cast<float>((in[i] - mean) * a + bias[c]);
    }
    return Status::Ok();
  }

 private:
  InstanceNormParams p_;
};

}  // namespace

void RegisterReferenceInstanceNorm(KernelRegistry& registry) {
  registry.Register({"InstanceNormalization", DeviceKind::kCpu, "reference", 0,
                     [] { return std::make_unique<ReferenceInstanceNorm>(); }});
}

}  // namespace braid
