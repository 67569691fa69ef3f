// Reference Clip on f32, i32, i64, i8, u8: y = min(max(x, lo), hi), so
// lo > hi gives hi (numpy.clip). Bounds are attributes before opset 11,
// optional scalar inputs after; a computed bound input is read at Run.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/params/elementwise.h"
#include "kernels/params/parse_util.h"
#include "kernels/reference/data_kernel_util.h"

namespace braid::reference {
namespace {

// A bound (double) in T's range: integers saturate, infinities stay open.
template <typename T>
T BoundTo(double v) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v);
  } else {
    if (v <= static_cast<double>(std::numeric_limits<T>::lowest()))
      return std::numeric_limits<T>::lowest();
    if (v >= static_cast<double>(std::numeric_limits<T>::max()))
      return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  }
}

class ClipKernel final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    RETURN_IF_ERROR(params_internal::CheckArity(args, 1, 3));
    const TensorDesc& in = args.inputs[0];
    RETURN_IF_ERROR(params_internal::CheckOutput(args, in.dims, in.dtype));
    ASSIGN_OR_RETURN(clip_, ParseClip(args));
    dtype_ = in.dtype;
    elements_ = in.elements();
    run_ = SelectByNumericType<ClipKernel>(in.dtype);
    if (run_ == nullptr) return UnsupportedDtype(args, in.dtype);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    run_(*this, args);
    return Status::Ok();
  }

  template <typename T>
  static void RunTyped(const ClipKernel& k, const RunArgs& args) {
    const double lo_value = k.clip_.min_input >= 0
        ? ReadScalarAsDouble(args.src[static_cast<size_t>(k.clip_.min_input)], k.dtype_)
        : k.clip_.min;
    const double hi_value = k.clip_.max_input >= 0
        ? ReadScalarAsDouble(args.src[static_cast<size_t>(k.clip_.max_input)], k.dtype_)
        : k.clip_.max;
    const T lo = BoundTo<T>(lo_value);
    const T hi = BoundTo<T>(hi_value);
    const T* x = static_cast<const T*>(args.src[0]);
    T* y = static_cast<T*>(args.dst[0]);
    for (int64_t i = 0; i < k.elements_; ++i) {
      const T v = x[i];
      if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(v)) {
          y[i] = v;
          continue;
        }
      }
      y[i] = std::min(std::max(v, lo), hi);
    }
  }

 private:
  ClipParams clip_;
  DataType dtype_ = DataType::kUndefined;
  int64_t elements_ = 0;
  void (*run_)(const ClipKernel&, const RunArgs&) = nullptr;
};

}  // namespace

void RegisterClipKernel(KernelRegistry& registry) {
  RegisterReference<ClipKernel>(registry, "Clip");
}

}  // namespace braid::reference
