// Reference MatMul (numpy semantics: broadcast batch dims, 1-D operands) with
// an optional fused activation (f32 only), f32 or f64. Products are
// accumulated in double. Precision bf16 (docs/ir.md, f32 only) rounds every
// A and B element to bfloat16 first.
#include <memory>
#include <string>
#include <type_traits>

#include "kernels/backend.h"
#include "kernels/params/elementwise.h"
#include "kernels/params/matmul.h"

namespace braid {
namespace {

class ReferenceMatMul final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(p_, ParseMatMul(args));
    if (p_.dtype != DataType::kF32 && p_.dtype != DataType::kF64)
      return Unimplemented(args.Where() + ": reference MatMul supports f32 and f64, not " +
                           DataTypeName(p_.dtype));
    if (p_.dtype == DataType::kF64 && !p_.activation.none())
      return Unimplemented(args.Where() + ": fused activation on f64 MatMul");
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    if (p_.dtype == DataType::kF64) {
      RunTyped<double>(args);
    } else {
      RunTyped<float>(args);
    }
    return Status::Ok();
  }

 private:
  template <typename T>
  void RunTyped(const RunArgs& args) const {
    const T* a = static_cast<const T*>(args.src[0]);
    const T* b = static_cast<const T*>(args.src[1]);
    T* y = static_cast<T*>(args.dst[0]);
    const bool bf16 = p_.precision == ComputePrecision::kBF16;
    auto operand = [bf16](T v) -> T {
      if constexpr (std::is_same_v<T, float>) return bf16 ? RoundedToBFloat16(v) : v;
      return v;
    };
    for (int64_t batch = 0; batch < p_.batch; ++batch) {
      const T* a_mat = a + p_.a_offsets[static_cast<size_t>(batch)];
      const T* b_mat = b + p_.b_offsets[static_cast<size_t>(batch)];
      T* y_mat = y + batch * p_.m * p_.n;
      for (int64_t i = 0; i < p_.m; ++i) {
        for (int64_t j = 0; j < p_.n; ++j) {
          double acc = 0.0;
          for (int64_t k = 0; k < p_.k; ++k)
            acc += static_cast<double>(operand(a_mat[i * p_.k + k])) * operand(b_mat[k * p_.n + j]);
          if constexpr (std::is_same_v<T, float>)
            y_mat[i * p_.n + j] = p_.activation.Apply(static_cast<float>(acc));
          else
            y_mat[i * p_.n + j] = acc;
        }
      }
    }
  }

  MatMulParams p_;
};

}  // namespace

void RegisterReferenceMatMul(KernelRegistry& registry) {
  KernelEntry entry{"MatMul", DeviceKind::kCpu, "reference", 0,
                    [] { return std::make_unique<ReferenceMatMul>(); }};
  entry.precisions |= PrecisionBit(ComputePrecision::kBF16);
  registry.Register(std::move(entry));
}

}  // namespace braid
