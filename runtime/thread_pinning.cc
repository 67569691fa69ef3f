#include "runtime/thread_pinning.h"

#include <pthread.h>

#include <algorithm>
#include <cstring>

namespace braid {

namespace {

std::string CoreList(const cpu_set_t& set) {
  std::string out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) out += (out.empty() ? "" : ", ") + std::to_string(c);
  return out;
}

}  // namespace

CoreSplit SplitAllowedCores(int caller_threads) {
  CoreSplit split;
  CPU_ZERO(&split.caller);
  CPU_ZERO(&split.workers);
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return split;
  const int count = CPU_COUNT(&allowed);
  if (count < 2) return split;
  // As many threads as cores (or more): the caller's team keeps them all and
  // the workers share the last one.
  const int caller = std::clamp(caller_threads, 1, count);
  int seen = 0, last = -1;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &allowed)) continue;
    last = c;
    CPU_SET(c, seen++ < caller ? &split.caller : &split.workers);
  }
  if (CPU_COUNT(&split.workers) == 0) CPU_SET(last, &split.workers);
  split.usable = true;
  split.description =
      "cpu stream on cores " + CoreList(split.caller) + ", workers on " + CoreList(split.workers);
  return split;
}

Status PinCurrentThread(const cpu_set_t& cores) {
  if (const int err = pthread_setaffinity_np(pthread_self(), sizeof cores, &cores); err != 0)
    return Internal(std::string("pinning a thread: pthread_setaffinity_np: ") +
                    std::strerror(err));
  return Status::Ok();
}

ScopedThreadPin::ScopedThreadPin(const cpu_set_t& cores) {
  CPU_ZERO(&previous_);
  // Best effort: a thread that cannot be pinned runs where it was.
  restore_ = pthread_getaffinity_np(pthread_self(), sizeof previous_, &previous_) == 0 &&
             PinCurrentThread(cores).ok();
}

ScopedThreadPin::~ScopedThreadPin() {
  if (restore_) (void)PinCurrentThread(previous_);
}

}  // namespace braid
