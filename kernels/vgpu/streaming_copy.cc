#include "kernels/vgpu/shared_cache_copy.h"

#include <cstdint>
#include <cstring>

namespace braid {

void CopyToSharedCache(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  std::memcpy(dst, src, bytes);
#if defined(__x86_64__)
  // CLDEMOTE is encoded in the hint-NOP space (0F 1C /0): CPUs without it
  // execute a NOP, so no CPUID check is needed. Raw bytes keep older
  // assemblers happy; the address goes in rax.
  constexpr uintptr_t kLine = 64;
  const uintptr_t first = reinterpret_cast<uintptr_t>(dst) & ~(kLine - 1);
  const uintptr_t end = reinterpret_cast<uintptr_t>(dst) + bytes;
  for (uintptr_t line = first; line < end; line += kLine)
    asm volatile(".byte 0x0f, 0x1c, 0x00" : : "a"(line) : "memory");
#endif
}

}  // namespace braid
