#include "kernels/vgpu/streaming_copy.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

namespace braid {

void StreamingCopy(void* dst, const void* src, size_t bytes) {
#if defined(__x86_64__)
  auto* to = static_cast<char*>(dst);
  const auto* from = static_cast<const char*>(src);
  // Up to the first 16-byte boundary of the destination, then 16-byte
  // streaming stores (SSE2: every x86-64 CPU has them), then the tail.
  const size_t head =
      std::min(bytes, static_cast<size_t>(-reinterpret_cast<uintptr_t>(to) & 15));
  std::memcpy(to, from, head);
  size_t i = head;
  for (; i + 16 <= bytes; i += 16)
    _mm_stream_si128(reinterpret_cast<__m128i*>(to + i),
                     _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + i)));
  std::memcpy(to + i, from + i, bytes - i);
  // Streaming stores are weakly ordered: visible before the copy's event.
  _mm_sfence();
#else
  std::memcpy(dst, src, bytes);
#endif
}

}  // namespace braid
