// Reference Softmax for both opset semantics (kernels/params/softmax.h): the
// maximum is subtracted before exp, the sum is accumulated in double.
#include <cmath>
#include <memory>
#include <string>

#include "kernels/backend.h"
#include "kernels/params/softmax.h"

namespace braid {
namespace {

class ReferenceSoftmax final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(p_, ParseSoftmax(args));
    if (p_.dtype != DataType::kF32)
      return Unimplemented(args.Where() + ": reference Softmax supports f32 only, not " +
                           DataTypeName(p_.dtype));
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    const float* x = static_cast<const float*>(args.src[0]);
    float* y = static_cast<float*>(args.dst[0]);
    const int64_t step = p_.inner;
    for (int64_t o = 0; o < p_.outer; ++o) {
      for (int64_t in = 0; in < p_.inner; ++in) {
        const int64_t base = o * p_.axis_size * p_.inner + in;
        if (p_.axis_size == 0) continue;
        float max_value = x[base];
        for (int64_t a = 1; a < p_.axis_size; ++a)
          max_value = std::fmax(max_value, x[base + a * step]);
        double sum = 0.0;
        for (int64_t a = 0; a < p_.axis_size; ++a)
          sum += std::exp(static_cast<double>(x[base + a * step]) - max_value);
        for (int64_t a = 0; a < p_.axis_size; ++a)
          y[base + a * step] = static_cast<float>(
              std::exp(static_cast<double>(x[base + a * step]) - max_value) / sum);
      }
    }
    return Status::Ok();
  }

 private:
  SoftmaxParams p_;
};

}  // namespace

void RegisterReferenceSoftmax(KernelRegistry& registry) {
  registry.Register({"Softmax", DeviceKind::kCpu, "reference", 0,
                     [] { return std::make_unique<ReferenceSoftmax>(); }});
}

}  // namespace braid
