// Gemm parameters: Y = act(alpha * A' B' + beta * C) with A' = transA ? A^T
// : A ([M, K]), B' = transB ? B^T : B ([K, N]), C unidirectionally
// broadcast to [M, N], and the fused activation of docs/ir.md.
//
//   ASSIGN_OR_RETURN(GemmParams p, ParseGemm(args));
//   // A' [i][k] = a[p.trans_a ? k * p.m + i : i * p.k + k]
//   // B' [k][j] = b[p.trans_b ? j * p.k + k : k * p.n + j]
//   // C  [i][j] = c[i * p.c_stride_m + j * p.c_stride_n]   (when has_c)
//   y[i * p.n + j] = p.activation.Apply(p.alpha * acc + p.beta * c_ij);
#ifndef BRAID_KERNELS_PARAMS_GEMM_H_
#define BRAID_KERNELS_PARAMS_GEMM_H_

#include <cstdint>
#include <vector>

#include "kernels/backend.h"
#include "kernels/params/activation.h"

namespace braid {

struct GemmParams {
  DataType dtype = DataType::kUndefined;
  bool trans_a = false;
  bool trans_b = false;
  float alpha = 1.0f;
  float beta = 1.0f;
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;

  // How C broadcasts to [M, N].
  enum class CKind {
    kNone,    // no C input
    kScalar,  // one element: [], [1], [1,1]
    kRow,     // one value per column j: [N], [1,N]
    kColumn,  // one value per row i: [M,1]
    kFull,    // [M,N]
  };
  CKind c_kind = CKind::kNone;
  std::vector<int64_t> c_dims;  // C's dims as given
  int64_t c_stride_m = 0;       // element stride of C along M (0 if broadcast)
  int64_t c_stride_n = 0;       // element stride of C along N (0 if broadcast)
  Activation activation;
  // "precision" (docs/ir.md): kBF16 rounds X and W to bfloat16 before the
  // products; sums, bias and Y stay f32.
  ComputePrecision precision = ComputePrecision::kF32;

  bool has_c() const { return c_kind != CKind::kNone; }
};

// Validates A, B (2-D, same dtype, matching K), optional C (broadcastable
// to [M, N]; its kind is recorded even when beta == 0), transA/transB,
// alpha/beta, the fused activation and the output shape [M, N]. Errors are
// InvalidArgument naming the node.
StatusOr<GemmParams> ParseGemm(const PrepareArgs& args);

}  // namespace braid

#endif  // BRAID_KERNELS_PARAMS_GEMM_H_
