// Reference unary elementwise ops: the table of kernels/params/unary.h (each
// op's f32 function, integer versions where they exist, attributes), one
// element after another on one thread. Not (bool) and IsNaN / IsInf (f32 in,
// bool out) are their own small kernels.
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "kernels/params/binary_ops.h"
#include "kernels/params/elementwise.h"
#include "kernels/params/parse_util.h"
#include "kernels/params/unary.h"
#include "kernels/reference/data_kernel_util.h"

namespace braid::reference {
namespace {

class UnaryKernel final : public Kernel {
 public:
  explicit UnaryKernel(const UnaryOpRow& row) : row_(row) {}

  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(params_, ParseUnary(args, row_));
    const TensorDesc& in = args.inputs[0];
    elements_ = in.elements();
    switch (in.dtype) {
      case DataType::kF32: run_ = &RunF32; break;
      case DataType::kI32:
        if (row_.i32 == nullptr) return UnsupportedDtype(args, in.dtype);
        run_ = &RunInt<int32_t>;
        break;
      case DataType::kI64:
        if (row_.i64 == nullptr) return UnsupportedDtype(args, in.dtype);
        run_ = &RunInt<int64_t>;
        break;
      default: return UnsupportedDtype(args, in.dtype);
    }
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    run_(*this, args);
    return Status::Ok();
  }

 private:
  static void RunF32(const UnaryKernel& k, const RunArgs& args) {
    const float* x = static_cast<const float*>(args.src[0]);
    float* y = static_cast<float*>(args.dst[0]);
    for (int64_t i = 0; i < k.elements_; ++i) y[i] = k.row_.f32(x[i], k.params_);
  }
  template <typename T>
  static void RunInt(const UnaryKernel& k, const RunArgs& args) {
    const T* x = static_cast<const T*>(args.src[0]);
    T* y = static_cast<T*>(args.dst[0]);
    T (*fn)(T);
    if constexpr (std::is_same_v<T, int32_t>) fn = k.row_.i32;
    else fn = k.row_.i64;
    for (int64_t i = 0; i < k.elements_; ++i) y[i] = fn(x[i]);
  }

  const UnaryOpRow& row_;
  AlphaBeta params_;
  int64_t elements_ = 0;
  void (*run_)(const UnaryKernel&, const RunArgs&) = nullptr;
};

// Not: bool in, bool out.
class NotKernel final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    RETURN_IF_ERROR(params_internal::CheckArity(args, 1, 1));
    if (args.inputs[0].dtype != DataType::kBool)
      return params_internal::Invalid(
          args, std::string("input must be bool, is ").append(args.inputs[0].ToString()));
    RETURN_IF_ERROR(params_internal::CheckOutput(args, args.inputs[0].dims, DataType::kBool));
    elements_ = args.inputs[0].elements();
    return Status::Ok();
  }
  Status Run(const RunArgs& args) override {
    const uint8_t* x = static_cast<const uint8_t*>(args.src[0]);
    uint8_t* y = static_cast<uint8_t*>(args.dst[0]);
    for (int64_t i = 0; i < elements_; ++i) y[i] = binary_ops::NotOp::Apply(x[i]);
    return Status::Ok();
  }

 private:
  int64_t elements_ = 0;
};

// IsNaN, and IsInf with detect_positive / detect_negative (default 1 each):
// f32 in, bool out.
class FloatClassKernel final : public Kernel {
 public:
  explicit FloatClassKernel(bool nan) : nan_(nan) {}

  Status Prepare(const PrepareArgs& args) override {
    RETURN_IF_ERROR(params_internal::CheckArity(args, 1, 1));
    if (args.inputs[0].dtype != DataType::kF32) return UnsupportedDtype(args, args.inputs[0].dtype);
    RETURN_IF_ERROR(params_internal::CheckOutput(args, args.inputs[0].dims, DataType::kBool));
    const IsInfParams p = ParseIsInf(args);
    positive_ = p.positive;
    negative_ = p.negative;
    elements_ = args.inputs[0].elements();
    return Status::Ok();
  }
  Status Run(const RunArgs& args) override {
    const float* x = static_cast<const float*>(args.src[0]);
    uint8_t* y = static_cast<uint8_t*>(args.dst[0]);
    for (int64_t i = 0; i < elements_; ++i) {
      const bool hit = nan_ ? std::isnan(x[i])
                            : std::isinf(x[i]) && (x[i] > 0 ? positive_ : negative_);
      y[i] = hit ? 1 : 0;
    }
    return Status::Ok();
  }

 private:
  bool nan_;
  bool positive_ = true, negative_ = true;
  int64_t elements_ = 0;
};

}  // namespace

void RegisterUnaryKernels(KernelRegistry& registry) {
  registry.Register(KernelEntry{"Not", DeviceKind::kCpu, "reference", 0,
                                [] { return std::make_unique<NotKernel>(); }});
  registry.Register(KernelEntry{"IsNaN", DeviceKind::kCpu, "reference", 0,
                                [] { return std::make_unique<FloatClassKernel>(true); }});
  registry.Register(KernelEntry{"IsInf", DeviceKind::kCpu, "reference", 0,
                                [] { return std::make_unique<FloatClassKernel>(false); }});
  for (const UnaryOpRow& row : UnaryOps()) {
    const UnaryOpRow* r = &row;
    registry.Register(KernelEntry{row.op_type, DeviceKind::kCpu, "reference", 0,
                                  [r] { return std::make_unique<UnaryKernel>(*r); }});
  }
}

}  // namespace braid::reference
