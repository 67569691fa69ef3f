// Reference broadcasting binary ops: Add Sub Mul Div Mod PRelu, the variadic
// Min Max Sum (and Mean: Sum divided by the input count) on f64/f32 and every
// integer dtype (Min/Max/Mod also f16); the comparisons Equal (also bool)
// Greater Less GreaterOrEqual LessOrEqual; the logical And Or Xor (bool);
// BitShift (u8/u16/u32/u64); and Pow with a f32/f64/i32/i64 base and a
// f32/f64/i32/i64/u32/u64 exponent. Each op is one functor; BinaryKernel<Op> does the broadcasting walk
// (kernels/params/broadcast.h) and folds the inputs left to right, so Min/Max
// of n inputs is min(min(a, b), c)...
//
// The per-element functors and their integer / NaN semantics live in
// kernels/params/binary_ops.h (shared with the CPU kernels).
//
// A fused activation (docs/ir.md; FuseActivations puts one on a residual
// Add) is applied to each f32 result: y = act(a + b). Other dtypes and
// comparisons refuse it at Prepare.
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "kernels/params/activation.h"
#include "kernels/params/binary_ops.h"
#include "kernels/params/elementwise.h"
#include "kernels/params/parse_util.h"
#include "kernels/reference/data_kernel_util.h"

namespace braid::reference {
namespace {

using binary_ops::Accepts;
using binary_ops::AddOp;
using binary_ops::BitShiftOp;
using binary_ops::CompareOp;
using binary_ops::DivOp;
using binary_ops::EqualOp;
using binary_ops::Half;
using binary_ops::LogicalOp;
using binary_ops::MaxOp;
using binary_ops::MinOp;
using binary_ops::ModOp;
using binary_ops::MulOp;
using binary_ops::PReluOp;
using binary_ops::SubOp;
using binary_ops::SumOp;

template <typename Op>
class BinaryKernel final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    RETURN_IF_ERROR(params_internal::CheckArity(
        args, Op::kVariadic ? 1 : 2,
        Op::kVariadic ? static_cast<size_t>(kMaxBroadcastInputs) : 2));
    ASSIGN_OR_RETURN(const DataType type, CommonInputType(args));
    if (!Accepts(Op::kOperands, type)) return UnsupportedDtype(args, type);
    ASSIGN_OR_RETURN(plan_, PrepareBroadcast(args));
    const DataType out_type = Op::kCompare ? DataType::kBool : type;
    RETURN_IF_ERROR(params_internal::CheckOutput(args, plan_.output_dims(), out_type));
    ASSIGN_OR_RETURN(activation_, ParseFusedActivation(args));
    if (!activation_.none() && (Op::kCompare || type != DataType::kF32))
      return params_internal::Unsupported(
          args, std::string("fused activation on ") + DataTypeName(type) +
                    (Op::kCompare ? " comparison" : "") + " (f32 arithmetic only)");
    switch (type) {
      case DataType::kF32: run_ = &RunTyped<float>; break;
      case DataType::kI32: run_ = &RunTyped<int32_t>; break;
      case DataType::kI64: run_ = &RunTyped<int64_t>; break;
      case DataType::kI8: run_ = &RunTyped<int8_t>; break;
      case DataType::kU8: run_ = &RunTyped<uint8_t>; break;
      case DataType::kF64: run_ = &RunTyped<double>; break;
      case DataType::kI16: run_ = &RunTyped<int16_t>; break;
      case DataType::kU16: run_ = &RunTyped<uint16_t>; break;
      case DataType::kU32: run_ = &RunTyped<uint32_t>; break;
      case DataType::kU64: run_ = &RunTyped<uint64_t>; break;
      case DataType::kF16:
        if constexpr (Op::kHalf) {
          run_ = &RunTyped<Half>;
          break;
        } else {
          return UnsupportedDtype(args, type);
        }
      case DataType::kBool: run_ = &RunTyped<uint8_t>; break;
      default: return UnsupportedDtype(args, type);
    }
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override { return run_(*this, args); }

