// MatMul parameters (numpy matmul): 1-D operands are promoted (A [K] ->
// [1, K], B [K] -> [K, 1], the inserted dim removed from the output), leading
// batch dims broadcast, plus an optional fused activation (docs/ir.md; the
// fusion pass may put one on MatMul).
//
//   ASSIGN_OR_RETURN(MatMulParams p, ParseMatMul(args));
//   for (int64_t b = 0; b < p.batch; ++b) {
//     const float* a_mat = a + p.a_offsets[b];   // [M, K] row major
//     const float* b_mat = bm + p.b_offsets[b];  // [K, N] row major
//     float* y_mat = y + b * p.m * p.n;          // [M, N]
//     ...  y = p.activation.Apply(sum)
//   }
#ifndef BRAID_KERNELS_PARAMS_MATMUL_H_
#define BRAID_KERNELS_PARAMS_MATMUL_H_

#include <cstdint>
#include <vector>

#include "kernels/backend.h"
#include "kernels/params/activation.h"

namespace braid {

struct MatMulParams {
  DataType dtype = DataType::kUndefined;
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  bool a_is_vector = false;  // A was 1-D
  bool b_is_vector = false;  // B was 1-D
  // Broadcast batch dims of the output; a_batch_dims / b_batch_dims are the
  // operands' batch dims left-padded with 1s to the same rank.
  std::vector<int64_t> batch_dims;
  std::vector<int64_t> a_batch_dims;
  std::vector<int64_t> b_batch_dims;
  int64_t batch = 1;  // product of batch_dims
  // Per output batch index (row-major over batch_dims): element offset of the
  // [M, K] matrix in A and of the [K, N] matrix in B.
  std::vector<int64_t> a_offsets;
  std::vector<int64_t> b_offsets;
  Activation activation;
  // "precision" (docs/ir.md): kBF16 rounds X and W to bfloat16 before the
  // products; sums, bias and Y stay f32.
  ComputePrecision precision = ComputePrecision::kF32;

  // True when B is one [K, N] matrix shared by every batch (a plain GEMM of
  // [batch * M, K] x [K, N] when A is not broadcast either).
  bool b_shared() const;
  bool a_broadcast() const;  // some A matrix is read by several batches
};

// Validates the operands (rank >= 1, same dtype, matching K, broadcastable
// batch dims), the fused activation and the output shape. Errors are
// InvalidArgument naming the node.
StatusOr<MatMulParams> ParseMatMul(const PrepareArgs& args);

}  // namespace braid

#endif  // BRAID_KERNELS_PARAMS_MATMUL_H_
