// RegisterSparseKernels and the crossover decision shared by the sparse
// kernels.
#include <cstdio>

#include "kernels/cpu/sparse/sparse_kernels.h"

namespace braid {

Status CheckCrossover(const PrepareArgs& args, double sparsity,
                      SparseOpClass op_class, const SparseCrossover& table) {
  const double threshold = table.Threshold(op_class);
  if (sparsity >= threshold) return Status::Ok();
  char reason[160];
  std::snprintf(reason, sizeof(reason),
                ": weight sparsity %.2f below the %.2f crossover for %s "
                "(dense kernel is faster)",
                sparsity, threshold, SparseOpClassName(op_class));
  return Unimplemented(args.Where() + reason);
}

void RegisterSparseKernels(KernelRegistry& registry,
                           const SparseKernelOptions& options) {
  auto add = [&](const char* op, const char* impl, int priority,
                 std::unique_ptr<Kernel> (*create)(const SparseKernelOptions&)) {
    registry.Register(KernelEntry{op, DeviceKind::kCpu, impl, priority,
                                  [create, options] { return create(options); },
                                  /*channels_last=*/false, /*specialized=*/true});
  };
  add("Conv", "sparse", kSparsePriority, CreateConvSparse);
  add("Gemm", "sparse", kSparsePriority, CreateGemmSparse);
  add("MatMul", "sparse", kSparsePriority, CreateMatMulSparse);
  add("Gemm", "input-sparse", kInputSparsePriority, CreateGemmInputSparse);
  add("MatMul", "input-sparse", kInputSparsePriority, CreateMatMulInputSparse);
}

}  // namespace braid
