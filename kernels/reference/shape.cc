// Reference Shape: the input's extents [start, end) (opset 15 attributes) as
// i64; Size: the input's element count as an i64 scalar. The values are known
// at Prepare; Run copies them.
#include <cstring>
#include <vector>

#include "kernels/params/data_ops.h"
#include "kernels/params/parse_util.h"
#include "kernels/reference/data_kernel_util.h"

namespace braid::reference {
namespace {

class ShapeKernel final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    RETURN_IF_ERROR(params_internal::CheckArity(args, 1, 1));
    const TensorDesc& in = args.inputs[0];
    const ShapeRange range = ParseShapeRange(args, in.rank());
    values_.assign(in.dims.begin() + range.start, in.dims.begin() + range.end);
    return params_internal::CheckOutput(
        args, {static_cast<int64_t>(values_.size())}, DataType::kI64);
  }

  Status Run(const RunArgs& args) override {
    if (!values_.empty())
      std::memcpy(args.dst[0], values_.data(), values_.size() * sizeof(int64_t));
    return Status::Ok();
  }

 private:
  std::vector<int64_t> values_;
};

class SizeKernel final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    RETURN_IF_ERROR(params_internal::CheckArity(args, 1, 1));
    size_ = args.inputs[0].elements();
    return params_internal::CheckOutput(args, {}, DataType::kI64);
  }

  Status Run(const RunArgs& args) override {
    std::memcpy(args.dst[0], &size_, sizeof size_);
    return Status::Ok();
  }

 private:
  int64_t size_ = 0;
};

}  // namespace

void RegisterShapeKernel(KernelRegistry& registry) {
  RegisterReference<ShapeKernel>(registry, "Shape");
  RegisterReference<SizeKernel>(registry, "Size");
}

}  // namespace braid::reference
