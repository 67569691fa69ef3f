// Reference Range(start, limit, delta) for f32 / i32 / i64 scalars. The output
// length was fixed at load time (graph/ops/indexing.cc InferRange); Run
// recomputes it from the inputs and refuses a mismatch. Values accumulate
// (value += delta), as ONNX's function body and ONNX Runtime compute them.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "kernels/params/parse_util.h"
#include "kernels/reference/data_kernel_util.h"

namespace braid::reference {
namespace {

class RangeKernel final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    RETURN_IF_ERROR(params_internal::CheckArity(args, 3, 3));
    const DataType type = args.inputs[0].dtype;
    for (const TensorDesc& d : args.inputs) {
      if (d.dtype != type)
        return params_internal::Invalid(args, "start, limit and delta dtypes differ");
      if (d.elements() != 1)
        return params_internal::Invalid(args, std::string("input ").append(d.ToString())
                                                  .append(" is not a scalar"));
    }
    const TensorDesc& out = args.outputs[0];
    if (out.rank() != 1 || out.dtype != type)
      return params_internal::Invalid(args, "output " + out.ToString() + " is not a 1-D " +
                                                DataTypeName(type) + " tensor");
    length_ = out.dims[0];
    where_ = args.Where();
    switch (type) {
      case DataType::kF32: run_ = &RunTyped<float>; break;
      case DataType::kI32: run_ = &RunTyped<int32_t>; break;
      case DataType::kI64: run_ = &RunTyped<int64_t>; break;
      default: return UnsupportedDtype(args, type);
    }
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override { return run_(*this, args); }

 private:
  template <typename T>
  static Status RunTyped(const RangeKernel& k, const RunArgs& args) {
    const T start = *static_cast<const T*>(args.src[0]);
    const T limit = *static_cast<const T*>(args.src[1]);
    const T delta = *static_cast<const T*>(args.src[2]);
    if (delta == 0) return InvalidArgument(k.where_ + ": delta is 0");
    const double length = std::ceil((static_cast<double>(limit) - static_cast<double>(start)) /
                                    static_cast<double>(delta));
    if (!(std::max(length, 0.0) == static_cast<double>(k.length_))) {  // NaN too
      const bool finite = std::isfinite(length) && std::fabs(length) < 9e18;
      return InvalidArgument(k.where_ + ": start, limit and delta give " +
                             (finite ? std::to_string(std::max<int64_t>(static_cast<int64_t>(length), 0))
                                     : std::string("no finite number of")) +
                             " elements, the plan has " + std::to_string(k.length_));
    }
    T* y = static_cast<T*>(args.dst[0]);
    T value = start;
    for (int64_t i = 0; i < k.length_; ++i) {
      y[i] = value;
      if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;  // wraps instead of overflowing
        value = static_cast<T>(static_cast<U>(value) + static_cast<U>(delta));
      } else {
        value += delta;
      }
    }
    return Status::Ok();
  }

  int64_t length_ = 0;
  std::string where_;
  Status (*run_)(const RangeKernel&, const RunArgs&) = nullptr;
};

}  // namespace

void RegisterRangeKernel(KernelRegistry& registry) {
  RegisterReference<RangeKernel>(registry, "Range");
}

}  // namespace braid::reference
