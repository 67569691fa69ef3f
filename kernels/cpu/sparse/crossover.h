// The weight sparsity above which braid's sparse CPU kernels beat oneDNN's
// dense ones, per op class. One table, passed by value to the sparse kernels
// when they are registered (RegisterCpuKernels(registry, options)); nothing
// global. `braid calibrate` measures it per device into the device profile,
// whose values the Session passes here; the defaults below are what
// bench/sparse_bench.cc measured on the development machine (docs/sparse.md).
//
//   braid::SparseCrossover table;              // measured defaults
//   table.conv1x1 = 0.6;                       // or a device profile's values
//   double t = table.Threshold(braid::SparseOpClass::kConv1x1);
//   if (weight_sparsity < t) ... decline: oneDNN dense runs instead
#ifndef BRAID_KERNELS_CPU_SPARSE_CROSSOVER_H_
#define BRAID_KERNELS_CPU_SPARSE_CROSSOVER_H_

#include <string>
#include <string_view>

#include "graph/status.h"

namespace braid {

enum class SparseOpClass {
  kConv1x1,  // 1x1 convolution, groups = 1 (any stride)
  kConv3x3,  // any other 2-D kernel (3x3, 5x5, 7x7 ...), groups = 1
  kGemm,     // Gemm / MatMul with a constant weight (fully connected)
};
// "1x1 Conv", "3x3 (KxK) Conv", "Gemm/MatMul": for messages.
const char* SparseOpClassName(SparseOpClass op_class);

struct SparseCrossover {
  // Fraction of exact zeros in the weight at or above which the sparse
  // kernel runs. Measured on the development machine (Xeon, AVX-512, 1
  // thread, batch 1, shared and loaded: +-0.05) with
  //   braid_sparse_bench --benchmark_filter=threads:1
  // crossovers 0.63-0.77 (1x1), 0.71-0.79 (3x3), 0.52 (FC); the defaults
  // round up to the slower shapes (docs/sparse.md).
  double conv1x1 = 0.75;
  double conv3x3 = 0.80;
  double gemm = 0.55;
  // Activation sparsity (zeros entering a batch-1 Gemm / MatMul, measured
  // into Annotation::activation_sparsity) at or above which the
  // input-sparse kernel runs. It ties oneDNN at 0% zeros and is 1.9x faster
  // at 50% on the development machine (fc 2048 -> 1000, 1 thread,
  // braid_sparse_bench --benchmark_filter=fc_input); 0.3 leaves a margin for
  // other CPUs. Not measured by `braid calibrate`.
  double gemm_input = 0.30;

  double Threshold(SparseOpClass op_class) const;
};

// Parses "conv1x1=0.6,conv3x3=0.8,gemm=0.4,gemm_input=0.3" (any subset; others keep
// `base`'s values): SessionOptions::sparse_crossover (the CLI's
// BRAID_SPARSE_CROSSOVER).
// Values must lie in [0, 1].
StatusOr<SparseCrossover> ParseSparseCrossover(std::string_view text,
                                               const SparseCrossover& base);
std::string SparseCrossoverToString(const SparseCrossover& table);

}  // namespace braid

#endif  // BRAID_KERNELS_CPU_SPARSE_CROSSOVER_H_
