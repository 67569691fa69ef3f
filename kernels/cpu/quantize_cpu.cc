// QuantizeLinear / DequantizeLinear (plain layout), braid's CPU kernel: the
// loops of kernels/params/quantize.h over element ranges split across threads,
// QuantizeLinear's vectorised (quantize_cpu.h). QDQ models carry one of these
// on every activation, so they are on the hot path of every quantized model.
// And com.microsoft.QLinearAdd without broadcast (a residual add between
// quantized convs), in either layout, over threads; QLinearConcat's
// requantization loop (its kernel is Concat's, kernels/cpu/concat_cpu.cc).
#include "kernels/cpu/quantize_cpu.h"

#include <omp.h>

#include <algorithm>
#include <limits>
#include <type_traits>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "kernels/cpu/onednn_kernels.h"
#include "kernels/host/omp_team.h"
#include "kernels/params/qlinear_add.h"
#include "kernels/params/qlinear_concat.h"

namespace braid {
namespace {

#if defined(__x86_64__) || defined(__i386__)

// The AVX-512 intrinsics' "undefined" seed vectors warn where they inline
// (GCC bug 105593; see vector_exp.h).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

// 16 lanes: q = x / s rounded half to even (roundscale with the nearest mode:
// what nearbyint does in the default rounding mode), + zp, NaN -> 0, clamped.
__attribute__((target("avx512f"))) inline __m512i QuantizeLanesAvx512(__m512 x, __m512 s,
                                                                      __m512 zp, __m512 lo,
                                                                      __m512 hi) {
  __m512 v = _mm512_add_ps(
      _mm512_roundscale_ps(_mm512_div_ps(x, s), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), zp);
  v = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v, v, _CMP_ORD_Q), v);  // NaN -> 0
  return _mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(v, lo), hi));
}

// One run of elements sharing scale s and zero point zp, narrowed to Q.
template <typename Q>
__attribute__((target("avx512f"))) void QuantizeRunAvx512(const float* x, float s, float zp, Q* y,
                                                          int64_t n) {
  const __m512 vs = _mm512_set1_ps(s), vzp = _mm512_set1_ps(zp);
  const __m512 lo = _mm512_set1_ps(static_cast<float>(std::numeric_limits<Q>::min()));
  const __m512 hi = _mm512_set1_ps(static_cast<float>(std::numeric_limits<Q>::max()));
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i),
                     _mm512_cvtepi32_epi8(QuantizeLanesAvx512(_mm512_loadu_ps(x + i), vs, vzp, lo, hi)));
  if (i < n) {
    const __mmask16 tail = static_cast<__mmask16>((1u << (n - i)) - 1u);
    _mm512_mask_cvtepi32_storeu_epi8(
        y + i, tail, QuantizeLanesAvx512(_mm512_maskz_loadu_ps(tail, x + i), vs, vzp, lo, hi));
  }
}

template <typename Q>
__attribute__((target("avx2"))) void QuantizeRunAvx2(const float* x, float s, float zp, Q* y,
                                                     int64_t n) {
  const __m256 vs = _mm256_set1_ps(s), vzp = _mm256_set1_ps(zp);
  const __m256 lo = _mm256_set1_ps(static_cast<float>(std::numeric_limits<Q>::min()));
  const __m256 hi = _mm256_set1_ps(static_cast<float>(std::numeric_limits<Q>::max()));
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 v = _mm256_add_ps(
        _mm256_round_ps(_mm256_div_ps(_mm256_loadu_ps(x + i), vs),
                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC),
        vzp);
    v = _mm256_and_ps(v, _mm256_cmp_ps(v, v, _CMP_ORD_Q));  // NaN -> 0
    alignas(32) int32_t lanes[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes),
                       _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(v, lo), hi)));
    for (int k = 0; k < 8; ++k) y[i + k] = static_cast<Q>(lanes[k]);
  }
  // The tail: the scalar loop, this run's scale and zero point.
  QuantizeLinearParams run;
  run.has_zero_point = true;
  const Q z = static_cast<Q>(zp);
  quantize_internal::Quantize(run, x + i, &s, &z, y + i, 0, n - i);
}
// QLinearAdd over 16 / 8 lanes: the scalar QLinearAddElement's operations in
// its order (two products, their sum, + c_zp; no FMA), rounded half to even
// and clamped, so the result is bit for bit the scalar one (tails run it).
// GCC would contract the intrinsics' multiply and add into an FMA under
// these targets (its default -ffp-contract=fast), which moves results that
// land near a rounding tie: contraction is off for these functions.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
#endif
struct QAddLanes512 {
  __m512 ra, rb, za, zb, zc, lo, hi;
};
struct QAddLanes256 {
  __m256 ra, rb, za, zb, zc, lo, hi;
};

