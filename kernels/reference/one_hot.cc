// Reference OneHot(indices, depth, values = [off, on], axis = -1): the output
// inserts an axis of extent depth at `axis` into indices' shape; an element
// is `on` where its coordinate on that axis equals the index (negative ones
// count from the end, as ONNX Runtime does), `off` elsewhere, so an index out
// of [-depth, depth) gives a row of `off`. Indices may be any numeric dtype
// (floats truncate toward zero); values of any dtype move as bytes. depth is
// read from the planned output shape (shape inference needs it at load time).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "kernels/params/data_ops.h"
#include "kernels/params/parse_util.h"
#include "kernels/reference/data_kernel_util.h"

namespace braid::reference {
namespace {

class OneHotKernel final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    RETURN_IF_ERROR(params_internal::CheckArity(args, 3, 3));
    const TensorDesc& indices = args.inputs[0];
    const TensorDesc& values = args.inputs[2];
    if (values.elements() != 2)
      return params_internal::Invalid(args, "values " + values.ToString() +
                                                " must hold two elements, [off, on]");
    const TensorDesc& out = args.outputs[0];
    if (out.rank() != indices.rank() + 1)
      return params_internal::Invalid(args, "output " + out.ToString() + " must have rank " +
                                                std::to_string(indices.rank() + 1));
    ASSIGN_OR_RETURN(const int axis, ParseAxis(args, -1, out.rank()));
    depth_ = out.dims[static_cast<size_t>(axis)];
    std::vector<int64_t> expected = indices.dims;
    expected.insert(expected.begin() + axis, depth_);
    RETURN_IF_ERROR(params_internal::CheckOutput(args, expected, values.dtype));
    outer_ = params_internal::Product(indices.dims, 0, static_cast<size_t>(axis));
    inner_ = params_internal::Product(indices.dims, static_cast<size_t>(axis));
    indices_dtype_ = indices.dtype;
    if (indices_dtype_ == DataType::kF16 || indices_dtype_ == DataType::kBool)
      return UnsupportedDtype(args, indices_dtype_, "indices");
    element_bytes_ = DataTypeSize(values.dtype);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    const auto* values = static_cast<const unsigned char*>(args.src[2]);
    const unsigned char* off = values;
    const unsigned char* on = values + element_bytes_;
    auto* y = static_cast<unsigned char*>(args.dst[0]);
    for (int64_t o = 0; o < outer_; ++o)
      for (int64_t d = 0; d < depth_; ++d)
        for (int64_t i = 0; i < inner_; ++i) {
          int64_t index = IndexAt(args.src[0], o * inner_ + i);
          if (index < 0) index += depth_;
          std::memcpy(y, index == d ? on : off, element_bytes_);
          y += element_bytes_;
        }
    return Status::Ok();
  }

 private:
  int64_t IndexAt(const void* indices, int64_t k) const {
    const auto at = static_cast<size_t>(k);
    switch (indices_dtype_) {
      case DataType::kF32: {
        const float v = static_cast<const float*>(indices)[at];
        // Out of int64's range (or NaN) matches no row.
        return std::isfinite(v) && std::fabs(v) < 9.2e18f ? static_cast<int64_t>(v) : -depth_ - 1;
      }
      case DataType::kI64: return static_cast<const int64_t*>(indices)[at];
      case DataType::kI32: return static_cast<const int32_t*>(indices)[at];
      case DataType::kI8: return static_cast<const int8_t*>(indices)[at];
      case DataType::kU8: return static_cast<const uint8_t*>(indices)[at];
      default: return -depth_ - 1;
    }
  }

  int64_t depth_ = 0, outer_ = 1, inner_ = 1;
  DataType indices_dtype_ = DataType::kI64;
  size_t element_bytes_ = 0;
};

}  // namespace

void RegisterOneHotKernel(KernelRegistry& registry) {
  RegisterReference<OneHotKernel>(registry, "OneHot");
}

}  // namespace braid::reference
