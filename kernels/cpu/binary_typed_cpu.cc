// The comparisons (Equal, Less, Greater, LessOrEqual, GreaterOrEqual: every
// numeric dtype, Equal also bool, -> bool), And / Or / Xor (bool) and Mod
// (fmod 0 / 1, integers, f32, f64, f16) and two-input Min / Max (every
// numeric dtype and f16; NaN propagates), braid's own CPU kernel: the
// reference's per-element functors (kernels/params/binary_ops.h, so the same
// bits) over the collapsed broadcast plan's rows split across the threads.
// Each operand walks a row contiguously or holds one value (step 1 or 0),
// so each of the four step combinations is its own loop instantiated per
// dtype, which the compiler vectorises (not Mod's fmod / integer division).
// The reference walks every element on one thread. Not (bool) is the same
// per element over contiguous ranges.
//
// Plain layout, or any layout when every operand has the output's shape and
// layout (the op is then elementwise in memory order); the rest declines,
// as does a fused activation (the reference refuses it) and a dtype the op
// does not take (the reference reports the error).
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>

#include "kernels/cpu/broadcast_rows.h"
#include "kernels/cpu/onednn_kernels.h"
#include "kernels/host/omp_team.h"
#include "kernels/params/binary_ops.h"
#include "kernels/params/elementwise.h"
#include "kernels/params/parse_util.h"
#include "kernels/params/typed_select.h"

namespace braid {
namespace {

using binary_ops::Half;

// out[e] = Op(a[e], b[e]) over one row; a k*Step of 0 repeats that operand's
// first element.
template <typename Op, typename T, int kAStep, int kBStep, typename Out>
void BinaryRow(const T* a, const T* b, Out* out, int64_t n) {
  for (int64_t e = 0; e < n; ++e) out[e] = Op::Apply(a[e * kAStep], b[e * kBStep]);
}

// Plain layout, or every operand in the output's layout and shape.
Status CheckLayouts(const PrepareArgs& args) {
  const TensorDesc& out = args.outputs[0];
  for (const TensorDesc& in : args.inputs) {
    const bool same = in.layout == out.layout && in.dims == out.dims;
    if (out.layout != TensorLayout::kPlain ? !same : in.layout != TensorLayout::kPlain)
      return Unimplemented(args.Where() + ": plain layout, or one layout and one shape");
  }
  return Status::Ok();
}

template <typename Op>
class BinaryTypedCpu final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    // Min / Max take 1 to N inputs; the reference runs the other counts.
    if (args.inputs.size() != 2) return Unimplemented(args.Where() + ": takes two inputs");
    ASSIGN_OR_RETURN(const DataType type, CommonInputType(args));
    if (!binary_ops::Accepts(Op::kOperands, type))
      return Unimplemented(args.Where() + ": " + DataTypeName(type) +
                           " operands (the reference reports them)");
    if (args.node->attrs.Has("activation"))
      return Unimplemented(args.Where() + ": fused activation (the reference refuses it)");
    ASSIGN_OR_RETURN(plan_, PrepareBroadcast(args));
    const DataType out_type = Op::kCompare ? DataType::kBool : type;
    RETURN_IF_ERROR(params_internal::CheckOutput(args, plan_.output_dims(), out_type));
    RETURN_IF_ERROR(CheckLayouts(args));
    // Bool as bytes; f16 only where the op computes on it (Op::kHalf).
    run_ = type == DataType::kBool ? &RunTyped<uint8_t> : SelectByNumericType<BinaryTypedCpu>(type);
    if constexpr (Op::kHalf) {
      if (type == DataType::kF16) run_ = &RunTyped<Half>;
    }
    if (run_ == nullptr)
      return Unimplemented(args.Where() + ": " + DataTypeName(type) + " operands");
    num_threads_ = std::max(args.num_threads, 1);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    run_(*this, args);
    return Status::Ok();
  }

