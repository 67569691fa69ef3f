// Where(cond, x, y), braid's own CPU kernel for x and y of any element type
// (plain layout, or every operand and the output in one layout with the
// same shape): the collapsed broadcast plan's rows split across the threads.
// Each operand walks a row contiguously or holds one value (step 1 or 0,
// all collapsing leaves), so each of the eight step combinations is its own
// loop, a branch-free bit select the compiler vectorises. The reference
// reads each element through its own index on one thread.
#include <cstdint>
#include <utility>

#include "kernels/cpu/broadcast_rows.h"
#include "kernels/cpu/onednn_kernels.h"
#include "kernels/params/typed_select.h"
#include "kernels/params/elementwise.h"

namespace braid {
namespace {

// out[e] = cond[e] ? x[e] : y[e] over one row; a k*Step of 0 repeats that
// operand's first element. E is an unsigned storage type, so the select
// moves bits unchanged (NaN payloads and -0 included).
template <typename E, int kCondStep, int kXStep, int kYStep>
void WhereRow(const uint8_t* cond, const E* x, const E* y, E* out, int64_t n) {
  for (int64_t e = 0; e < n; ++e) {
    const E take_x = static_cast<E>(0) - static_cast<E>(cond[e * kCondStep] != 0);
    out[e] = static_cast<E>((x[e * kXStep] & take_x) | (y[e * kYStep] & ~take_x));
  }
}

class WhereCpu final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(WhereParams p, ParseWhere(args));
    const TensorLayout layout = args.outputs[0].layout;
    for (const TensorDesc& in : args.inputs) {
      // Same-shape operands in the output's layout are the same elementwise
      // map in memory order; anything else needs plain indexing.
      const bool same = in.layout == layout && in.dims == args.outputs[0].dims;
      if (layout != TensorLayout::kPlain ? !same : in.layout != TensorLayout::kPlain)
        return Unimplemented(args.Where() + ": plain layout, or one layout and one shape");
    }
    plan_ = std::move(p.plan);
    run_ = SelectBySize<WhereCpu>(DataTypeSize(p.dtype));
    if (run_ == nullptr) return Unimplemented(args.Where() + ": element size not 1, 2, 4 or 8");
    num_threads_ = std::max(args.num_threads, 1);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override { return run_(*this, args); }

  template <typename E>
  static Status RunTyped(const WhereCpu& k, const RunArgs& args) {
    const auto* cond = static_cast<const uint8_t*>(args.src[0]);
    const E* x = static_cast<const E*>(args.src[1]);
    const E* y = static_cast<const E*>(args.src[2]);
    E* out = static_cast<E*>(args.dst[0]);
    ForEachRowThreaded(
        k.plan_, k.num_threads_,
        [&](int64_t o, const int64_t* in, const int64_t* step, int64_t n) {
          const uint8_t* c = cond + in[0];
          const E* a = x + in[1];
          const E* b = y + in[2];
          switch (step[0] * 4 + step[1] * 2 + step[2]) {
            case 0: WhereRow<E, 0, 0, 0>(c, a, b, out + o, n); break;
            case 1: WhereRow<E, 0, 0, 1>(c, a, b, out + o, n); break;
            case 2: WhereRow<E, 0, 1, 0>(c, a, b, out + o, n); break;
            case 3: WhereRow<E, 0, 1, 1>(c, a, b, out + o, n); break;
            case 4: WhereRow<E, 1, 0, 0>(c, a, b, out + o, n); break;
            case 5: WhereRow<E, 1, 0, 1>(c, a, b, out + o, n); break;
            case 6: WhereRow<E, 1, 1, 0>(c, a, b, out + o, n); break;
            default: WhereRow<E, 1, 1, 1>(c, a, b, out + o, n); break;
          }
        });
    return Status::Ok();
  }

 private:
  BroadcastPlan plan_;
  TypedRun<WhereCpu> run_ = nullptr;
  int num_threads_ = 1;
};

}  // namespace

std::unique_ptr<Kernel> CreateWhereCpu() { return std::make_unique<WhereCpu>(); }

}  // namespace braid
