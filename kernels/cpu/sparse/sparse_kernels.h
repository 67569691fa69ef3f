// braid's sparse CPU kernels. Weight-sparse ("sparse"): Conv (groups = 1, 2-D; 1x1
// directly on NCHW, other kernels and strides through phase images of
// the padded input in the workspace) and Gemm /
// MatMul with a constant weight. Registered above oneDNN; Prepare declines
// (Unimplemented, with the reason) when the weight's sparsity is below the
// crossover of its op class, so the dense oneDNN kernel runs instead and the
// runtime reports why. Input-sparse ("input-sparse"): Gemm / MatMul on a
// batch of at most 4 rows whose measured activation sparsity reaches its
// crossover; it skips the weight rows of zero inputs.
//
//   SparseKernelOptions options;             // measured crossover defaults
//   options.crossover = profile_crossover;   // e.g. from a device profile
//   RegisterSparseKernels(registry, options);
//   // or directly: std::unique_ptr<Kernel> k = CreateConvSparse(options);
#ifndef BRAID_KERNELS_CPU_SPARSE_SPARSE_KERNELS_H_
#define BRAID_KERNELS_CPU_SPARSE_SPARSE_KERNELS_H_

#include <memory>
#include <string>

#include "kernels/backend.h"
#include "kernels/cpu/sparse/crossover.h"
#include "kernels/cpu/sparse/spmm.h"

namespace braid {

inline constexpr int kSparsePriority = 30;  // above oneDNN (20)
// Input-sparse Gemm / MatMul ("input-sparse"): below the weight-sparse ones,
// above oneDNN.
inline constexpr int kInputSparsePriority = 25;

struct SparseKernelOptions {
  SparseCrossover crossover;
  // The instruction set the kernels use (tests pin each supported one).
  SimdIsa isa = BestSimdIsa();
};

std::unique_ptr<Kernel> CreateConvSparse(const SparseKernelOptions& options);
std::unique_ptr<Kernel> CreateGemmSparse(const SparseKernelOptions& options);
std::unique_ptr<Kernel> CreateMatMulSparse(const SparseKernelOptions& options);
// Dense constant weight, at most 4 rows of A, and a measured activation
// sparsity (Annotation::activation_sparsity) at or above
// crossover.gemm_input: skips the weight rows of zero inputs
// (gemm_input_sparse.cc). Declines otherwise, with the reason.
std::unique_ptr<Kernel> CreateGemmInputSparse(const SparseKernelOptions& options);
std::unique_ptr<Kernel> CreateMatMulInputSparse(const SparseKernelOptions& options);

// Conv, Gemm and MatMul as impl "sparse" at kSparsePriority on the CPU, and
// Gemm and MatMul as impl "input-sparse" at kInputSparsePriority.
void RegisterSparseKernels(KernelRegistry& registry,
                           const SparseKernelOptions& options);

// Ok when `sparsity` reaches the crossover of `op_class`; otherwise
// Unimplemented: "<where>: weight sparsity 0.42 below the 0.70 crossover for
// 1x1 Conv (dense kernel is faster)".
Status CheckCrossover(const PrepareArgs& args, double sparsity,
                      SparseOpClass op_class, const SparseCrossover& table);

}  // namespace braid

#endif  // BRAID_KERNELS_CPU_SPARSE_SPARSE_KERNELS_H_