  // Public for SelectByNumericType.
  template <typename T>
  static void RunTyped(const BinaryTypedCpu& k, const RunArgs& args) {
    using Out = decltype(Op::Apply(T{}, T{}));
    const T* a = static_cast<const T*>(args.src[0]);
    const T* b = static_cast<const T*>(args.src[1]);
    Out* y = static_cast<Out*>(args.dst[0]);
    ForEachRowThreaded(k.plan_, k.num_threads_,
                       [&](int64_t o, const int64_t* in, const int64_t* step, int64_t n) {
                         const T* pa = a + in[0];
                         const T* pb = b + in[1];
                         switch (step[0] * 2 + step[1]) {
                           case 0: BinaryRow<Op, T, 0, 0>(pa, pb, y + o, n); break;
                           case 1: BinaryRow<Op, T, 0, 1>(pa, pb, y + o, n); break;
                           case 2: BinaryRow<Op, T, 1, 0>(pa, pb, y + o, n); break;
                           default: BinaryRow<Op, T, 1, 1>(pa, pb, y + o, n); break;
                         }
                       });
  }

 private:
  BroadcastPlan plan_;
  int num_threads_ = 1;
  void (*run_)(const BinaryTypedCpu&, const RunArgs&) = nullptr;
};

// Mod: the fmod attribute picks the functor (fmod=1 keeps the dividend's
// sign, fmod=0 the divisor's).
class ModCpu final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(const bool fmod, binary_ops::ParseModFmod(args));
    if (fmod) inner_ = std::make_unique<BinaryTypedCpu<binary_ops::ModOp<false>>>();
    else inner_ = std::make_unique<BinaryTypedCpu<binary_ops::ModOp<true>>>();
    return inner_->Prepare(args);
  }
  Status Run(const RunArgs& args) override { return inner_->Run(args); }

 private:
  std::unique_ptr<Kernel> inner_;
};

// Not: bool in, bool out, one contiguous range per thread, either layout.
class NotCpu final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    RETURN_IF_ERROR(params_internal::CheckArity(args, 1, 1));
    if (args.inputs[0].dtype != DataType::kBool)
      return Unimplemented(args.Where() + ": not bool (the reference reports it)");
    RETURN_IF_ERROR(params_internal::CheckOutput(args, args.inputs[0].dims, DataType::kBool));
    if (args.inputs[0].layout != args.outputs[0].layout)
      return Unimplemented(args.Where() + ": input and output in different layouts");
    elements_ = args.inputs[0].elements();
    num_threads_ = std::max(args.num_threads, 1);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    const auto* x = static_cast<const uint8_t*>(args.src[0]);
    auto* y = static_cast<uint8_t*>(args.dst[0]);
    const int64_t n = elements_;
    const int threads = ThreadsFor(n, num_threads_);
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int t = 0; t < threads; ++t) {
      const int64_t end = n * (t + 1) / threads;
      for (int64_t i = n * t / threads; i < end; ++i) y[i] = binary_ops::NotOp::Apply(x[i]);
    }
    return Status::Ok();
  }

 private:
  int64_t elements_ = 0;
  int num_threads_ = 1;
};

}  // namespace

std::unique_ptr<Kernel> CreateBinaryTypedCpu(std::string_view op_type) {
  using binary_ops::CompareOp;
  using binary_ops::LogicalOp;
  if (op_type == "Equal") return std::make_unique<BinaryTypedCpu<binary_ops::EqualOp>>();
  if (op_type == "Greater") return std::make_unique<BinaryTypedCpu<CompareOp<std::greater<>>>>();
  if (op_type == "Less") return std::make_unique<BinaryTypedCpu<CompareOp<std::less<>>>>();
  if (op_type == "GreaterOrEqual")
    return std::make_unique<BinaryTypedCpu<CompareOp<std::greater_equal<>>>>();
  if (op_type == "LessOrEqual")
    return std::make_unique<BinaryTypedCpu<CompareOp<std::less_equal<>>>>();
  if (op_type == "And") return std::make_unique<BinaryTypedCpu<LogicalOp<std::logical_and<>>>>();
  if (op_type == "Or") return std::make_unique<BinaryTypedCpu<LogicalOp<std::logical_or<>>>>();
  if (op_type == "Xor")
    return std::make_unique<BinaryTypedCpu<LogicalOp<std::not_equal_to<>>>>();
  if (op_type == "Min") return std::make_unique<BinaryTypedCpu<binary_ops::MinOp>>();
  if (op_type == "Max") return std::make_unique<BinaryTypedCpu<binary_ops::MaxOp>>();
  if (op_type == "Mod") return std::make_unique<ModCpu>();
  if (op_type == "Not") return std::make_unique<NotCpu>();
  return nullptr;
}

}  // namespace braid
