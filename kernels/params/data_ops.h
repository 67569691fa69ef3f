// Parameter parsing shared by every backend's data-movement kernels: Slice,
// Pad, Split, Transpose, Gather, Shape, Concat. Parameters that ONNX passes as
// inputs (Slice starts/ends/axes/steps, Pad pads) come from
// PrepareArgs::constants when constant; otherwise a kernel keeps the input
// index and resolves the values at Run with the allocation-free Resolve*
// functions below, writing into storage it sized at Prepare.
//
//   ASSIGN_OR_RETURN(SliceParams p, ParseSlice(args));
//   if (p.constant) use p.dims;                       // resolved at Prepare
//   else RETURN_IF_ERROR(ResolveSlice(in_dims, IntsView(src[1], dtype, n), ..., dims));
//
// Errors are prefixed with PrepareArgs::Where() by the Parse* functions; the
// Resolve* functions return bare messages for the caller to prefix.
#ifndef BRAID_KERNELS_PARAMS_DATA_OPS_H_
#define BRAID_KERNELS_PARAMS_DATA_OPS_H_

#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/backend.h"
#include "kernels/params/broadcast.h"

namespace braid {

// Read-only view of an i32 or i64 tensor's values as int64 (no copy).
class IntsView {
 public:
  IntsView() = default;
  IntsView(const void* data, DataType dtype, int64_t size)
      : data_(data), dtype_(dtype), size_(size) {}
  explicit IntsView(std::span<const int64_t> values)
      : data_(values.data()), dtype_(DataType::kI64),
        size_(static_cast<int64_t>(values.size())) {}
  int64_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int64_t operator[](int64_t i) const {
    return dtype_ == DataType::kI32 ? static_cast<const int32_t*>(data_)[i]
                                    : static_cast<const int64_t*>(data_)[i];
  }

