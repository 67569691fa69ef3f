// Reference InstanceNormalization and GroupNormalization (f32): per (n, c)
// or (n, group) plane, mean and population variance in double, then
// y = scale[k] * (x - mean) / sqrt(var + epsilon) + B[k].
#include <cmath>
#include <memory>
#include <string>

#include "kernels/backend.h"
#include "kernels/params/normalization.h"

namespace braid {
namespace {

// InstanceNormalization and GroupNormalization (kernels/params/normalization.h).
class ReferenceInstanceNorm final : public Kernel {
 public:
  explicit ReferenceInstanceNorm(bool group_norm) : group_norm_(group_norm) {}

  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(p_, group_norm_ ? ParseGroupNorm(args) : ParseInstanceNorm(args));
    if (p_.dtype != DataType::kF32)
      return Unimplemented(args.Where() + ": reference " + args.node->op_type +
                           " supports f32 only, not " + DataTypeName(p_.dtype));
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    const float* x = static_cast<const float*>(args.src[0]);
    const float* scale = static_cast<const float*>(args.src[1]);
    const float* bias = static_cast<const float*>(args.src[2]);
    float* y = static_cast<float*>(args.dst[0]);
    const int64_t n = p_.plane_size();
    for (int64_t plane = 0; plane < p_.planes(); ++plane) {
      const float* in = x + plane * n;
      double sum = 0;
      for (int64_t i = 0; i < n; ++i) sum += in[i];
      const double mean = n > 0 ? sum / static_cast<double>(n) : 0.0;
      double squares = 0;
      for (int64_t i = 0; i < n; ++i) squares += (in[i] - mean) * (in[i] - mean);
      const double var = n > 0 ? squares / static_cast<double>(n) : 0.0;
      const double inv_std = 1.0 / std::sqrt(var + p_.epsilon);
      for (int64_t i = 0; i < n; ++i) {
        const int64_t k = p_.AffineIndex(plane, i);
        y[plane * n + i] = static_cast<float>((in[i] - mean) * inv_std * scale[k] + bias[k]);
      }
    }
    return Status::Ok();
  }

 private:
  bool group_norm_;
  InstanceNormParams p_;
};

}  // namespace

void RegisterReferenceInstanceNorm(KernelRegistry& registry) {
  registry.Register({"InstanceNormalization", DeviceKind::kCpu, "reference", 0,
                     [] { return std::make_unique<ReferenceInstanceNorm>(false); }});
  registry.Register({"GroupNormalization", DeviceKind::kCpu, "reference", 0,
                     [] { return std::make_unique<ReferenceInstanceNorm>(true); }});
}

}  // namespace braid
