#include "kernels/cpu/omp_team.h"

#include <omp.h>

namespace braid {

ScopedOmpThreads::ScopedOmpThreads(int num_threads) : previous_(omp_get_max_threads()) {
  omp_set_num_threads(num_threads > 0 ? num_threads : 1);
}

ScopedOmpThreads::~ScopedOmpThreads() { omp_set_num_threads(previous_); }

}  // namespace braid
