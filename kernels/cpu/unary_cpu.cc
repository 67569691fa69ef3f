// The unary elementwise ops of kernels/params/unary.h on f32, braid's own CPU
// kernel: the reference's per-element functions (bit for bit the same
// results, Exp aside) with the elements split into contiguous blocks over the OpenMP
// team. It takes the ops oneDNN does not (Exp, Log, Erf, Softplus, Mish, Elu,
// Selu, Celu, the trigonometric ones, Ceil / Floor / Round, Sign, ...) and
// whatever oneDNN declines. Elementwise, so either layout: a channels-last
// tensor stays channels-last. Other dtypes decline to the reference. Exp alone
// runs on SIMD registers (AVX2 / AVX-512), within one ulp of the reference's.
#include <omp.h>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>

#include "kernels/cpu/onednn_kernels.h"
#include "kernels/cpu/simd_isa.h"
#include "kernels/cpu/vector_exp.h"
#include "kernels/host/omp_team.h"
#include "kernels/params/unary.h"

namespace braid {
namespace {

class UnaryCpu final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    if (args.node == nullptr) return InvalidArgument("UnaryCpu: PrepareArgs without node");
    row_ = FindUnaryOp(args.node->op_type);
    if (row_ == nullptr)
      return Unimplemented(args.Where() + ": not a unary elementwise op");
    ASSIGN_OR_RETURN(params_, ParseUnary(args, *row_));
    if (args.inputs[0].dtype != DataType::kF32)
      return Unimplemented(args.Where() + ": f32 only");
    if (args.outputs[0].layout != args.inputs[0].layout)
      return Unimplemented(args.Where() + ": input and output in different layouts");
    elements_ = args.inputs[0].elements();
    num_threads_ = std::max(args.num_threads, 1);
    if (std::string_view(row_->op_type) == "Exp") exp_isa_ = BestSimdIsa();
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    const auto* x = static_cast<const float*>(args.src[0]);
    auto* y = static_cast<float*>(args.dst[0]);
    const UnaryFloatFn f = row_->f32;
    const AlphaBeta p = params_;
    const int threads = ThreadsFor(elements_, num_threads_);
    const int64_t block = (elements_ + threads - 1) / threads;
    const std::optional<SimdIsa> exp_isa = exp_isa_;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int t = 0; t < threads; ++t) {
      const int64_t begin = std::min(elements_, t * block);
      const int64_t end = std::min(elements_, (t + 1) * block);
      if (exp_isa) {
        vector_math::Exp(*exp_isa, x + begin, y + begin, end - begin);
        continue;
      }
      for (int64_t i = begin; i < end; ++i) y[i] = f(x[i], p);
    }
    return Status::Ok();
  }

 private:
  const UnaryOpRow* row_ = nullptr;
  AlphaBeta params_;
  int64_t elements_ = 0;
  int num_threads_ = 1;
  std::optional<SimdIsa> exp_isa_;  // Exp: vector_math::Exp with this instruction set
};

}  // namespace

std::unique_ptr<Kernel> CreateUnaryCpu() { return std::make_unique<UnaryCpu>(); }

}  // namespace braid
