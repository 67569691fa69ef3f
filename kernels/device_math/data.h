// Per-element work of the CUDA data-movement kernels (data.cu; GridSample's
// sampling and NonMaxSuppression's corners / IoU test are also the reference's
// and braid's CPU kernels' own): the strided
// walk behind Transpose, Slice, Expand and Tile, Gather, Pad, Resize (f32),
// Cast, Trilu, the Gather / Scatter Elements and ND ops, OneHot, Range,
// EyeLike, GridSample and NonMaxSuppression. Element types are storage types
// (uint8/16/32/64) where the op moves bytes, not values.
//
//   y[i] = x[args.index.Offset(i)];                 // StridedCopyElement
//   dm::PadElement(args, i, x, y);
#ifndef BRAID_KERNELS_DEVICE_MATH_DATA_H_
#define BRAID_KERNELS_DEVICE_MATH_DATA_H_

#include "kernels/device_math/common.h"

namespace braid::dm {

struct StridedCopyArgs {
  int64_t elements = 0;
  int element_size = 4;  // 1, 2, 4 or 8
  StridedIndex<1> index;
};

template <typename E>
BRAID_HD void StridedCopyElement(const StridedCopyArgs& args, int64_t i, const E* x, E* y) {
  y[i] = x[args.index.Offset(i)];
}

// Gather along an axis with indices known at Prepare (checked there): the
// output is [outer, num_indices, row]; `indices` are normalized (>= 0).
struct GatherArgs {
  int64_t elements = 0;
  int element_size = 4;
  int64_t axis_dim = 0;
  int64_t num_indices = 0;
  int64_t row = 1;  // elements after the axis
};

template <typename E>
BRAID_HD void GatherElement(const GatherArgs& args, int64_t i, const E* x,
                            const int64_t* indices, E* y) {
  const int64_t r = i % args.row;
  const int64_t j = (i / args.row) % args.num_indices;
  const int64_t o = i / (args.row * args.num_indices);
  y[i] = x[(o * args.axis_dim + indices[j]) * args.row + r];
}

// Gather with indices computed at run time (i32 or i64, `index_size`
// bytes): negative ones count from the end; one outside the axis cannot
// stop a kernel, so its row is zeros (the CPU kernels report it as an error).
template <typename E>
BRAID_HD void GatherRuntimeElement(const GatherArgs& args, int64_t i, const E* x,
                                   const void* indices, int index_size, E* y) {
  const int64_t r = i % args.row;
  const int64_t j = (i / args.row) % args.num_indices;
  const int64_t o = i / (args.row * args.num_indices);
  int64_t k = index_size == 4 ? static_cast<const int32_t*>(indices)[j]
                              : static_cast<const int64_t*>(indices)[j];
  if (k < 0) k += args.axis_dim;
  y[i] = k < 0 || k >= args.axis_dim ? E(0) : x[(o * args.axis_dim + k) * args.row + r];
}

// Pad: out index -> input index per axis (begin may be negative: crops).
struct PadArgs {
  int64_t elements = 0;
  int element_size = 4;
  int rank = 0;
  int mode = 0;  // 0 constant, 1 reflect, 2 edge (braid::PadMode order)
  int64_t out_dims[kMaxRank] = {};
  int64_t in_dims[kMaxRank] = {};
  int64_t begin[kMaxRank] = {};
  uint64_t value_bits = 0;  // the constant, as the element's bytes
};

BRAID_HD int64_t PadSourceIndex(int mode, int64_t i, int64_t n) {
  if (mode == 2) return i < 0 ? 0 : (i >= n ? n - 1 : i);
  // reflect (n >= 2 checked at Prepare): mirror without repeating the edge
  const int64_t period = 2 * (n - 1);
  int64_t m = i % period;
  if (m < 0) m += period;
  return m < n ? m : period - m;
}

template <typename E>
BRAID_HD void PadElement(const PadArgs& args, int64_t i, const E* x, E* y) {
  int64_t src = 0;
  int64_t rest = i;
  int64_t coords[kMaxRank];
  for (int a = args.rank - 1; a >= 0; --a) {
    coords[a] = rest % args.out_dims[a] - args.begin[a];
    rest /= args.out_dims[a];
  }
  for (int a = 0; a < args.rank; ++a) {
    int64_t c = coords[a];
    if (c < 0 || c >= args.in_dims[a]) {
      if (args.mode == 0) {
        y[i] = static_cast<E>(args.value_bits);
        return;
      }
      c = PadSourceIndex(args.mode, c, args.in_dims[a]);
    }
    src = src * args.in_dims[a] + c;
  }
  y[i] = x[src];
}

// Resize / Upsample (f32): the taps of kernels/params/resize.h, uploaded at
// Prepare. Per resized axis and output coordinate a ResizeCoord names its
// run of taps (offsets premultiplied by the axis's input stride); the value
// is the sum over every combination of the resized axes' taps of the product
// of their weights (separable interpolation), as the reference computes it.
struct ResizeCoord {
  uint32_t first = 0;    // into the taps
  uint32_t count = 1;
  uint32_t outside = 0;  // tf_crop_and_resize: extrapolation_value
};
struct ResizeTap {
  int64_t offset = 0;  // input index * input stride of the axis
  float weight = 1.0f;
};
struct ResizeArgs {
  int64_t elements = 0;
  int rank = 0;
  int64_t out_dims[kMaxRank] = {};
  int64_t in_strides[kMaxRank] = {};
  int64_t coord_base[kMaxRank] = {};  // into the coords; -1: axis not resized
  float extrapolation = 0.0f;
};

BRAID_HD void ResizeElement(const ResizeArgs& args, int64_t i, const ResizeCoord* coords,
                            const ResizeTap* taps, const float* x, float* y) {
  int64_t base = 0;
  int resized = 0;
  uint32_t first[kMaxRank], count[kMaxRank], t[kMaxRank];
  int64_t rest = i;
  for (int a = args.rank - 1; a >= 0; --a) {
    const int64_t idx = rest % args.out_dims[a];
    rest /= args.out_dims[a];
    if (args.coord_base[a] < 0) {
      base += idx * args.in_strides[a];
      continue;
    }
    const ResizeCoord& c = coords[args.coord_base[a] + idx];
    if (c.outside) {
      y[i] = args.extrapolation;
      return;
    }
    first[resized] = c.first;
    count[resized] = c.count;
    t[resized] = 0;
    ++resized;
  }
  float acc = 0.0f;
  while (true) {
    float w = 1.0f;
    int64_t offset = base;
    for (int k = 0; k < resized; ++k) {
      const ResizeTap& tap = taps[first[k] + t[k]];
      w *= tap.weight;
      offset += tap.offset;
    }
    acc += w * x[offset];
    int k = 0;  // next combination (odometer)
    while (k < resized && ++t[k] == count[k]) t[k++] = 0;
    if (k == resized) break;
  }
  y[i] = acc;
}

// Trilu over the last two axes [rows, cols] of any element type: element
// (r, c) is kept when c - r >= k (upper) or c - r <= k, else zero (all-zero
// bytes). A computed k is read by the kernel (`k_at`, an i64 scalar; null:
// args.k, the constant or 0).
struct TriluArgs {
  int64_t elements = 0;
  int element_size = 4;
  bool upper = true;
  int64_t rows = 1, cols = 1;
  int64_t k = 0;
};

template <typename E>
BRAID_HD void TriluElement(const TriluArgs& args, int64_t i, const E* x, const int64_t* k_at,
                           E* y) {
  const int64_t k = k_at != nullptr ? *k_at : args.k;
  const int64_t c = i % args.cols, r = (i / args.cols) % args.rows;
  const bool keep = args.upper ? c - r >= k : c - r <= k;
  y[i] = keep ? x[i] : E(0);
}

// Cast between f64, f32, i64, i32, i16, i8, u8 and bool with
// kernels/reference/cast.cc's rules: float -> integer truncates toward zero,
// NaN gives 0, values past int64 saturate, then the int64 wraps to narrower
// types; integer -> narrower integer wraps; anything -> bool is != 0 (NaN is
// true); bool -> anything is 0 or 1.
enum class CastType : int { kF64, kF32, kI64, kI32, kI16, kI8, kU8, kBool };

struct CastArgs {
  int64_t elements = 0;
  CastType from = CastType::kF32;
  CastType to = CastType::kF32;
};

BRAID_HD bool CastTypeIsFloat(CastType t) { return t == CastType::kF64 || t == CastType::kF32; }

BRAID_HD void CastElement(const CastArgs& args, int64_t i, const void* x, void* y) {
  double f = 0;   // the value, when `from` is a float type
  int64_t n = 0;  // otherwise
  switch (args.from) {
    case CastType::kF64: f = static_cast<const double*>(x)[i]; break;
    case CastType::kF32: f = static_cast<const float*>(x)[i]; break;
    case CastType::kI64: n = static_cast<const int64_t*>(x)[i]; break;
    case CastType::kI32: n = static_cast<const int32_t*>(x)[i]; break;
    case CastType::kI16: n = static_cast<const int16_t*>(x)[i]; break;
    case CastType::kI8: n = static_cast<const int8_t*>(x)[i]; break;
    case CastType::kU8: n = static_cast<const uint8_t*>(x)[i]; break;
    case CastType::kBool: n = static_cast<const uint8_t*>(x)[i] != 0; break;
  }
  const bool from_float = CastTypeIsFloat(args.from);
  if (args.to == CastType::kF64) {
    static_cast<double*>(y)[i] = from_float ? f : static_cast<double>(n);
    return;
  }
  if (args.to == CastType::kF32) {
    // From f64 rounds once; from an integer directly (no double rounding).
    static_cast<float*>(y)[i] = from_float ? static_cast<float>(f) : static_cast<float>(n);
    return;
  }
  if (args.to == CastType::kBool) {
    static_cast<uint8_t*>(y)[i] = (from_float ? f != 0.0 : n != 0) ? 1 : 0;
    return;
  }
  if (from_float) {
    if (f != f) n = 0;
    else if (f <= -9.2233720368547758e18) n = INT64_MIN;
    else if (f >= 9.2233720368547758e18) n = INT64_MAX;
    else n = static_cast<int64_t>(f);
  }
  switch (args.to) {
    case CastType::kI64: static_cast<int64_t*>(y)[i] = n; break;
    case CastType::kI32: static_cast<int32_t*>(y)[i] = static_cast<int32_t>(n); break;
    case CastType::kI16: static_cast<int16_t*>(y)[i] = static_cast<int16_t>(n); break;
    case CastType::kI8: static_cast<int8_t*>(y)[i] = static_cast<int8_t>(n); break;
    case CastType::kU8: static_cast<uint8_t*>(y)[i] = static_cast<uint8_t>(n); break;
    default: break;
  }
}

// GatherElements / ScatterElements: element e of indices (dims index_dims,
// i32 or i64: index_size bytes) names the data element at e's coordinates
// with the one on `axis` replaced by indices[e], negative from the end.
// Indices are read by the kernel, constant or not (constant ones are checked
// at Prepare). An index outside the axis cannot stop a kernel: GatherElements
// writes zero, ScatterElements drops that update (the CPU kernels report it).
struct ElementsArgs {
  int64_t elements = 0;  // Gather: indices' elements; Scatter: index lines
  int element_size = 4;
  int index_size = 8;
  int rank = 1;
  int axis = 0;
  int64_t extent = 1;  // data's extent on the axis
  int64_t index_dims[kMaxRank] = {};
  int64_t data_strides[kMaxRank] = {};
  int reduction = 0;  // ScatterElements, f32 only: braid::ScatterReduction's order
};

BRAID_HD int64_t ReadIndex(const void* indices, int index_size, int64_t e) {
  return index_size == 4 ? static_cast<const int32_t*>(indices)[e]
                         : static_cast<const int64_t*>(indices)[e];
}

template <typename E>
BRAID_HD void GatherElementsElement(const ElementsArgs& args, int64_t e, const E* x,
                                    const void* indices, E* y) {
  int64_t k = ReadIndex(indices, args.index_size, e);
  if (k < 0) k += args.extent;
  if (k < 0 || k >= args.extent) {
    y[e] = E(0);
    return;
  }
  int64_t offset = 0;
  for (int64_t d = args.rank - 1, rest = e; d >= 0; --d) {
    offset += (d == args.axis ? k : rest % args.index_dims[d]) * args.data_strides[d];
    rest /= args.index_dims[d];
  }
  y[e] = x[offset];
}

// How an update combines with the element it lands on. Storage types (no
// reduction: planned so) replace; f32 adds, multiplies, or takes the max /
// min with NaN propagating as the reference does.
template <typename E>
BRAID_HD E CombineScatter(int /*reduction*/, E /*current*/, E update) {
  return update;
}
BRAID_HD float CombineScatter(int reduction, float current, float update) {
  switch (reduction) {
    case 1: return current + update;
    case 2: return current * update;
    case 3:
      if (current != current) return current;
      if (update != update) return update;
      return current < update ? update : current;
    case 4:
      if (current != current) return current;
      if (update != update) return update;
      return update < current ? update : current;
    default: return update;
  }
}

// ScatterElements after y = copy of data: one thread per line of indices
// along the axis (`line` numbers them with the axis coordinate dropped).
// Every update of a line lands in the same data line and no other line's
// does, so a thread applies its updates in index order with no race:
// duplicates resolve as on the CPU (the last wins, or fold in order).
template <typename E>
BRAID_HD void ScatterElementsLine(const ElementsArgs& args, int64_t line, const void* indices,
                                  const E* updates, E* y) {
  int64_t e0 = 0, d0 = 0, index_stride = 1, axis_index_stride = 1;
  for (int64_t d = args.rank - 1, rest = line; d >= 0; --d) {
    if (d == args.axis) {
      axis_index_stride = index_stride;
    } else {
      const int64_t c = rest % args.index_dims[d];
      rest /= args.index_dims[d];
      e0 += c * index_stride;
      d0 += c * args.data_strides[d];
    }
    index_stride *= args.index_dims[d];
  }
  for (int64_t j = 0; j < args.index_dims[args.axis]; ++j) {
    const int64_t e = e0 + j * axis_index_stride;
    int64_t k = ReadIndex(indices, args.index_size, e);
    if (k < 0) k += args.extent;
    if (k < 0 || k >= args.extent) continue;
    E& out = y[d0 + k * args.data_strides[args.axis]];
    out = CombineScatter(args.reduction, out, updates[e]);
  }
}

// GatherND / ScatterND: an index tuple (k i64 entries, negative from the
// end) names a slice of `slice` elements of data within its batch.
struct TupleArgs {
  int64_t elements = 0;  // Gather: output elements; Scatter: slice positions
  int element_size = 4;
  int k = 1;
  int64_t tuples = 0;        // per batch
  int64_t batch_stride = 0;  // data elements per batch
  int64_t slice = 1;
  int64_t extents[kMaxRank] = {};
  int64_t strides[kMaxRank] = {};
  int reduction = 0;  // ScatterND, f32 only: braid::ScatterReduction's order
};

// Data offset of the slice tuple g (over all batches) names, or -1 when an
// entry is outside its axis (a kernel cannot stop: Gather writes zeros,
// Scatter drops the update; the CPU kernels report it).
BRAID_HD int64_t TupleOffset(const TupleArgs& args, const int64_t* indices, int64_t g) {
  int64_t offset = (g / args.tuples) * args.batch_stride;
  for (int d = 0; d < args.k; ++d) {
    int64_t i = indices[g * args.k + d];
    if (i < 0) i += args.extents[d];
    if (i < 0 || i >= args.extents[d]) return -1;
    offset += i * args.strides[d];
  }
  return offset;
}

template <typename E>
BRAID_HD void GatherNDElement(const TupleArgs& args, int64_t i, const E* x,
                              const int64_t* indices, E* y) {
  const int64_t offset = TupleOffset(args, indices, i / args.slice);
  y[i] = offset < 0 ? E(0) : x[offset + i % args.slice];
}

// ScatterND after y = copy of data: one thread per position r in a slice
// walks every tuple in order. Slices start at multiples of `slice`, so no
// two threads touch one element, and duplicates resolve as on the CPU.
template <typename E>
BRAID_HD void ScatterNDColumn(const TupleArgs& args, int64_t r, const int64_t* indices,
                              const E* updates, E* y) {
  for (int64_t t = 0; t < args.tuples; ++t) {
    const int64_t offset = TupleOffset(args, indices, t);
    if (offset < 0) continue;
    E& out = y[offset + r];
    out = CombineScatter(args.reduction, out, updates[t * args.slice + r]);
  }
}

// OneHot: output [outer, depth, inner] (depth fixed at load); element
// (o, d, j) is values[1] (on) where indices[o * inner + j], negative from
// the end, equals d, else values[0] (off). Indices of index_type: f32
// (truncated; NaN / Inf / past int64 match no row), i64, i32, i8, u8.
enum class OneHotIndex : int { kF32, kI64, kI32, kI8, kU8 };
struct OneHotArgs {
  int64_t elements = 0;
  int element_size = 4;
  OneHotIndex index_type = OneHotIndex::kI64;
  int64_t depth = 1, inner = 1;
};

BRAID_HD int64_t OneHotIndexAt(const OneHotArgs& args, const void* indices, int64_t k) {
  switch (args.index_type) {
    case OneHotIndex::kF32: {
      const float v = static_cast<const float*>(indices)[k];
      return fabsf(v) < 9.2e18f ? static_cast<int64_t>(v) : -args.depth - 1;
    }
    case OneHotIndex::kI64: return static_cast<const int64_t*>(indices)[k];
    case OneHotIndex::kI32: return static_cast<const int32_t*>(indices)[k];
    case OneHotIndex::kI8: return static_cast<const int8_t*>(indices)[k];
    case OneHotIndex::kU8: return static_cast<const uint8_t*>(indices)[k];
  }
  return -args.depth - 1;
}

template <typename E>
BRAID_HD void OneHotElement(const OneHotArgs& args, int64_t i, const void* indices,
                            const E* values, E* y) {
  const int64_t j = i % args.inner;
  const int64_t d = (i / args.inner) % args.depth;
  const int64_t o = i / (args.inner * args.depth);
  int64_t index = OneHotIndexAt(args, indices, o * args.inner + j);
  if (index < 0) index += args.depth;
  y[i] = values[index == d ? 1 : 0];
}

// Range: `length` (fixed at load) values from start by delta, read from the
// device (constant or computed). Integers: start + i * delta in wrapping
// unsigned arithmetic, which equals the reference's accumulation. f32
// accumulates (value += delta) in one thread so that rounding matches the
// reference bit for bit.
struct RangeArgs {
  int64_t length = 0;
};

template <typename T, typename U>
BRAID_HD void RangeIntElement(int64_t i, const T* start, const T* delta, T* y) {
  y[i] = static_cast<T>(static_cast<U>(*start) + static_cast<U>(i) * static_cast<U>(*delta));
}

BRAID_HD void RangeF32Serial(const RangeArgs& args, const float* start, const float* delta,
                             float* y) {
  float value = *start;
  for (int64_t i = 0; i < args.length; ++i) {
    y[i] = value;
    value += *delta;
  }
}

// EyeLike: [rows, cols]; `one` (the element's bytes, low-order first) where
// col - row == k, zero elsewhere.
struct EyeLikeArgs {
  int64_t elements = 0;
  int element_size = 4;
  int64_t cols = 1, k = 0;
  uint64_t one = 0;
};

template <typename E>
BRAID_HD void EyeLikeElement(const EyeLikeArgs& args, int64_t i, E* y) {
  const int64_t r = i / args.cols, c = i % args.cols;
  y[i] = c - r == args.k ? static_cast<E>(args.one) : E(0);
}

// GridSample (f32, 4-D): output [N, C, H_out, W_out], element i samples the
// plane (n, c) of x [N, C, H, W] at grid [n, h, w] = (x, y) in [-1, 1], in
// double. The one definition: the reference kernel
// (kernels/reference/grid_sample.cc) and braid's CPU kernel call these
// functions too. The pixel coordinate ((v + 1) * size - 1) / 2, or
// (v + 1) / 2 * (size - 1) with align_corners; nearest rounds it half to
// even (rint); outside [-0.5, size - 0.5] ([0, size - 1] with
// align_corners) border clamps it and reflection reflects it; then nearest
// reads one pixel, linear 2x2 taps, cubic 4x4 taps (Keys, A = -0.75), a tap
// outside the image reading 0 (zeros), the edge (border) or its reflection.
// mode / padding use GridSampleMode / GridSamplePadding's numbering
// (kernels/params/grid_sample.h).
struct GridSampleArgs {
  int64_t elements = 0;
  int mode = 1;     // 0 nearest, 1 linear, 2 cubic
  int padding = 0;  // 0 zeros, 1 border, 2 reflection
  bool align_corners = false;
  int64_t channels = 1, height = 1, width = 1, out_hw = 1;
};

// Reflects x by the near border until it lies within [low, high].
BRAID_HD double GridSampleReflect(double x, double low, double high) {
  const double range = high - low;
  if (range <= 0) return low;
  if (x < low) {
    const double dx = low - x;
    const int64_t n = static_cast<int64_t>(dx / range);
    const double r = dx - static_cast<double>(n) * range;
    return n % 2 == 0 ? low + r : high - r;
  }
  if (x > high) {
    const double dx = x - high;
    const int64_t n = static_cast<int64_t>(dx / range);
    const double r = dx - static_cast<double>(n) * range;
    return n % 2 == 0 ? high - r : low + r;
  }
  return x;
}

BRAID_HD double GridSampleLow(const GridSampleArgs& a) { return a.align_corners ? 0.0 : -0.5; }
BRAID_HD double GridSampleHigh(const GridSampleArgs& a, int64_t size) {
  return a.align_corners ? static_cast<double>(size - 1) : static_cast<double>(size) - 0.5;
}

// The pixel coordinate a normalized grid value names, rounded for nearest
// and brought inside the image for border / reflection padding.
BRAID_HD double GridSampleSource(const GridSampleArgs& a, float normalized, int64_t size) {
  const double v = normalized;
  double s = a.align_corners ? (v + 1) / 2 * static_cast<double>(size - 1)
                             : ((v + 1) * static_cast<double>(size) - 1) / 2;
  if (a.mode == 0) s = rint(s);  // half to even, as std::nearbyint in the reference
  const double low = GridSampleLow(a), high = GridSampleHigh(a, size);
  if (s < low || s > high) {
    const double last = static_cast<double>(size - 1);
    if (a.padding == 1) s = s < 0.0 ? 0.0 : (s > last ? last : s);
    if (a.padding == 2) s = GridSampleReflect(s, low, high);
  }
  return s;
}

// Index of tap i on an axis of `size`, or -1 where zeros padding reads 0.
BRAID_HD int64_t GridSampleTap(const GridSampleArgs& a, int64_t i, int64_t size) {
  if (i >= 0 && i < size) return i;
  if (size <= 0) return -1;  // an empty axis has no pixel to clamp or reflect to: 0
  if (a.padding == 0) return -1;
  if (a.padding == 2)
    i = static_cast<int64_t>(
        GridSampleReflect(static_cast<double>(i), GridSampleLow(a), GridSampleHigh(a, size)));
  return i < 0 ? 0 : (i > size - 1 ? size - 1 : i);
}

BRAID_HD double GridSamplePixel(const GridSampleArgs& a, const float* plane, int64_t row,
                                int64_t column) {
  row = GridSampleTap(a, row, a.height);
  column = GridSampleTap(a, column, a.width);
  return row < 0 || column < 0 ? 0.0 : plane[row * a.width + column];
}

// Keys' cubic convolution weights of the taps at -1, 0, 1, 2 for offset t.
BRAID_HD void GridSampleCubicWeights(double t, double* w) {
  const double c = -0.75;
  const double t1 = t + 1, t2 = 1 - t, t3 = 2 - t;
  w[0] = ((c * t1 - 5 * c) * t1 + 8 * c) * t1 - 4 * c;
  w[1] = ((c + 2) * t - (c + 3)) * t * t + 1;
  w[2] = ((c + 2) * t2 - (c + 3)) * t2 * t2 + 1;
  w[3] = ((c * t3 - 5 * c) * t3 + 8 * c) * t3 - 4 * c;
}

// The value of `plane` (H x W) at pixel coordinates (sy, sx) from
// GridSampleSource: what GridSampleElement writes, and what braid's CPU
// kernel (kernels/cpu/grid_sample_cpu.cc) computes for each channel of a
// grid point, whose coordinates it maps once.
BRAID_HD float GridSampleAt(const GridSampleArgs& a, const float* plane, double sy, double sx) {
  if (a.mode == 0)
    return static_cast<float>(
        GridSamplePixel(a, plane, static_cast<int64_t>(sy), static_cast<int64_t>(sx)));
  const double fy = floor(sy), fx = floor(sx);
  const int64_t y0 = static_cast<int64_t>(fy), x0 = static_cast<int64_t>(fx);
  const double ty = sy - fy, tx = sx - fx;
  double sum = 0;
  if (a.mode == 1) {
    const double wy[2] = {1 - ty, ty}, wx[2] = {1 - tx, tx};
    for (int r = 0; r < 2; ++r)
      for (int c = 0; c < 2; ++c) sum += wy[r] * wx[c] * GridSamplePixel(a, plane, y0 + r, x0 + c);
  } else {
    double wy[4], wx[4];
    GridSampleCubicWeights(ty, wy);
    GridSampleCubicWeights(tx, wx);
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 4; ++c)
        sum += wy[r] * wx[c] * GridSamplePixel(a, plane, y0 - 1 + r, x0 - 1 + c);
  }
  return static_cast<float>(sum);
}

