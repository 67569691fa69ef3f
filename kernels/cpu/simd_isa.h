// The x86 vector instruction sets braid's own CPU kernels are written for,
// chosen at run time (the build sets no -march, so one binary runs on every
// x86-64; a function for a wider set carries __attribute__((target))).
//
//   const braid::SimdIsa isa = braid::BestSimdIsa();  // AVX-512, AVX2 or portable
//   if (isa == braid::SimdIsa::kAvx512) { /* the 16-lane path */ }
//
// Other architectures have only kPortable.
#ifndef BRAID_KERNELS_CPU_SIMD_ISA_H_
#define BRAID_KERNELS_CPU_SIMD_ISA_H_

namespace braid {

enum class SimdIsa { kPortable, kAvx2, kAvx512 };  // kAvx2: AVX2 + FMA
const char* SimdIsaName(SimdIsa isa);  // "portable", "avx2", "avx512"
// True when this CPU runs `isa` (portable always).
bool SimdIsaSupported(SimdIsa isa);
// The widest supported instruction set (__builtin_cpu_supports on x86).
SimdIsa BestSimdIsa();
// AVX-512 VBMI (byte permutes: a 256-entry byte table in four registers),
// beside the levels above; false off x86.
bool Avx512VbmiSupported();
// bfloat16 dot products (AVX512_BF16 or AMX-BF16), which oneDNN's bf16
// convolutions and matmuls use; without them precision bf16 runs slower
// kernels (emulated or reference), not faster ones. False off x86.
bool Bf16InstructionsSupported();

}  // namespace braid

#endif  // BRAID_KERNELS_CPU_SIMD_ISA_H_
