#include "profiling/probes.h"

#include <sys/prctl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <thread>

#include "graph/annotate.h"
#include "graph/passes/passes.h"
#include "kernels/host/precise_wait.h"
#include "kernels/vgpu/streaming_copy.h"
#include "kernels/vgpu/vgpu_device.h"
#include "kernels/host/worker_stream.h"
#include "models/graph_builder.h"
#include "profiling/cache_info.h"
#include "profiling/plan_timer.h"
#include "profiling/timed_runs.h"
#include "runtime/thread_pinning.h"
#include "scheduler/cache_residency.h"

namespace braid::profiling {

namespace {

// sum = a + b, kept out of line so the two timed calls are the same code.
[[gnu::noinline]] void AddVectors(const float* a, const float* b, float* sum, size_t n) {
  for (size_t i = 0; i < n; ++i) sum[i] = a[i] + b[i];
}

// The engine's own primitives for the handoff probes: a vgpu stream (a
// WorkerStream) and its events, the calling thread and the stream's worker
// pinned apart as the engine pins them (EngineOptions::pin_threads) when
// asked. Destroyed in reverse: the caller's pin is undone first.
struct ProbeStream {
  std::unique_ptr<VgpuDevice> vgpu;
  std::unique_ptr<Stream> stream;
  std::optional<ScopedThreadPin> pin;
};

StatusOr<std::unique_ptr<ProbeStream>> OpenProbeStream(bool pin_threads) {
  auto p = std::make_unique<ProbeStream>();
  p->vgpu = CreateVgpuDevice();
  ASSIGN_OR_RETURN(p->stream, p->vgpu->CreateStream());
  const CoreSplit split = SplitAllowedCores(1);
  if (pin_threads && split.usable) {
    const cpu_set_t workers = split.workers;
    RETURN_IF_ERROR(p->stream->Submit([workers] { return PinCurrentThread(workers); }));
    RETURN_IF_ERROR(p->stream->Synchronize());
    p->pin.emplace(split.caller);
  }
  return p;
}

}  // namespace

StatusOr<WakeLatency> MeasureWakeLatency(int rounds, bool pin_threads) {
  ASSIGN_OR_RETURN(std::unique_ptr<ProbeStream> probe, OpenProbeStream(pin_threads));
  Stream* stream = probe->stream.get();
  // Long enough that the waiting side is asleep when the signal comes.
  constexpr auto kAsleep = std::chrono::microseconds(300);
  std::vector<double> to_worker, to_caller, resumed_us, again_us;
  // The op run after the wake: a mid-network Add (3 x 100 KB).
  constexpr size_t kFloats = 25600;
  std::vector<float> staged(kFloats), handed(kFloats), handed_too(kFloats), own(kFloats),
      sum(kFloats);
  for (size_t i = 0; i < kFloats; ++i) {
    staged[i] = static_cast<float>(i % 97);
    own[i] = static_cast<float>(i % 89);
  }
  for (int r = 0; r < std::max(1, rounds); ++r) {
    auto event = std::make_shared<ManualEvent>();
    Clock::time_point woke;
    RETURN_IF_ERROR(stream->WaitFor(event));
    if (Status s = stream->Submit([&woke] {
          woke = Clock::now();
          return Status::Ok();
        });
        !s.ok()) {
      event->Signal(s);  // the worker already waits on it
      (void)stream->Synchronize();
      return s;
    }
    std::this_thread::sleep_for(kAsleep);
    const Clock::time_point signalled = Clock::now();
    event->Signal(Status::Ok());
    RETURN_IF_ERROR(stream->Synchronize());
    to_worker.push_back(std::chrono::duration<double, std::micro>(woke - signalled).count());

    Clock::time_point done;
    RETURN_IF_ERROR(stream->Submit([&done, &staged, &handed, &handed_too, kAsleep] {
      std::this_thread::sleep_for(kAsleep);
      StreamingCopy(handed.data(), staged.data(), kFloats * sizeof(float));
      StreamingCopy(handed_too.data(), staged.data(), kFloats * sizeof(float));
      done = Clock::now();
      return Status::Ok();
    }));
    ASSIGN_OR_RETURN(std::shared_ptr<Event> marker, stream->Record());
    RETURN_IF_ERROR(marker->Wait());
    to_caller.push_back(MicrosSince(done));
    const Clock::time_point resumed = Clock::now();
    AddVectors(handed.data(), own.data(), sum.data(), kFloats);
    // The same add on the other handed-over vector, as cold but not first.
    const Clock::time_point again = Clock::now();
    AddVectors(handed_too.data(), own.data(), sum.data(), kFloats);
    resumed_us.push_back(std::chrono::duration<double, std::micro>(again - resumed).count());
    again_us.push_back(MicrosSince(again));
    RETURN_IF_ERROR(stream->Synchronize());
  }
  // The sums are used, so neither add is optimised away.
  if (!std::isfinite(std::accumulate(sum.begin(), sum.end(), 0.0)))
    return Internal("MeasureWakeLatency: the probe's sums are not finite");
  const double again_median = Median(again_us);
  const double resume = again_median > 0 ? Median(resumed_us) / again_median : 1.0;
  return WakeLatency{Median(to_worker), Median(to_caller), std::max(1.0, resume)};
}

StatusOr<double> MeasureReclaimRate(bool pin_threads, int rounds) {
  ASSIGN_OR_RETURN(std::unique_ptr<ProbeStream> probe, OpenProbeStream(pin_threads));
  Stream* stream = probe->stream.get();
  // 200 KB each: a mid-network activation; the four host buffers fit the
  // calling core's cache together, so only the copy's read sets them apart.
  constexpr size_t kFloats = 51200;
  constexpr size_t kBytes = kFloats * sizeof(float);
  std::vector<float> a(kFloats), b(kFloats), destination(kFloats), other(kFloats),
      staged(kFloats);
  for (size_t i = 0; i < kFloats; ++i) {
    a[i] = static_cast<float>(i % 97);
    b[i] = static_cast<float>(i % 89);
  }
  std::vector<double> held_us, apart_us;
  for (int r = 0; r < std::max(1, rounds); ++r) {
    for (int k = 0; k < 2; ++k) {
      const bool held = (k == 0) == (r % 2 == 0);  // alternate which goes first
      AddVectors(a.data(), b.data(), destination.data(), kFloats);
      AddVectors(a.data(), b.data(), other.data(), kFloats);
      const float* copied = held ? destination.data() : other.data();
      RETURN_IF_ERROR(stream->Submit([&staged, copied] {
        StreamingCopy(staged.data(), copied, kBytes);
        return Status::Ok();
      }));
      ASSIGN_OR_RETURN(std::shared_ptr<Event> marker, stream->Record());
      RETURN_IF_ERROR(marker->Wait());
      const Clock::time_point t0 = Clock::now();
      AddVectors(a.data(), b.data(), destination.data(), kFloats);
      (held ? held_us : apart_us).push_back(MicrosSince(t0));
    }
  }
  RETURN_IF_ERROR(stream->Synchronize());
  if (!std::isfinite(std::accumulate(destination.begin(), destination.end(), 0.0)) ||
      !std::isfinite(std::accumulate(staged.begin(), staged.end(), 0.0)))
    return Internal("MeasureReclaimRate: the probe's sums are not finite");
  return ReclaimRateGbps(Median(std::move(held_us)), Median(std::move(apart_us)), kBytes);
}

double ReclaimRateGbps(double held_us, double apart_us, double bytes) {
  const double extra = held_us - apart_us;
  if (!(extra > 0.02 * apart_us) || !(bytes > 0)) return 0.0;
  return bytes / (extra * 1e3);
}

StatusOr<CopiedReadRates> MeasureCopiedReadRates(double resume_factor, bool pin_threads,
                                                 int iterations, int rounds) {
  ASSIGN_OR_RETURN(std::vector<CopiedReadRates> each,
                   MeasureCopiedReadRounds(resume_factor, pin_threads, iterations, rounds));
  return MedianRates(each);
}

CopiedReadRates MedianRates(std::span<const CopiedReadRates> rounds) {
  std::vector<double> stream, window, depthwise;
  for (const CopiedReadRates& r : rounds) {
    stream.push_back(r.stream_gbps);
    window.push_back(r.window_gbps);
    depthwise.push_back(r.depthwise_gbps);
  }
  return {Median(std::move(stream)), Median(std::move(window)), Median(std::move(depthwise))};
}

StatusOr<std::vector<CopiedReadRates>> MeasureCopiedReadRounds(double resume_factor,
                                                               bool pin_threads, int iterations,
                                                               int rounds) {
  // Two chains of one op: Add(v, v) (no pass fuses two Adds) and a 3x3
  // depthwise conv. Per run, a vgpu op shaped to take 300 us (the cpu stream
  // sleeps through it as through a GPU kernel), then 1, 2 or 3 cpu ops, the
  // first reading what the copy back wrote. The run lengths vary which arena
  // buffers the cpu writes (one the copy thread wrote last cost a second
  // transfer from its core with round 7's CLDEMOTE copies: 200 KB Adds took
  // 8 us in runs of 2, 24 us in runs of 1 or 3, pinned, on the build
  // machine).
  const std::vector<int> cpu_runs = {1, 2, 3, 1, 2, 3, 1, 2, 3};
  // 200 KB maps, mid-network: 64 x 28 x 28 for the Adds and the window
  // rate (pools take it), and for the depthwise rate that one and a deep,
  // small one (256 x 14 x 14): a depthwise conv's copied read depends on the
  // map (8.8-9.5 GB/s on 384 x 14 x 14, 12.4-12.6 on 64 x 28 x 28, 12.2-13.6
  // on 960 x 7 x 7 on the AMD host), a copied MaxPool's matched the 64 x 28
  // x 28 rate (round 13) and read +19..+40% over at both shapes' rate.
  const Shape wide{1, 64, 28, 28}, deep{1, 256, 14, 14};
  auto chain = [&](bool depthwise, const Shape& shape) -> StatusOr<std::pair<Graph, Plan>> {
    GraphBuilder b(depthwise ? "copied_read_probe_dw" : "copied_read_probe", 1);
    ValueId v = b.Input("x", shape);
    const int64_t channels = shape[1].extent();
    std::vector<bool> on_vgpu;
    for (int run : cpu_runs)
      for (int i = 0; i <= run; ++i) {
        v = depthwise ? b.Conv(v, "dw" + std::to_string(on_vgpu.size()),
                               {.out_channels = channels, .kernel = 3, .pad = 1,
                                .groups = channels})
                      : b.Add(v, v);
        on_vgpu.push_back(i == 0);
      }
    b.Output(v, "y", shape);
    Graph graph = std::move(b).Finish();
    RETURN_IF_ERROR(InferShapes(graph).WithPrefix("copied read probe"));
    RETURN_IF_ERROR(Annotate(graph).WithPrefix("copied read probe"));
    if (static_cast<size_t>(graph.num_nodes()) != on_vgpu.size())
      return Internal("copied read probe: unexpected graph");
    Plan mixed = SingleDevicePlan(graph, "cpu", "copied-read-probe");
    mixed.devices = {"cpu", "vgpu"};
    for (size_t n = 0; n < mixed.nodes.size(); ++n)
      if (on_vgpu[n]) mixed.nodes[n].device = "vgpu";
    return std::make_pair(std::move(graph), std::move(mixed));
  };
  ASSIGN_OR_RETURN(auto adds, chain(false, wide));
  ASSIGN_OR_RETURN(auto wide_convs, chain(true, wide));
  ASSIGN_OR_RETURN(auto deep_convs, chain(true, deep));

  PlanTimerOptions warm_options;
  warm_options.threads = 1;
  warm_options.iterations = std::max(1, iterations);
  warm_options.end_to_end = false;
  warm_options.pin_threads = pin_threads;
  PlanTimerOptions handed_options = warm_options;
  handed_options.devices = {"cpu", "vgpu"};
  handed_options.vgpu_timing.label = "copied read probe";
  handed_options.vgpu_timing.enabled = true;
  handed_options.vgpu_timing.launch_us = 300;
  handed_options.vgpu_timing.peak_gflops = 1e6;
  handed_options.vgpu_timing.mem_gbps = 1e6;
  handed_options.vgpu_timing.copy_gbps = 1e6;
  // Per chain, the summed copied bytes and the summed time they added over
  // the same ops all on the cpu (divided by resume_factor, which the model
  // applies on top).
  struct Extra {
    double copied_bytes = 0, extra_us = 0, warm_us = 0, warm_bytes = 0;
  };
  auto extra_of = [&](const std::pair<Graph, Plan>& c) -> StatusOr<Extra> {
    ASSIGN_OR_RETURN(PlanTimings warm,
                     MeasurePlanOnGraph(c.first, "copied read probe", nullptr, warm_options));
    ASSIGN_OR_RETURN(PlanTimings handed,
                     MeasurePlanOnGraph(c.first, "copied read probe", &c.second, handed_options));
    Extra e;
    std::map<std::string, double> warm_us;
    for (const StepProfile& s : warm.steps) {
      if (s.category != "kernel") continue;
      warm_us[s.name] = s.median_us;
      e.warm_us += s.median_us;
      e.warm_bytes += s.work_bytes;
    }
    // Which steps write lines the copy thread still holds depends on the
    // arena (round 7's 200 KB Adds took 8 us in runs of 2, 24 in runs of 1
    // or 3): those pay for taking the lines back as well (about 6.5 us more
    // per Add here; under 1.5 us per depthwise conv, whose compute hides
    // it), so the others alone measure the read.
    std::vector<uint8_t> on_cpu, on_vgpu;
    for (const NodePlan& p : c.second.nodes) {
      on_cpu.push_back(p.device == "cpu");
      on_vgpu.push_back(p.device == "vgpu");
    }
    const std::vector<ColdBytes> cold =
        ColdBytesPerNode(handed.graph, CacheBytesPerCore(), 0, on_cpu, on_vgpu);
    std::map<std::string, double> held;
    for (NodeId n = 0; n < handed.graph.num_nodes() && cold.size() == on_cpu.size(); ++n)
      held[handed.graph.node(n).name] = cold[static_cast<size_t>(n)].written_held_elsewhere;
    auto reads_copied = [](const StepProfile& s) {
      return s.category == "kernel" && s.device == "cpu" && s.copied_bytes > 0;
    };
    auto writes_held = [&](const StepProfile& s) {
      auto it = held.find(s.name);
      return it != held.end() && it->second > 0;
    };
    bool any_apart = false;
    for (const StepProfile& s : handed.steps) any_apart |= reads_copied(s) && !writes_held(s);
    if (!any_apart)
      return Internal("copied read probe: every cpu step reading a copied input also writes "
                      "lines the copy thread holds, so none measures the read alone");
    for (const StepProfile& s : handed.steps) {
      if (!reads_copied(s) || writes_held(s)) continue;
      auto w = warm_us.find(s.name);
      if (w == warm_us.end()) continue;
      e.copied_bytes += s.copied_bytes;
      e.extra_us += s.median_us / std::max(1.0, resume_factor) - w->second;
    }
    if (!(e.copied_bytes > 0) || !(e.warm_bytes > 0))
      return Internal("copied read probe: no cpu step read a copied input");
    return e;
  };
  // The cost model's stall (CostModel: copied / rate - a plain stream's time
  // over the copied bytes) solved for the rate: the Adds are that stream
  // (their warm time per byte); at least 1% of the warm time (a host whose
  // cores share one cache reads handed-over data about as fast as its own).
  // Warm and handed-over runs alternate, one rate per round (callers keep
  // the median round: one round's Add rate swung 10-16 GB/s between runs of
  // the cost model check on a shared host, and every copied step's price
  // with it).
  std::vector<CopiedReadRates> out;
  for (int round = 0; round < std::max(1, rounds); ++round) {
    ASSIGN_OR_RETURN(const Extra add, extra_of(adds));
    ASSIGN_OR_RETURN(const Extra wide_dw, extra_of(wide_convs));
    ASSIGN_OR_RETURN(const Extra deep_dw, extra_of(deep_convs));
    const Extra both_dw{wide_dw.copied_bytes + deep_dw.copied_bytes,
                        wide_dw.extra_us + deep_dw.extra_us, wide_dw.warm_us + deep_dw.warm_us,
                        wide_dw.warm_bytes + deep_dw.warm_bytes};
    const double stream_us_per_byte = add.warm_us / add.warm_bytes;
    auto rate = [&](const Extra& e) {
      const double read_us = std::max(e.extra_us + stream_us_per_byte * e.copied_bytes,
                                      0.01 * e.warm_us);
      return e.copied_bytes / (read_us * 1e3);
    };
    out.push_back({rate(add), rate(wide_dw), rate(both_dw)});
  }
  return out;
}

StatusOr<double> MeasureDramBandwidth(const OpTimerOptions& options, double llc_bytes) {
  // Two Adds over vectors of twice the last-level cache (64 MB at least):
  // every byte they read or write comes from DRAM.
  const int64_t elements =
      static_cast<int64_t>(std::max(2 * llc_bytes, 64.0 * (1 << 20)) / sizeof(float));
  const Shape shape{1, elements};
  GraphBuilder b("dram_probe", 1);
  const ValueId x = b.Input("x", shape);
  const ValueId y = b.Input("y", shape);
  const ValueId sum = b.Add(x, y);
  b.Output(b.Add(sum, y), "z", shape);
  Graph graph = std::move(b).Finish();
  RETURN_IF_ERROR(InferShapes(graph).WithPrefix("dram probe"));
  RETURN_IF_ERROR(Annotate(graph).WithPrefix("dram probe"));
  OpTimerOptions probe = options;
  probe.end_to_end = false;
  probe.measure_energy = false;
  probe.iterations = std::max(3, std::min(options.iterations, 7));
  probe.warmup = 1;
  ASSIGN_OR_RETURN(ModelTimings t, MeasureGraphInEngine(std::move(graph), "dram probe", probe));
  // DRAM traffic: the bytes read, and the bytes written twice (read for
  // ownership, then written back), as OpWork::dram_written_bytes counts them.
  double best = 0;
  for (size_t i = 0; i < t.ops.size(); ++i) {
    const OpTiming& op = t.ops[i];
    const Node& node = t.graph.node(static_cast<NodeId>(i));
    const double written = node.outputs.empty() ? 0 : ValueBytes(t.graph, node.outputs[0]);
    if (op.median_us > 0)
      best = std::max(best, (op.annotation.bytes + written) / op.median_us * 1e-3);
  }
  if (!(best > 0)) return Internal("dram probe: no Add was timed");
  return best;
}

double DramTierBandwidth(const OpTimerOptions& options, std::string* why_none) {
  const double llc = LastLevelCacheBytes();
  if (!(llc > CacheBytesPerCore())) {
    *why_none = "no last-level cache beyond the L2 in sysfs";
    return 0;
  }
  StatusOr<double> measured = MeasureDramBandwidth(options, llc);
  if (!measured.ok()) {
    *why_none = measured.status().ToString();
    return 0;
  }
  return *measured;
}

double MeasurePaddingDelayUs() {
  double median = 0;
  std::thread probe([&median] {
    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    std::vector<double> late;
    for (int i = 0; i < 200; ++i) {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(50);
      WaitUntil(deadline);
      late.push_back(
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - deadline)
              .count());
    }
    median = Median(late);
  });
  probe.join();
  return median;
}

}  // namespace braid::profiling
