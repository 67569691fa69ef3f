// Long-run stability of concurrent Sessions on mixed CPU + vgpu plans
// (issue 32 item 4): several Sessions, each on its own thread, run one model
// with its own policy (random-K plans, sparoa) and online adaptation on; a
// controller thread samples live heap, RSS and the thread count and can force
// every vgpu off and back on midway. Shared by bench/stability_bench.cc (10^4
// runs) and tests/runtime/stability_test.cc (a few hundred).
//
//   braid::StabilityOptions options;
//   options.runs = 10000;                 // in all, split over the sessions
//   options.fail_at = 0.4;                // every vgpu forced off at 40% ...
//   options.back_at = 0.6;                // ... and back on at 60%
//   braid::StatusOr<braid::StabilityReport> r = braid::RunStability(options);
//   // r->sessions[k].differing == 0: every output bit-identical to the first
//
// The vgpu is a virtual device (CPU kernels on their own threads): nothing
// here is a GPU measurement.
#ifndef BRAID_BENCH_STABILITY_H_
#define BRAID_BENCH_STABILITY_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "braid/types.h"

namespace braid {

class Graph;       // graph/ir.h
class Session;     // braid/braid.h
class VgpuDevice;  // kernels/vgpu/vgpu_device.h

struct StabilityOptions {
  std::string model = "builtin:tiny_cnn";
  int64_t batch = 2;
  int64_t image = 32;  // input height = width; 0 keeps the model's
  int sessions = 4;    // each on its own thread
  int64_t runs = 10000;  // in all, split evenly over the sessions
  // Session k plans with policies[k % size] on {cpu, vgpu}.
  std::vector<std::string> policies = {"random-1", "random-2", "random-3", "sparoa"};
  bool adapt = true;  // SessionOptions::adapt, on the session's derived profile
  // Fractions of each session's runs after which every vgpu is forced off,
  // then on again (fail_at < 0: never). The sessions wait for each other at
  // these points; the vgpus go off just after they go on, so some fail in
  // the middle of a Run, and come back on before they go on.
  double fail_at = -1;
  double back_at = -1;
  int probe_runs = 20;  // SessionInternals::lost_device_probe_runs
  int samples = 40;     // heap / RSS / thread samples over the run
  uint32_t seed = 1;    // the inputs
};

struct StabilitySample {
  int64_t runs_done = 0;
  size_t heap_bytes = 0;  // live heap (mallinfo2 arena + mmap, or the sanitizer's count)
  size_t rss_bytes = 0;   // /proc/self/statm
  int threads = 0;        // entries of /proc/self/task
};

struct StabilitySessionReport {
  std::string policy;
  int64_t runs = 0;
  int64_t ok_runs = 0;
  // Runs whose Status was not OK, by Status::ToString().
  std::map<std::string, int64_t> failures;
  int64_t identical = 0;     // bit-identical to the session's first output
  int64_t cpu_fallback = 0;  // else bit-identical to the all-CPU plan's output
  int64_t differing = 0;     // neither
  double max_abs_diff = 0;   // of the differing runs, against the first output
  int64_t outage_runs = 0;   // Runs that started with the vgpu forced off
  int64_t lost_notices = 0;      // "device 'vgpu' became unavailable"
  int64_t restored_notices = 0;  // "device 'vgpu' answers again"
  int64_t adaptation_decisions = 0;  // adaptation's notices: re-planned or kept
  int64_t adaptation_replans = 0;    // of which "re-planned (...)": a new plan
  int64_t notices = 0;
  bool last_identical = false;   // the last Run's output is the first's
  bool ends_on_vgpu = false;     // the final plan places work on the vgpu
};

struct StabilityReport {
  std::vector<StabilitySessionReport> sessions;
  std::vector<StabilitySample> samples;  // during the runs, in order
  // With no Run in flight: before the runs, at each failure phase's end
  // (before the vgpus go off, before they come back), after the runs.
  std::vector<StabilitySample> quiet_samples;
  int threads_before = 0;  // before the sessions opened
  int threads_after = 0;   // after they closed and their threads joined
  size_t rss_trimmed_bytes = 0;  // RSS after the runs and malloc_trim(0)
  double seconds = 0;      // the runs' wall time
  bool heap_from_sanitizer = false;
};

// Opens the sessions, runs them, closes them. Errors: a bad option, a model
// that does not load, a session that does not open or whose first Run fails.
StatusOr<StabilityReport> RunStability(const StabilityOptions& options);

// One of the harness's sessions: `graph` on {cpu, vgpu} with `policy`, one
// thread, options.adapt, lost devices probed every options.probe_runs Runs;
// `vgpu` (owned by the session) is kept so a caller can force it off.
struct StabilitySession {
  std::unique_ptr<Session> session;
  VgpuDevice* vgpu = nullptr;
};
StatusOr<StabilitySession> OpenStabilitySession(const Graph& graph, const StabilityOptions& options,
                                                const std::string& policy);

// Live heap bytes of the process: the sanitizer allocator's count under
// ASan / TSan, else glibc's mallinfo2 (in-use bytes of every arena plus
// mmap()ed blocks).
size_t LiveHeapBytes(bool* from_sanitizer = nullptr);
size_t ResidentBytes();  // /proc/self/statm
int ThreadCount();       // /proc/self/task

}  // namespace braid

#endif  // BRAID_BENCH_STABILITY_H_
