#include "kernels/cuda/launch_config.h"

#include <algorithm>

namespace braid::cuda {

LaunchConfig GridStrideLaunch(int64_t elements, unsigned threads) {
  threads = std::max(1u, threads);
  const int64_t needed = (std::max<int64_t>(elements, 1) + threads - 1) / threads;
  LaunchConfig c;
  c.threads = threads;
  c.blocks = static_cast<unsigned>(std::min<int64_t>(needed, kMaxBlocks));
  return c;
}

LaunchConfig RowLaunch(int64_t rows, int64_t row_length, unsigned max_threads) {
  unsigned threads = 32;
  while (threads < max_threads && threads < row_length) threads *= 2;
  LaunchConfig c;
  c.threads = std::min(threads, std::max(32u, max_threads));
  // gridDim.x allows 2^31 - 1 blocks; rows beyond that are looped over.
  c.blocks = static_cast<unsigned>(std::clamp<int64_t>(rows, 1, 2147483647));
  return c;
}

}  // namespace braid::cuda