 private:
  const void* data_ = nullptr;
  DataType dtype_ = DataType::kI64;
  int64_t size_ = 0;
};

// Values of constant integer input `i` (i32 or i64). Errors: not constant,
// another dtype, size mismatch; each names the node and `what`.
StatusOr<std::vector<int64_t>> ConstantInts(const PrepareArgs& args, size_t i,
                                            const char* what);
bool IsConstantInput(const PrepareArgs& args, size_t i);
// Integer parameter input `i` must be i32/i64 and rank <= 1.
Status CheckIntsInput(const PrepareArgs& args, size_t i, const char* what);

// ---- Slice ------------------------------------------------------------------

// What one input axis contributes to the output: elements
// start, start + step, ... (count of them).
struct SliceDim {
  int64_t start = 0;
  int64_t step = 1;
  int64_t count = 0;
};

// ONNX Slice semantics: negative starts/ends count from the end, values are
// clamped (to [0, dim] for positive steps, [-1, dim-1] for negative ones),
// axes may be negative and default to 0..n-1, steps default to 1 and must
// not be 0. `out` has one entry per input axis (untouched axes take all).
Status ResolveSlice(std::span<const int64_t> in_dims, IntsView starts,
                    IntsView ends, IntsView axes, IntsView steps,
                    std::span<SliceDim> out);

struct SliceParams {
  bool constant = false;      // every parameter known at Prepare
  std::vector<SliceDim> dims;  // when constant
  // Inputs to read at Run otherwise (-1: absent): starts, ends, axes, steps.
  int starts_input = -1, ends_input = -1, axes_input = -1, steps_input = -1;
  // Attributes before opset 10 (constant is then true).
};
StatusOr<SliceParams> ParseSlice(const PrepareArgs& args);

// ---- Pad --------------------------------------------------------------------

enum class PadMode { kConstant, kReflect, kEdge };

// pads = [x1_begin, x2_begin, ..., x1_end, x2_end, ...] over `axes` (empty:
// all axes). Writes begin/end per input axis (rank entries each). Negative
// pads crop.
Status ResolvePads(int rank, IntsView pads, IntsView axes,
                   std::span<int64_t> begin, std::span<int64_t> end);

struct PadParams {
  PadMode mode = PadMode::kConstant;
  bool constant = false;      // pads known at Prepare
  std::vector<int64_t> begin, end;
  int pads_input = -1;        // read at Run otherwise
  int axes_input = -1;
  double value = 0.0;         // constant_value (attribute or constant input 2)
  int value_input = -1;       // computed constant_value input, read at Run
};
StatusOr<PadParams> ParsePad(const PrepareArgs& args);

// ---- the rest ---------------------------------------------------------------

// Split sizes along `axis`: the `split` attribute (< 13) or input 1 (>= 13),
// else an even split over the outputs (the last chunk may be smaller, as
// opset 18 allows). Checked against the output descs.
struct SplitParams {
  int axis = 0;
  std::vector<int64_t> sizes;
};
StatusOr<SplitParams> ParseSplit(const PrepareArgs& args);

// Concat: the axis (default 1, opsets before 4) and each input's extent
// along it, checked against the output: every input present, of its dtype
// and rank, equal to it off the axis, the extents adding up to its extent.
struct ConcatParams {
  int axis = 0;
  std::vector<int64_t> extents;  // per concatenated input
  std::vector<size_t> inputs;    // their indices among the node's inputs
};
StatusOr<ConcatParams> ParseConcat(const PrepareArgs& args);
// The same over the node inputs `data` only (com.microsoft.QLinearConcat's
// tensors among its scales and zero points).
StatusOr<ConcatParams> ParseConcatOf(const PrepareArgs& args, std::vector<size_t> data);

// Transpose perm (default: reversed axes), checked to be a permutation.
StatusOr<std::vector<int>> ParsePerm(const PrepareArgs& args);

// DepthToSpace (mode DCR or CRD) / SpaceToDepth on [N, C, H, W] with block
// size b; the output dims are checked against outputs[0].
struct DepthSpaceParams {
  bool depth_to_space = true;
  bool crd = false;  // DepthToSpace's mode CRD (default DCR)
  int64_t block = 1;
  std::vector<int64_t> in_dims, out_dims;
};
StatusOr<DepthSpaceParams> ParseDepthSpace(const PrepareArgs& args);

// Tile: inputs[0] repeated along every axis into outputs[0] (its dims from
// shape inference). A constant repeats input (one entry per axis) is checked
// against the output; otherwise the output must have the input's rank and
// dtype. Tiling an empty input axis to a non-empty one is an error.
struct TileParams {
  bool constant = false;         // repeats known at Prepare
  std::vector<int64_t> repeats;  // per axis; constant only
  std::vector<int64_t> in_dims, out_dims;
};
StatusOr<TileParams> ParseTile(const PrepareArgs& args);

// Expand: inputs[0] broadcast to outputs[0]'s dims (which shape inference
// took from the shape input); a constant shape input is cross-checked, and
// the output must have the input's dtype. Returns the one-input plan.
StatusOr<BroadcastPlan> ParseExpand(const PrepareArgs& args);

// ---- CumSum, Trilu, TopK ----------------------------------------------------

// `dims` viewed as [outer, extent, inner] around `axis` (negative counts
// from the end); out of range is InvalidArgument with a bare message.
struct AxisSplit {
  int64_t outer = 1, extent = 1, inner = 1;
};
StatusOr<AxisSplit> SplitAtAxis(std::span<const int64_t> dims, int64_t axis);

// CumSum: exclusive, reverse, and the axis input (an i32 / i64 scalar):
// split here when constant, else read at Run (SplitAtAxis).
struct CumSumParams {
  bool exclusive = false;
  bool reverse = false;
  DataType axis_dtype = DataType::kI64;
  bool constant_axis = false;
  AxisSplit split;  // when constant_axis
};
StatusOr<CumSumParams> ParseCumSum(const PrepareArgs& args);

// Trilu over the last two axes: element (i, j) of each matrix is kept when
// j - i >= k (upper, the default) or j - i <= k. k is the optional i64
// scalar input 1: read here when constant, else at Run from k_input; 0
// without it.
struct TriluParams {
  bool upper = true;
  int64_t matrices = 1, rows = 0, cols = 0;
  int64_t k = 0;
  int k_input = -1;
};
StatusOr<TriluParams> ParseTrilu(const PrepareArgs& args);

// TopK: the K largest (largest, default 1) or smallest along `axis`
// (default -1). K is the outputs' extent on the axis (fixed at load time);
// a constant K input must equal it, a computed one is checked at Run.
// Checks the Values (input dtype) and Indices (i64) outputs.
struct TopKParams {
  bool largest = true;
  bool constant_k = false;
  int64_t k = 0;
  AxisSplit split;
};
StatusOr<TopKParams> ParseTopK(const PrepareArgs& args);

// TopK's order: whether element a (value va) ranks before element b (vb) of
// one row: the better value (larger with `largest`), or of equal values the
// lower index, as ONNX specifies; NaN ranks above every number (so first
// with largest, last without), NaNs among themselves by index. A strict
// total order, so every sort of a row gives the same result.
template <typename T>
bool TopKRanksBefore(T va, T vb, int64_t a, int64_t b, bool largest) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(va) || std::isnan(vb)) {
      if (std::isnan(va) && std::isnan(vb)) return a < b;
      return std::isnan(va) == largest;
    }
  }
  if (va != vb) return largest ? va > vb : va < vb;
  return a < b;
}