template <typename Q>
__attribute__((target("avx512f"))) inline __m512 WidenAvx512(const Q* p) {
  const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  if constexpr (std::is_signed_v<Q>) return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(bytes));
  return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(bytes));
}

template <typename Q>
__attribute__((target("avx2"))) inline __m256 WidenAvx2(const Q* p) {
  const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  if constexpr (std::is_signed_v<Q>) return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(bytes));
  return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(bytes));
}

template <typename Q>
__attribute__((target("avx512f"))) void QLinearAddAvx512(const QLinearAddScales& s, const Q* a,
                                                         const Q* b, Q* c, int64_t n) {
  const QAddLanes512 k{_mm512_set1_ps(s.a_ratio), _mm512_set1_ps(s.b_ratio), _mm512_set1_ps(s.a_zp),
                       _mm512_set1_ps(s.b_zp), _mm512_set1_ps(s.c_zp),
                       _mm512_set1_ps(static_cast<float>(std::numeric_limits<Q>::min())),
                       _mm512_set1_ps(static_cast<float>(std::numeric_limits<Q>::max()))};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 ta = _mm512_mul_ps(_mm512_sub_ps(WidenAvx512(a + i), k.za), k.ra);
    const __m512 tb = _mm512_mul_ps(_mm512_sub_ps(WidenAvx512(b + i), k.zb), k.rb);
    const __m512 v = _mm512_roundscale_ps(_mm512_add_ps(_mm512_add_ps(ta, tb), k.zc),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(c + i),
                     _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(v, k.lo), k.hi))));
  }
  for (; i < n; ++i) c[i] = QLinearAddElement<Q>(s, a[i], b[i]);
}

template <typename Q>
__attribute__((target("avx2"))) void QLinearAddAvx2(const QLinearAddScales& s, const Q* a,
                                                    const Q* b, Q* c, int64_t n) {
  const QAddLanes256 k{_mm256_set1_ps(s.a_ratio), _mm256_set1_ps(s.b_ratio), _mm256_set1_ps(s.a_zp),
                       _mm256_set1_ps(s.b_zp), _mm256_set1_ps(s.c_zp),
                       _mm256_set1_ps(static_cast<float>(std::numeric_limits<Q>::min())),
                       _mm256_set1_ps(static_cast<float>(std::numeric_limits<Q>::max()))};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 ta = _mm256_mul_ps(_mm256_sub_ps(WidenAvx2(a + i), k.za), k.ra);
    const __m256 tb = _mm256_mul_ps(_mm256_sub_ps(WidenAvx2(b + i), k.zb), k.rb);
    const __m256 v = _mm256_round_ps(_mm256_add_ps(_mm256_add_ps(ta, tb), k.zc),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    alignas(32) int32_t out[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(out),
                       _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(v, k.lo), k.hi)));
    for (int j = 0; j < 8; ++j) c[i + j] = static_cast<Q>(out[j]);
  }
  for (; i < n; ++i) c[i] = QLinearAddElement<Q>(s, a[i], b[i]);
}

