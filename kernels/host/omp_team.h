// The calling thread's OpenMP team size for a scope (oneDNN's OpenMP runtime
// and braid's CPU kernels read omp_get_max_threads()), given back at its end:
// Prepare tunes primitives for the count they run with, and a Run does not
// change the embedding program's OpenMP settings. And how many threads a
// loop of braid's own kernels over so many elements is worth.
//
//   braid::ScopedOmpThreads team(4);   // until the end of the scope
//   const int threads = braid::ThreadsFor(elements, num_threads);
#ifndef BRAID_KERNELS_HOST_OMP_TEAM_H_
#define BRAID_KERNELS_HOST_OMP_TEAM_H_

#include <algorithm>
#include <cstdint>

namespace braid {

// Below this many elements per thread a fork costs more than it saves.
inline constexpr int64_t kMinElementsPerThread = 16 * 1024;

// Threads for a loop over `elements`: one per kMinElementsPerThread, at
// least 1, at most `max_threads` (itself taken as at least 1).
inline int ThreadsFor(int64_t elements, int64_t max_threads) {
  return static_cast<int>(
      std::clamp<int64_t>(elements / kMinElementsPerThread, 1, std::max<int64_t>(max_threads, 1)));
}

class ScopedOmpThreads {
 public:
  explicit ScopedOmpThreads(int num_threads);  // < 1 counts as 1
  ~ScopedOmpThreads();
  ScopedOmpThreads(const ScopedOmpThreads&) = delete;
  ScopedOmpThreads& operator=(const ScopedOmpThreads&) = delete;

 private:
  int previous_;
};

}  // namespace braid

#endif  // BRAID_KERNELS_HOST_OMP_TEAM_H_
