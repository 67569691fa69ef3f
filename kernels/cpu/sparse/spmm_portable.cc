// Portable SpMM: plain C++ over fixed 16-column tiles that GCC/Clang
// vectorise for the target (SSE on x86, NEON on aarch64). The reference for
// the x86 kernels' structure: per block row, per column tile, accumulate
// every block's weights times the D row it names, then bias + activation.
#include <algorithm>

#include "kernels/cpu/sparse/spmm.h"

namespace braid::sparse_internal {
namespace {

constexpr int kTile = 16;

template <int R>
void Spmm(const SpmmArgs& a, int64_t rb0, int64_t rb1, int64_t c0,
          int64_t c1) {
  const SparseMatrix& w = *a.w;
  const Clamp clamp = ClampOf(*a.activation);
  const int32_t* ptr = a.RowPtr();
  const int32_t* offs = a.Offsets();
  const float* vals = a.Values();
  for (int64_t rb = rb0; rb < rb1; ++rb) {
    const int64_t r0 = rb * R;
    const int rows_here = static_cast<int>(std::min<int64_t>(R, w.rows - r0));
    float bias[R];
    for (int r = 0; r < R; ++r)
      bias[r] = a.bias != nullptr && r < rows_here ? a.bias[r0 + r] : 0.0f;
    for (int64_t c = c0; c < c1; c += kTile) {
      const int64_t n = std::min<int64_t>(kTile, c1 - c);
      float acc[R][kTile];
      for (int r = 0; r < R; ++r)
        for (int t = 0; t < kTile; ++t) acc[r][t] = bias[r];
      if (n == kTile) {
        for (int32_t j = ptr[rb]; j < ptr[rb + 1]; ++j) {
          const float* d = a.d + offs[j] + c;
          for (int r = 0; r < R; ++r) {
            const float v = vals[j * R + r];
            for (int t = 0; t < kTile; ++t) acc[r][t] += v * d[t];
          }
        }
      } else {
        for (int32_t j = ptr[rb]; j < ptr[rb + 1]; ++j) {
          const float* d = a.d + offs[j] + c;
          for (int r = 0; r < R; ++r) {
            const float v = vals[j * R + r];
            for (int64_t t = 0; t < n; ++t) acc[r][t] += v * d[t];
          }
        }
      }
      for (int r = 0; r < rows_here; ++r) {
        float* out = a.c + (r0 + r) * a.ldc + c;
        for (int64_t t = 0; t < n; ++t)
          out[t] = std::min(std::max(acc[r][t], clamp.lo), clamp.hi);
      }
    }
    if (clamp.needs_scalar_pass)
      for (int r = 0; r < rows_here; ++r)
        a.activation->ApplyInPlace(a.c + (r0 + r) * a.ldc + c0, c1 - c0);
  }
}

}  // namespace

void SpmmPortable1(const SpmmArgs& a, int64_t rb0, int64_t rb1, int64_t c0,
                   int64_t c1) {
  Spmm<1>(a, rb0, rb1, c0, c1);
}
void SpmmPortable4(const SpmmArgs& a, int64_t rb0, int64_t rb1, int64_t c0,
                   int64_t c1) {
  Spmm<4>(a, rb0, rb1, c0, c1);
}

}  // namespace braid::sparse_internal