// QLinearConcat's requantization over 16 / 8 lanes: RequantizeElement's
// operations in its order (x - x_zp, * x_scale, / y_scale, round half to
// even, + y_zp, NaN -> 0, clamped), so bit for bit the scalar one.
template <typename Q>
__attribute__((target("avx512f"))) void RequantizeAvx512(const RequantizeScales& s, const Q* x,
                                                         Q* y, int64_t n) {
  const __m512 xs = _mm512_set1_ps(s.x_scale), xz = _mm512_set1_ps(s.x_zp);
  const __m512 ys = _mm512_set1_ps(s.y_scale), yz = _mm512_set1_ps(s.y_zp);
  const __m512 lo = _mm512_set1_ps(static_cast<float>(std::numeric_limits<Q>::min()));
  const __m512 hi = _mm512_set1_ps(static_cast<float>(std::numeric_limits<Q>::max()));
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 dequantized = _mm512_mul_ps(_mm512_sub_ps(WidenAvx512(x + i), xz), xs);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i),
                     _mm512_cvtepi32_epi8(QuantizeLanesAvx512(dequantized, ys, yz, lo, hi)));
  }
  for (; i < n; ++i) y[i] = RequantizeElement<Q>(s, x[i]);
}

template <typename Q>
__attribute__((target("avx2"))) void RequantizeAvx2(const RequantizeScales& s, const Q* x, Q* y,
                                                    int64_t n) {
  const __m256 xs = _mm256_set1_ps(s.x_scale), xz = _mm256_set1_ps(s.x_zp);
  const __m256 ys = _mm256_set1_ps(s.y_scale), yz = _mm256_set1_ps(s.y_zp);
  const __m256 lo = _mm256_set1_ps(static_cast<float>(std::numeric_limits<Q>::min()));
  const __m256 hi = _mm256_set1_ps(static_cast<float>(std::numeric_limits<Q>::max()));
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 dequantized = _mm256_mul_ps(_mm256_sub_ps(WidenAvx2(x + i), xz), xs);
    __m256 v = _mm256_add_ps(_mm256_round_ps(_mm256_div_ps(dequantized, ys),
                                             _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC),
                             yz);
    v = _mm256_and_ps(v, _mm256_cmp_ps(v, v, _CMP_ORD_Q));  // NaN -> 0
    alignas(32) int32_t out[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(out),
                       _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(v, lo), hi)));
    for (int j = 0; j < 8; ++j) y[i + j] = static_cast<Q>(out[j]);
  }
  for (; i < n; ++i) y[i] = RequantizeElement<Q>(s, x[i]);
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif
#pragma GCC diagnostic pop

template <typename Q>
void QuantizeVector(SimdIsa isa, const QuantizeLinearParams& p, const float* x, const float* scale,
                    const Q* zero_point, Q* y, int64_t begin, int64_t end) {
  quantize_internal::ForEachRun(p, begin, end, [&](int64_t k, int64_t b, int64_t e) {
    const float zp = p.has_zero_point ? static_cast<float>(zero_point[k]) : 0.0f;
    if (isa == SimdIsa::kAvx512)
      QuantizeRunAvx512(x + b, scale[k], zp, y + b, e - b);
    else
      QuantizeRunAvx2(x + b, scale[k], zp, y + b, e - b);
  });
}

// y[i] = table[x[i]] over 64 bytes at a time: two vpermi2b give the
// table's lower and upper 128 entries for each byte's low 7 bits, its top bit
// picks one.
struct ByteTable512 {
  __m512i t0, t1, t2, t3;
};

__attribute__((target("avx512f,avx512bw,avx512vbmi"))) inline __m512i LookupLanes(
    const ByteTable512& t, __m512i idx) {
  return _mm512_mask_blend_epi8(_mm512_movepi8_mask(idx), _mm512_permutex2var_epi8(t.t0, idx, t.t1),
                                _mm512_permutex2var_epi8(t.t2, idx, t.t3));
}

__attribute__((target("avx512f,avx512bw,avx512vbmi"))) void LookupAvx512Vbmi(
    const uint8_t* table, const uint8_t* x, uint8_t* y, int64_t n) {
  const ByteTable512 t{_mm512_loadu_si512(table), _mm512_loadu_si512(table + 64),
                       _mm512_loadu_si512(table + 128), _mm512_loadu_si512(table + 192)};
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) _mm512_storeu_si512(y + i, LookupLanes(t, _mm512_loadu_si512(x + i)));
  if (i < n) {
    const __mmask64 tail = (~__mmask64{0}) >> (64 - (n - i));
    _mm512_mask_storeu_epi8(y + i, tail, LookupLanes(t, _mm512_maskz_loadu_epi8(tail, x + i)));
  }
}

