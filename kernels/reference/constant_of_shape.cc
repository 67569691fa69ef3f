// Reference ConstantOfShape: fills the output (shape from the output desc,
// cross-checked with a constant shape input) with the one-element `value`
// tensor attribute (default f32 0).
#include <cstring>

#include "kernels/params/data_ops.h"
#include "kernels/params/parse_util.h"
#include "kernels/reference/data_kernel_util.h"

namespace braid::reference {
namespace {

class ConstantOfShapeKernel final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    RETURN_IF_ERROR(params_internal::CheckArity(args, 1, 1));
    const TensorDesc& out = args.outputs[0];
    DataType type = DataType::kF32;
    std::memset(value_, 0, sizeof value_);
    if (const TensorAttr* value = args.node->attrs.GetTensor("value")) {
      type = value->dtype;
      const size_t size = DataTypeSize(type);
      if (size == 0 || size > sizeof value_ || value->data.size() != size)
        return params_internal::Invalid(args, "value must be a one-element tensor");
      std::memcpy(value_, value->data.data(), size);
    }
    if (out.dtype != type)
      return params_internal::Invalid(args, std::string("output ")
                                                .append(out.ToString())
                                                .append(" does not have the value's dtype ")
                                                .append(DataTypeName(type)));
    if (IsConstantInput(args, 0)) {
      ASSIGN_OR_RETURN(std::vector<int64_t> shape, ConstantInts(args, 0, "shape"));
      RETURN_IF_ERROR(params_internal::CheckOutput(args, shape, type));
    }
    run_ = SelectBySize<ConstantOfShapeKernel>(DataTypeSize(type));
    if (run_ == nullptr) return UnsupportedDtype(args, type, "value");
    elements_ = out.elements();
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override { return run_(*this, args); }

  template <typename E>
  static Status RunTyped(const ConstantOfShapeKernel& k, const RunArgs& args) {
    E value;
    std::memcpy(&value, k.value_, sizeof value);
    E* y = static_cast<E*>(args.dst[0]);
    for (int64_t i = 0; i < k.elements_; ++i) y[i] = value;
    return Status::Ok();
  }

 private:
  unsigned char value_[8];
  int64_t elements_ = 0;
  TypedRun<ConstantOfShapeKernel> run_ = nullptr;
};

}  // namespace

void RegisterConstantOfShapeKernel(KernelRegistry& registry) {
  RegisterReference<ConstantOfShapeKernel>(registry, "ConstantOfShape");
}

}  // namespace braid::reference
