#include "kernels/host/precise_wait.h"

#include <algorithm>
#include <thread>

namespace braid {

void WaitUntil(std::chrono::steady_clock::time_point deadline) {
  using Clock = std::chrono::steady_clock;
  using Micros = std::chrono::duration<double, std::micro>;
  // This thread's wake-up latency (how late a sleep returns), a running
  // average per wait length: one sleep aims that much before the deadline,
  // so the waits end on the deadline on average. Short sleeps wake sooner
  // than long ones (a vCPU idle for longer halts): one estimate for all made
  // 20-50 us waits after 500 us ones end 10-40 us early. No spinning or
  // yielding after it: on a 2-core machine that kept both cores busy and
  // doubled the CPU stream's run time.
  constexpr int kLengths = 6;  // waits < 16, 32, 64, 128, 256 us, and longer
  thread_local double wake_latency_us[kLengths] = {5, 10, 15, 15, 15, 15};
  const double left_us = Micros(deadline - Clock::now()).count();
  if (left_us <= 0) return;
  int length = 0;
  while (length + 1 < kLengths && left_us >= 16.0 * (1 << length)) ++length;
  double& estimate = wake_latency_us[length];
  const double early_us = std::min(estimate, left_us);
  const auto target = deadline - std::chrono::duration_cast<Clock::duration>(Micros(early_us));
  std::this_thread::sleep_until(target);
  const double late_us = Micros(Clock::now() - target).count();
  // A preempted sleep (milliseconds late) says little about the timer.
  estimate = std::clamp(0.875 * estimate + 0.125 * std::min(late_us, kWaitUntilMaxEarlyUs), 0.0,
                        kWaitUntilMaxEarlyUs);
}

}  // namespace braid