#endif

// Elements [begin, end) of a same-shape QLinearAdd, vectorised where the CPU can.
template <typename Q>
void QLinearAddTyped(SimdIsa isa, const QLinearAddScales& s, const Q* a, const Q* b, Q* c,
                     int64_t begin, int64_t end) {
#if defined(__x86_64__) || defined(__i386__)
  if (isa == SimdIsa::kAvx512) return QLinearAddAvx512(s, a + begin, b + begin, c + begin, end - begin);
  if (isa == SimdIsa::kAvx2) return QLinearAddAvx2(s, a + begin, b + begin, c + begin, end - begin);
#endif
  (void)isa;
  for (int64_t i = begin; i < end; ++i) c[i] = QLinearAddElement<Q>(s, a[i], b[i]);
}

template <typename Q>
void RequantizeTyped(SimdIsa isa, const RequantizeScales& s, const Q* x, Q* y, int64_t n) {
#if defined(__x86_64__) || defined(__i386__)
  if (isa == SimdIsa::kAvx512) return RequantizeAvx512(s, x, y, n);
  if (isa == SimdIsa::kAvx2) return RequantizeAvx2(s, x, y, n);
#endif
  (void)isa;
  for (int64_t i = 0; i < n; ++i) y[i] = RequantizeElement<Q>(s, x[i]);
}

class QuantizeLinearCpu final : public Kernel {
 public:
  explicit QuantizeLinearCpu(bool quantize) : quantize_(quantize) {}

  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(p_, quantize_ ? ParseQuantizeLinear(args) : ParseDequantizeLinear(args));
    // Per tensor, every element is treated alike: any layout (the same on
    // input and output, which the runtime's channels-last pass ensures).
    if (p_.per_axis && (args.inputs[0].layout != TensorLayout::kPlain ||
                        args.outputs[0].layout != TensorLayout::kPlain))
      return Unimplemented(args.Where() + ": per-axis (de)quantization in plain layout only");
    if (args.inputs[0].layout != args.outputs[0].layout)
      return Unimplemented(args.Where() + ": input and output layouts differ");
    threads_ = ThreadsFor(p_.elements(), std::max(args.num_threads, 1));
    isa_ = BestSimdIsa();
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    const int64_t n = p_.elements();
#pragma omp parallel num_threads(threads_) if (threads_ > 1)
    {
      const int64_t team = omp_get_num_threads(), me = omp_get_thread_num();
      QuantizeLinearRange(isa_, p_, args, n * me / team, n * (me + 1) / team);
    }
    return Status::Ok();
  }

 private:
  bool quantize_;
  QuantizeLinearParams p_;
  int threads_ = 1;
  SimdIsa isa_ = SimdIsa::kPortable;
};

// Same-shape QLinearAdd: every element alike, so any layout (A, B and C in
// the same one); broadcasts decline to the reference (routine).
class QLinearAddCpu final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(p_, ParseQLinearAdd(args));
    if (!p_.same_shape)
      return Unimplemented(args.Where() + ": broadcast QLinearAdd runs on the reference kernel");
    const TensorLayout layout = args.outputs[0].layout;
    if (args.inputs[kQAddA].layout != layout || args.inputs[kQAddB].layout != layout)
      return Unimplemented(args.Where() + ": A, B and C in different layouts");
    threads_ = ThreadsFor(p_.elements, std::max(args.num_threads, 1));
    isa_ = BestSimdIsa();
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    const int64_t n = p_.elements;
    const QLinearAddScales s = p_.Scales(args);
#pragma omp parallel num_threads(threads_) if (threads_ > 1)
    {
      const int64_t team = omp_get_num_threads(), me = omp_get_thread_num();
      QLinearAddRange(isa_, s, p_.type, args.src[kQAddA], args.src[kQAddB], args.dst[0],
                      n * me / team, n * (me + 1) / team);
    }
    return Status::Ok();
  }

 private:
  QLinearAddParams p_;
  int threads_ = 1;
  SimdIsa isa_ = SimdIsa::kPortable;
};

