#include "kernels/vgpu/precise_wait.h"

#include <algorithm>
#include <thread>

namespace braid {

void WaitUntil(std::chrono::steady_clock::time_point deadline) {
  using Clock = std::chrono::steady_clock;
  using Micros = std::chrono::duration<double, std::micro>;
  // This thread's wake-up latency (how late a sleep returns), a running
  // average: one sleep aims that much before the deadline, so the waits end
  // on the deadline on average. No spinning or yielding after it: on a
  // 2-core machine that kept both cores busy and doubled the CPU stream's
  // run time.
  thread_local double wake_latency_us = 15;
  const double left_us = Micros(deadline - Clock::now()).count();
  if (left_us <= 0) return;
  const double early_us = std::min(wake_latency_us, left_us);
  const auto target = deadline - std::chrono::duration_cast<Clock::duration>(Micros(early_us));
  std::this_thread::sleep_until(target);
  const double late_us = Micros(Clock::now() - target).count();
  // A preempted sleep (milliseconds late) says little about the timer.
  wake_latency_us = std::clamp(
      0.875 * wake_latency_us + 0.125 * std::min(late_us, kWaitUntilMaxEarlyUs), 0.0,
      kWaitUntilMaxEarlyUs);
}

}  // namespace braid
