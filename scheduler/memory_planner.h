// Static memory planning: every intermediate tensor gets an offset into one
// arena such that tensors alive at the same step never overlap.
//
//   std::vector<braid::BufferRequest> requests = {{/*bytes=*/4096, /*first_step=*/0, /*last_step=*/2},
//                                                 {1024, 1, 3}};
//   braid::MemoryPlan plan = braid::PlanMemory(requests);
//   void* p = arena_base + plan.offsets[1];   // plan.arena_bytes sized the arena
//
// Greedy by size with best fit, as TFLite's ArenaPlanner and ONNX Runtime's
// memory patterns: requests are placed largest first; each goes into the
// smallest gap between already-placed requests whose lifetimes overlap its
// own, or after the last of them.
#ifndef BRAID_SCHEDULER_MEMORY_PLANNER_H_
#define BRAID_SCHEDULER_MEMORY_PLANNER_H_

#include <cstddef>
#include <span>
#include <vector>

namespace braid {

inline constexpr size_t kArenaAlignment = 64;

// A tensor alive from the step that writes it to the last step that reads
// it, both inclusive.
struct BufferRequest {
  size_t bytes = 0;
  int first_step = 0;
  int last_step = 0;
};

struct MemoryPlan {
  std::vector<size_t> offsets;  // per request, multiples of the alignment
  size_t arena_bytes = 0;       // the peak: the end of the furthest request
};

// `alignment` must be a power of two.
MemoryPlan PlanMemory(std::span<const BufferRequest> requests,
                      size_t alignment = kArenaAlignment);

}  // namespace braid

#endif  // BRAID_SCHEDULER_MEMORY_PLANNER_H_
