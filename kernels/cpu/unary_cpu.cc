// The unary elementwise ops of kernels/params/unary.h on f32, braid's own CPU
// kernel: the reference's per-element functions (bit for bit the same
// results, Exp aside) with the elements split into contiguous blocks over the OpenMP
// team. It takes the ops oneDNN does not (Exp, Log, Erf, Softplus, Mish, Elu,
// Selu, Celu, the trigonometric ones, Ceil / Floor / Round, Sign, ...) and
// whatever oneDNN declines. Elementwise, so either layout: a channels-last
// tensor stays channels-last. Other dtypes decline to the reference. Exp
// runs on SIMD registers (AVX2 / AVX-512), within one ulp of the reference's;
// Ceil, Floor, Round and Sign run the reference's own functions as loops
// compiled for AVX2 / AVX-512 (vroundps / vrndscaleps: the same results),
// where the table's function pointer cost a call per element.
#include <omp.h>

#include <algorithm>
#include <cstdint>
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

using VectorLoop = void (*)(const float* x, float* y, int64_t n);

#if defined(__x86_64__) || defined(__i386__)
// kFn inlines into the loop, which the compiler vectorises for the target.
template <float (*kFn)(float)>
__attribute__((target("avx512f"))) void LoopAvx512(const float* __restrict x,
                                                   float* __restrict y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = kFn(x[i]);
}
template <float (*kFn)(float)>
__attribute__((target("avx2"))) void LoopAvx2(const float* __restrict x, float* __restrict y,
                                              int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = kFn(x[i]);
}
#endif

template <float (*kFn)(float)>
VectorLoop LoopFor([[maybe_unused]] SimdIsa isa) {
#if defined(__x86_64__) || defined(__i386__)
  if (isa == SimdIsa::kAvx512) return &LoopAvx512<kFn>;
  if (isa == SimdIsa::kAvx2) return &LoopAvx2<kFn>;
#endif
  return nullptr;  // the table's function, element by element
}

VectorLoop VectorLoopFor(std::string_view op, SimdIsa isa) {
  if (op == "Ceil") return LoopFor<CeilOf>(isa);
  if (op == "Floor") return LoopFor<FloorOf>(isa);
  if (op == "Round") return LoopFor<RoundHalfToEven>(isa);
  if (op == "Sign") return LoopFor<SignOf>(isa);
  return nullptr;
}

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
    vector_loop_ = VectorLoopFor(row_->op_type, BestSimdIsa());
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
    const VectorLoop vector_loop = vector_loop_;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int t = 0; t < threads; ++t) {
      const int64_t begin = std::min(elements_, t * block);
      const int64_t end = std::min(elements_, (t + 1) * block);
      if (exp_isa) {
        vector_math::Exp(*exp_isa, x + begin, y + begin, end - begin);
        continue;
      }
      if (vector_loop != nullptr) {
        vector_loop(x + begin, y + begin, end - begin);
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
  VectorLoop vector_loop_ = nullptr;  // Ceil / Floor / Round / Sign on AVX2 / AVX-512
};

}  // namespace

std::unique_ptr<Kernel> CreateUnaryCpu() { return std::make_unique<UnaryCpu>(); }

}  // namespace braid
