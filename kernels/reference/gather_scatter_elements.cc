// Reference GatherElements, ScatterElements and the deprecated Scatter (opsets
// 9-10: ScatterElements without reduction). Element e of indices (i32 or i64,
// same rank as data) names one element of data: e's own coordinates with the
// one along `axis` replaced by indices[e], negative counting from the end.
//   GatherElements: out[e] = that element; out has the shape of indices.
//   ScatterElements: a copy of data where that element takes updates[e], or
//   combines with it under `reduction` (scatter_reduction.h), in index order.
// An index out of range is InvalidArgument naming the node.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/params/broadcast.h"
#include "kernels/params/data_ops.h"
#include "kernels/params/parse_util.h"
#include "kernels/reference/data_kernel_util.h"
#include "kernels/params/scatter_reduction.h"

namespace braid::reference {
namespace {

// Maps each element of indices (row-major) to the data element it names.
class ElementAddressing {
 public:
  Status Init(const PrepareArgs& args, const TensorDesc& data, const TensorDesc& indices) {
    ASSIGN_OR_RETURN(axis_, ParseElementsAxis(args));
    index_dims_ = indices.dims;
    data_strides_ = ContiguousStrides(data.dims);
    extent_ = data.dims[static_cast<size_t>(axis_)];
    count_ = indices.elements();
    index_dtype_ = indices.dtype;
    where_ = args.Where();
    return Status::Ok();
  }

  int64_t count() const { return count_; }
  IntsView Indices(const void* src) const { return IntsView(src, index_dtype_, count_); }

  // Offset in data of the element that indices[e] = `index` names.
  StatusOr<int64_t> DataOffset(int64_t e, int64_t index) const {
    if (index < -extent_ || index >= extent_)
      return AxisIndexOutOfRange(where_, index, axis_, extent_);
    if (index < 0) index += extent_;
    int64_t offset = 0;
    for (size_t d = index_dims_.size(); d-- > 0;) {
      const int64_t coordinate = e % index_dims_[d];
      e /= index_dims_[d];
      offset += (static_cast<int>(d) == axis_ ? index : coordinate) * data_strides_[d];
    }
    return offset;
  }

 private:
  int axis_ = 0;
  int64_t extent_ = 0, count_ = 0;
  std::vector<int64_t> index_dims_, data_strides_;
  DataType index_dtype_ = DataType::kI64;
  std::string where_;
};

class GatherElementsKernel final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    RETURN_IF_ERROR(params_internal::CheckArity(args, 2, 2));
    const TensorDesc& data = args.inputs[0];
    RETURN_IF_ERROR(addressing_.Init(args, data, args.inputs[1]));
    RETURN_IF_ERROR(params_internal::CheckOutput(args, args.inputs[1].dims, data.dtype));
    run_ = SelectBySize<GatherElementsKernel>(DataTypeSize(data.dtype));
    if (run_ == nullptr) return UnsupportedDtype(args, data.dtype);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override { return run_(*this, args); }

  template <typename E>
  static Status RunTyped(const GatherElementsKernel& k, const RunArgs& args) {
    const E* data = static_cast<const E*>(args.src[0]);
    const IntsView indices = k.addressing_.Indices(args.src[1]);
    E* out = static_cast<E*>(args.dst[0]);
    for (int64_t e = 0; e < k.addressing_.count(); ++e) {
      ASSIGN_OR_RETURN(const int64_t offset, k.addressing_.DataOffset(e, indices[e]));
      out[e] = data[offset];
    }
    return Status::Ok();
  }

 private:
  ElementAddressing addressing_;
  TypedRun<GatherElementsKernel> run_ = nullptr;
};

// ScatterElements, and Scatter (which has no reduction attribute: "none").
class ScatterElementsKernel final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    RETURN_IF_ERROR(params_internal::CheckArity(args, 3, 3));
    const TensorDesc& data = args.inputs[0];
    const TensorDesc& indices = args.inputs[1];
    const TensorDesc& updates = args.inputs[2];
    RETURN_IF_ERROR(addressing_.Init(args, data, indices));
    if (updates.dtype != data.dtype || updates.dims != indices.dims)
      return params_internal::Invalid(args, "updates " + updates.ToString() +
                                                " must have data's dtype and indices' shape " +
                                                indices.ToString());
    RETURN_IF_ERROR(params_internal::CheckOutput(args, data.dims, data.dtype));
    ASSIGN_OR_RETURN(reduction_, ParseScatterReduction(args));
    data_bytes_ = data.bytes();
    if (reduction_ == ScatterReduction::kNone) {
      run_ = SelectBySize<ScatterElementsKernel>(DataTypeSize(data.dtype));
    } else {
      switch (data.dtype) {
        case DataType::kF32: run_ = &RunTyped<float>; break;
        case DataType::kI32: run_ = &RunTyped<int32_t>; break;
        case DataType::kI64: run_ = &RunTyped<int64_t>; break;
        case DataType::kI8: run_ = &RunTyped<int8_t>; break;
        case DataType::kU8: run_ = &RunTyped<uint8_t>; break;
        default: run_ = nullptr; break;
      }
    }
    if (run_ == nullptr) return UnsupportedDtype(args, data.dtype);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override { return run_(*this, args); }

  // T: the element type under a reduction, a same-size unsigned type for "none".
  template <typename T>
  static Status RunTyped(const ScatterElementsKernel& k, const RunArgs& args) {
    std::memcpy(args.dst[0], args.src[0], k.data_bytes_);
    const IntsView indices = k.addressing_.Indices(args.src[1]);
    const T* updates = static_cast<const T*>(args.src[2]);
    T* out = static_cast<T*>(args.dst[0]);
    for (int64_t e = 0; e < k.addressing_.count(); ++e) {
      ASSIGN_OR_RETURN(const int64_t offset, k.addressing_.DataOffset(e, indices[e]));
      out[offset] = CombineScatter(k.reduction_, out[offset], updates[e]);
    }
    return Status::Ok();
  }

 private:
  ElementAddressing addressing_;
  ScatterReduction reduction_ = ScatterReduction::kNone;
  size_t data_bytes_ = 0;
  TypedRun<ScatterElementsKernel> run_ = nullptr;
};

}  // namespace

void RegisterGatherScatterElementsKernels(KernelRegistry& registry) {
  RegisterReference<GatherElementsKernel>(registry, "GatherElements");
  RegisterReference<ScatterElementsKernel>(registry, "ScatterElements");
  RegisterReference<ScatterElementsKernel>(registry, "Scatter");
}

}  // namespace braid::reference
