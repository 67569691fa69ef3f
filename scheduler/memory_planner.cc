#include "scheduler/memory_planner.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace braid {
namespace {

size_t AlignUp(size_t n, size_t alignment) {
  return (n + alignment - 1) & ~(alignment - 1);
}

bool LifetimesOverlap(const BufferRequest& a, const BufferRequest& b) {
  return a.first_step <= b.last_step && b.first_step <= a.last_step;
}

}  // namespace

MemoryPlan PlanMemory(std::span<const BufferRequest> requests, size_t alignment) {
  MemoryPlan plan;
  plan.offsets.assign(requests.size(), 0);

  // Largest first; ties by earlier first use, then index, so plans are
  // deterministic.
  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (requests[a].bytes != requests[b].bytes)
      return requests[a].bytes > requests[b].bytes;
    return requests[a].first_step < requests[b].first_step;
  });

  std::vector<size_t> placed;          // request indices, in placement order
  std::vector<size_t> overlapping;     // reused per request
  for (size_t index : order) {
    const BufferRequest& request = requests[index];
    if (request.bytes == 0) continue;  // nothing to place; offset 0 is valid
    overlapping.clear();
    for (size_t other : placed)
      if (LifetimesOverlap(request, requests[other])) overlapping.push_back(other);
    std::sort(overlapping.begin(), overlapping.end(), [&](size_t a, size_t b) {
      return plan.offsets[a] < plan.offsets[b];
    });

    // Walk the gaps between live neighbours in address order; keep the
    // smallest that fits.
    size_t best_offset = 0;
    size_t best_gap = std::numeric_limits<size_t>::max();
    size_t cursor = 0;  // first free aligned address after the neighbours so far
    for (size_t other : overlapping) {
      const size_t start = plan.offsets[other];
      if (start >= cursor) {
        const size_t gap = start - cursor;
        if (gap >= request.bytes && gap < best_gap) {
          best_gap = gap;
          best_offset = cursor;
        }
      }
      cursor = std::max(cursor, AlignUp(start + requests[other].bytes, alignment));
    }
    if (best_gap == std::numeric_limits<size_t>::max()) best_offset = cursor;
    plan.offsets[index] = best_offset;
    plan.arena_bytes = std::max(plan.arena_bytes, best_offset + request.bytes);
    placed.push_back(index);
  }
  plan.arena_bytes = AlignUp(plan.arena_bytes, alignment);
  return plan;
}

}  // namespace braid
