// Long-run stability (issue 32 item 4; docs/runtime.md "Long-run stability"):
// several Sessions on their own threads run mixed cpu + vgpu plans (random-K
// plans, sparoa) with online adaptation on, 10^4 runs in all, twice: steady,
// then with every vgpu forced off at 40% of the runs and back on at 60%.
// Prints, per session, how many outputs were bit-identical to its first
// (or to the all-CPU plan's, while the vgpu was gone) and the failed Runs
// with their Status; live heap, RSS and threads sampled first / last / max.
// Exit status 1 when a check fails (a differing output, a thread leak, a
// session that did not get its vgpu back, heap growth over
// --max-heap-growth-kib without an adaptation re-plan).
//
//   build/bench/braid_stability_bench                  # 10^4 runs per scenario
//   build/bench/braid_stability_bench --runs 1000 --sessions 2
//   build/bench/braid_stability_bench --model builtin:tiny_cnn --image 32
//
// The vgpu is CPU kernels on their own threads: no figure here is a GPU's.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/stability.h"

namespace {

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t comma = s.find(',', start);
    const size_t end = comma == std::string::npos ? s.size() : comma;
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

double MiB(size_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

// Prints the scenario and returns whether its checks passed.
bool Report(const char* title, const braid::StabilityOptions& o, const braid::StabilityReport& r,
            double max_heap_growth_kib) {
  std::printf("\n== %s: %s batch %lld %lldx%lld, %d sessions x %lld runs, adapt %s", title,
              o.model.c_str(), static_cast<long long>(o.batch), static_cast<long long>(o.image),
              static_cast<long long>(o.image), o.sessions,
              static_cast<long long>(o.runs / o.sessions), o.adapt ? "on" : "off");
  if (o.fail_at >= 0)
    std::printf(", every vgpu forced off after %.0f%% of each session's runs and back on after %.0f%% (probe every %d)",
                o.fail_at * 100, o.back_at * 100, o.probe_runs);
  std::printf("\n   %.1f s, %.0f runs/s (vgpu: a virtual device, not a GPU)\n", r.seconds,
              static_cast<double>(o.runs / o.sessions * o.sessions) / r.seconds);
  std::printf("   %-9s %6s %6s %6s %9s %9s %9s %7s %5s %5s %6s %6s %s\n", "policy", "runs",
              "ok", "failed", "identical", "cpu-plan", "differing", "outage", "lost", "back",
              "adapt", "replan", "end");
  bool pass = true;
  int64_t replans = 0;
  for (const braid::StabilitySessionReport& s : r.sessions) {
    replans += s.adaptation_replans;
    int64_t failed = 0;
    for (const auto& [status, n] : s.failures) failed += n;
    std::printf("   %-9s %6lld %6lld %6lld %9lld %9lld %9lld %7lld %5lld %5lld %6lld %6lld %s%s\n",
                s.policy.c_str(), static_cast<long long>(s.runs),
                static_cast<long long>(s.ok_runs), static_cast<long long>(failed),
                static_cast<long long>(s.identical), static_cast<long long>(s.cpu_fallback),
                static_cast<long long>(s.differing), static_cast<long long>(s.outage_runs),
                static_cast<long long>(s.lost_notices), static_cast<long long>(s.restored_notices),
                static_cast<long long>(s.adaptation_decisions),
                static_cast<long long>(s.adaptation_replans),
                s.ends_on_vgpu ? "cpu+vgpu" : "cpu only",
                s.last_identical ? ", last output = first" : ", LAST OUTPUT DIFFERS");
    for (const auto& [status, n] : s.failures)
      std::printf("      failed %lld x: %s\n", static_cast<long long>(n), status.c_str());
    if (s.differing > 0) {
      std::printf("      %lld outputs differ from the first (max |diff| %.3g)\n",
                  static_cast<long long>(s.differing), s.max_abs_diff);
      pass = false;
    }
    if (!s.last_identical) pass = false;
    if (o.fail_at >= 0 && o.back_at >= 0 && s.outage_runs > 0 &&
        (s.lost_notices == 0 || s.restored_notices == 0 || !s.ends_on_vgpu)) {
      std::printf("      the vgpu was lost and did not come back into the plan\n");
      pass = false;
    }
  }
  // The first sample is taken as the runs start (every session has run once).
  size_t heap_max = 0, rss_max = 0;
  int threads_max = 0;
  for (const braid::StabilitySample& s : r.samples) {
    heap_max = std::max(heap_max, s.heap_bytes);
    rss_max = std::max(rss_max, s.rss_bytes);
    threads_max = std::max(threads_max, s.threads);
  }
  // Before and after: no Run in flight, so no Run's transient blocks.
  const braid::StabilitySample& before = r.quiet_samples.front();
  const braid::StabilitySample& after = r.quiet_samples.back();
  const double growth_kib =
      (static_cast<double>(after.heap_bytes) - static_cast<double>(before.heap_bytes)) / 1024.0;
  std::printf("   live heap (%s): before the runs %.2f MiB, after %.2f MiB (%+.1f KiB), max while "
              "running %.2f MiB\n",
              r.heap_from_sanitizer ? "sanitizer allocator" : "mallinfo2 arenas + mmap",
              MiB(before.heap_bytes), MiB(after.heap_bytes), growth_kib, MiB(heap_max));
  std::printf("   RSS: before %.1f MiB, after %.1f MiB (%+.1f), max %.1f MiB; after malloc_trim(0) "
              "%.1f MiB (%+.1f)\n",
              MiB(before.rss_bytes), MiB(after.rss_bytes),
              MiB(after.rss_bytes) - MiB(before.rss_bytes), MiB(rss_max),
              MiB(r.rss_trimmed_bytes), MiB(r.rss_trimmed_bytes) - MiB(before.rss_bytes));
  if (r.quiet_samples.size() == 4)
    std::printf("   before the vgpus went off: heap %.2f MiB, RSS %.1f MiB; before they came back "
                "(all-CPU plans): heap %.2f MiB, RSS %.1f MiB\n",
                MiB(r.quiet_samples[1].heap_bytes), MiB(r.quiet_samples[1].rss_bytes),
                MiB(r.quiet_samples[2].heap_bytes), MiB(r.quiet_samples[2].rss_bytes));
  // RSS by quarter of the runs: a plateau is the allocator, a slope a leak.
  std::printf("   RSS by quarter of the runs:");
  for (int q = 1; q <= 4; ++q) {
    const braid::StabilitySample* at = &r.samples.back();
    for (const braid::StabilitySample& s : r.samples)
      if (s.runs_done * 4 >= r.samples.back().runs_done * q) {
        at = &s;
        break;
      }
    std::printf(" %.1f", MiB(at->rss_bytes));
  }
  std::printf(" MiB (%zu samples)\n", r.samples.size());
  std::printf("   threads: %d before the sessions opened, %d..%d while running, %d after they "
              "closed\n",
              r.threads_before, before.threads, threads_max, r.threads_after);
  if (r.threads_after != r.threads_before) {
    std::printf("   THREAD LEAK: %d threads after, %d before\n", r.threads_after,
                r.threads_before);
    pass = false;
  }
  // A re-plan builds an engine of another size (sparoa's plans move with
  // adaptation's corrections): the heap is then not comparable.
  if (growth_kib > max_heap_growth_kib && replans == 0) {
    std::printf("   HEAP GROWTH %.1f KiB over the limit %.0f KiB\n", growth_kib,
                max_heap_growth_kib);
    pass = false;
  } else if (std::fabs(growth_kib) > max_heap_growth_kib) {
    std::printf("   heap not judged: %lld adaptation re-plans changed the plans (engines of "
                "another size)\n",
                static_cast<long long>(replans));
  }
  std::printf("   %s\n", pass ? "PASS" : "FAIL");
  return pass;
}

}  // namespace

int main(int argc, char** argv) {
  braid::StabilityOptions o;
  o.model = "builtin:mobilenet_v2";  // 150 nodes, depthwise and 1x1 convs
  o.image = 64;
  o.runs = 10000;
  o.probe_runs = 50;
  double max_heap_growth_kib = 256;
  bool steady = true, failing = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--runs") o.runs = std::atoll(value().c_str());
    else if (a == "--sessions") o.sessions = std::atoi(value().c_str());
    else if (a == "--model") o.model = value();
    else if (a == "--image") o.image = std::atoll(value().c_str());
    else if (a == "--batch") o.batch = std::atoll(value().c_str());
    else if (a == "--policies") o.policies = Split(value());
    else if (a == "--probe-runs") o.probe_runs = std::atoi(value().c_str());
    else if (a == "--max-heap-growth-kib") max_heap_growth_kib = std::atof(value().c_str());
    else if (a == "--no-adapt") o.adapt = false;
    else if (a == "--steady-only") failing = false;
    else if (a == "--failure-only") steady = false;
    else {
      std::fprintf(stderr,
                   "usage: %s [--runs N] [--sessions K] [--model M] [--image HW] [--batch B]\n"
                   "          [--policies a,b,...] [--probe-runs N] [--max-heap-growth-kib K]\n"
                   "          [--no-adapt] [--steady-only | --failure-only]\n",
                   argv[0]);
      return 2;
    }
  }
  bool pass = true;
  for (int scenario = 0; scenario < 2; ++scenario) {
    if ((scenario == 0 && !steady) || (scenario == 1 && !failing)) continue;
    braid::StabilityOptions run = o;
    if (scenario == 1) {
      run.fail_at = 0.4;
      run.back_at = 0.6;
    }
    braid::StatusOr<braid::StabilityReport> r = braid::RunStability(run);
    if (!r.ok()) {
      std::fprintf(stderr, "stability: %s\n", r.status().ToString().c_str());
      return 1;
    }
    pass = Report(scenario == 0 ? "steady" : "vgpu fails and returns", run, *r,
                  max_heap_growth_kib) &&
           pass;
  }
  std::printf("\n%s\n", pass ? "stability: PASS" : "stability: FAIL");
  return pass ? 0 : 1;
}
