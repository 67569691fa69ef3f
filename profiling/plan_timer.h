// Whole-plan timing: a Plan run through the heterogeneous engine
// (runtime/engine.h) on the devices it names, opened here as Session::Open
// opens them; the engine's per-step timeline (start/end, device, stream or
// copy track, bytes) of every timed run, each step's figures the medians
// over the runs. What `braid profile` and bench/cost_model_check time.
//
//   braid::profiling::PlanTimerOptions o;
//   o.devices = {"cpu", "vgpu"};
//   ASSIGN_OR_RETURN(o.vgpu_timing, braid::profiling::VgpuTimingFromProfile(profile));
//   ASSIGN_OR_RETURN(braid::profiling::PlanTimings t,
//                    braid::profiling::MeasurePlan("builtin:resnet18", &plan, o));
//   for (const braid::profiling::StepProfile& s : t.steps)
//     std::cout << s.name << " " << s.median_us << "\n";
#ifndef BRAID_PROFILING_PLAN_TIMER_H_
#define BRAID_PROFILING_PLAN_TIMER_H_

#include <string>
#include <vector>

#include "graph/ir.h"
#include "kernels/vgpu/vgpu_device.h"
#include "profiling/op_timer.h"
#include "scheduler/device_profile.h"
#include "scheduler/plan.h"

namespace braid::profiling {

struct PlanTimerOptions : OpTimerOptions {
  // Devices to open: "cpu" (always, first), "vgpu", "cuda" / "cuda:K".
  std::vector<std::string> devices = {"cpu"};
  // The vgpu's timing shaping (a model, never a GPU figure); default none.
  VgpuTiming vgpu_timing;
};

// One engine step, medians over the timed runs (times from the Run's start).
struct StepProfile {
  std::string name;      // node ("conv1", slice parts "conv1#0"), or "copy V -> D"
  std::string category;  // "kernel" or "copy"
  std::string device;    // the device that executed it
  std::string track;     // "cpu/stream0", "vgpu/stream0", "vgpu/h2d", ...
  bool virtual_device = false;  // vgpu: its times are a model, not a GPU
  // Kernels: the node of the engine graph (after slice expansion).
  std::string op_type;
  OpClass op_class = OpClass::kOther;
  Annotation annotation;
  std::string implementation;
  // The cost model's view of the node (OpWorkOf with the engine graph): the
  // per-op-type key, sparse class and work bytes.
  std::string op_key;
  std::string sparse_class;
  double work_bytes = -1;
  double copied_bytes = 0;  // of its inputs, made on another device
  bool view = false;        // run as a view (RunsAsView): no kernel, no bytes
  std::string from_device, to_device;  // copies
  double bytes = 0;      // copies: bytes moved; kernels: bytes written
  double start_us = 0;   // median start
  double end_us = 0;     // median start + median duration
  double median_us = 0;  // median duration
  int runs = 0;          // timed runs in which it ran
};

struct PlanTimings {
  std::string model;
  Graph graph;  // annotated, as planned (batch 1), before slice expansion
  Plan plan;
  std::vector<std::string> devices;  // opened, devices[0] = "cpu"
  std::vector<std::string> device_notes;  // "vgpu: virtual GPU, timing ..."
  std::vector<StepProfile> steps;    // engine order
  std::vector<NodePlacement> placements;  // incl. fallbacks and their reasons
  double end_to_end_median_us = 0;   // Engine::Run wall time
  double end_to_end_min_us = 0;
  int threads = 1;
  int iterations = 0;
  double energy_j_per_inference = -1;  // as in ModelTimings
  std::string energy_source;
  std::vector<std::string> energy_notes;
};

// `plan` == nullptr: every node on the CPU. The plan must match the model's
// graph as planned (the one `braid plan --save` saw) and use only `devices`.
StatusOr<PlanTimings> MeasurePlan(const std::string& model, const Plan* plan,
                                  const PlanTimerOptions& options);
// The same on a graph already planned (PlannedGraph-like: inferred, batch 1,
// annotated); `model` labels it.
StatusOr<PlanTimings> MeasurePlanOnGraph(Graph graph, const std::string& model, const Plan* plan,
                                         const PlanTimerOptions& options);

// Per-op times as the ops run inside the whole model: a cpu-only plan
// through the engine (MeasurePlan), each node's step median over the runs;
// end to end is the Engine::Run median / min. Unlike MeasureModel's
// isolated ops (profiling/op_timer.h) these include the layouts the graph
// runs in (channels-last between kernels) and producer-warm caches.
// min_us = median_us here.
StatusOr<ModelTimings> MeasureModelInEngine(const std::string& model,
                                            const OpTimerOptions& options);
StatusOr<ModelTimings> MeasureGraphInEngine(Graph graph, const std::string& model,
                                            const OpTimerOptions& options);

// A VgpuTiming ("profile:NAME") matching the profile's `device` spec (peak,
// bandwidth, launch overhead) and its host link (latency, bandwidth), so a
// shaped vgpu run can be compared with the profile's simulation. NotFound
// when the profile has no such device.
StatusOr<VgpuTiming> VgpuTimingFromProfile(const DeviceProfile& profile,
                                           const std::string& device = "vgpu");

}  // namespace braid::profiling

#endif  // BRAID_PROFILING_PLAN_TIMER_H_