// ---- Gather ------------------------------------------------------------------

// Gather(data, indices i32 / i64) along `axis`: data viewed as [outer,
// extent, inner] and the output as [outer, indices, inner] (checked against
// outputs[0]). Other index dtypes are Unimplemented.
struct GatherParams {
  int axis = 0;
  int64_t outer = 1, extent = 0, indices = 0, inner = 1;
  DataType index_dtype = DataType::kI64;
};
StatusOr<GatherParams> ParseGather(const PrepareArgs& args);

// The errors of an index outside [-extent, extent), naming the node
// (`where`). Gather: "index 7 is out of range for axis extent 3"; ScatterND,
// GatherElements, ScatterElements: "... for axis 1 of extent 3"; GatherND:
// "... for extent 3".
Status GatherIndexOutOfRange(const std::string& where, int64_t index, int64_t extent);
Status AxisIndexOutOfRange(const std::string& where, int64_t index, int64_t axis,
                           int64_t extent);
Status TupleIndexOutOfRange(const std::string& where, int64_t index, int64_t extent);

// Gather's check of all `count` indices before anything is written: the
// first one outside [-extent, extent) is the error.
template <typename I>
Status CheckGatherIndices(const std::string& where, const I* indices, int64_t count,
                          int64_t extent) {
  for (int64_t j = 0; j < count; ++j)
    if (indices[j] < -extent || indices[j] >= extent)
      return GatherIndexOutOfRange(where, indices[j], extent);
  return Status::Ok();
}

// ---- GatherElements, ScatterElements, ScatterND ----------------------------

// GatherElements / ScatterElements: data (input 0) and indices (input 1, i32
// or i64) of the same rank >= 1, indices no larger than data off the axis.
// Returns the normalized `axis`.
StatusOr<int> ParseElementsAxis(const PrepareArgs& args);

// The `reduction` attribute of ScatterND and ScatterElements (opset 16: add,
// mul; 18: max, min).
enum class ScatterReduction { kNone, kAdd, kMul, kMax, kMin };
StatusOr<ScatterReduction> ParseScatterReduction(const PrepareArgs& args);

// GatherND (batch_dims b) and ScatterND (b = 0): i64 indices of rank >= 1
// whose last axis (k entries) is a tuple naming a slice of data's last
// rank - b - k axes, within batch n of the first b axes. Checks the output
// (and ScatterND's updates).
struct IndexTupleParams {
  int64_t k = 0;
  int64_t batches = 1;      // product of the batch axes
  int64_t batch_stride = 0; // data elements per batch
  int64_t tuples = 0;       // index tuples per batch
  int64_t slice = 1;        // data elements each tuple names
  std::vector<int64_t> tuple_extents, tuple_strides;  // data's axes b .. b + k - 1
};
StatusOr<IndexTupleParams> ParseGatherND(const PrepareArgs& args);
StatusOr<IndexTupleParams> ParseScatterND(const PrepareArgs& args);

