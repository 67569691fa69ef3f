// numpy / ONNX multidirectional broadcasting, planned once at Prepare.
//
//   // Prepare:
//   ASSIGN_OR_RETURN(BroadcastPlan plan,
//                    BroadcastPlan::Make({a.dims, b.dims}));   // any number of inputs
//   if (plan.output_dims() != args.outputs[0].dims) return InvalidArgument(...);
//   if (plan.input(1).pattern == BroadcastPattern::kPerChannel) { ... plan.input(1).channel_axis ... }
//   // Run (no allocation):
//   plan.ForEachRow([&](int64_t out, const int64_t* in, const int64_t* in_step, int64_t n) {
//     for (int64_t k = 0; k < n; ++k)
//       y[out + k] = a[in[0] + k * in_step[0]] + b[in[1] + k * in_step[1]];
//   });
//
// Shapes are aligned at the right; a missing leading axis counts as 1; an
// axis of extent 1 stretches to any extent (including 0). Every input gets
// element strides aligned to the output (0 on stretched axes). The plan also
// keeps a "collapsed" form in which adjacent axes that every input walks in
// the same way are merged, so the row loop above runs over long rows;
// ForEachRow walks that form with a fixed-size odometer on the stack.
#ifndef BRAID_KERNELS_PARAMS_BROADCAST_H_
#define BRAID_KERNELS_PARAMS_BROADCAST_H_

#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <vector>

#include "graph/status.h"

namespace braid {

// Limits of the allocation-free row walk (Make rejects more with
// Unimplemented). Collapsing makes the rank limit generous in practice.
inline constexpr int kMaxBroadcastInputs = 16;
inline constexpr int kMaxBroadcastRank = 16;

// How one input relates to the output (most specific first).
enum class BroadcastPattern {
  kSameShape,   // input dims == output dims (after left-padding with 1s)
  kScalar,      // exactly one element
  kPerChannel,  // one axis equals the output's, every other axis is 1
                // ([1,C,1,1] against [N,C,H,W]; also [W] against [N,C,H,W])
  kGeneral,
};

const char* BroadcastPatternName(BroadcastPattern pattern);

struct BroadcastInput {
  std::vector<int64_t> dims;     // left-padded with 1s to the output rank
  std::vector<int64_t> strides;  // element strides per output axis; 0 if stretched
  int64_t elements = 1;
  BroadcastPattern pattern = BroadcastPattern::kGeneral;
  // kPerChannel only: the output axis the input runs along, and the
  // output's element counts before / after that axis, so that
  // out[o][c][i] reads in[c] with o < outer, i < inner.
  int channel_axis = -1;
  int64_t channel_outer = 1;
  int64_t channel_inner = 1;
};

// Output dims of broadcasting all `shapes` together. The error names both
// offending extents; callers prefix it with PrepareArgs::Where().
StatusOr<std::vector<int64_t>> BroadcastDims(
    std::span<const std::vector<int64_t>> shapes);

// True when `from` broadcasts to exactly `to` (ONNX unidirectional
// broadcasting: Gemm's C, PRelu's slope, Expand checks).
bool BroadcastsTo(std::span<const int64_t> from, std::span<const int64_t> to);

// Row-major element strides of `dims` (last axis stride 1).
std::vector<int64_t> ContiguousStrides(std::span<const int64_t> dims);

class BroadcastPlan {
 public:
  BroadcastPlan() = default;

  static StatusOr<BroadcastPlan> Make(
      std::span<const std::vector<int64_t>> input_dims);
  static StatusOr<BroadcastPlan> Make(
      std::initializer_list<std::vector<int64_t>> input_dims) {
    return Make(std::span<const std::vector<int64_t>>(input_dims.begin(),
                                                      input_dims.size()));
  }
  // Broadcast toward a given output shape (the output desc); fails unless
  // broadcasting the inputs yields exactly `output_dims`. Expand uses it
  // with the single input.
  static StatusOr<BroadcastPlan> MakeForOutput(
      std::span<const std::vector<int64_t>> input_dims,
      std::span<const int64_t> output_dims);

