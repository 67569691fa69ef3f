// QuantizeLinear's loop in braid's CPU kernel, vectorised: the same results
// as kernels/params/quantize.h's scalar loop, bit for bit (x / scale, round
// half to even, + zero point, NaN -> 0, saturate), with AVX-512 or AVX2
// lanes. The scalar loop calls nearbyintf per element (the build sets no
// -march, so it is a libm call): a QDQ model spent 45% of its time there.
//
//   braid::QuantizeLinearRange(braid::BestSimdIsa(), params, run_args, begin, end);
//
// kPortable (or DequantizeLinear) runs the scalar loop. The same for the
// same-shape com.microsoft.QLinearAdd (kernels/params/qlinear_add.h) and
// QLinearConcat's requantization (kernels/params/qlinear_concat.h).
#ifndef BRAID_KERNELS_CPU_QUANTIZE_CPU_H_
#define BRAID_KERNELS_CPU_QUANTIZE_CPU_H_

#include <cstdint>

#include "kernels/cpu/simd_isa.h"
#include "kernels/params/qlinear_add.h"
#include "kernels/params/qlinear_concat.h"
#include "kernels/params/quantize.h"
#include "kernels/params/table_lookup.h"

namespace braid {

// Elements [begin, end) of the op for `args`' buffers; `isa` must be
// supported on this CPU.
void QuantizeLinearRange(SimdIsa isa, const QuantizeLinearParams& p, const RunArgs& args,
                         int64_t begin, int64_t end);

// Elements [begin, end) of a same-shape QLinearAdd of `type` (u8 / i8)
// operands a and b into c, bit for bit QLinearAddElement.
void QLinearAddRange(SimdIsa isa, const QLinearAddScales& s, DataType type, const void* a,
                     const void* b, void* c, int64_t begin, int64_t end);

// n elements of a u8 / i8 tensor x requantized into y (QLinearConcat's
// inputs), bit for bit RequantizeElement.
void RequantizeRange(SimdIsa isa, const RequantizeScales& s, DataType type, const void* x,
                     void* y, int64_t n);

// y[i] = table[x[i]] for n bytes (RequantizeTable's map), 64 at a time with
// AVX-512 VBMI when `vbmi` (Avx512VbmiSupported()), else one by one.
void LookupBytes(bool vbmi, const uint8_t* table, const void* x, void* y, int64_t n);

}  // namespace braid

#endif  // BRAID_KERNELS_CPU_QUANTIZE_CPU_H_
