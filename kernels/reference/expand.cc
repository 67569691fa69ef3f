// Reference Expand: broadcasts the input to the output desc's shape (which
// the runtime inferred from the shape input); a constant shape input is
// cross-checked (ParseExpand). Any dtype.
#include <vector>

#include "kernels/params/broadcast.h"
#include "kernels/params/data_ops.h"
#include "kernels/reference/data_kernel_util.h"

namespace braid::reference {
namespace {

class ExpandKernel final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(plan_, ParseExpand(args));
    const DataType dtype = args.inputs[0].dtype;
    run_ = SelectBySize<ExpandKernel>(DataTypeSize(dtype));
    if (run_ == nullptr) return UnsupportedDtype(args, dtype);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override { return run_(*this, args); }

  template <typename E>
  static Status RunTyped(const ExpandKernel& k, const RunArgs& args) {
    const E* x = static_cast<const E*>(args.src[0]);
    E* y = static_cast<E*>(args.dst[0]);
    k.plan_.ForEachRow([&](int64_t o, const int64_t* in, const int64_t* step,
                           int64_t count) {
      for (int64_t e = 0; e < count; ++e) y[o + e] = x[in[0] + e * step[0]];
    });
    return Status::Ok();
  }

 private:
  BroadcastPlan plan_;
  TypedRun<ExpandKernel> run_ = nullptr;
};

}  // namespace

void RegisterExpandKernel(KernelRegistry& registry) {
  RegisterReference<ExpandKernel>(registry, "Expand");
}

}  // namespace braid::reference
