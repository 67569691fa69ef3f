// Expand, braid's own CPU kernel for any element type (plain layout): the
// collapsed broadcast plan's rows split across the threads; a row the input
// walks contiguously is one memcpy, a stretched row (input step 0) one fill
// loop the compiler vectorises. The reference reads every element through
// its own index (x[in + e * step]) on one thread. ViT's class-token and
// position Expands, Swin's and YOLO's grid Expands run here.
#include <cstring>

#include "kernels/cpu/broadcast_rows.h"
#include "kernels/cpu/onednn_kernels.h"
#include "kernels/params/data_ops.h"
#include "kernels/params/typed_select.h"

namespace braid {
namespace {

class ExpandCpu final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(plan_, ParseExpand(args));
    if (args.inputs[0].layout != TensorLayout::kPlain ||
        args.outputs[0].layout != TensorLayout::kPlain)
      return Unimplemented(args.Where() + ": plain layout only");
    run_ = SelectBySize<ExpandCpu>(DataTypeSize(args.inputs[0].dtype));
    if (run_ == nullptr) return Unimplemented(args.Where() + ": element size not 1, 2, 4 or 8");
    num_threads_ = std::max(args.num_threads, 1);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override { return run_(*this, args); }

  template <typename E>
  static Status RunTyped(const ExpandCpu& k, const RunArgs& args) {
    const E* x = static_cast<const E*>(args.src[0]);
    E* y = static_cast<E*>(args.dst[0]);
    ForEachRowThreaded(k.plan_, k.num_threads_,
                       [&](int64_t o, const int64_t* in, const int64_t* step, int64_t n) {
                         // The collapsed innermost axis is either walked (step 1) or
                         // stretched (step 0): collapsing merged every other case.
                         if (step[0] == 1) {
                           std::memcpy(y + o, x + in[0], static_cast<size_t>(n) * sizeof(E));
                         } else {
                           const E v = x[in[0]];
                           for (int64_t e = 0; e < n; ++e) y[o + e] = v;
                         }
                       });
    return Status::Ok();
  }

 private:
  BroadcastPlan plan_;
  TypedRun<ExpandCpu> run_ = nullptr;
  int num_threads_ = 1;
};

}  // namespace

std::unique_ptr<Kernel> CreateExpandCpu() { return std::make_unique<ExpandCpu>(); }

}  // namespace braid
