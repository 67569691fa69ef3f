// Reference EyeLike: a 2-D tensor shaped as the input, 1 on the diagonal
// j - i == k and 0 elsewhere, in the output's dtype (the `dtype` attribute or
// the input's; shape inference chose it). The input's values are not read.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/params/parse_util.h"
#include "kernels/reference/data_kernel_util.h"

namespace braid::reference {
namespace {

class EyeLikeKernel final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    RETURN_IF_ERROR(params_internal::CheckArity(args, 1, 1));
    const TensorDesc& in = args.inputs[0];
    const TensorDesc& out = args.outputs[0];
    if (in.rank() != 2 || out.dims != in.dims)
      return params_internal::Invalid(args, "input " + in.ToString() + " and output " +
                                                out.ToString() + " must be 2-D of one shape");
    rows_ = in.dims[0];
    cols_ = in.dims[1];
    // Clamped so that i + k cannot overflow; a clamped k selects no element either way.
    k_ = std::clamp<int64_t>(args.node->attrs.GetInt("k", 0), -rows_, cols_);
    element_bytes_ = DataTypeSize(out.dtype);
    if (element_bytes_ == 0 || element_bytes_ > sizeof one_)
      return UnsupportedDtype(args, out.dtype, "output");
    EncodeValue(1.0, out.dtype, one_);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    auto* y = static_cast<unsigned char*>(args.dst[0]);
    std::memset(y, 0, static_cast<size_t>(rows_ * cols_) * element_bytes_);
    for (int64_t i = 0; i < rows_; ++i) {
      const int64_t j = i + k_;
      if (j >= 0 && j < cols_)
        std::memcpy(y + static_cast<size_t>(i * cols_ + j) * element_bytes_, one_, element_bytes_);
    }
    return Status::Ok();
  }

 private:
  int64_t rows_ = 0, cols_ = 0, k_ = 0;
  size_t element_bytes_ = 0;
  unsigned char one_[8] = {};
};

}  // namespace

void RegisterEyeLikeKernel(KernelRegistry& registry) {
  RegisterReference<EyeLikeKernel>(registry, "EyeLike");
}

}  // namespace braid::reference
