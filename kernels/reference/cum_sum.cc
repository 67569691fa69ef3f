// Reference CumSum (f64, f32, i64, i32, u64, u32) along the axis input, with `exclusive`
// (each output leaves its own element out) and `reverse` (sums from the end).
// Floats accumulate in double, integers wrap in int64.
#include <cstdint>
#include <string>
#include <type_traits>

#include "kernels/params/data_ops.h"
#include "kernels/reference/data_kernel_util.h"

namespace braid::reference {
namespace {

class CumSumKernel final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(const CumSumParams p, ParseCumSum(args));
    exclusive_ = p.exclusive;
    reverse_ = p.reverse;
    dims_ = args.inputs[0].dims;
    axis_type_ = p.axis_dtype;
    where_ = args.Where();
    switch (args.inputs[0].dtype) {
      case DataType::kF32: run_ = &RunTyped<float>; break;
      case DataType::kI32: run_ = &RunTyped<int32_t>; break;
      case DataType::kI64: run_ = &RunTyped<int64_t>; break;
      case DataType::kF64: run_ = &RunTyped<double>; break;
      case DataType::kU32: run_ = &RunTyped<uint32_t>; break;
      case DataType::kU64: run_ = &RunTyped<uint64_t>; break;
      default: return UnsupportedDtype(args, args.inputs[0].dtype);
    }
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override { return run_(*this, args); }

 private:
  template <typename T>
  static Status RunTyped(const CumSumKernel& k, const RunArgs& args) {
    const int64_t axis = k.axis_type_ == DataType::kI64
                             ? *static_cast<const int64_t*>(args.src[1])
                             : *static_cast<const int32_t*>(args.src[1]);
    StatusOr<AxisSplit> split = SplitAtAxis(k.dims_, axis);
    if (!split.ok()) return split.status().WithPrefix(k.where_);
    const int64_t outer = split->outer, extent = split->extent, inner = split->inner;
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
