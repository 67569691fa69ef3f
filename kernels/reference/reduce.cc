// Reference ReduceSum (f32, i32, i64), ReduceMean (f32) and ReduceMax (f32,
// i32, i64) over any axis set: for every output element, walk the reduced
// sub-index space. Float sums accumulate in double, integer sums in int64.
#include <array>
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
  using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
  std::array<int64_t, kMaxRank> kept{}, red{};
  const size_t nk = walk.kept_dims.size(), nr = walk.reduced_dims.size();
  for (int64_t o = 0; o < p.output_elements; ++o) {
    int64_t flat = o, base = 0;
    for (size_t d = nk; d-- > 0;) {
      kept[d] = flat % walk.kept_dims[d];
      flat /= walk.kept_dims[d];
      base += kept[d] * walk.kept_strides[d];
    }
    Acc acc = 0;
    T best{};
    for (int64_t r = 0; r < p.reduced_size; ++r) {
      int64_t rflat = r, offset = base;
      for (size_t d = nr; d-- > 0;) {
        red[d] = rflat % walk.reduced_dims[d];
        rflat /= walk.reduced_dims[d];
        offset += red[d] * walk.reduced_strides[d];
      }
      const T v = x[offset];
      if (p.kind == ReduceParams::Kind::kMax) {
        if (r == 0 || v > best) best = v;
      } else {
        acc += static_cast<Acc>(v);
      }
    }
    switch (p.kind) {
      case ReduceParams::Kind::kMax: y[o] = best; break;
      case ReduceParams::Kind::kSum: y[o] = static_cast<T>(acc); break;
      case ReduceParams::Kind::kMean:
        y[o] = static_cast<T>(static_cast<double>(acc) / static_cast<double>(p.reduced_size));
        break;
    }
  }
}

class ReferenceReduce final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(p_, ParseReduce(args));
    walk_ = Walk{};
    const bool is_int = p_.dtype == DataType::kI32 || p_.dtype == DataType::kI64;
    if (p_.dtype != DataType::kF32 && !(is_int && p_.kind != ReduceParams::Kind::kMean))
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
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax"})
    registry.Register({op, DeviceKind::kCpu, "reference", 0,
                       [] { return std::make_unique<ReferenceReduce>(); }});
}

}  // namespace braid