BRAID_HD void GridSampleElement(const GridSampleArgs& a, int64_t i, const float* x,
                                const float* grid, float* y) {
  const int64_t p = i % a.out_hw;
  const int64_t plane_index = i / a.out_hw;  // n * C + c
  const int64_t n = plane_index / a.channels;
  const float* g = grid + (n * a.out_hw + p) * 2;
  const float* plane = x + plane_index * a.height * a.width;
  y[i] = GridSampleAt(a, plane, GridSampleSource(a, g[1], a.height),
                      GridSampleSource(a, g[0], a.width));
}

// NonMaxSuppression (f32 boxes and scores, i64 rows), three launches on one
// stream over a workspace of int64 (NmsWorkspace):
//   1. NmsRankElement, one thread per (batch, class, box): a candidate (score
//      not NaN and, when given, strictly above score_threshold) counts the
//      candidates ahead of it (higher score; equal score, lower box index) and
//      writes its index at that rank of its class's order;
//   2. NmsSelectClass, one thread per (batch, class): the greedy walk of the
//      reference over that order against the class's kept list (at most
//      `slots` boxes), then its count;
//   3. NmsCompactClass, one thread per (batch, class): the rows of the earlier
//      classes (batch-major) give its offset; it writes [b, c, box] rows; the
//      last class also writes the total.
// The box corners and IoU test (NmsCornersOf, NmsSuppressedBy) are the CPU's
// too: the reference and braid's CPU kernel call them through
// kernels/host/non_max_suppression.h (std::min / std::max as ternaries,
// products under __fmul_rn on the device so no FMA contraction changes a
// rounding): the selected indices must be the same, bit for bit.
struct NmsArgs {
  int64_t batches = 0, classes = 0, boxes = 0;
  bool center_point_box = false;
  int64_t slots = 0;  // kept boxes per class at most: min(N, rows capacity / (B * C))
};

