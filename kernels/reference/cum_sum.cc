// Reference CumSum (f64, f32, i64, i32, u64, u32) along the axis input, with `exclusive`
// (each output leaves its own element out) and `reverse` (sums from the end).
// Floats accumulate in double, integers wrap in int64.
#include <cstdint>
#include <string>
#include <type_traits>

#include "kernels/params/broadcast.h"
#include "kernels/params/data_ops.h"
#include "kernels/params/parse_util.h"
#include "kernels/reference/data_kernel_util.h"

namespace braid::reference {
namespace {

class CumSumKernel final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    RETURN_IF_ERROR(params_internal::CheckArity(args, 2, 2));
    const TensorDesc& in = args.inputs[0];
    RETURN_IF_ERROR(params_internal::CheckOutput(args, in.dims, in.dtype));
    if (args.inputs[1].elements() != 1 ||
        (args.inputs[1].dtype != DataType::kI64 && args.inputs[1].dtype != DataType::kI32))
      return params_internal::Invalid(args, "axis must be an int32 or int64 scalar");
    exclusive_ = args.node->attrs.GetInt("exclusive", 0) != 0;
    reverse_ = args.node->attrs.GetInt("reverse", 0) != 0;
    dims_ = in.dims;
    axis_type_ = args.inputs[1].dtype;
    where_ = args.Where();
    switch (in.dtype) {
      case DataType::kF32: run_ = &RunTyped<float>; break;
      case DataType::kI32: run_ = &RunTyped<int32_t>; break;
      case DataType::kI64: run_ = &RunTyped<int64_t>; break;
      case DataType::kF64: run_ = &RunTyped<double>; break;
      case DataType::kU32: run_ = &RunTyped<uint32_t>; break;
      case DataType::kU64: run_ = &RunTyped<uint64_t>; break;
      default: return UnsupportedDtype(args, in.dtype);
    }
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override { return run_(*this, args); }

 private:
  template <typename T>
  static Status RunTyped(const CumSumKernel& k, const RunArgs& args) {
    const auto rank = static_cast<int64_t>(k.dims_.size());
    int64_t axis = k.axis_type_ == DataType::kI64 ? *static_cast<const int64_t*>(args.src[1])
                                                  : *static_cast<const int32_t*>(args.src[1]);
    if (axis < -rank || axis >= rank)
      return InvalidArgument(k.where_ + ": axis " + std::to_string(axis) +
                             " is out of range for rank " + std::to_string(rank));
    if (axis < 0) axis += rank;
    const int64_t extent = k.dims_[static_cast<size_t>(axis)];
    int64_t inner = 1, outer = 1;
    for (int64_t d = 0; d < rank; ++d) {
      if (d < axis) outer *= k.dims_[static_cast<size_t>(d)];
      if (d > axis) inner *= k.dims_[static_cast<size_t>(d)];
    }
    using Acc = std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;
    const T* x = static_cast<const T*>(args.src[0]);
    T* y = static_cast<T*>(args.dst[0]);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        Acc acc = 0;
        for (int64_t t = 0; t < extent; ++t) {
          const int64_t at = (o * extent + (k.reverse_ ? extent - 1 - t : t)) * inner + i;
          if (k.exclusive_) y[at] = static_cast<T>(acc);
          acc += static_cast<Acc>(x[at]);  // unsigned: integer sums wrap
          if (!k.exclusive_) y[at] = static_cast<T>(acc);
        }
      }
    return Status::Ok();
  }

  bool exclusive_ = false, reverse_ = false;
  std::vector<int64_t> dims_;
  DataType axis_type_ = DataType::kI64;
  std::string where_;
  Status (*run_)(const CumSumKernel&, const RunArgs&) = nullptr;
};

}  // namespace

void RegisterCumSumKernel(KernelRegistry& registry) {
  RegisterReference<CumSumKernel>(registry, "CumSum");
}

}  // namespace braid::reference
