// Softmax, braid's own CPU kernel, for f32 rows that are contiguous in memory
// (the axis is innermost: opset >= 13's default last axis, and every opset <
// 13 model): per row the maximum, exp(x - max) stored with its sum, then a
// scale by 1 / sum, 16 (AVX-512) or 8 (AVX2) lanes at a time with the
// row's tail masked; rows split over the OpenMP threads. oneDNN 2.6's
// softmax (jit:avx512_core) took 94 us for vit_tiny's [3, 197, 197] on one
// Zen 4 core, and 70-165 us from one engine to the next inside the model;
// `braid_kernels_bench --benchmark_filter=Softmax` has both side by side.
// A strided axis (YOLOv8's DFL softmax over axis 1 of [1, 16, 4, 8400]:
// oneDNN 2.6 took 6.6 ms for it, half the model) goes through the same three
// passes with the inner positions side by side, 64 at a time, in scalar code
// the compiler vectorizes but for the exp. It declines (routinely: a
// specialized entry) a CPU without AVX2 + FMA; oneDNN's kernel takes those.
#include "kernels/cpu/softmax_cpu.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/cpu/onednn_kernels.h"
#include "kernels/cpu/vector_exp.h"
#include "kernels/params/softmax.h"

namespace braid {
namespace {

#if defined(__x86_64__) || defined(__i386__)

// The AVX-512 intrinsics' "undefined" seed vectors (GCC bug 105593; see
// vector_exp.h) warn where they inline, in the vector functions below.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

using vector_math::ExpNonPositiveAvx2;
using vector_math::ExpNonPositiveAvx512;

__attribute__((target("avx512f"))) void SoftmaxRowAvx512(const float* x, float* y, int64_t n) {
  const int64_t full = n / 16 * 16;
  const __mmask16 tail = static_cast<__mmask16>((1u << (n - full)) - 1u);
  const __m512 lowest = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  __m512 running_max = lowest;
  for (int64_t i = 0; i < full; i += 16) running_max = _mm512_max_ps(running_max, _mm512_loadu_ps(x + i));
  running_max = _mm512_max_ps(running_max, _mm512_mask_loadu_ps(lowest, tail, x + full));
  const __m512 row_max = _mm512_set1_ps(_mm512_reduce_max_ps(running_max));
  __m512 sum = _mm512_setzero_ps();
  for (int64_t i = 0; i < full; i += 16) {
    const __m512 e = ExpNonPositiveAvx512(_mm512_sub_ps(_mm512_loadu_ps(x + i), row_max));
    _mm512_storeu_ps(y + i, e);
    sum = _mm512_add_ps(sum, e);
  }
  if (tail != 0) {
    const __m512 e = ExpNonPositiveAvx512(
        _mm512_sub_ps(_mm512_maskz_loadu_ps(tail, x + full), row_max));
    _mm512_mask_storeu_ps(y + full, tail, e);
    sum = _mm512_mask_add_ps(sum, tail, sum, e);
  }
  const __m512 scale = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(sum));
  for (int64_t i = 0; i < full; i += 16)
    _mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_loadu_ps(y + i), scale));
  if (tail != 0)
    _mm512_mask_storeu_ps(y + full, tail, _mm512_mul_ps(_mm512_maskz_loadu_ps(tail, y + full), scale));
}

// The lane mask of the first `count` (< 8) lanes of an AVX2 register.
__attribute__((target("avx2"))) __m256i TailMask8(int64_t count) {
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count)), lanes);
}

__attribute__((target("avx2,fma"))) float HorizontalMax8(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_shuffle_ps(m, m, 1));
  return _mm_cvtss_f32(m);
}

__attribute__((target("avx2,fma"))) float HorizontalSum8(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
  return _mm_cvtss_f32(s);
}

__attribute__((target("avx2,fma"))) void SoftmaxRowAvx2(const float* x, float* y, int64_t n) {
  const int64_t full = n / 8 * 8;
  const __m256i tail = TailMask8(n - full);
  const bool has_tail = n > full;
  const __m256 lowest = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  __m256 running_max = lowest;
  for (int64_t i = 0; i < full; i += 8) running_max = _mm256_max_ps(running_max, _mm256_loadu_ps(x + i));
  if (has_tail)
    running_max = _mm256_max_ps(
        running_max, _mm256_blendv_ps(lowest, _mm256_maskload_ps(x + full, tail),
                                      _mm256_castsi256_ps(tail)));
  // A NaN can sit in any lane of running_max; the horizontal max may drop
  // it, but exp of the NaN element below makes the sum (so the row) NaN.
  const __m256 row_max = _mm256_set1_ps(HorizontalMax8(running_max));
  __m256 sum = _mm256_setzero_ps();
  for (int64_t i = 0; i < full; i += 8) {
    const __m256 e = ExpNonPositiveAvx2(_mm256_sub_ps(_mm256_loadu_ps(x + i), row_max));
    _mm256_storeu_ps(y + i, e);
    sum = _mm256_add_ps(sum, e);
  }
  if (has_tail) {
    const __m256 e = _mm256_and_ps(
        ExpNonPositiveAvx2(_mm256_sub_ps(_mm256_maskload_ps(x + full, tail), row_max)),
        _mm256_castsi256_ps(tail));
    _mm256_maskstore_ps(y + full, tail, e);
    sum = _mm256_add_ps(sum, e);
  }
  const __m256 scale = _mm256_set1_ps(1.0f / HorizontalSum8(sum));
  for (int64_t i = 0; i < full; i += 8)
    _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_loadu_ps(y + i), scale));
  if (has_tail)
    _mm256_maskstore_ps(y + full, tail, _mm256_mul_ps(_mm256_maskload_ps(y + full, tail), scale));
}

