#include "bench/stability.h"

#include <dirent.h>
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <thread>

#include "graph/passes/passes.h"
#include "kernels/cpu/cpu_device.h"
#include "kernels/vgpu/vgpu_device.h"
#include "api/model_loader.h"
#include "api/session_open.h"
#include "runtime/session_internal.h"
#include "scheduler/policies.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define BRAID_STABILITY_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define BRAID_STABILITY_SANITIZER 1
#endif
#endif
#ifdef BRAID_STABILITY_SANITIZER
// The sanitizer runtime's counter (GCC does not install its header).
extern "C" size_t __sanitizer_get_current_allocated_bytes();
#endif

namespace braid {

size_t LiveHeapBytes(bool* from_sanitizer) {
#ifdef BRAID_STABILITY_SANITIZER
  // The sanitizers replace malloc: glibc's arenas see none of it.
  if (from_sanitizer) *from_sanitizer = true;
  return __sanitizer_get_current_allocated_bytes();
#else
  if (from_sanitizer) *from_sanitizer = false;
  // Arena chunks in use plus mmap()ed ones: glibc raises its mmap threshold
  // as large blocks are freed, so the same buffer moves from one to the other.
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
#endif
}

size_t ResidentBytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long size = 0, resident = 0;
  const int n = std::fscanf(f, "%lu %lu", &size, &resident);
  std::fclose(f);
  return n == 2 ? resident * static_cast<size_t>(sysconf(_SC_PAGESIZE)) : 0;
}

int ThreadCount() {
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return 0;
  int n = 0;
  while (const dirent* e = readdir(dir))
    if (e->d_name[0] != '.') ++n;
  closedir(dir);
  return n;
}

namespace {

// The model with its image input resized (models end in a global pool);
// the batch stays symbolic, bound by SetInput.
StatusOr<Graph> LoadModel(const StabilityOptions& options) {
  ASSIGN_OR_RETURN(Graph g, LoadGraphForExecution(options.model));
  if (options.image > 0) {
    for (ValueId in : g.inputs()) {
      Value& v = g.value(in);
      if (v.shape.size() != 4) continue;
      v.shape[2] = Dim(options.image);
      v.shape[3] = Dim(options.image);
    }
    for (Value& v : g.values())
      if (!v.constant && v.producer != kNoNode) v.has_shape = false;
    RETURN_IF_ERROR(InferShapes(g).WithPrefix(options.model + " at " +
                                              std::to_string(options.image) + "x" +
                                              std::to_string(options.image)));
  }
  return g;
}

}  // namespace

// One session on {cpu, vgpu} as Session::Open builds it (CPU and vgpu
// kernels, the derived profile, sparoa on host-vgpu), but with the vgpu in
// hand so the controller can force it off.
StatusOr<StabilitySession> OpenStabilitySession(const Graph& graph, const StabilityOptions& options,
                                                const std::string& policy) {
  auto registry = std::make_shared<KernelRegistry>();
  RegisterCpuKernels(*registry);
  RegisterVgpuKernels(*registry);
  std::vector<SessionDevice> devices(2);
  devices[0].device = CreateCpuDevice();
  std::unique_ptr<VgpuDevice> vgpu = CreateVgpuDevice();
  StabilitySession opened;
  opened.vgpu = vgpu.get();
  devices[1].device = std::move(vgpu);
  devices[1].threads = 1;
  SessionInternals internals;
  internals.profile = DerivedSessionProfile(BuiltinBackends(), devices);
  auto policies = std::make_shared<PolicyRegistry>();
  RETURN_IF_ERROR(RegisterPolicies(*policies, {{"sparoa.fallback_profile", "host-vgpu"}}));
  internals.policies = std::move(policies);
  internals.lost_device_probe_runs = options.probe_runs;
  SessionOptions so;
  so.num_threads = 1;  // several sessions share the cores
  so.devices = {"cpu", "vgpu"};
  so.policy = policy;
  so.adapt = options.adapt;
  ASSIGN_OR_RETURN(opened.session, CreateSession(Graph(graph), so, std::move(registry),
                                                 std::move(devices), std::move(internals)));
  return opened;
}