 private:
  template <typename T>
  static Status RunTyped(const BinaryKernel& k, const RunArgs& args) {
    using Out = decltype(Op::Apply(T{}, T{}));
    Out* y = static_cast<Out*>(args.dst[0]);
    const int n = k.plan_.num_inputs();
    const T* const* x = reinterpret_cast<const T* const*>(args.src.data());
    k.plan_.ForEachRow([&](int64_t out, const int64_t* in, const int64_t* step,
                           int64_t count) {
      for (int64_t e = 0; e < count; ++e) {
        if constexpr (Op::kCompare) {
          y[out + e] = Op::Apply(x[0][in[0] + e * step[0]], x[1][in[1] + e * step[1]]);
        } else {
          T acc = x[0][in[0] + e * step[0]];
          for (int i = 1; i < n; ++i) acc = Op::Apply(acc, x[i][in[i] + e * step[i]]);
          if constexpr (std::is_same_v<T, float>) acc = k.activation_.Apply(acc);
          y[out + e] = acc;
        }
      }
    });
    return Status::Ok();
  }

  BroadcastPlan plan_;
  Activation activation_;  // kNone unless fused (f32 only)
  Status (*run_)(const BinaryKernel&, const RunArgs&) = nullptr;
};

// Float -> integer without UB: NaN is 0, out-of-range saturates.
template <typename T>
T SaturateToInt(double v) {
  if (std::isnan(v)) return 0;
  if (v <= static_cast<double>(std::numeric_limits<T>::min()))
    return std::numeric_limits<T>::min();
  if (v >= static_cast<double>(std::numeric_limits<T>::max()))
    return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

// Pow: the output has the base's dtype; the exponent may differ (ONNX T1).
class PowKernel final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    RETURN_IF_ERROR(params_internal::CheckArity(args, 2, 2));
    if (args.node->attrs.Has("activation"))
      return params_internal::Unsupported(args, "fused activation on Pow");
    ASSIGN_OR_RETURN(plan_, PrepareBroadcast(args));
    const DataType base = args.inputs[0].dtype;
    const DataType exponent = args.inputs[1].dtype;
    RETURN_IF_ERROR(params_internal::CheckOutput(args, plan_.output_dims(), base));
    run_ = Select(base, exponent);
    if (run_ == nullptr) {
      const bool base_ok = base == DataType::kF32 || base == DataType::kF64 ||
                           base == DataType::kI32 || base == DataType::kI64;
      return UnsupportedDtype(args, base_ok ? exponent : base,
                              base_ok ? "exponent" : "base");
    }
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override { return run_(*this, args); }

 private:
  using RunFn = Status (*)(const PowKernel&, const RunArgs&);

  template <typename B>
  static RunFn SelectExponent(DataType exponent) {
    switch (exponent) {
      case DataType::kF32: return &RunTyped<B, float>;
      case DataType::kI32: return &RunTyped<B, int32_t>;
      case DataType::kI64: return &RunTyped<B, int64_t>;
      case DataType::kF64: return &RunTyped<B, double>;
      case DataType::kU32: return &RunTyped<B, uint32_t>;
      case DataType::kU64: return &RunTyped<B, uint64_t>;
      default: return nullptr;
    }
  }
  static RunFn Select(DataType base, DataType exponent) {
    switch (base) {
      case DataType::kF32: return SelectExponent<float>(exponent);
      case DataType::kI32: return SelectExponent<int32_t>(exponent);
      case DataType::kI64: return SelectExponent<int64_t>(exponent);
      case DataType::kF64: return SelectExponent<double>(exponent);
      default: return nullptr;
    }
  }

  template <typename B, typename E>
  static Status RunTyped(const PowKernel& k, const RunArgs& args) {
    const B* base = static_cast<const B*>(args.src[0]);
    const E* exponent = static_cast<const E*>(args.src[1]);
    B* y = static_cast<B*>(args.dst[0]);
    k.plan_.ForEachRow([&](int64_t out, const int64_t* in, const int64_t* step,
                           int64_t count) {
      for (int64_t e = 0; e < count; ++e) {
        const B b = base[in[0] + e * step[0]];
        const E p = exponent[in[1] + e * step[1]];
        if constexpr (std::is_floating_point_v<B>) {
          y[out + e] = std::pow(b, static_cast<B>(p));
        } else {
          y[out + e] = SaturateToInt<B>(
              std::pow(static_cast<double>(b), static_cast<double>(p)));
        }
      }
    });
    return Status::Ok();
  }

  BroadcastPlan plan_;
  RunFn run_ = nullptr;
};

// Runs the BinaryKernel instance that an attribute (Mod's fmod, BitShift's
// direction) selects at Prepare.
class AttributeSelectedKernel : public Kernel {
 public:
  Status Run(const RunArgs& args) final { return inner_->Run(args); }

