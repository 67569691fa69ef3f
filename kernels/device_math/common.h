// Shared pieces of the hand-written CUDA kernels' per-element work. Everything
// here is __host__ __device__ (BRAID_HD) and free of CUDA headers, so
// tests/cuda runs the same functions on the CPU over the emulated grid, and
// braid's own CPU kernels run the same math where it fits them (Einsum) instead
// of a copy. Outside kernels/cuda so the CPU backend does not reach into it.
//
//   dm::StridedIndex walk = ...;            // filled on the host at Prepare
//   int64_t src_offset = walk.Offset(i);    // per output element i
#ifndef BRAID_KERNELS_DEVICE_MATH_COMMON_H_
#define BRAID_KERNELS_DEVICE_MATH_COMMON_H_

#include <math.h>
#include <stdint.h>

#if defined(__CUDACC__)
#define BRAID_HD __host__ __device__ __forceinline__
#else
#define BRAID_HD inline
#endif

namespace braid::dm {

// Rank limit of the strided walks (after collapsing adjacent axes).
constexpr int kMaxRank = 8;

// Output element i (row-major over dims) reads offset + sum idx[a] * strides[a]
// (one stride set per operand; stride 0 repeats).
template <int kOperands>
struct StridedIndex {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t strides[kOperands][kMaxRank] = {};
  int64_t offset[kOperands] = {};

  BRAID_HD void Offsets(int64_t i, int64_t* out) const {
    for (int k = 0; k < kOperands; ++k) out[k] = offset[k];
    for (int a = rank - 1; a >= 0; --a) {
      const int64_t idx = i % dims[a];
      i /= dims[a];
      for (int k = 0; k < kOperands; ++k) out[k] += idx * strides[k][a];
    }
  }
  BRAID_HD int64_t Offset(int64_t i) const {
    int64_t out[kOperands];
    Offsets(i, out);
    return out[0];
  }
};

// The fused activation (kernels/params/activation.h), device side. `kind`
// uses braid::Activation::Kind's numbering.
struct ActivationArgs {
  int kind = 0;  // 0 none, 1 relu, 2 clip, 3 hardswish, 4 sigmoid, 5 silu,
                 // 6 hardsigmoid, 7 leakyrelu, 8 gelu (alpha 1: tanh form)
  float alpha = 0, beta = 0, min = -INFINITY, max = INFINITY;
};

BRAID_HD float ApplyActivation(const ActivationArgs& a, float x) {
  switch (a.kind) {
    // fmaxf / fminf drop a NaN operand; NaN propagates as in ONNX Runtime.
    case 1: return x > 0.0f || x != x ? x : 0.0f;
    case 2: return x != x ? x : fminf(fmaxf(x, a.min), a.max);
    case 3: return x * fmaxf(0.0f, fminf(1.0f, x / 6.0f + 0.5f));
    case 4: return 1.0f / (1.0f + expf(-x));
    case 5: return x / (1.0f + expf(-x));
    case 6: return x != x ? x : fmaxf(0.0f, fminf(1.0f, a.alpha * x + a.beta));
    case 7: return x >= 0.0f ? x : a.alpha * x;
    case 8:
      if (a.alpha == 0.0f) return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
      return 0.5f * x * (1.0f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x)));
    default: return x;
  }
}

}  // namespace braid::dm

#endif  // BRAID_KERNELS_DEVICE_MATH_COMMON_H_