// Scalars read on the device (null: the input is omitted).
struct NmsScalars {
  const int64_t* max_per_class = nullptr;
  const float* iou_threshold = nullptr;
  const float* score_threshold = nullptr;
};

struct NmsCorners {
  float y1, x1, y2, x2;
};

BRAID_HD float NmsMin(float a, float b) { return b < a ? b : a; }  // std::min
BRAID_HD float NmsMax(float a, float b) { return a < b ? b : a; }  // std::max
BRAID_HD float NmsMul(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);  // never contracted into an FMA
#else
  return a * b;
#endif
}

BRAID_HD NmsCorners NmsCornersOf(const float* box, bool center_point_box) {
  if (center_point_box) {  // [x_center, y_center, width, height]
    const float half_w = box[2] / 2, half_h = box[3] / 2;
    return {box[1] - half_h, box[0] - half_w, box[1] + half_h, box[0] + half_w};
  }
  // [y1, x1, y2, x2], any diagonal pair of corners.
  return {NmsMin(box[0], box[2]), NmsMin(box[1], box[3]), NmsMax(box[0], box[2]),
          NmsMax(box[1], box[3])};
}

// Whether `a` and `b` overlap by more than `iou_threshold`; a box with no
// area, or no overlap, never suppresses.
BRAID_HD bool NmsSuppressedBy(const NmsCorners& a, const NmsCorners& b, float iou_threshold) {
  const float ix1 = NmsMax(a.x1, b.x1), iy1 = NmsMax(a.y1, b.y1);
  const float ix2 = NmsMin(a.x2, b.x2), iy2 = NmsMin(a.y2, b.y2);
  const float intersection = NmsMul(NmsMax(ix2 - ix1, 0.0f), NmsMax(iy2 - iy1, 0.0f));
  if (intersection <= 0) return false;
  const float area_a = NmsMul(a.x2 - a.x1, a.y2 - a.y1);
  const float area_b = NmsMul(b.x2 - b.x1, b.y2 - b.y1);
  const float union_area = area_a + area_b - intersection;
  if (area_a <= 0 || area_b <= 0 || union_area <= 0) return false;
  return intersection / union_area > iou_threshold;
}

