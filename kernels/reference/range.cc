// Reference Range(start, limit, delta) for f32 / i32 / i64 scalars. The output
// length was fixed at load time (graph/ops/indexing.cc InferRange); Run
// recomputes it from the inputs and refuses a mismatch. Values accumulate
// (value += delta), as ONNX's function body and ONNX Runtime compute them.
#include <cstdint>
#include <string>
#include <type_traits>

#include "kernels/params/data_ops.h"
#include "kernels/params/parse_util.h"
#include "kernels/reference/data_kernel_util.h"

namespace braid::reference {
namespace {

class RangeKernel final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(length_, ParseRange(args));
    const DataType type = args.inputs[0].dtype;
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
    ASSIGN_OR_RETURN(const RangeScalars<T> range, ReadRangeScalars<T>(args, k.where_, k.length_));
    const T delta = range.delta;
    T* y = static_cast<T*>(args.dst[0]);
    T value = range.start;
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
