// Reference OneHot(indices, depth, values = [off, on], axis = -1): the output
// inserts an axis of extent depth at `axis` into indices' shape; an element
// is `on` where its coordinate on that axis equals the index (negative ones
// count from the end, as ONNX Runtime does), `off` elsewhere, so an index out
// of [-depth, depth) gives a row of `off`. Indices may be any numeric dtype
// (floats truncate toward zero); values of any dtype move as bytes. depth is
// read from the planned output shape (shape inference needs it at load time).
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
    ASSIGN_OR_RETURN(const OneHotParams p, ParseOneHot(args));
    const TensorDesc& values = args.inputs[2];
    depth_ = p.depth;
    outer_ = p.outer;
    inner_ = p.inner;
    indices_dtype_ = args.inputs[0].dtype;
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
      case DataType::kF32: return OneHotIndex(static_cast<const float*>(indices)[at]);
      case DataType::kF64: return OneHotIndex(static_cast<const double*>(indices)[at]);
      case DataType::kI64: return OneHotIndex(static_cast<const int64_t*>(indices)[at]);
      case DataType::kI32: return OneHotIndex(static_cast<const int32_t*>(indices)[at]);
      case DataType::kI16: return OneHotIndex(static_cast<const int16_t*>(indices)[at]);
      case DataType::kI8: return OneHotIndex(static_cast<const int8_t*>(indices)[at]);
      case DataType::kU64: return OneHotIndex(static_cast<const uint64_t*>(indices)[at]);
      case DataType::kU32: return OneHotIndex(static_cast<const uint32_t*>(indices)[at]);
      case DataType::kU16: return OneHotIndex(static_cast<const uint16_t*>(indices)[at]);
      case DataType::kU8: return OneHotIndex(static_cast<const uint8_t*>(indices)[at]);
      default: return kOneHotNoRow;  // ParseOneHot refuses every other dtype
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