  const std::vector<int64_t>& output_dims() const { return output_dims_; }
  int output_rank() const { return static_cast<int>(output_dims_.size()); }
  int64_t output_elements() const { return output_elements_; }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  const BroadcastInput& input(int i) const {
    return inputs_[static_cast<size_t>(i)];
  }
  bool AllSameShape() const;

  // Collapsed form: rank >= 1 (a scalar output becomes [1]); strides are
  // [input][axis] in a flat vector.
  int collapsed_rank() const { return static_cast<int>(collapsed_dims_.size()); }
  const std::vector<int64_t>& collapsed_dims() const { return collapsed_dims_; }
  int64_t collapsed_stride(int input, int axis) const {
    return collapsed_strides_[static_cast<size_t>(input) * collapsed_dims_.size() +
                              static_cast<size_t>(axis)];
  }

  // Rows of the collapsed form (output elements / its innermost extent).
  int64_t rows() const;

  // Calls fn(out_offset, in_offsets, in_steps, count) once per output row of
  // the collapsed form: output elements [out_offset, out_offset + count)
  // read input i at in_offsets[i] + k * in_steps[i]. Allocates nothing.
  template <typename Fn>
  void ForEachRow(Fn&& fn) const {
    ForEachRowIn(0, rows(), fn);
  }
  // The same over rows [first_row, end_row) only, so that threads can each
  // walk one contiguous range of rows (one unravel per range, not per row).
  template <typename Fn>
  void ForEachRowIn(int64_t first_row, int64_t end_row, Fn&& fn) const;

 private:
  void Finish();  // patterns + collapsed form

  std::vector<int64_t> output_dims_;
  int64_t output_elements_ = 1;
  std::vector<BroadcastInput> inputs_;
  std::vector<int64_t> collapsed_dims_;
  std::vector<int64_t> collapsed_strides_;
};

inline int64_t BroadcastPlan::rows() const {
  if (output_elements_ == 0) return 0;
  return output_elements_ / collapsed_dims_[collapsed_dims_.size() - 1];
}

template <typename Fn>
void BroadcastPlan::ForEachRowIn(int64_t first_row, int64_t end_row, Fn&& fn) const {
  if (first_row >= end_row) return;
  const int rank = collapsed_rank();
  const int n = num_inputs();
  const int64_t row = collapsed_dims_[static_cast<size_t>(rank - 1)];
  std::array<int64_t, kMaxBroadcastInputs> offsets{};
  std::array<int64_t, kMaxBroadcastInputs> steps{};
  for (int i = 0; i < n; ++i) steps[static_cast<size_t>(i)] = collapsed_stride(i, rank - 1);
  // Unravel first_row over the outer axes into the odometer and offsets.
  std::array<int64_t, kMaxBroadcastRank> index{};
  for (int64_t axis = rank - 2, rest = first_row; axis >= 0; --axis) {
    const size_t a = static_cast<size_t>(axis);
    index[a] = rest % collapsed_dims_[a];
    rest /= collapsed_dims_[a];
    for (int i = 0; i < n; ++i)
      offsets[static_cast<size_t>(i)] += index[a] * collapsed_stride(i, static_cast<int>(axis));
  }
  for (int64_t r = first_row; r < end_row; ++r) {
    fn(r * row, offsets.data(), steps.data(), row);
    // Advance the odometer over the outer axes, updating input offsets.
    for (int axis = rank - 2; axis >= 0; --axis) {
      const size_t a = static_cast<size_t>(axis);
      if (++index[a] < collapsed_dims_[a]) {
        for (int i = 0; i < n; ++i)
          offsets[static_cast<size_t>(i)] += collapsed_stride(i, axis);
        break;
      }
      index[a] = 0;
      for (int i = 0; i < n; ++i)
        offsets[static_cast<size_t>(i)] -=
            collapsed_stride(i, axis) * (collapsed_dims_[a] - 1);
    }
  }
}

}  // namespace braid

#endif  // BRAID_KERNELS_PARAMS_BROADCAST_H_
