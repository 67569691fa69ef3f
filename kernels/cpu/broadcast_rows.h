// The rows of a broadcast plan (kernels/params/broadcast.h) split across the
// threads for braid's own CPU kernels: each thread takes an equal share of
// the output elements and walks its rows with the plan's odometer (a row
// costs no division however short it is); the rows at the ends of a share
// are cut, so one long row (same-shape operands) is split too.
//
//   ForEachRowThreaded(plan_, num_threads_, [&](int64_t out, const int64_t* in,
//                                               const int64_t* step, int64_t n) {...});
#ifndef BRAID_KERNELS_CPU_BROADCAST_ROWS_H_
#define BRAID_KERNELS_CPU_BROADCAST_ROWS_H_

#include <omp.h>

#include <algorithm>
#include <array>
#include <cstdint>

#include "kernels/host/omp_team.h"
#include "kernels/params/broadcast.h"

namespace braid {

template <typename Fn>
void ForEachRowThreaded(const BroadcastPlan& plan, int num_threads, const Fn& fn) {
  const int64_t elements = plan.output_elements();
  if (elements == 0) return;
  const int64_t row = elements / plan.rows();
  const int threads = ThreadsFor(elements, num_threads);
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (int t = 0; t < threads; ++t) {
    // Equal shares of elements, not of rows: a same-shape or scalar operand
    // collapses to a single row, which the threads then split.
    const int64_t first = elements * t / threads, end = elements * (t + 1) / threads;
    if (first >= end) continue;
    plan.ForEachRowIn(first / row, (end + row - 1) / row,
                      [&](int64_t out, const int64_t* in, const int64_t* step, int64_t n) {
                        const int64_t from = std::max(out, first);
                        const int64_t to = std::min(out + n, end);
                        if (from == out && to == out + n) return fn(out, in, step, n);
                        std::array<int64_t, kMaxBroadcastInputs> moved{};
                        for (int i = 0; i < plan.num_inputs(); ++i)
                          moved[static_cast<size_t>(i)] = in[i] + (from - out) * step[i];
                        fn(from, moved.data(), step, to - from);
                      });
  }
}

}  // namespace braid

#endif  // BRAID_KERNELS_CPU_BROADCAST_ROWS_H_