#pragma GCC diagnostic pop
#endif

// The same three passes in scalar code (SoftmaxRows' kPortable; the kernel
// declines such CPUs, oneDNN's is faster there).
void SoftmaxRowPortable(const float* x, float* y, int64_t n) {
  float row_max = -std::numeric_limits<float>::infinity();
  // A NaN is skipped here and makes the sum NaN below.
  for (int64_t i = 0; i < n; ++i) row_max = std::max(row_max, x[i]);
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    const float d = x[i] - row_max;
    y[i] = d < vector_math::kExpLowest ? 0.0f : std::exp(d);
    sum += y[i];
  }
  const float scale = 1.0f / sum;
  for (int64_t i = 0; i < n; ++i) y[i] *= scale;
}

// Softmax over `n` values `inner` apart, for `width` neighbouring positions.
void SoftmaxStridedBlock(const float* x, float* y, int64_t n, int64_t inner, int64_t width) {
  constexpr int64_t kBlock = 64;
  float row_max[kBlock], sum[kBlock];
  for (int64_t j = 0; j < width; ++j) {
    row_max[j] = -std::numeric_limits<float>::infinity();
    sum[j] = 0.0f;
  }
  for (int64_t k = 0; k < n; ++k)
    for (int64_t j = 0; j < width; ++j) row_max[j] = std::max(row_max[j], x[k * inner + j]);
  for (int64_t k = 0; k < n; ++k) {
    for (int64_t j = 0; j < width; ++j) {
      const float d = x[k * inner + j] - row_max[j];
      const float e = d < vector_math::kExpLowest ? 0.0f : std::exp(d);
      y[k * inner + j] = e;
      sum[j] += e;
    }
  }
  for (int64_t j = 0; j < width; ++j) sum[j] = 1.0f / sum[j];
  for (int64_t k = 0; k < n; ++k)
    for (int64_t j = 0; j < width; ++j) y[k * inner + j] *= sum[j];
}

using RowFunction = void (*)(const float* x, float* y, int64_t n);

RowFunction RowFor(SimdIsa isa) {
#if defined(__x86_64__) || defined(__i386__)
  if (isa == SimdIsa::kAvx512) return SoftmaxRowAvx512;
  if (isa == SimdIsa::kAvx2) return SoftmaxRowAvx2;
#endif
  (void)isa;
  return SoftmaxRowPortable;
}

class SoftmaxCpu final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(const SoftmaxParams p, ParseSoftmax(args));
    if (p.dtype != DataType::kF32)
      return Unimplemented(args.Where() + ": braid's CPU Softmax handles f32 only");
    isa_ = BestSimdIsa();
    if (isa_ == SimdIsa::kPortable)
      return Unimplemented(args.Where() + ": braid's CPU Softmax needs AVX2 + FMA or AVX-512");
    rows_ = p.outer;
    row_size_ = p.axis_size;
    inner_ = p.inner;
    num_threads_ = std::max(args.num_threads, 1);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    const auto* x = static_cast<const float*>(args.src[0]);
    auto* y = static_cast<float*>(args.dst[0]);
    if (inner_ == 1) {
      SoftmaxRows(isa_, x, y, rows_, row_size_, num_threads_);
      return Status::Ok();
    }
    constexpr int64_t kBlock = 64;
    const int64_t blocks = (inner_ + kBlock - 1) / kBlock;
    const int64_t tasks = rows_ * blocks;
    const int used = static_cast<int>(std::clamp<int64_t>(num_threads_, 1, tasks));
#pragma omp parallel for num_threads(used) schedule(static) if (used > 1)
    for (int64_t t = 0; t < tasks; ++t) {
      const int64_t r = t / blocks, j = (t % blocks) * kBlock;
      const int64_t offset = r * row_size_ * inner_ + j;
      SoftmaxStridedBlock(x + offset, y + offset, row_size_, inner_, std::min(kBlock, inner_ - j));
    }
    return Status::Ok();
  }

 private:
  SimdIsa isa_ = SimdIsa::kPortable;
  int64_t rows_ = 0;
  int64_t row_size_ = 0;
  int64_t inner_ = 1;
  int num_threads_ = 1;
};

}  // namespace

void SoftmaxRows(SimdIsa isa, const float* x, float* y, int64_t rows, int64_t n, int threads) {
  if (rows <= 0 || n <= 0) return;
  const RowFunction row = RowFor(isa);
  const int used = static_cast<int>(std::clamp<int64_t>(threads, 1, rows));
#pragma omp parallel for num_threads(used) schedule(static) if (used > 1)
  for (int64_t r = 0; r < rows; ++r) row(x + r * n, y + r * n, n);
}

std::unique_ptr<Kernel> CreateSoftmaxCpu() { return std::make_unique<SoftmaxCpu>(); }

}  // namespace braid