// Workspace (int64): order [B * C * N], count [B * C], kept [B * C * slots].
BRAID_HD int64_t NmsWorkspaceElements(const NmsArgs& a) {
  const int64_t classes = a.batches * a.classes;
  return classes * a.boxes + classes + classes * a.slots;
}

BRAID_HD bool NmsCandidate(const NmsScalars& s, float score) {
  return score == score && (s.score_threshold == nullptr || score > *s.score_threshold);
}

// The kept maximum: max_output_boxes_per_class clamped to [0, slots] (the
// reference clamps to [0, N] and refuses more than the output holds; the
// plan's slots are min(N, what the output holds)).
BRAID_HD int64_t NmsMaxPerClass(const NmsArgs& a, const NmsScalars& s) {
  const int64_t m = s.max_per_class == nullptr ? 0 : *s.max_per_class;
  return m < 0 ? 0 : m > a.slots ? a.slots : m;
}

// Thread i = (batch * classes + class) * boxes + box.
BRAID_HD void NmsRankElement(const NmsArgs& a, int64_t i, const float* scores,
                             const NmsScalars& s, int64_t* workspace) {
  const int64_t box = i % a.boxes, bc = i / a.boxes;
  const float* sc = scores + bc * a.boxes;
  const float v = sc[box];
  if (!NmsCandidate(s, v)) return;
  int64_t rank = 0;
  for (int64_t j = 0; j < a.boxes; ++j) {
    const float w = sc[j];
    if (j != box && NmsCandidate(s, w) && (w > v || (w == v && j < box))) ++rank;
  }
  workspace[bc * a.boxes + rank] = box;
}

