// Reference Cast (and CastLike) between every DataType (conversion rules in
// kernels/params/cast.h), on one thread.
#include <cstdint>

#include "kernels/params/cast.h"
#include "kernels/params/elementwise.h"
#include "kernels/reference/data_kernel_util.h"

namespace braid::reference {
namespace {

// Cast, and CastLike (opset 15), whose target is input 1's dtype.
class CastKernel final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(const DataType to, ParseCastTarget(args));
    const TensorDesc& in = args.inputs[0];
    cast_ = SelectCast(in.dtype, to);
    if (cast_ == nullptr) return UnsupportedDtype(args, in.dtype);
    elements_ = in.elements();
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    cast_(args.src[0], args.dst[0], elements_);
    return Status::Ok();
  }

 private:
  CastFn cast_ = nullptr;
  int64_t elements_ = 0;
};

}  // namespace

void RegisterCastKernel(KernelRegistry& registry) {
  RegisterReference<CastKernel>(registry, "Cast");
  RegisterReference<CastKernel>(registry, "CastLike");
}

}  // namespace braid::reference
