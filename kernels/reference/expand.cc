// Reference Expand: broadcasts the input to the output desc's shape (which
// the runtime inferred from the shape input); a constant shape input is
// cross-checked. Any dtype.
#include <vector>

#include "kernels/params/broadcast.h"
#include "kernels/params/data_ops.h"
#include "kernels/params/parse_util.h"
#include "kernels/reference/data_kernel_util.h"

namespace braid::reference {
namespace {

class ExpandKernel final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    RETURN_IF_ERROR(params_internal::CheckArity(args, 2, 2));
    const TensorDesc& in = args.inputs[0];
    const TensorDesc& out = args.outputs[0];
    if (IsConstantInput(args, 1)) {
      ASSIGN_OR_RETURN(std::vector<int64_t> shape, ConstantInts(args, 1, "shape"));
      StatusOr<std::vector<int64_t>> dims = BroadcastDims(
          std::vector<std::vector<int64_t>>{in.dims, shape});
      if (!dims.ok()) return dims.status().WithPrefix(args.Where());
      RETURN_IF_ERROR(params_internal::CheckOutput(args, *dims, in.dtype));
    }
    if (out.dtype != in.dtype)
      return params_internal::Invalid(args, std::string("output ")
                                                .append(out.ToString())
                                                .append(" has another dtype than the input"));
    StatusOr<BroadcastPlan> plan = BroadcastPlan::MakeForOutput(
        std::vector<std::vector<int64_t>>{in.dims}, out.dims);
    if (!plan.ok()) return plan.status().WithPrefix(args.Where());
    plan_ = std::move(*plan);
    run_ = SelectBySize<ExpandKernel>(DataTypeSize(in.dtype));
    if (run_ == nullptr) return UnsupportedDtype(args, in.dtype);
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
