// Gemm and MatMul (batched, broadcast) through cuBLAS, row-major via the
// transpose trick (plans.h: RowMajorGemm). Gemm's C, beta and any fused
// activation run in one epilogue kernel after the product. cuBLAS runs in
// pedantic fp32 math (no TF32), so results match the fp32 reference.
#include "kernels/cuda/cuda_device.h"
#include "kernels/cuda/cuda_status.h"
#include "kernels/cuda/kernels.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/plans.h"

namespace braid::cuda {
namespace {

cublasOperation_t Op(bool trans) { return trans ? CUBLAS_OP_T : CUBLAS_OP_N; }

Status Sgemm(cublasHandle_t handle, const CublasGemmCall& c, float alpha, const float* a,
             const float* b, float* y) {
  const float zero = 0.0f;
  CUDA_RETURN_IF_ERROR(cublasSgemm(handle, Op(c.first_trans), Op(c.second_trans), c.m, c.n,
                                   c.k, &alpha, b, c.ld_first, a, c.ld_second, &zero, y,
                                   c.ldc));
  return Status::Ok();
}

class GemmCublas final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(GemmParams p, ParseGemm(args));
    if (p.dtype != DataType::kF32)
      return Unimplemented(args.Where() + ": cuBLAS Gemm kernel supports f32 only");
    ASSIGN_OR_RETURN(call_, RowMajorGemm(p.m, p.n, p.k, p.trans_a, p.trans_b));
    alpha_ = p.alpha;
    epilogue_ = PlanGemmEpilogue(p);
    needs_epilogue_ = epilogue_.has_bias || !p.activation.none();
    empty_ = p.m == 0 || p.n == 0;
    return Status::Ok();
  }
  Status Run(const RunArgs& run) override {
    ASSIGN_OR_RETURN(CudaStream * s, AsCudaStream(run.stream));
    if (empty_) return Status::Ok();
    float* y = static_cast<float*>(run.dst[0]);
    RETURN_IF_ERROR(Sgemm(s->cublas(), call_, alpha_, static_cast<const float*>(run.src[0]),
                          static_cast<const float*>(run.src[1]), y));
    if (needs_epilogue_) {
      const float* c = epilogue_.has_bias ? static_cast<const float*>(run.src[2]) : nullptr;
      CUDA_RETURN_IF_ERROR(LaunchEpilogue(epilogue_, c, y, s->native()));
    }
    return Status::Ok();
  }

 private:
  CublasGemmCall call_;
  float alpha_ = 1.0f;
  dm::EpilogueArgs epilogue_;
  bool needs_epilogue_ = false;
  bool empty_ = false;
};

class MatMulCublas final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(p_, ParseMatMul(args));
    if (p_.dtype != DataType::kF32)
      return Unimplemented(args.Where() + ": cuBLAS MatMul kernel supports f32 only");
    ASSIGN_OR_RETURN(plan_, PlanMatMulBatches(p_));
    epilogue_ = PlanActivationEpilogue(p_.activation, p_.batch * p_.m * p_.n);
    return Status::Ok();
  }
  Status Run(const RunArgs& run) override {
    ASSIGN_OR_RETURN(CudaStream * s, AsCudaStream(run.stream));
    if (p_.batch * p_.m * p_.n == 0) return Status::Ok();
    const auto* a = static_cast<const float*>(run.src[0]);
    const auto* b = static_cast<const float*>(run.src[1]);
    float* y = static_cast<float*>(run.dst[0]);
    const CublasGemmCall& c = plan_.gemm;
    switch (plan_.kind) {
      case MatMulBatchPlan::Kind::kSingle:
        RETURN_IF_ERROR(Sgemm(s->cublas(), c, 1.0f, a, b, y));
        break;
      case MatMulBatchPlan::Kind::kStridedBatched: {
        const float one = 1.0f, zero = 0.0f;
        CUDA_RETURN_IF_ERROR(cublasSgemmStridedBatched(
            s->cublas(), Op(c.first_trans), Op(c.second_trans), c.m, c.n, c.k, &one,
            b + p_.b_offsets[0], c.ld_first, plan_.stride_b, a + p_.a_offsets[0], c.ld_second,
            plan_.stride_a, &zero, y, c.ldc, plan_.stride_c, static_cast<int>(plan_.batch)));
        break;
      }
      case MatMulBatchPlan::Kind::kLoop:
        for (int64_t i = 0; i < plan_.batch; ++i) {
          const size_t bi = static_cast<size_t>(i);
          RETURN_IF_ERROR(Sgemm(s->cublas(), c, 1.0f, a + p_.a_offsets[bi],
                                b + p_.b_offsets[bi], y + i * plan_.stride_c));
        }
        break;
    }
    if (!p_.activation.none())
      CUDA_RETURN_IF_ERROR(LaunchEpilogue(epilogue_, nullptr, y, s->native()));
    return Status::Ok();
  }

 private:
  MatMulParams p_;
  MatMulBatchPlan plan_;
  dm::EpilogueArgs epilogue_;
};

}  // namespace

std::unique_ptr<Kernel> CreateGemmCublas() { return std::make_unique<GemmCublas>(); }
std::unique_ptr<Kernel> CreateMatMulCublas() { return std::make_unique<MatMulCublas>(); }

}  // namespace braid::cuda
