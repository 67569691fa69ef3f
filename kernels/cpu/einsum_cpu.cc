// Einsum (f32) that the LowerEinsum pass left (no batched matrix product:
// diagonals, three or more operands, sums over several labels, outer
// products), braid's own CPU kernel: the output elements split across the
// threads, each one independent sum over the summed labels in the reference's
// order, in double (dm::EinsumElement, the CUDA kernel's walk), so the result
// is bit-identical to the reference's single-threaded odometer over every
// label. Up to 4 operands and 16 labels; f64 and the rest go to the reference
// (a routine decline).
#include <omp.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cpu/onednn_kernels.h"
#include "kernels/host/omp_team.h"
#include "kernels/params/einsum.h"

namespace braid {
namespace {

class EinsumCpu final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(const EinsumParams p, ParseEinsum(args));
    if (p.dtype != DataType::kF32) return Unimplemented(args.Where() + ": f32 only");
    ASSIGN_OR_RETURN(walk_, PlanEinsumWalk(args, p));
    num_threads_ = std::max(args.num_threads, 1);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    dm::EinsumOperands x;
    for (int k = 0; k < walk_.num_inputs; ++k)
      x.x[k] = static_cast<const float*>(args.src[static_cast<size_t>(k)]);
    float* y = static_cast<float*>(args.dst[0]);
    // Work is elements x products per element, not elements alone.
    const int64_t work = walk_.sum_steps > INT64_MAX / std::max<int64_t>(walk_.elements, 1)
                             ? INT64_MAX
                             : walk_.elements * std::max<int64_t>(walk_.sum_steps, 1);
    const int threads = ThreadsFor(work, std::min<int64_t>(num_threads_, walk_.elements));
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int64_t i = 0; i < walk_.elements; ++i) dm::EinsumElement(walk_, i, x, y);
    return Status::Ok();
  }

 private:
  dm::EinsumArgs walk_;
  int num_threads_ = 1;
};

}  // namespace

std::unique_ptr<Kernel> CreateEinsumCpu() { return std::make_unique<EinsumCpu>(); }

}  // namespace braid
