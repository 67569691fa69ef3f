#include "kernels/host/omp_team.h"

#include <omp.h>

#include <algorithm>

namespace braid {

ScopedOmpThreads::ScopedOmpThreads(int num_threads) : previous_(omp_get_max_threads()) {
  // Never more than the OpenMP runtime will give (OMP_THREAD_LIMIT): oneDNN
  // splits work for omp_get_max_threads() threads and, given a smaller team,
  // leaves part of the output unwritten.
  omp_set_num_threads(std::clamp(num_threads, 1, std::max(1, omp_get_thread_limit())));
}

ScopedOmpThreads::~ScopedOmpThreads() { omp_set_num_threads(previous_); }

}  // namespace braid
