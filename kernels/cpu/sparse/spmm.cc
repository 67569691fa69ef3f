#include "kernels/cpu/sparse/spmm.h"

#include <omp.h>

#include <algorithm>

namespace braid {

bool SpmmCompacts(SimdIsa isa) { return isa == SimdIsa::kAvx512; }

SpmmFn SelectSpmm(SimdIsa isa, int row_block) {
  using namespace sparse_internal;
  const bool four = row_block == 4;
  switch (isa) {
#if defined(__x86_64__) || defined(__i386__)
    case SimdIsa::kAvx512: return four ? SpmmAvx512_4 : SpmmAvx512_1;
    case SimdIsa::kAvx2: return four ? SpmmAvx2_4 : SpmmAvx2_1;
#else
    case SimdIsa::kAvx512:
    case SimdIsa::kAvx2:
#endif
    case SimdIsa::kPortable: break;
  }
  return four ? SpmmPortable4 : SpmmPortable1;
}

void RunSpmm(SpmmFn fn, const SpmmArgs& a, int num_threads) {
  const int64_t block_rows = a.w->block_rows();
  if (block_rows == 0 || a.p == 0) return;
  // Column chunks whose slice of D (the columns W reads) stays near 256 KiB,
  // so all rows of a chunk reuse it from L2.
  constexpr int64_t kChunkFloats = 256 * 1024 / 4;
  int64_t chunk = kChunkFloats / std::max<int64_t>(1, a.w->used_col_count);
  chunk = std::max<int64_t>(64, chunk / 64 * 64);
  if (chunk >= a.p) chunk = a.p;
  const int64_t chunks = (a.p + chunk - 1) / chunk;
  const int threads = std::max(1, num_threads);
  // Enough tiles for dynamic scheduling to even out rows of unequal density.
  const int64_t want_tiles = threads == 1 ? chunks : int64_t{8} * threads;
  const int64_t groups =
      std::clamp<int64_t>((want_tiles + chunks - 1) / chunks, 1, block_rows);
  const int64_t tiles = groups * chunks;
  auto tile = [&](int64_t t) {
    const int64_t c = t / groups;
    const int64_t g = t % groups;
    const int64_t col_begin = c * chunk;
    const int64_t col_end = std::min(a.p, col_begin + chunk);
    fn(a, g * block_rows / groups, (g + 1) * block_rows / groups, col_begin,
       col_end);
  };
  if (threads == 1 || tiles == 1) {
    for (int64_t t = 0; t < tiles; ++t) tile(t);
    return;
  }
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (int64_t t = 0; t < tiles; ++t) tile(t);
}

namespace sparse_internal {

Clamp ClampOf(const Activation& activation) {
  Clamp c;
  switch (activation.kind) {
    case Activation::Kind::kNone: break;
    case Activation::Kind::kRelu: c.lo = 0.0f; break;
    case Activation::Kind::kClip:
      c.lo = activation.min;
      c.hi = activation.max;
      break;
    default: c.needs_scalar_pass = true;
  }
  return c;
}

}  // namespace sparse_internal
}  // namespace braid
