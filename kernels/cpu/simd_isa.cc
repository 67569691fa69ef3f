#include "kernels/cpu/simd_isa.h"

namespace braid {

const char* SimdIsaName(SimdIsa isa) {
  switch (isa) {
    case SimdIsa::kPortable: return "portable";
    case SimdIsa::kAvx2: return "avx2";
    case SimdIsa::kAvx512: return "avx512";
  }
  return "?";
}

bool SimdIsaSupported(SimdIsa isa) {
  switch (isa) {
    case SimdIsa::kPortable: return true;
#if defined(__x86_64__) || defined(__i386__)
    case SimdIsa::kAvx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case SimdIsa::kAvx512: return __builtin_cpu_supports("avx512f");
#else
    case SimdIsa::kAvx2:
    case SimdIsa::kAvx512: return false;
#endif
  }
  return false;
}

SimdIsa BestSimdIsa() {
  if (SimdIsaSupported(SimdIsa::kAvx512)) return SimdIsa::kAvx512;
  if (SimdIsaSupported(SimdIsa::kAvx2)) return SimdIsa::kAvx2;
  return SimdIsa::kPortable;
}

bool Avx512VbmiSupported() {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512bw");
#else
  return false;
#endif
}

bool Bf16InstructionsSupported() {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_cpu_supports("avx512bf16") || __builtin_cpu_supports("amx-bf16");
#else
  return false;
#endif
}

}  // namespace braid
