// ReduceSum / ReduceMean / ReduceMax parameters. Axes come from the "axes"
// attribute, or from the constant second input (ReduceSum at opset >= 13,
// the others at >= 18); keepdims; noop_with_empty_axes.
//
//   ASSIGN_OR_RETURN(ReduceParams p, ParseReduce(args));
//   if (p.noop) { copy X to Y; }
//   else if (p.contiguous) {
//     // X viewed as [outer, reduced_size, inner] -> Y [outer, inner]
//   } else {
//     // general: p.reduced[d] marks reduced input axes; Y element for input
//     // index x is at sum over kept d of idx[d] * p.out_strides[d]
//   }
#ifndef BRAID_KERNELS_PARAMS_REDUCE_H_
#define BRAID_KERNELS_PARAMS_REDUCE_H_

#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "kernels/backend.h"

namespace braid {

struct ReduceParams {
  // The first three keep their numbers: the CUDA kernel reads them.
  enum class Kind { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kSumSquare, kLogSum, kLogSumExp };
  Kind kind = Kind::kSum;
  DataType dtype = DataType::kUndefined;
  std::vector<int64_t> in_dims;
  std::vector<int64_t> axes;    // normalized, sorted, unique
  std::vector<bool> reduced;    // per input axis
  bool keepdims = true;
  // noop_with_empty_axes = 1 with no axes: Y is a copy of X.
  bool noop = false;
  int64_t reduced_size = 1;     // product of reduced extents (Mean divisor)
  int64_t output_elements = 1;
  // Element stride in Y of each input axis (0 for reduced axes).
  std::vector<int64_t> out_strides;
  // Reduced axes form one contiguous run: X = [outer, reduced_size, inner].
  bool contiguous = false;
  int64_t outer = 1;
  int64_t inner = 1;
};

// Errors: axes out of range or duplicated, a non-constant axes input
// (Unimplemented: the output shape would not be static), output shape
// mismatch. Kind follows args.node->op_type.
StatusOr<ReduceParams> ParseReduce(const PrepareArgs& args);

// ReduceLogSumExp computes log(sum exp(x - shift)) + shift with shift the
// largest element, so exp never overflows; with no finite largest element
// (all -inf, or +inf) the shift is 0. Every backend's kernel uses this one.
inline double LogSumExpShift(double largest) { return std::isfinite(largest) ? largest : 0.0; }

// ArgMax / ArgMin: x viewed as [outer, extent, inner] around `axis`, the
// i64 output [outer, inner] (the axis kept as 1 with keepdims, the default);
// select_last_index picks the last of equal values. Errors: axis out of
// range, an empty axis, output mismatch. dtypes are the kernel's to check.
struct ArgReduceParams {
  bool max = true;  // ArgMax (else ArgMin)
  bool select_last = false;
  DataType dtype = DataType::kUndefined;
  int64_t outer = 1, extent = 1, inner = 1;
};
StatusOr<ArgReduceParams> ParseArgReduce(const PrepareArgs& args);

// Whether `v` replaces the current best `best` of ArgMax (max) / ArgMin: NaN
// ranks above every number for ArgMax and below for ArgMin, so the first NaN
// wins (numpy's argmax / argmin); of equal values the first index wins, or
// the later one with select_last_index (take_last).
template <typename T>
bool ArgReduceReplaces(T v, T best, bool max, bool take_last) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(best)) return take_last && std::isnan(v);
    if (std::isnan(v)) return true;
  }
  if (v == best) return take_last;
  return max ? v > best : v < best;
}

}  // namespace braid

#endif  // BRAID_KERNELS_PARAMS_REDUCE_H_
