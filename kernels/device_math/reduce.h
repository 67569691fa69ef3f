// Per-element (per-output) work of the CUDA reduction-shaped kernels
// (reduce.cu; Einsum's walk is braid's CPU kernel's too): Softmax, the contiguous Reduce* ops,
// pooling (any window, pads, ceil_mode, dilations), LayerNormalization
// (also running InstanceNormalization and GroupNormalization), and Einsum
// (one thread per output element over the summed labels).
// LayerNormalization runs one block per row: each thread sums a strided
// slice (LayerNormPartial), the block combines the partials, then every
// element is normalized (LayerNormElement).
#ifndef BRAID_KERNELS_DEVICE_MATH_REDUCE_H_
#define BRAID_KERNELS_DEVICE_MATH_REDUCE_H_

#include "kernels/device_math/common.h"

namespace braid::dm {

// x viewed as [outer, axis, inner]; one call per (outer, inner) column j.
struct SoftmaxArgs {
  int64_t columns = 0;  // outer * inner
  int64_t axis = 1;
  int64_t inner = 1;
};

BRAID_HD void SoftmaxColumn(const SoftmaxArgs& args, int64_t j, const float* x, float* y) {
  const int64_t o = j / args.inner;
  const int64_t in = j % args.inner;
  const int64_t base = o * args.axis * args.inner + in;
  float m = -INFINITY;
  for (int64_t a = 0; a < args.axis; ++a) m = fmaxf(m, x[base + a * args.inner]);
  float sum = 0.0f;
  for (int64_t a = 0; a < args.axis; ++a) {
    const float e = expf(x[base + a * args.inner] - m);
    y[base + a * args.inner] = e;
    sum += e;
  }
  const float inv = 1.0f / sum;
  for (int64_t a = 0; a < args.axis; ++a) y[base + a * args.inner] *= inv;
}

// x viewed as [outer, reduced, inner] -> y [outer, inner]. Every ONNX
// reduction, as kernels/reference/reduce.cc computes it (in float here):
// Max / Min propagate NaN; LogSumExp shifts by the largest element.
enum class ReduceKind : int {  // braid::ReduceParams::Kind order
  kSum, kMean, kMax, kMin, kProd, kL1, kL2, kSumSquare, kLogSum, kLogSumExp,
};

struct ReduceArgs {
  ReduceKind kind = ReduceKind::kSum;
  int64_t outputs = 0;
  int64_t reduced = 1;
  int64_t inner = 1;
};

BRAID_HD void ReduceElement(const ReduceArgs& args, int64_t j, const float* x, float* y) {
  const int64_t o = j / args.inner;
  const int64_t in = j % args.inner;
  const float* p = x + o * args.reduced * args.inner + in;
  const ReduceKind kind = args.kind;
  if (kind == ReduceKind::kMax || kind == ReduceKind::kMin) {
    float best = p[0];  // reduced >= 1 (checked at Prepare)
    for (int64_t r = 1; r < args.reduced && best == best; ++r) {
      const float v = p[r * args.inner];
      if (v != v || (kind == ReduceKind::kMax ? v > best : v < best)) best = v;
    }
    y[j] = best;
    return;
  }
  float shift = 0.0f;
  if (kind == ReduceKind::kLogSumExp && args.reduced > 0) {
    shift = -INFINITY;
    for (int64_t r = 0; r < args.reduced; ++r) shift = fmaxf(shift, p[r * args.inner]);
    if (!isfinite(shift)) shift = 0.0f;
  }
  float acc = kind == ReduceKind::kProd ? 1.0f : 0.0f;
  for (int64_t r = 0; r < args.reduced; ++r) {
    const float v = p[r * args.inner];
    switch (kind) {
      case ReduceKind::kProd: acc *= v; break;
      case ReduceKind::kL1: acc += fabsf(v); break;
      case ReduceKind::kL2:
      case ReduceKind::kSumSquare: acc += v * v; break;
      case ReduceKind::kLogSumExp: acc += expf(v - shift); break;
      default: acc += v; break;  // Sum, Mean, LogSum
    }
  }
  switch (kind) {
    case ReduceKind::kMean: acc /= static_cast<float>(args.reduced); break;
    case ReduceKind::kL2: acc = sqrtf(acc); break;
    case ReduceKind::kLogSum: acc = logf(acc); break;
    case ReduceKind::kLogSumExp: acc = logf(acc) + shift; break;
    default: break;
  }
  y[j] = acc;
}

// ArgMax / ArgMin (f32 -> i64): x viewed as [outer, extent, inner], one
// output per (outer, inner) column j. The reference's rule: a NaN replaces
// any number (so the first NaN wins, or the last with select_last), equal
// values keep the first index unless select_last.
struct ArgReduceArgs {
  bool max = true;
  bool select_last = false;
  int64_t outputs = 0;  // outer * inner
  int64_t extent = 1;   // >= 1 (checked at Prepare)
  int64_t inner = 1;
};

BRAID_HD void ArgReduceElement(const ArgReduceArgs& args, int64_t j, const float* x,
                               int64_t* y) {
  const float* p = x + (j / args.inner) * args.extent * args.inner + j % args.inner;
  int64_t best = 0;
  float b = p[0];
  for (int64_t a = 1; a < args.extent; ++a) {
    const float v = p[a * args.inner];
    const bool replaces = b != b   ? args.select_last && v != v
                          : v != v ? true
                          : v == b ? args.select_last
                                   : (args.max ? v > b : v < b);
    if (replaces) {
      best = a;
      b = v;
    }
  }
  y[j] = best;
}

// CumSum (f32): one (outer, inner) column j per call, accumulated in double
// and rounded per output as the reference; exclusive leaves each element's
// own value out, reverse sums from the end.
struct CumSumArgs {
  bool exclusive = false;
  bool reverse = false;
  int64_t columns = 0;  // outer * inner
  int64_t extent = 1;
  int64_t inner = 1;
};

BRAID_HD void CumSumColumn(const CumSumArgs& args, int64_t j, const float* x, float* y) {
  const int64_t base = (j / args.inner) * args.extent * args.inner + j % args.inner;
  double acc = 0.0;
  for (int64_t t = 0; t < args.extent; ++t) {
    const int64_t at = base + (args.reverse ? args.extent - 1 - t : t) * args.inner;
    if (args.exclusive) y[at] = static_cast<float>(acc);
    acc += static_cast<double>(x[at]);
    if (!args.exclusive) y[at] = static_cast<float>(acc);
  }
}

// TopK (f32 values, i64 indices): one (outer, inner) slice j per call. The
// reference's order is strict and total (the better value first, NaN above
// every number, of equal values the lower index), so rank r is the first
// element in that order after rank r - 1: K passes over the slice, no
// scratch memory.
struct TopKArgs {
  bool largest = true;
  int64_t slices = 0;  // outer * inner
  int64_t k = 0;
  int64_t extent = 0;
  int64_t inner = 1;
};

// Whether element a (value va) ranks before element b (value vb).
BRAID_HD bool TopKBefore(bool largest, float va, int64_t a, float vb, int64_t b) {
  const bool na = va != va, nb = vb != vb;
  if (na || nb) return na && nb ? a < b : na == largest;
  if (va != vb) return largest ? va > vb : va < vb;
  return a < b;
}

BRAID_HD void TopKSlice(const TopKArgs& args, int64_t j, const float* x, float* values,
                        int64_t* indices) {
  const int64_t o = j / args.inner, in = j % args.inner;
  const float* p = x + o * args.extent * args.inner + in;
  const int64_t out = o * args.k * args.inner + in;
  int64_t prev = -1;
  float prev_value = 0.0f;
  for (int64_t r = 0; r < args.k; ++r) {
    int64_t best = -1;
    float best_value = 0.0f;
    for (int64_t a = 0; a < args.extent; ++a) {
      const float v = p[a * args.inner];
      if (prev >= 0 && !TopKBefore(args.largest, prev_value, prev, v, a)) continue;
      if (best < 0 || TopKBefore(args.largest, v, a, best_value, best)) {
        best = a;
        best_value = v;
      }
    }
    values[out + r * args.inner] = best_value;
    indices[out + r * args.inner] = best;
    prev = best;
    prev_value = best_value;
  }
}

constexpr int kMaxPoolRank = 3;

// One output element per call; spatial rank <= kMaxPoolRank.
struct PoolArgs {
  bool max = true;
  bool count_include_pad = false;
  int rank = 2;
  int64_t outputs = 0;
  int64_t in[kMaxPoolRank] = {1, 1, 1};
  int64_t out[kMaxPoolRank] = {1, 1, 1};
  int64_t kernel[kMaxPoolRank] = {1, 1, 1};
  int64_t stride[kMaxPoolRank] = {1, 1, 1};
  int64_t dilation[kMaxPoolRank] = {1, 1, 1};
  int64_t pad_begin[kMaxPoolRank] = {0, 0, 0};
  int64_t pad_end[kMaxPoolRank] = {0, 0, 0};
};

BRAID_HD void PoolElement(const PoolArgs& args, int64_t j, const float* x, float* y) {
  int64_t out_size = 1, in_size = 1, kernel_size = 1;
  for (int d = 0; d < args.rank; ++d) {
    out_size *= args.out[d];
    in_size *= args.in[d];
    kernel_size *= args.kernel[d];
  }
  const int64_t plane = j / out_size;
  int64_t rest = j % out_size;
  int64_t pos[kMaxPoolRank];
  for (int d = args.rank - 1; d >= 0; --d) {
    pos[d] = rest % args.out[d];
    rest /= args.out[d];
  }
  const float* xp = x + plane * in_size;
  float best = -INFINITY;
  float sum = 0.0f;
  int64_t inside_count = 0, padded_count = 0;
  for (int64_t kk = 0; kk < kernel_size; ++kk) {
    int64_t kflat = kk;
    int64_t k[kMaxPoolRank];
    for (int d = args.rank - 1; d >= 0; --d) {
      k[d] = kflat % args.kernel[d];
      kflat /= args.kernel[d];
    }
    int64_t offset = 0;
    bool inside = true, in_padded = true;
    for (int d = 0; d < args.rank; ++d) {
      const int64_t i = pos[d] * args.stride[d] - args.pad_begin[d] + k[d] * args.dilation[d];
      inside = inside && i >= 0 && i < args.in[d];
      in_padded = in_padded && i < args.in[d] + args.pad_end[d];
      offset = offset * args.in[d] + i;
    }
    if (in_padded) ++padded_count;
    if (!inside) continue;
    ++inside_count;
    const float v = xp[offset];
    if (v > best || v != v) best = (best != best) ? best : v;
    sum += v;
  }
  if (args.max) {
    y[j] = best;
  } else {
    const int64_t divisor = args.count_include_pad ? padded_count : inside_count;
    y[j] = sum / static_cast<float>(divisor);
  }
}

// LayerNormalization over rows of `inner` elements; scale / bias broadcast
// through index (operand 0 scale, 1 bias) over the normalized dims, from a
// base of (row % groups) * group_affine_stride: 0 for LayerNormalization;
// InstanceNormalization and GroupNormalization normalize one (n, group)
// plane per row and take the group's scale / bias.
struct LayerNormArgs {
  int64_t rows = 0;
  int64_t inner = 1;
  float epsilon = 1e-5f;
  bool has_bias = false;
  StridedIndex<2> index;
  int64_t groups = 1;
  int64_t group_affine_stride = 0;
};

// Thread `tid` of `threads`: sum of x (pass 0) or of (x - mean)^2 (pass 1)
// over its strided slice of the row.
BRAID_HD float LayerNormPartial(const LayerNormArgs& args, const float* row, int tid,
                                int threads, int pass, float mean) {
  float acc = 0.0f;
  for (int64_t i = tid; i < args.inner; i += threads) {
    const float v = pass == 0 ? row[i] : (row[i] - mean) * (row[i] - mean);
    acc += v;
  }
  return acc;
}

BRAID_HD void LayerNormElement(const LayerNormArgs& args, int64_t row, int64_t i,
                               const float* x, const float* scale, const float* bias,
                               float mean, float inv_std, float* y) {
  int64_t at[2];
  args.index.Offsets(i, at);
  const int64_t base = (row % args.groups) * args.group_affine_stride;
  const int64_t e = row * args.inner + i;
  float v = (x[e] - mean) * inv_std * scale[base + at[0]];
  if (args.has_bias) v += bias[base + at[1]];
  y[e] = v;
}

// Einsum (f32): one thread per output element sums, in double, the product
// of the operands' elements over every combination of the summed labels,
// walked in label order with the last label fastest: the order in which
// kernels/reference/einsum.cc adds them, so the double sums agree bit for
// bit. Output element i is row-major over out_dims (the output's labels);
// operand k's offset is sum over labels of index * stride (0 where it
// broadcasts or lacks the label; a repeated label's strides added).
constexpr int kMaxEinsumOperands = 4;
constexpr int kMaxEinsumLabels = 16;
struct EinsumArgs {
  int64_t elements = 0;  // output elements
  int num_inputs = 0;
  int out_rank = 0;  // output axes
  int sum_rank = 0;  // summed labels, in label order
  int64_t sum_steps = 1;  // product of sum_dims
  int64_t out_dims[kMaxEinsumLabels] = {};
  int64_t out_strides[kMaxEinsumOperands][kMaxEinsumLabels] = {};
  int64_t sum_dims[kMaxEinsumLabels] = {};
  int64_t sum_strides[kMaxEinsumOperands][kMaxEinsumLabels] = {};
};
struct EinsumOperands {
  const float* x[kMaxEinsumOperands] = {};
};

BRAID_HD void EinsumElement(const EinsumArgs& a, int64_t i, const EinsumOperands& in, float* y) {
  int64_t offset[kMaxEinsumOperands] = {};
  int64_t rest = i;
  for (int d = a.out_rank - 1; d >= 0; --d) {
    const int64_t idx = rest % a.out_dims[d];
    rest /= a.out_dims[d];
    for (int k = 0; k < a.num_inputs; ++k) offset[k] += idx * a.out_strides[k][d];
  }
  int64_t index[kMaxEinsumLabels] = {};
  double acc = 0.0;
  for (int64_t step = 0; step < a.sum_steps; ++step) {
    double product = 1.0;
    for (int k = 0; k < a.num_inputs; ++k) product *= in.x[k][offset[k]];
    acc += product;
    for (int d = a.sum_rank - 1; d >= 0; --d) {
      if (++index[d] < a.sum_dims[d]) {
        for (int k = 0; k < a.num_inputs; ++k) offset[k] += a.sum_strides[k][d];
        break;
      }
      for (int k = 0; k < a.num_inputs; ++k) offset[k] -= a.sum_strides[k][d] * (a.sum_dims[d] - 1);
      index[d] = 0;
    }
  }
  y[i] = static_cast<float>(acc);
}

}  // namespace braid::dm

#endif  // BRAID_KERNELS_DEVICE_MATH_REDUCE_H_
