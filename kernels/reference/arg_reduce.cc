// Reference ArgMax and ArgMin: the i64 index of the largest / smallest element
// along one axis (f32, i32, i64, i8, u8). Of equal values the first index
// wins, or the last with select_last_index=1; a NaN counts as larger than
// every number for ArgMax (and smaller for ArgMin), so the first NaN wins, as
// numpy's argmax/argmin.
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/params/parse_util.h"
#include "kernels/reference/data_kernel_util.h"

namespace braid::reference {
namespace {

class ArgReduceKernel final : public Kernel {
 public:
  explicit ArgReduceKernel(bool max) : max_(max) {}

  Status Prepare(const PrepareArgs& args) override {
    RETURN_IF_ERROR(params_internal::CheckArity(args, 1, 1));
    const TensorDesc& in = args.inputs[0];
    const int64_t axis = args.node->attrs.GetInt("axis", 0);
    std::optional<int64_t> normalized = params_internal::NormalizeAxis(axis, in.rank());
    if (!normalized)
      return params_internal::Invalid(args, "axis " + std::to_string(axis) +
                                                " is out of range for input " + in.ToString());
    const auto ax = static_cast<size_t>(*normalized);
    extent_ = in.dims[ax];
    if (extent_ == 0)
      return params_internal::Invalid(args, "axis " + std::to_string(axis) + " of " +
                                                in.ToString() + " is empty");
    outer_ = params_internal::Product(in.dims, 0, ax);
    inner_ = params_internal::Product(in.dims, ax + 1);
    take_last_ = args.node->attrs.GetInt("select_last_index", 0) != 0;
    std::vector<int64_t> out_dims = in.dims;
    if (args.node->attrs.GetInt("keepdims", 1) != 0)
      out_dims[ax] = 1;
    else
      out_dims.erase(out_dims.begin() + static_cast<std::ptrdiff_t>(ax));
    RETURN_IF_ERROR(params_internal::CheckOutput(args, out_dims, DataType::kI64));
    run_ = SelectByNumericType<ArgReduceKernel>(in.dtype);
    if (run_ == nullptr) return UnsupportedDtype(args, in.dtype);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    run_(*this, args);
    return Status::Ok();
  }

  template <typename T>
  static void RunTyped(const ArgReduceKernel& k, const RunArgs& args) {
    const T* x = static_cast<const T*>(args.src[0]);
    int64_t* y = static_cast<int64_t*>(args.dst[0]);
    for (int64_t o = 0; o < k.outer_; ++o) {
      for (int64_t i = 0; i < k.inner_; ++i) {
        const T* row = x + o * k.extent_ * k.inner_ + i;
        int64_t best = 0;
        for (int64_t a = 1; a < k.extent_; ++a)
          if (k.Replaces(row[a * k.inner_], row[best * k.inner_])) best = a;
        y[o * k.inner_ + i] = best;
      }
    }
  }

 private:
  // Whether `v` replaces the current best `best` (NaN ranks above numbers).
  template <typename T>
  bool Replaces(T v, T best) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(best)) return take_last_ && std::isnan(v);
      if (std::isnan(v)) return true;
    }
    if (v == best) return take_last_;
    return max_ ? v > best : v < best;
  }

  bool max_;
  bool take_last_ = false;
  int64_t outer_ = 1, extent_ = 1, inner_ = 1;
  void (*run_)(const ArgReduceKernel&, const RunArgs&) = nullptr;
};

}  // namespace

void RegisterArgReduceKernels(KernelRegistry& registry) {
  registry.Register(KernelEntry{"ArgMax", DeviceKind::kCpu, "reference", 0,
                                [] { return std::make_unique<ArgReduceKernel>(true); }});
  registry.Register(KernelEntry{"ArgMin", DeviceKind::kCpu, "reference", 0,
                                [] { return std::make_unique<ArgReduceKernel>(false); }});
}

}  // namespace braid::reference
