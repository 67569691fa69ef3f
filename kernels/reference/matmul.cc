// Reference MatMul (numpy semantics: broadcast batch dims, 1-D operands) with
// an optional fused activation. Products are accumulated in double.
#include <memory>
#include <string>

#include "kernels/backend.h"
#include "kernels/params/matmul.h"

namespace braid {
namespace {

class ReferenceMatMul final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(p_, ParseMatMul(args));
    if (p_.dtype != DataType::kF32)
      return Unimplemented(args.Where() + ": reference MatMul supports f32 only, not " +
                           DataTypeName(p_.dtype));
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    const float* a = static_cast<const float*>(args.src[0]);
    const float* b = static_cast<const float*>(args.src[1]);
    float* y = static_cast<float*>(args.dst[0]);
    for (int64_t batch = 0; batch < p_.batch; ++batch) {
      const float* a_mat = a + p_.a_offsets[static_cast<size_t>(batch)];
      const float* b_mat = b + p_.b_offsets[static_cast<size_t>(batch)];
      float* y_mat = y + batch * p_.m * p_.n;
      for (int64_t i = 0; i < p_.m; ++i) {
        for (int64_t j = 0; j < p_.n; ++j) {
          double acc = 0.0;
          for (int64_t k = 0; k < p_.k; ++k)
            acc += static_cast<double>(a_mat[i * p_.k + k]) * b_mat[k * p_.n + j];
          y_mat[i * p_.n + j] = p_.activation.Apply(static_cast<float>(acc));
        }
      }
    }
    return Status::Ok();
  }

 private:
  MatMulParams p_;
};

}  // namespace

void RegisterReferenceMatMul(KernelRegistry& registry) {
  registry.Register({"MatMul", DeviceKind::kCpu, "reference", 0,
                     [] { return std::make_unique<ReferenceMatMul>(); }});
}

}  // namespace braid
