// How an update of ScatterND / ScatterElements combines with the element it
// lands on (the `reduction` attribute: kernels/params/data_ops.h).
// Internal to kernels/reference/{scatter_nd,gather_scatter_elements}.cc.
#ifndef BRAID_KERNELS_REFERENCE_SCATTER_REDUCTION_H_
#define BRAID_KERNELS_REFERENCE_SCATTER_REDUCTION_H_

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "kernels/backend.h"
#include "kernels/params/data_ops.h"

namespace braid::reference {

// The type integer arithmetic wraps in (unsigned); floats compute as themselves.
template <typename T, bool = std::is_integral_v<T>>
struct Wrapping {
  using type = T;
};
template <typename T>
struct Wrapping<T, true> {
  using type = std::make_unsigned_t<T>;
};

// `current` combined with `update`: integers wrap (unsigned arithmetic); NaN
// propagates through max / min; kNone replaces.
template <typename T>
T CombineScatter(ScatterReduction r, T current, T update) {
  if constexpr (std::is_floating_point_v<T>) {
    if ((r == ScatterReduction::kMax || r == ScatterReduction::kMin) &&
        (std::isnan(current) || std::isnan(update)))
      return std::isnan(current) ? current : update;
  }
  using U = typename Wrapping<T>::type;
  switch (r) {
    case ScatterReduction::kAdd: return static_cast<T>(static_cast<U>(current) + static_cast<U>(update));
    case ScatterReduction::kMul: return static_cast<T>(static_cast<U>(current) * static_cast<U>(update));
    case ScatterReduction::kMax: return std::max(current, update);
    case ScatterReduction::kMin: return std::min(current, update);
    case ScatterReduction::kNone: break;
  }
  return update;
}

}  // namespace braid::reference

#endif  // BRAID_KERNELS_REFERENCE_SCATTER_REDUCTION_H_
