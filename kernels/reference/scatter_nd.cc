// Reference ScatterND(data, indices, updates): a copy of data where each index
// tuple (the last axis of indices, k entries) names a slice of data's last
// rank - k axes that takes the matching slice of updates, replaced or, with
// `reduction` (opset 16: add, mul; 18: max, min), combined. Negative indices
// count from the end; one out of range is an error naming the node. Any
// element type for "none"; f32 / i32 / i64 for the reductions.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/params/data_ops.h"
#include "kernels/params/parse_util.h"
#include "kernels/reference/data_kernel_util.h"
#include "kernels/params/scatter_reduction.h"

namespace braid::reference {
namespace {

class ScatterNDKernel final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(const IndexTupleParams p, ParseScatterND(args));
    const TensorDesc& data = args.inputs[0];
    k_ = p.k;
    extents_ = p.tuple_extents;
    strides_ = p.tuple_strides;
    slice_ = p.slice;
    tuples_ = p.tuples;
    data_elements_ = data.elements();
    element_bytes_ = DataTypeSize(data.dtype);
    where_ = args.Where();
    ASSIGN_OR_RETURN(reduction_, ParseScatterReduction(args));
    if (reduction_ == ScatterReduction::kNone) {
      run_ = &RunTyped<std::byte>;
    } else {
      switch (data.dtype) {
        case DataType::kF32: run_ = &RunTyped<float>; break;
        case DataType::kI32: run_ = &RunTyped<int32_t>; break;
        case DataType::kI64: run_ = &RunTyped<int64_t>; break;
        default: return UnsupportedDtype(args, data.dtype);
      }
    }
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override { return run_(*this, args); }

 private:
  // Offset (in elements) of the slice index tuple t names.
  StatusOr<int64_t> Offset(const int64_t* indices, int64_t t) const {
    int64_t offset = 0;
    for (int64_t d = 0; d < k_; ++d) {
      const int64_t extent = extents_[static_cast<size_t>(d)];
      int64_t i = indices[t * k_ + d];
      if (i < 0) i += extent;
      if (i < 0 || i >= extent)
        return AxisIndexOutOfRange(where_, indices[t * k_ + d], d, extent);
      offset += i * strides_[static_cast<size_t>(d)];
    }
    return offset;
  }

  // T = std::byte: plain replacement of whole slices (any element type).
  template <typename T>
  static Status RunTyped(const ScatterNDKernel& k, const RunArgs& args) {
    std::memcpy(args.dst[0], args.src[0], static_cast<size_t>(k.data_elements_) * k.element_bytes_);
    const int64_t* indices = static_cast<const int64_t*>(args.src[1]);
    for (int64_t t = 0; t < k.tuples_; ++t) {
      ASSIGN_OR_RETURN(const int64_t offset, k.Offset(indices, t));
      if constexpr (std::is_same_v<T, std::byte>) {
        const size_t bytes = static_cast<size_t>(k.slice_) * k.element_bytes_;
        std::memcpy(static_cast<std::byte*>(args.dst[0]) + offset * static_cast<int64_t>(k.element_bytes_),
                    static_cast<const std::byte*>(args.src[2]) + t * static_cast<int64_t>(bytes), bytes);
      } else {
        T* out = static_cast<T*>(args.dst[0]) + offset;
        const T* update = static_cast<const T*>(args.src[2]) + t * k.slice_;
        for (int64_t e = 0; e < k.slice_; ++e) out[e] = CombineScatter(k.reduction_, out[e], update[e]);
      }
    }
    return Status::Ok();
  }

  int64_t k_ = 0, slice_ = 1, tuples_ = 0, data_elements_ = 0;
  size_t element_bytes_ = 0;
  std::vector<int64_t> extents_, strides_;  // data's first k axes
  ScatterReduction reduction_ = ScatterReduction::kNone;
  std::string where_;
  Status (*run_)(const ScatterNDKernel&, const RunArgs&) = nullptr;
};

}  // namespace

void RegisterScatterNDKernel(KernelRegistry& registry) {
  RegisterReference<ScatterNDKernel>(registry, "ScatterND");
}

}  // namespace braid::reference
