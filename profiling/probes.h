// Micro-probes of this host for the device profile's fine terms: the
// engine's cross-thread handoff latency, the rate at which the cpu stream
// reads data the vgpu's copy thread just handed over, the cost of taking
// back lines that thread holds, and the DRAM tier's bandwidth. What `braid
// calibrate` and bench/cost_model_check run after the op timings.
//
//   ASSIGN_OR_RETURN(braid::profiling::WakeLatency wake, braid::profiling::MeasureWakeLatency());
//   ASSIGN_OR_RETURN(braid::profiling::CopiedReadRates copied,
//                    braid::profiling::MeasureCopiedReadRates(wake.resume_factor));
//   std::string why_none;
//   double dram_gbps = braid::profiling::DramTierBandwidth(options, &why_none);
#ifndef BRAID_PROFILING_PROBES_H_
#define BRAID_PROFILING_PROBES_H_

#include <span>
#include <string>
#include <vector>

#include "graph/status.h"
#include "profiling/op_timer.h"

namespace braid::profiling {

// How long the engine's cross-thread handoffs take on this host (medians of
// `rounds`, microseconds): a worker stream (the vgpu's, its copy streams)
// blocked on an event until the calling thread signals it (`to_worker_us`),
// and the calling thread (the CPU stream) blocked on a worker stream's event
// (`to_caller_us`). The profile's DeviceSpec::sync_us of vgpu and cpu.
// `resume_factor`: the worker hands over two 100 KB vectors (written as the
// vgpu's copies write, just before its event); once woken, the calling
// thread adds the first to a vector of its own, then the second: the first
// add's median time over the second's (>= 1; both read handed-over, cold
// data, which the cost model already prices, so the ratio is the wake's
// alone: the cpu's DeviceSpec::resume_factor).
struct WakeLatency {
  double to_worker_us = 0;
  double to_caller_us = 0;
  double resume_factor = 1;
};
// `pin_threads`: the calling thread and the vgpu's pinned apart, as
// EngineOptions::pin_threads pins the engine's.
StatusOr<WakeLatency> MeasureWakeLatency(int rounds = 60, bool pin_threads = false);
// How fast the cpu stream reads an input the vgpu just handed over, in the
// engine (GB/s): chains of 200 KB ops, a vgpu one shaped to 300 us per
// kernel then one to three on the cpu (one thread), against the same chain
// all on the cpu; the rate that makes the cost model's copied-input stall
// (with `resume_factor`) match the cpu ops that read a copied input, in
// total; the median of `rounds` such rounds (one round's rate swung 10-16
// GB/s between runs). `pin_threads`: the engine runs pin their threads.
struct CopiedReadRates {
  double stream_gbps = 0;     // Adds: DeviceSpec::copied_read_gbps
  double window_gbps = 0;     // 3x3 depthwise convs, 64 x 28 x 28: copied_window_read_gbps
  double depthwise_gbps = 0;  // the same and 256 x 14 x 14: copied_depthwise_read_gbps
};
// The steps whose output lands on lines the copy thread still holds
// (ColdBytes::written_held_elsewhere) are left out: they pay for taking
// those lines back too (DeviceSpec::reclaim_gbps); an error if no other
// step remains.
StatusOr<CopiedReadRates> MeasureCopiedReadRates(double resume_factor, bool pin_threads = false,
                                                 int iterations = 20, int rounds = 5);
// One rate pair per round, for a caller that spreads its rounds over a
// longer session (the cost model check: one round after each plan it times,
// since a host can read 16 GB/s in one minute and 10 in the next).
StatusOr<std::vector<CopiedReadRates>> MeasureCopiedReadRounds(double resume_factor,
                                                               bool pin_threads, int iterations,
                                                               int rounds);
// Per rate, the median over the rounds.
CopiedReadRates MedianRates(std::span<const CopiedReadRates> rounds);

// How fast the cpu stream writes over bytes the vgpu's copy thread has
// just read on its own core (GB/s; DeviceSpec::reclaim_gbps): the lines are
// shared with that core until the write takes them back. Per round the
// calling thread adds two 200 KB vectors into a destination and into a
// second buffer, the vgpu's stream (a worker thread, pinned apart with
// `pin_threads`) copies one of the two out as its copies do, and the calling
// thread adds into the destination again: the median extra time when the
// copy read the destination, over the median when it read the other
// buffer. 0 when the extra is within 2% of the add (no stall to model).
StatusOr<double> MeasureReclaimRate(bool pin_threads = false, int rounds = 41);
// The rate from the probe's medians: `bytes` over the extra time of the add
// into the held buffer (GB/s), 0 when that extra is within 2% of the other.
double ReclaimRateGbps(double held_us, double apart_us, double bytes);

// The host's DRAM traffic bandwidth (GB/s): the better of two Adds
// over vectors of 2x `llc_bytes` (64 MB at least) in one engine run at
// `options.threads`, bytes read plus twice the bytes written (read for
// ownership, written back) over time.
StatusOr<double> MeasureDramBandwidth(const OpTimerOptions& options, double llc_bytes);
// The DRAM tier's bandwidth for CpuSpecFromTimings: MeasureDramBandwidth
// over this host's last-level cache when it is larger than the L2, else 0
// with `*why_none` saying why (the tier is optional: a failed probe is not
// an error).
double DramTierBandwidth(const OpTimerOptions& options, std::string* why_none);

// Median lateness of a padded wait as the vgpu's padding does it (WaitUntil
// on a worker thread with 1 ns timer slack; negative: early), microseconds:
// what a padded vgpu step reads beyond its model on this host, now.
double MeasurePaddingDelayUs();

}  // namespace braid::profiling

#endif  // BRAID_PROFILING_PROBES_H_
