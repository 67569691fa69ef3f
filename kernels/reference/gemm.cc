// Reference Gemm: Y = act(alpha * A' B' + beta * C), every transA/transB
// combination, C broadcast (scalar, [N], [1,N], [M,1], [M,N]). Products are
// accumulated in double; alpha/beta scaling and the activation use float.
// Precision bf16 (docs/ir.md) rounds every A and B element to bfloat16 first.
#include <memory>
#include <string>

#include "kernels/backend.h"
#include "kernels/params/elementwise.h"
#include "kernels/params/gemm.h"

namespace braid {
namespace {

class ReferenceGemm final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(p_, ParseGemm(args));
    if (p_.dtype != DataType::kF32)
      return Unimplemented(args.Where() + ": reference Gemm supports f32 only, not " +
                           DataTypeName(p_.dtype));
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    const float* a = static_cast<const float*>(args.src[0]);
    const float* b = static_cast<const float*>(args.src[1]);
    const float* c = p_.has_c() ? static_cast<const float*>(args.src[2]) : nullptr;
    float* y = static_cast<float*>(args.dst[0]);
    const bool bf16 = p_.precision == ComputePrecision::kBF16;
    auto operand = [bf16](float v) { return bf16 ? RoundedToBFloat16(v) : v; };
    for (int64_t i = 0; i < p_.m; ++i) {
      for (int64_t j = 0; j < p_.n; ++j) {
        double acc = 0.0;
        for (int64_t k = 0; k < p_.k; ++k) {
          const float a_ik = p_.trans_a ? a[k * p_.m + i] : a[i * p_.k + k];
          const float b_kj = p_.trans_b ? b[j * p_.k + k] : b[k * p_.n + j];
          acc += static_cast<double>(operand(a_ik)) * operand(b_kj);
        }
        float v = p_.alpha * static_cast<float>(acc);
        if (c != nullptr) v += p_.beta * c[i * p_.c_stride_m + j * p_.c_stride_n];
        y[i * p_.n + j] = p_.activation.Apply(v);
      }
    }
    return Status::Ok();
  }

 private:
  GemmParams p_;
};

}  // namespace

void RegisterReferenceGemm(KernelRegistry& registry) {
  KernelEntry entry{"Gemm", DeviceKind::kCpu, "reference", 0,
                    [] { return std::make_unique<ReferenceGemm>(); }};
  entry.precisions |= PrecisionBit(ComputePrecision::kBF16);
  registry.Register(std::move(entry));
}

}  // namespace braid