// braid.TableLookup: LookupBytes over each thread's share, either layout
// (elementwise).
class TableLookupCpu final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(p_, ParseTableLookup(args));
    if (args.inputs[kTableLookupX].layout != args.outputs[0].layout)
      return Unimplemented(args.Where() + ": X and Y in different layouts");
    threads_ = ThreadsFor(p_.elements, std::max(args.num_threads, 1));
    vbmi_ = Avx512VbmiSupported();
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    const int64_t n = p_.elements;
    const auto* x = static_cast<const uint8_t*>(args.src[kTableLookupX]);
    const auto* table = static_cast<const uint8_t*>(args.src[kTableLookupTable]);
    auto* y = static_cast<uint8_t*>(args.dst[0]);
#pragma omp parallel num_threads(threads_) if (threads_ > 1)
    {
      const int64_t team = omp_get_num_threads(), me = omp_get_thread_num();
      const int64_t begin = n * me / team, end = n * (me + 1) / team;
      LookupBytes(vbmi_, table, x + begin, y + begin, end - begin);
    }
    return Status::Ok();
  }

 private:
  TableLookupParams p_;
  int threads_ = 1;
  bool vbmi_ = false;
};

}  // namespace

void QuantizeLinearRange(SimdIsa isa, const QuantizeLinearParams& p, const RunArgs& args,
                         int64_t begin, int64_t end) {
#if defined(__x86_64__) || defined(__i386__)
  if (p.quantize && isa != SimdIsa::kPortable) {
    const auto* x = static_cast<const float*>(args.src[0]);
    const auto* scale = static_cast<const float*>(args.src[1]);
    const void* zp = args.src.size() > 2 ? args.src[2] : nullptr;
    if (p.quantized == DataType::kI8)
      QuantizeVector(isa, p, x, scale, static_cast<const int8_t*>(zp),
                     static_cast<int8_t*>(args.dst[0]), begin, end);
    else
      QuantizeVector(isa, p, x, scale, static_cast<const uint8_t*>(zp),
                     static_cast<uint8_t*>(args.dst[0]), begin, end);
    return;
  }
#endif
  (void)isa;
  RunQuantizeLinear(p, args, begin, end);
}

std::unique_ptr<Kernel> CreateQuantizeLinearCpu() { return std::make_unique<QuantizeLinearCpu>(true); }
void QLinearAddRange(SimdIsa isa, const QLinearAddScales& s, DataType type, const void* a,
                     const void* b, void* c, int64_t begin, int64_t end) {
  if (type == DataType::kI8)
    QLinearAddTyped(isa, s, static_cast<const int8_t*>(a), static_cast<const int8_t*>(b),
                    static_cast<int8_t*>(c), begin, end);
  else
    QLinearAddTyped(isa, s, static_cast<const uint8_t*>(a), static_cast<const uint8_t*>(b),
                    static_cast<uint8_t*>(c), begin, end);
}

void RequantizeRange(SimdIsa isa, const RequantizeScales& s, DataType type, const void* x,
                     void* y, int64_t n) {
  if (type == DataType::kI8)
    RequantizeTyped(isa, s, static_cast<const int8_t*>(x), static_cast<int8_t*>(y), n);
  else
    RequantizeTyped(isa, s, static_cast<const uint8_t*>(x), static_cast<uint8_t*>(y), n);
}

void LookupBytes(bool vbmi, const uint8_t* table, const void* x, void* y, int64_t n) {
  const auto* in = static_cast<const uint8_t*>(x);
  auto* out = static_cast<uint8_t*>(y);
#if defined(__x86_64__) || defined(__i386__)
  if (vbmi) return LookupAvx512Vbmi(table, in, out, n);
#endif
  (void)vbmi;
  for (int64_t i = 0; i < n; ++i) out[i] = table[in[i]];
}

std::unique_ptr<Kernel> CreateQLinearAddCpu() { return std::make_unique<QLinearAddCpu>(); }
std::unique_ptr<Kernel> CreateTableLookupCpu() { return std::make_unique<TableLookupCpu>(); }
std::unique_ptr<Kernel> CreateDequantizeLinearCpu() {
  return std::make_unique<QuantizeLinearCpu>(false);
}

}  // namespace braid
