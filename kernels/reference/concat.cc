// Reference Concat along any axis, any dtype: per outer index, each input
// contributes one contiguous block of extent[axis] * inner elements.
#include <cstring>
#include <vector>

#include "kernels/params/data_ops.h"
#include "kernels/params/parse_util.h"
#include "kernels/reference/data_kernel_util.h"

namespace braid::reference {
namespace {

class ConcatKernel final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    RETURN_IF_ERROR(params_internal::CheckArity(args, 1, args.inputs.size()));
    const TensorDesc& first = args.inputs[0];
    if (first.rank() == 0) return params_internal::Invalid(args, "inputs must have rank >= 1");
    ASSIGN_OR_RETURN(const int axis, ParseAxis(args, 1, first.rank()));
    const size_t a = static_cast<size_t>(axis);
    std::vector<int64_t> out_dims = first.dims;
    out_dims[a] = 0;
    const size_t element = DataTypeSize(first.dtype);
    const int64_t inner = params_internal::Product(first.dims, a + 1);
    for (size_t i = 0; i < args.inputs.size(); ++i) {
      const TensorDesc& in = args.inputs[i];
      bool same = in.present() && in.dtype == first.dtype && in.rank() == first.rank();
      for (size_t d = 0; same && d < in.dims.size(); ++d)
        same = d == a || in.dims[d] == first.dims[d];
      if (!same)
        return params_internal::Invalid(args, std::string("input ")
                                                  .append(std::to_string(i))
                                                  .append(" ")
                                                  .append(in.ToString())
                                                  .append(" does not concatenate with ")
                                                  .append(first.ToString()));
      out_dims[a] += in.dims[a];
      block_bytes_.push_back(static_cast<size_t>(in.dims[a] * inner) * element);
    }
    RETURN_IF_ERROR(params_internal::CheckOutput(args, out_dims, first.dtype));
    outer_ = params_internal::Product(first.dims, 0, a);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    auto* dst = static_cast<unsigned char*>(args.dst[0]);
    for (int64_t o = 0; o < outer_; ++o) {
      for (size_t i = 0; i < block_bytes_.size(); ++i) {
        const size_t bytes = block_bytes_[i];
        if (bytes == 0) continue;
        std::memcpy(dst, static_cast<const unsigned char*>(args.src[i]) +
                             static_cast<size_t>(o) * bytes, bytes);
        dst += bytes;
      }
    }
    return Status::Ok();
  }

 private:
  int64_t outer_ = 0;
  std::vector<size_t> block_bytes_;  // per input, per outer index
};

}  // namespace

void RegisterConcatKernel(KernelRegistry& registry) {
  RegisterReference<ConcatKernel>(registry, "Concat");
}

}  // namespace braid::reference
