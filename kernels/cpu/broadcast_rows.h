// The rows of a broadcast plan (kernels/params/broadcast.h) split across the
// threads for braid's own CPU kernels: each thread walks one contiguous range
// of rows with the plan's odometer, so a row costs no division however short
// it is.
//
//   ForEachRowThreaded(plan_, num_threads_, [&](int64_t out, const int64_t* in,
//                                               const int64_t* step, int64_t n) {...});
#ifndef BRAID_KERNELS_CPU_BROADCAST_ROWS_H_
#define BRAID_KERNELS_CPU_BROADCAST_ROWS_H_

#include <omp.h>

#include <algorithm>
#include <cstdint>

#include "kernels/host/omp_team.h"
#include "kernels/params/broadcast.h"

namespace braid {

template <typename Fn>
void ForEachRowThreaded(const BroadcastPlan& plan, int num_threads, const Fn& fn) {
  const int64_t rows = plan.rows();
  if (rows == 0) return;
  const int threads = ThreadsFor(plan.output_elements(), std::min<int64_t>(num_threads, rows));
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (int t = 0; t < threads; ++t)
    plan.ForEachRowIn(rows * t / threads, rows * (t + 1) / threads, fn);
}

}  // namespace braid

#endif  // BRAID_KERNELS_CPU_BROADCAST_ROWS_H_
