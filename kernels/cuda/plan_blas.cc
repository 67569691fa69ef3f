// cuBLAS call planning for Gemm and MatMul (kernels/cuda/plans.h).
#include <climits>
#include <string>

#include "kernels/cuda/plans.h"

namespace braid::cuda {
namespace {

bool FitsInt(int64_t v) { return v >= 0 && v <= INT_MAX; }

}  // namespace

StatusOr<CublasGemmCall> RowMajorGemm(int64_t m, int64_t n, int64_t k, bool trans_a,
                                      bool trans_b) {
  if (!FitsInt(m) || !FitsInt(n) || !FitsInt(k))
    return Unimplemented("cuBLAS GEMM dimensions exceed int: M=" + std::to_string(m) +
                         " N=" + std::to_string(n) + " K=" + std::to_string(k));
  CublasGemmCall c;
  c.m = static_cast<int>(n);
  c.n = static_cast<int>(m);
  c.k = static_cast<int>(k);
  // Row-major B [K,N] read column-major is B^T with leading dimension N;
  // stored transposed ([N,K]) it is B with leading dimension K.
  c.first_trans = trans_b;
  c.ld_first = static_cast<int>(trans_b ? k : n);
  c.second_trans = trans_a;
  c.ld_second = static_cast<int>(trans_a ? m : k);
  c.ldc = static_cast<int>(n);
  // cuBLAS requires leading dimensions >= 1 even for empty problems.
  if (c.ld_first < 1) c.ld_first = 1;
  if (c.ld_second < 1) c.ld_second = 1;
  if (c.ldc < 1) c.ldc = 1;
  return c;
}

StatusOr<MatMulBatchPlan> PlanMatMulBatches(const MatMulParams& p) {
  MatMulBatchPlan plan;
  plan.batch = p.batch;
  const int64_t a_size = p.m * p.k;
  bool a_contiguous = true;
  for (int64_t b = 0; b < p.batch; ++b)
    a_contiguous = a_contiguous && p.a_offsets[static_cast<size_t>(b)] == b * a_size;
  if (p.batch == 1 || (p.b_shared() && a_contiguous)) {
    plan.kind = MatMulBatchPlan::Kind::kSingle;
    ASSIGN_OR_RETURN(plan.gemm, RowMajorGemm(p.batch * p.m, p.n, p.k, false, false));
    plan.batch = 1;
    return plan;
  }
  ASSIGN_OR_RETURN(plan.gemm, RowMajorGemm(p.m, p.n, p.k, false, false));
  plan.stride_a = p.a_offsets[1] - p.a_offsets[0];
  plan.stride_b = p.b_offsets[1] - p.b_offsets[0];
  plan.stride_c = p.m * p.n;
  bool affine = plan.stride_a >= 0 && plan.stride_b >= 0 && p.batch <= INT_MAX;
  for (int64_t b = 0; affine && b < p.batch; ++b) {
    const size_t i = static_cast<size_t>(b);
    affine = p.a_offsets[i] == p.a_offsets[0] + b * plan.stride_a &&
             p.b_offsets[i] == p.b_offsets[0] + b * plan.stride_b;
  }
  plan.kind = affine ? MatMulBatchPlan::Kind::kStridedBatched : MatMulBatchPlan::Kind::kLoop;
  return plan;
}

dm::EpilogueArgs PlanGemmEpilogue(const GemmParams& p) {
  dm::EpilogueArgs e;
  e.elements = p.m * p.n;
  e.activation = ToDeviceActivation(p.activation);
  e.has_bias = p.has_c() && p.beta != 0.0f;
  e.bias_scale = p.beta;
  e.bias_index.rank = 2;
  e.bias_index.dims[0] = p.m;
  e.bias_index.dims[1] = p.n;
  e.bias_index.strides[0][0] = p.c_stride_m;
  e.bias_index.strides[0][1] = p.c_stride_n;
  return e;
}

dm::EpilogueArgs PlanActivationEpilogue(const Activation& activation, int64_t elements) {
  dm::EpilogueArgs e;
  e.elements = elements;
  e.activation = ToDeviceActivation(activation);
  return e;
}

}  // namespace braid::cuda
