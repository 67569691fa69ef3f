// Core affinity for the engine's threads (EngineOptions::pin_threads): the
// thread that runs CPU stream 0 keeps its own cores and the worker threads
// (a vgpu's stream and copy threads, extra CPU streams) the others, so a
// handoff never wakes the CPU stream on a core whose cache holds none of its
// data, and the workers never take its core.
//
//   const braid::CoreSplit split = braid::SplitAllowedCores(/*caller_threads=*/1);
//   if (split.usable) {
//     RETURN_IF_ERROR(braid::PinCurrentThread(split.workers));  // on a worker
//     braid::ScopedThreadPin pin(split.caller);  // the caller, until scope end
//   }
#ifndef BRAID_RUNTIME_THREAD_PINNING_H_
#define BRAID_RUNTIME_THREAD_PINNING_H_

#include <sched.h>

#include <string>

#include "braid/types.h"

namespace braid {

struct CoreSplit {
  bool usable = false;  // false with fewer than two cores: nothing to pin
  cpu_set_t caller;     // the calling thread's cores
  cpu_set_t workers;    // the worker threads' cores
  std::string description;  // "cpu stream on cores 0, workers on 1"
};

// The cores this process may run on (its affinity mask), split: the first
// `caller_threads` (at least one) go to the calling thread, the rest to the
// workers; with no core left over, the caller keeps them all and the
// workers share the last.
CoreSplit SplitAllowedCores(int caller_threads);

// Binds the calling thread to `cores`.
Status PinCurrentThread(const cpu_set_t& cores);

// Binds the calling thread to `cores` for its lifetime, then gives the
// thread back the cores it had. Allocates nothing (Engine::Run uses it).
class ScopedThreadPin {
 public:
  explicit ScopedThreadPin(const cpu_set_t& cores);
  ~ScopedThreadPin();
  ScopedThreadPin(const ScopedThreadPin&) = delete;
  ScopedThreadPin& operator=(const ScopedThreadPin&) = delete;

 private:
  cpu_set_t previous_;
  bool restore_ = false;
};

}  // namespace braid

#endif  // BRAID_RUNTIME_THREAD_PINNING_H_