namespace {

struct Worker {
  StabilitySession opened;
  std::vector<float> input;
  std::vector<unsigned char> first;     // the first Run's outputs, bytes
  std::vector<unsigned char> cpu_only;  // the all-CPU plan's outputs
  std::vector<unsigned char> last;      // scratch for each Run's outputs
  StabilitySessionReport report;
};

Status SetInput(Session& session, const StabilityOptions& options, std::vector<float>& input,
                uint32_t seed) {
  const TensorInfo& info = session.inputs().at(0);
  std::vector<int64_t> dims = info.dims;
  int64_t n = 1;
  for (int64_t& d : dims) {
    if (d < 0) d = options.batch;
    n *= d;
  }
  if (input.empty()) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1, 1);
    input.resize(static_cast<size_t>(n));
    for (float& x : input) x = dist(rng);
  }
  return session.SetInput(info.name, Tensor::Borrow(info.dtype, dims, input.data()));
}

// Every output's bytes into `out` (sized once, then reused: no allocation).
Status ReadOutputs(const Session& session, std::vector<unsigned char>& out) {
  size_t at = 0;
  for (const TensorInfo& info : session.outputs()) {
    ASSIGN_OR_RETURN(Tensor t, session.GetOutput(info.name));
    if (out.size() < at + t.bytes()) out.resize(at + t.bytes());
    std::memcpy(out.data() + at, t.raw_data(), t.bytes());
    at += t.bytes();
  }
  out.resize(at);
  return Status::Ok();
}

double MaxAbsDiff(const std::vector<unsigned char>& a, const std::vector<unsigned char>& b) {
  if (a.size() != b.size()) return INFINITY;
  double m = 0;
  for (size_t i = 0; i + 4 <= a.size(); i += 4) {
    float x, y;
    std::memcpy(&x, &a[i], 4);
    std::memcpy(&y, &b[i], 4);
    m = std::max(m, std::fabs(static_cast<double>(x) - y));
  }
  return m;
}

size_t Count(const std::vector<std::string>& notices, const char* what) {
  return static_cast<size_t>(std::count_if(notices.begin(), notices.end(), [&](const auto& n) {
    return n.find(what) != std::string::npos;
  }));
}

}  // namespace

