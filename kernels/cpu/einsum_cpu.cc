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
    // Work is elements x products per element, not elements alone.
    const int64_t elements = std::max<int64_t>(walk_.elements, 1);
    const int64_t work = walk_.sum_steps > INT64_MAX / elements
                             ? INT64_MAX
                             : elements * std::max<int64_t>(walk_.sum_steps, 1);
    threads_ = ThreadsFor(work, std::min<int64_t>(std::max(args.num_threads, 1), walk_.elements));
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    dm::EinsumOperands x;
    for (int k = 0; k < walk_.num_inputs; ++k)
      x.x[k] = static_cast<const float*>(args.src[static_cast<size_t>(k)]);
    float* y = static_cast<float*>(args.dst[0]);
#pragma omp parallel for num_threads(threads_) schedule(static) if (threads_ > 1)
    for (int64_t i = 0; i < walk_.elements; ++i) dm::EinsumElement(walk_, i, x, y);
    return Status::Ok();
  }

 private:
  dm::EinsumArgs walk_;
  int threads_ = 1;  // for the output elements, from the work at Prepare
};

}  // namespace

std::unique_ptr<Kernel> CreateEinsumCpu() { return std::make_unique<EinsumCpu>(); }

}  // namespace braid
