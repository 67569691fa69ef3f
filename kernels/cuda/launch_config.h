// Launch-configuration arithmetic of the hand-written kernels: plain C++,
// shared by the .cu launches and the CPU emulation in tests/cuda.
//
//   LaunchConfig c = GridStrideLaunch(elements);
//   kernel<<<c.blocks, c.threads, 0, stream>>>(...);   // grid-stride loop
//   // thread t of block b handles i = b * threads + t, then i += blocks * threads
#ifndef BRAID_KERNELS_CUDA_LAUNCH_CONFIG_H_
#define BRAID_KERNELS_CUDA_LAUNCH_CONFIG_H_

#include <cstdint>

namespace braid::cuda {

struct LaunchConfig {
  unsigned blocks = 1;
  unsigned threads = 1;
};

inline constexpr unsigned kThreadsPerBlock = 256;
// Grid-stride loops need no more blocks than keep every SM busy; the cap
// keeps the grid far below the 2^31 - 1 limit of gridDim.x.
inline constexpr unsigned kMaxBlocks = 4096;

// One thread per element, capped to kMaxBlocks blocks (threads loop). Zero
// elements still give a valid 1x1 launch (the loop body never runs).
LaunchConfig GridStrideLaunch(int64_t elements, unsigned threads = kThreadsPerBlock);

// One block per row with a power-of-two thread count (block reductions):
// the smallest power of two >= row_length, clamped to [32, max_threads].
LaunchConfig RowLaunch(int64_t rows, int64_t row_length, unsigned max_threads = 256);

// Calls fn(i) in the order a grid-stride kernel would visit the indices on
// one thread after another: the CPU emulation of a launch.
template <typename Fn>
void EmulateGridStride(const LaunchConfig& c, int64_t elements, Fn&& fn) {
  const int64_t stride = static_cast<int64_t>(c.blocks) * c.threads;
  for (unsigned b = 0; b < c.blocks; ++b)
    for (unsigned t = 0; t < c.threads; ++t)
      for (int64_t i = static_cast<int64_t>(b) * c.threads + t; i < elements; i += stride)
        fn(i);
}

}  // namespace braid::cuda

#endif  // BRAID_KERNELS_CUDA_LAUNCH_CONFIG_H_
