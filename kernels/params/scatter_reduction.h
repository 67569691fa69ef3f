// How an update of ScatterND / ScatterElements combines with the element it
// lands on (the `reduction` attribute: kernels/params/data_ops.h). Shared by
// the reference kernels (kernels/reference/{scatter_nd,
// gather_scatter_elements}.cc) and braid's CPU kernel
// (kernels/cpu/gather_scatter_cpu.cc), which instantiates it per reduction.
#ifndef BRAID_KERNELS_PARAMS_SCATTER_REDUCTION_H_
#define BRAID_KERNELS_PARAMS_SCATTER_REDUCTION_H_

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "kernels/backend.h"
#include "kernels/params/data_ops.h"

namespace braid {

// The type integer arithmetic wraps in (unsigned); floats compute as themselves.
template <typename T, bool = std::is_integral_v<T>>
struct Wrapping {
  using type = T;
};
template <typename T>
struct Wrapping<T, true> {
  using type = std::make_unsigned_t<T>;
};

// `current` combined with `update` under reduction R: integers wrap
// (unsigned arithmetic); NaN propagates through max / min; kNone replaces.
template <ScatterReduction R, typename T>
T CombineScatterAs(T current, T update) {
  if constexpr (std::is_floating_point_v<T> &&
                (R == ScatterReduction::kMax || R == ScatterReduction::kMin)) {
    if (std::isnan(current) || std::isnan(update)) return std::isnan(current) ? current : update;
  }
  using U = typename Wrapping<T>::type;
  if constexpr (R == ScatterReduction::kAdd) {
    return static_cast<T>(static_cast<U>(current) + static_cast<U>(update));
  } else if constexpr (R == ScatterReduction::kMul) {
    return static_cast<T>(static_cast<U>(current) * static_cast<U>(update));
  } else if constexpr (R == ScatterReduction::kMax) {
    return std::max(current, update);
  } else if constexpr (R == ScatterReduction::kMin) {
    return std::min(current, update);
  } else {
    return update;
  }
}

// The same with the reduction chosen at run time (the reference kernels).
template <typename T>
T CombineScatter(ScatterReduction r, T current, T update) {
  switch (r) {
    case ScatterReduction::kAdd: return CombineScatterAs<ScatterReduction::kAdd>(current, update);
    case ScatterReduction::kMul: return CombineScatterAs<ScatterReduction::kMul>(current, update);
    case ScatterReduction::kMax: return CombineScatterAs<ScatterReduction::kMax>(current, update);
    case ScatterReduction::kMin: return CombineScatterAs<ScatterReduction::kMin>(current, update);
    case ScatterReduction::kNone: break;
  }
  return update;
}

}  // namespace braid

#endif  // BRAID_KERNELS_PARAMS_SCATTER_REDUCTION_H_
