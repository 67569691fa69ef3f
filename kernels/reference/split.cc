// Reference Split along any axis, any dtype: the inverse walk of Concat. Sizes
// come from the `split` attribute / input or an even split, cross-checked
// with the output descs (kernels/params/data_ops.h ParseSplit).
#include <cstring>
#include <vector>

#include "kernels/params/data_ops.h"
#include "kernels/params/parse_util.h"
#include "kernels/reference/data_kernel_util.h"

namespace braid::reference {
namespace {

class SplitKernel final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    RETURN_IF_ERROR(params_internal::CheckArity(args, 1, 2));
    const TensorDesc& in = args.inputs[0];
    if (in.rank() == 0) return params_internal::Invalid(args, "input must have rank >= 1");
    ASSIGN_OR_RETURN(SplitParams split, ParseSplit(args));
    for (const TensorDesc& out : args.outputs)
      if (out.dtype != in.dtype)
        return params_internal::Invalid(args, std::string("output ")
                                                  .append(out.ToString())
                                                  .append(" has another dtype than the input"));
    const size_t a = static_cast<size_t>(split.axis);
    const int64_t inner = params_internal::Product(in.dims, a + 1);
    for (int64_t size : split.sizes)
      block_bytes_.push_back(static_cast<size_t>(size * inner) * DataTypeSize(in.dtype));
    outer_ = params_internal::Product(in.dims, 0, a);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    const auto* src = static_cast<const unsigned char*>(args.src[0]);
    for (int64_t o = 0; o < outer_; ++o) {
      for (size_t k = 0; k < block_bytes_.size(); ++k) {
        const size_t bytes = block_bytes_[k];
        if (bytes == 0) continue;
        std::memcpy(static_cast<unsigned char*>(args.dst[k]) + static_cast<size_t>(o) * bytes,
                    src, bytes);
        src += bytes;
      }
    }
    return Status::Ok();
  }

 private:
  int64_t outer_ = 0;
  std::vector<size_t> block_bytes_;  // per output, per outer index
};

}  // namespace

void RegisterSplitKernel(KernelRegistry& registry) {
  RegisterReference<SplitKernel>(registry, "Split");
}

}  // namespace braid::reference