// Thread bc = batch * classes + class.
BRAID_HD void NmsSelectClass(const NmsArgs& a, int64_t bc, const float* boxes,
                             const float* scores, const NmsScalars& s, int64_t* workspace) {
  const int64_t classes = a.batches * a.classes;
  const int64_t* order = workspace + bc * a.boxes;
  int64_t* kept = workspace + classes * a.boxes + classes + bc * a.slots;
  const float* sc = scores + bc * a.boxes;
  const float* batch_boxes = boxes + (bc / a.classes) * a.boxes * 4;
  const int64_t max_per_class = NmsMaxPerClass(a, s);
  const float iou_threshold = s.iou_threshold == nullptr ? 0.0f : *s.iou_threshold;
  int64_t candidates = 0;
  for (int64_t j = 0; j < a.boxes; ++j) candidates += NmsCandidate(s, sc[j]) ? 1 : 0;
  int64_t count = 0;
  for (int64_t k = 0; k < candidates && count < max_per_class; ++k) {
    const NmsCorners box = NmsCornersOf(batch_boxes + order[k] * 4, a.center_point_box);
    bool suppressed = false;
    for (int64_t j = 0; j < count && !suppressed; ++j)
      suppressed = NmsSuppressedBy(box, NmsCornersOf(batch_boxes + kept[j] * 4, a.center_point_box),
                                   iou_threshold);
    if (!suppressed) kept[count++] = order[k];
  }
  workspace[classes * a.boxes + bc] = count;
}

// Thread bc; `total` gets the rows of every class (written by the last).
BRAID_HD void NmsCompactClass(const NmsArgs& a, int64_t bc, const int64_t* workspace,
                              int64_t* out, int64_t* total) {
  const int64_t classes = a.batches * a.classes;
  const int64_t* counts = workspace + classes * a.boxes;
  const int64_t* kept = counts + classes + bc * a.slots;
  int64_t row = 0;
  for (int64_t j = 0; j < bc; ++j) row += counts[j];
  const int64_t b = bc / a.classes, c = bc % a.classes;
  for (int64_t k = 0; k < counts[bc]; ++k, ++row) {
    out[row * 3] = b;
    out[row * 3 + 1] = c;
    out[row * 3 + 2] = kept[k];
  }
  if (bc == classes - 1) *total = row;
}

}  // namespace braid::dm

#endif  // BRAID_KERNELS_DEVICE_MATH_DATA_H_
