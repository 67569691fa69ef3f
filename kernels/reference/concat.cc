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
    ASSIGN_OR_RETURN(const ConcatParams p, ParseConcat(args));
    const TensorDesc& out = args.outputs[0];
    const size_t a = static_cast<size_t>(p.axis);
    const int64_t inner = params_internal::Product(out.dims, a + 1);
    const size_t element = DataTypeSize(out.dtype);
    for (int64_t extent : p.extents)
      block_bytes_.push_back(static_cast<size_t>(extent * inner) * element);
    outer_ = params_internal::Product(out.dims, 0, a);
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
