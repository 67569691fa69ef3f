// Reference EyeLike: a 2-D tensor shaped as the input, 1 on the diagonal
// j - i == k and 0 elsewhere, in the output's dtype (the `dtype` attribute or
// the input's; shape inference chose it). The input's values are not read.
#include <cstdint>
#include <cstring>

#include "kernels/params/data_ops.h"
#include "kernels/params/parse_util.h"
#include "kernels/reference/data_kernel_util.h"

namespace braid::reference {
namespace {

class EyeLikeKernel final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(const EyeLikeParams p, ParseEyeLike(args));
    rows_ = p.rows;
    cols_ = p.cols;
    k_ = p.k;
    element_bytes_ = DataTypeSize(args.outputs[0].dtype);
    std::memcpy(one_, &p.one, sizeof one_);
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
