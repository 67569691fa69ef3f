// The checks both fully connected sparse kernels (gemm_sparse.cc: weight
// zeros; gemm_input_sparse.cc: input zeros) make before packing: f32, a
// constant weight of the right size, and for Gemm a C that is a bias.
//
//   ASSIGN_OR_RETURN(ConstantWeightGemm g, ParseConstantWeightGemm(args, "sparse"));
//   // g.params (GemmParams), g.b (the weight as given), g.bias (beta * C per column, or empty)
#ifndef BRAID_KERNELS_CPU_SPARSE_FC_PARAMS_H_
#define BRAID_KERNELS_CPU_SPARSE_FC_PARAMS_H_

#include <vector>

#include "kernels/backend.h"
#include "kernels/params/gemm.h"
#include "kernels/params/matmul.h"

namespace braid {

struct ConstantWeightGemm {
  GemmParams params;
  const float* b = nullptr;  // B as stored: [N, K] with transB, else [K, N]
  std::vector<float> bias;   // beta * C per column; empty without C
};
// Unimplemented (the kernel's name in the message) for non-f32, an empty
// product, a computed B or a C that is not a constant scalar / [N] row;
// InvalidArgument for constants of the wrong size.
StatusOr<ConstantWeightGemm> ParseConstantWeightGemm(const PrepareArgs& args, const char* kernel);

struct ConstantWeightMatMul {
  MatMulParams params;
  const float* b = nullptr;  // [K, N], shared by every batch of A
};
// As above; also Unimplemented unless one [K, N] weight serves every batch
// of a contiguous A (a [batch * M, K] x [K, N] product).
StatusOr<ConstantWeightMatMul> ParseConstantWeightMatMul(const PrepareArgs& args,
                                                         const char* kernel);

}  // namespace braid

#endif  // BRAID_KERNELS_CPU_SPARSE_FC_PARAMS_H_