// ---- OneHot, Range, EyeLike ---------------------------------------------------

// OneHot(indices, depth, values [off, on], axis = -1): depth is read from the
// planned output shape (fixed at load), which inserts it at `axis` into
// indices' shape; the output is [outer, depth, inner]. f16 / bool indices
// are Unimplemented.
struct OneHotParams {
  int axis = -1;
  int64_t depth = 0, outer = 1, inner = 1;
};
StatusOr<OneHotParams> ParseOneHot(const PrepareArgs& args);

// OneHot's row for an index value of any numeric dtype: floats truncate
// toward zero; a value out of int64's range (or NaN) gives kOneHotNoRow,
// which matches no row even after negative indices wrap by depth.
inline constexpr int64_t kOneHotNoRow = INT64_MIN;
template <typename T>
int64_t OneHotIndex(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::isfinite(v) && std::fabs(static_cast<double>(v)) < 9.2e18 ? static_cast<int64_t>(v)
                                                                          : kOneHotNoRow;
  } else if constexpr (std::is_same_v<T, uint64_t>) {
    return v > static_cast<uint64_t>(INT64_MAX) ? kOneHotNoRow : static_cast<int64_t>(v);
  } else {
    return static_cast<int64_t>(v);
  }
}

// Range(start, limit, delta): f32 / i32 / i64 scalars of one dtype; the
// output length was fixed at load (Unimplemented for other dtypes).
StatusOr<int64_t> ParseRange(const PrepareArgs& args);
// InvalidArgument when delta is 0 or the values give another length than
// the planned one (`where`: the node).
Status CheckRangeLength(const std::string& where, double start, double limit, double delta,
                        int64_t length);

// Range's start and delta read at Run from inputs 0 and 2 (limit, input 1,
// only checked), after CheckRangeLength against the planned `length`.
template <typename T>
struct RangeScalars {
  T start, delta;
};
template <typename T>
StatusOr<RangeScalars<T>> ReadRangeScalars(const RunArgs& args, const std::string& where,
                                           int64_t length) {
  const T start = *static_cast<const T*>(args.src[0]);
  const T limit = *static_cast<const T*>(args.src[1]);
  const T delta = *static_cast<const T*>(args.src[2]);
  RETURN_IF_ERROR(CheckRangeLength(where, static_cast<double>(start), static_cast<double>(limit),
                                   static_cast<double>(delta), length));
  return RangeScalars<T>{start, delta};
}

// EyeLike: a 2-D output of the input's shape, `one` (the output dtype's
// encoding of 1, little-endian in the low bytes) where col - row == k; k
// clamped to [-rows, cols] so that no arithmetic on it overflows.
struct EyeLikeParams {
  int64_t rows = 0, cols = 0, k = 0;
  uint64_t one = 0;
};
StatusOr<EyeLikeParams> ParseEyeLike(const PrepareArgs& args);

// Normalized `axis` attribute (default `fallback`) for an input of `rank`.
StatusOr<int> ParseAxis(const PrepareArgs& args, int64_t fallback, int rank);

// Shape's [start, end) after clamping (opset 15 attributes).
struct ShapeRange {
  int start = 0;
  int end = 0;
};
ShapeRange ParseShapeRange(const PrepareArgs& args, int rank);

// ---- NonMaxSuppression -------------------------------------------------------

// boxes f32 [batches, boxes, 4], scores f32 [batches, classes, boxes], then the
// optional scalars max_output_boxes_per_class (i64), iou_threshold and
// score_threshold (f32), read at Run. Output 0, i64 [rows, 3], is sized for
// at most `rows_capacity` selections (shape inference's upper bound).
struct NonMaxSuppressionParams {
  int64_t batches = 0, classes = 0, boxes = 0;
  bool center_point_box = false;  // [x_center, y_center, width, height]
  int64_t rows_capacity = 0;
};
StatusOr<NonMaxSuppressionParams> ParseNonMaxSuppression(const PrepareArgs& args);

}  // namespace braid

#endif  // BRAID_KERNELS_PARAMS_DATA_OPS_H_
