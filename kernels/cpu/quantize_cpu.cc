// QuantizeLinear / DequantizeLinear (plain layout), braid's CPU kernel: the
// loops of kernels/params/quantize.h over element ranges split across threads.
// QDQ models carry one of these on every activation, so they are on the hot
// path of every quantized model.
#include <omp.h>

#include <algorithm>

#include "kernels/host/omp_team.h"
#include "kernels/cpu/onednn_kernels.h"
#include "kernels/params/quantize.h"

namespace braid {
namespace {

class QuantizeLinearCpu final : public Kernel {
 public:
  explicit QuantizeLinearCpu(bool quantize) : quantize_(quantize) {}

  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(p_, quantize_ ? ParseQuantizeLinear(args) : ParseDequantizeLinear(args));
    // Per tensor, every element is treated alike: any layout (the same on
    // input and output, which the runtime's channels-last pass ensures).
    if (p_.per_axis && (args.inputs[0].layout != TensorLayout::kPlain ||
                        args.outputs[0].layout != TensorLayout::kPlain))
      return Unimplemented(args.Where() + ": per-axis (de)quantization in plain layout only");
    if (args.inputs[0].layout != args.outputs[0].layout)
      return Unimplemented(args.Where() + ": input and output layouts differ");
    threads_ = ThreadsFor(p_.elements(), std::max(args.num_threads, 1));
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    const int64_t n = p_.elements();
#pragma omp parallel num_threads(threads_) if (threads_ > 1)
    {
      const int64_t team = omp_get_num_threads(), me = omp_get_thread_num();
      RunQuantizeLinear(p_, args, n * me / team, n * (me + 1) / team);
    }
    return Status::Ok();
  }

 private:
  bool quantize_;
  QuantizeLinearParams p_;
  int threads_ = 1;
};

}  // namespace

std::unique_ptr<Kernel> CreateQuantizeLinearCpu() { return std::make_unique<QuantizeLinearCpu>(true); }
std::unique_ptr<Kernel> CreateDequantizeLinearCpu() {
  return std::make_unique<QuantizeLinearCpu>(false);
}

}  // namespace braid
