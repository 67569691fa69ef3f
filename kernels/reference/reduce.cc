// Reference reductions over any axis set: ReduceSum, ReduceMax, ReduceMin,
// ReduceProd, ReduceL1 and ReduceSumSquare (f64, f32, i32, i64); ReduceMean,
// ReduceL2, ReduceLogSum and ReduceLogSumExp (f64, f32; LogSumExp shifted by
// the largest element). For every output element, walk the reduced sub-index
// space. Float accumulation in double, integer in int64.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>

#include "kernels/backend.h"
#include "kernels/params/reduce.h"

namespace braid {
namespace {

constexpr size_t kMaxRank = 16;

struct Walk {
  // Kept and reduced axes of the input with their input element strides.
  std::vector<int64_t> kept_dims, kept_strides, reduced_dims, reduced_strides;
};

template <typename T>
void Reduce(const ReduceParams& p, const Walk& walk, const T* x, T* y) {
  using Kind = ReduceParams::Kind;
  std::array<int64_t, kMaxRank> kept{}, red{};
  const size_t nk = walk.kept_dims.size(), nr = walk.reduced_dims.size();
  for (int64_t o = 0; o < p.output_elements; ++o) {
    int64_t flat = o, base = 0;
    for (size_t d = nk; d-- > 0;) {
      kept[d] = flat % walk.kept_dims[d];
      flat /= walk.kept_dims[d];
      base += kept[d] * walk.kept_strides[d];
    }
    // Element r of the reduced sub-index space of output o.
    auto at = [&](int64_t r) {
      int64_t rflat = r, offset = base;
      for (size_t d = nr; d-- > 0;) {
        red[d] = rflat % walk.reduced_dims[d];
        rflat /= walk.reduced_dims[d];
        offset += red[d] * walk.reduced_strides[d];
      }
      return x[offset];
    };
    if (p.kind == Kind::kMax || p.kind == Kind::kMin) {
      T best{};
      for (int64_t r = 0; r < p.reduced_size; ++r) {
        const T v = at(r);
        if constexpr (std::is_floating_point_v<T>) {
          if (std::isnan(v)) {  // NaN propagates, as in numpy
            best = v;
            break;
          }
        }
        if (r == 0 || (p.kind == Kind::kMax ? v > best : v < best)) best = v;
      }
      y[o] = best;
      continue;
    }
    // LogSumExp shifts by the largest element so exp never overflows.
    double shift = 0;
    if (p.kind == Kind::kLogSumExp && p.reduced_size > 0) {
      shift = -std::numeric_limits<double>::infinity();
      for (int64_t r = 0; r < p.reduced_size; ++r) shift = std::max(shift, static_cast<double>(at(r)));
      shift = LogSumExpShift(shift);
    }
    // Integers accumulate unsigned: products and sums wrap instead of
    // overflowing (two's complement, as the folding evaluator does).
    using Wide = std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;
    Wide acc = p.kind == Kind::kProd ? 1 : 0;
    for (int64_t r = 0; r < p.reduced_size; ++r) {
      const T raw = at(r);
      const Wide v = static_cast<Wide>(raw);
      switch (p.kind) {
        case Kind::kProd: acc *= v; break;
        case Kind::kL1: acc += raw < 0 ? Wide{0} - v : v; break;
        case Kind::kL2:
        case Kind::kSumSquare: acc += v * v; break;
        case Kind::kLogSumExp:
          acc += static_cast<Wide>(std::exp(static_cast<double>(raw) - shift));
          break;
        default: acc += v; break;  // Sum, Mean, LogSum
      }
    }
    double result = static_cast<double>(acc);  // floating point only, below
    switch (p.kind) {
      case Kind::kMean: result /= static_cast<double>(p.reduced_size); break;
      case Kind::kL2: result = std::sqrt(result); break;
      case Kind::kLogSum: result = std::log(result); break;
      case Kind::kLogSumExp: result = std::log(result) + shift; break;
      default: break;
    }
    if constexpr (std::is_floating_point_v<T>) {
      y[o] = static_cast<T>(result);
    } else {
      y[o] = static_cast<T>(static_cast<std::make_signed_t<Wide>>(acc));  // integer kinds only
    }
  }
}

class ReferenceReduce final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(p_, ParseReduce(args));
    walk_ = Walk{};
    using Kind = ReduceParams::Kind;
    const bool is_int = p_.dtype == DataType::kI32 || p_.dtype == DataType::kI64;
    const bool integer_kind = p_.kind == Kind::kSum || p_.kind == Kind::kMax ||
                              p_.kind == Kind::kMin || p_.kind == Kind::kProd ||
                              p_.kind == Kind::kL1 || p_.kind == Kind::kSumSquare;
    const bool is_float = p_.dtype == DataType::kF32 || p_.dtype == DataType::kF64;
    if (!is_float && !(is_int && integer_kind))
      return Unimplemented(args.Where() + ": reference " + args.node->op_type +
                           " does not support " + DataTypeName(p_.dtype));
    if (p_.in_dims.size() > kMaxRank)
      return Unimplemented(args.Where() + ": rank above " + std::to_string(kMaxRank));
    // Input strides; with noop every axis is kept and the walk copies X.
    int64_t stride = 1;
    std::vector<int64_t> strides(p_.in_dims.size());
    for (size_t d = p_.in_dims.size(); d-- > 0;) {
      strides[d] = stride;
      stride *= p_.in_dims[d];
    }
    for (size_t d = 0; d < p_.in_dims.size(); ++d) {
      if (p_.reduced[d]) {
        walk_.reduced_dims.push_back(p_.in_dims[d]);
        walk_.reduced_strides.push_back(strides[d]);
      } else {
        walk_.kept_dims.push_back(p_.in_dims[d]);
        walk_.kept_strides.push_back(strides[d]);
      }
    }
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    switch (p_.dtype) {
      case DataType::kI32:
        Reduce(p_, walk_, static_cast<const int32_t*>(args.src[0]), static_cast<int32_t*>(args.dst[0]));
        break;
      case DataType::kI64:
        Reduce(p_, walk_, static_cast<const int64_t*>(args.src[0]), static_cast<int64_t*>(args.dst[0]));
        break;
      case DataType::kF64:
        Reduce(p_, walk_, static_cast<const double*>(args.src[0]), static_cast<double*>(args.dst[0]));
        break;
      default:
        Reduce(p_, walk_, static_cast<const float*>(args.src[0]), static_cast<float*>(args.dst[0]));
        break;
    }
    return Status::Ok();
  }

 private:
  ReduceParams p_;
  Walk walk_;
};

}  // namespace

void RegisterReferenceReduce(KernelRegistry& registry) {
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
                         "ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum",
                         "ReduceLogSumExp"})
    registry.Register({op, DeviceKind::kCpu, "reference", 0,
                       [] { return std::make_unique<ReferenceReduce>(); }});
}

}  // namespace braid