StatusOr<StabilityReport> RunStability(const StabilityOptions& options) {
  if (options.sessions < 1 || options.runs < options.sessions || options.policies.empty() ||
      options.batch < 1 || options.samples < 1)
    return InvalidArgument("stability: needs sessions >= 1, runs >= sessions, a policy, "
                           "batch >= 1 and samples >= 1");
  StabilityReport report;
  report.threads_before = ThreadCount();
  ASSIGN_OR_RETURN(Graph graph, LoadModel(options));

  // Open every session and run it once (plans, arenas, oneDNN primitives),
  // so the samples see the steady state; the first output is the reference.
  std::vector<Worker> workers(static_cast<size_t>(options.sessions));
  for (size_t k = 0; k < workers.size(); ++k) {
    Worker& w = workers[k];
    w.report.policy = options.policies[k % options.policies.size()];
    const std::string where = "stability: session " + std::to_string(k) + " (" + w.report.policy +
                              ")";
    const uint32_t seed = options.seed * 1000 + static_cast<uint32_t>(k);
    {
      // The all-CPU plan of the same session, where a lost vgpu leaves it.
      ASSIGN_OR_RETURN(StabilitySession cpu, OpenStabilitySession(graph, options, "cpu-only"));
      RETURN_IF_ERROR(SetInput(*cpu.session, options, w.input, seed).WithPrefix(where));
      RETURN_IF_ERROR(cpu.session->Run().WithPrefix(where + ", all-CPU reference"));
      RETURN_IF_ERROR(ReadOutputs(*cpu.session, w.cpu_only));
    }
    StatusOr<StabilitySession> opened = OpenStabilitySession(graph, options, w.report.policy);
    if (!opened.ok()) return opened.status().WithPrefix(where);
    w.opened = std::move(*opened);
    Session& s = *w.opened.session;
    RETURN_IF_ERROR(SetInput(s, options, w.input, seed).WithPrefix(where));
    RETURN_IF_ERROR(s.Run().WithPrefix(where + ", first Run"));
    RETURN_IF_ERROR(ReadOutputs(s, w.first));
    w.last.reserve(w.first.size());
  }

  // Phases of every session's runs: before the vgpu fails, while it is
  // off, after it is back. Each session waits at a phase's end until every
  // session got there, so every one sees the outage and the return.
  const int64_t per_session = options.runs / options.sessions;
  const bool failing = options.fail_at >= 0 && options.back_at >= options.fail_at;
  std::vector<int64_t> phase_runs = {per_session};
  if (failing) {
    const auto at = [&](double f) {
      return std::clamp<int64_t>(static_cast<int64_t>(f * static_cast<double>(per_session)), 0,
                                 per_session);
    };
    phase_runs = {at(options.fail_at), at(options.back_at) - at(options.fail_at),
                  per_session - at(options.back_at)};
  }
  std::atomic<int64_t> done{0};
  std::atomic<int> arrived{0}, phase{0};
  auto run = [&](Worker& w) {
    Session& s = *w.opened.session;
    StabilitySessionReport& r = w.report;
    for (size_t p = 0; p < phase_runs.size(); ++p) {
      for (int64_t i = 0; i < phase_runs[p]; ++i) {
        if (w.opened.vgpu->forced_off()) ++r.outage_runs;
        const Status st = s.Run();
        ++r.runs;
        done.fetch_add(1, std::memory_order_relaxed);
        if (!st.ok()) {
          ++r.failures[st.ToString()];
          continue;
        }
        if (!ReadOutputs(s, w.last).ok()) {
          ++r.failures["reading the outputs failed"];
          continue;
        }
        ++r.ok_runs;
        if (w.last == w.first) {
          ++r.identical;
        } else if (w.last == w.cpu_only) {
          ++r.cpu_fallback;
        } else {
          ++r.differing;
          r.max_abs_diff = std::max(r.max_abs_diff, MaxAbsDiff(w.last, w.first));
        }
      }
      if (p + 1 == phase_runs.size()) break;
      arrived.fetch_add(1);
      while (phase.load() == static_cast<int>(p))
        std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    r.last_identical = w.last == w.first;
  };

  const int64_t total = per_session * options.sessions;
  // Quiescent samples (no Run in flight): before, at each phase's end, after.
  auto quiet_sample = [&](int64_t runs_done) {
    StabilitySample sample;
    sample.runs_done = runs_done;
    sample.heap_bytes = LiveHeapBytes(&report.heap_from_sanitizer);
    sample.rss_bytes = ResidentBytes();
    sample.threads = ThreadCount();
    report.quiet_samples.push_back(sample);
  };
  quiet_sample(0);
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (Worker& w : workers) threads.emplace_back(run, std::ref(w));
  // The controller: samples; at a phase's end, the vgpus off (just after the
  // sessions go on, so some fail in the middle of a Run) or on again.
  int64_t next_sample = 0;
  for (;;) {
    const int64_t n = done.load(std::memory_order_relaxed);
    const int p = phase.load();
    if (failing && p < 2 && arrived.load() == options.sessions * (p + 1)) {
      quiet_sample(n);
      if (p == 1)
        for (Worker& w : workers) w.opened.vgpu->SetForcedOff(false);
      phase.store(p + 1);
      if (p == 0)
        for (Worker& w : workers) w.opened.vgpu->SetForcedOff(true);
    }
    if (n >= next_sample || n >= total) {
      StabilitySample sample;
      sample.runs_done = n;
      sample.heap_bytes = LiveHeapBytes(&report.heap_from_sanitizer);
      sample.rss_bytes = ResidentBytes();
      sample.threads = ThreadCount();
      report.samples.push_back(sample);
      next_sample = n + std::max<int64_t>(1, total / options.samples);
    }
    if (n >= total) break;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  for (std::thread& t : threads) t.join();
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  quiet_sample(total);
  // Free memory glibc keeps in its arenas, handed back: what RSS growth is
  // the allocator's retention and what is held.
#ifndef BRAID_STABILITY_SANITIZER
  malloc_trim(0);
#endif
  report.rss_trimmed_bytes = ResidentBytes();

  for (Worker& w : workers) {
    StabilitySessionReport& r = w.report;
    const std::vector<std::string> notices = w.opened.session->notices();
    r.notices = static_cast<int64_t>(notices.size());
    r.lost_notices = static_cast<int64_t>(Count(notices, "became unavailable"));
    r.restored_notices = static_cast<int64_t>(Count(notices, "answers again"));
    r.adaptation_replans = static_cast<int64_t>(Count(notices, "re-planned ("));
    r.adaptation_decisions =
        static_cast<int64_t>(Count(notices, "adaptation after")) + r.adaptation_replans;
    for (const NodePlacement& p : w.opened.session->placements())
      r.ends_on_vgpu = r.ends_on_vgpu || p.device == "vgpu";
    report.sessions.push_back(r);
  }
  workers.clear();  // closes the sessions: their streams' threads join
  report.threads_after = ThreadCount();
  return report;
}

}  // namespace braid
