// Waiting to a deadline, on average on time, for the virtual GPU's timing
// shaping (padded kernels and copies).
//
//   const auto start = std::chrono::steady_clock::now();
//   RunTheRealKernel();
//   braid::WaitUntil(start + modelled_duration);  // returns about then
//
// A plain sleep_until overshoots by the timer wake-up latency: 16-29 us
// median on the 2-core build VM even with 1 ns timer slack, which made every
// padded vgpu copy (20-50 us modelled) read 40-80% long. WaitUntil aims the
// sleep early by this thread's running estimate of that latency for waits
// of about that length (short sleeps wake sooner than long ones), so the
// waits end on the deadline on average (some a little early, some late). It
// never spins: the vgpu's threads share the CPU stream's cores.
#ifndef BRAID_KERNELS_HOST_PRECISE_WAIT_H_
#define BRAID_KERNELS_HOST_PRECISE_WAIT_H_

#include <chrono>

namespace braid {

// The most a wait ends before its deadline (the estimate's cap).
inline constexpr double kWaitUntilMaxEarlyUs = 100;

void WaitUntil(std::chrono::steady_clock::time_point deadline);

}  // namespace braid

#endif  // BRAID_KERNELS_HOST_PRECISE_WAIT_H_