 protected:
  Status PrepareSelected(std::unique_ptr<Kernel> selected, const PrepareArgs& args) {
    inner_ = std::move(selected);
    return inner_->Prepare(args);
  }

 private:
  std::unique_ptr<Kernel> inner_;
};

class ModKernel final : public AttributeSelectedKernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(const bool fmod, binary_ops::ParseModFmod(args));
    if (fmod) return PrepareSelected(std::make_unique<BinaryKernel<ModOp<false>>>(), args);
    return PrepareSelected(std::make_unique<BinaryKernel<ModOp<true>>>(), args);
  }
};

class BitShiftKernel final : public AttributeSelectedKernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    const std::string direction = args.node->attrs.GetString("direction", "");
    if (direction == "LEFT")
      return PrepareSelected(std::make_unique<BinaryKernel<BitShiftOp<true>>>(), args);
    if (direction == "RIGHT")
      return PrepareSelected(std::make_unique<BinaryKernel<BitShiftOp<false>>>(), args);
    return params_internal::Invalid(args, "direction '" + direction +
                                              "' must be \"LEFT\" or \"RIGHT\"");
  }
};

// Mean: the variadic Sum, each element then divided by the input count
// (float only, as ONNX defines it).
class MeanKernel final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    for (const TensorDesc& in : args.inputs)
      if (in.dtype != DataType::kF32) return UnsupportedDtype(args, in.dtype);
    if (args.node->attrs.Has("activation"))
      return params_internal::Unsupported(args, "fused activation on Mean");
    RETURN_IF_ERROR(sum_.Prepare(args));
    inputs_ = static_cast<float>(args.inputs.size());
    elements_ = args.outputs[0].elements();
    return Status::Ok();
  }
  Status Run(const RunArgs& args) override {
    RETURN_IF_ERROR(sum_.Run(args));
    float* y = static_cast<float*>(args.dst[0]);
    for (int64_t i = 0; i < elements_; ++i) y[i] /= inputs_;
    return Status::Ok();
  }

 private:
  BinaryKernel<SumOp> sum_;
  float inputs_ = 1;
  int64_t elements_ = 0;
};

}  // namespace

void RegisterBinaryKernels(KernelRegistry& registry) {
  RegisterReference<BinaryKernel<AddOp>>(registry, "Add");
  RegisterReference<BinaryKernel<SubOp>>(registry, "Sub");
  RegisterReference<BinaryKernel<MulOp>>(registry, "Mul");
  RegisterReference<BinaryKernel<DivOp>>(registry, "Div");
  RegisterReference<BinaryKernel<MinOp>>(registry, "Min");
  RegisterReference<BinaryKernel<MaxOp>>(registry, "Max");
  RegisterReference<BinaryKernel<SumOp>>(registry, "Sum");
  RegisterReference<MeanKernel>(registry, "Mean");
  RegisterReference<BinaryKernel<PReluOp>>(registry, "PRelu");
  RegisterReference<BinaryKernel<EqualOp>>(registry, "Equal");
  RegisterReference<BinaryKernel<CompareOp<std::greater<>>>>(registry, "Greater");
  RegisterReference<BinaryKernel<CompareOp<std::less<>>>>(registry, "Less");
  RegisterReference<BinaryKernel<CompareOp<std::greater_equal<>>>>(registry, "GreaterOrEqual");
  RegisterReference<BinaryKernel<CompareOp<std::less_equal<>>>>(registry, "LessOrEqual");
  RegisterReference<BinaryKernel<LogicalOp<std::logical_and<>>>>(registry, "And");
  RegisterReference<BinaryKernel<LogicalOp<std::logical_or<>>>>(registry, "Or");
  RegisterReference<BinaryKernel<LogicalOp<std::not_equal_to<>>>>(registry, "Xor");
  RegisterReference<BitShiftKernel>(registry, "BitShift");
  RegisterReference<PowKernel>(registry, "Pow");
  RegisterReference<ModKernel>(registry, "Mod");
}

}  // namespace braid::reference
