#include "profiling/plan_timer.h"

#include <algorithm>
#include <map>
#include <memory>
#include <random>

#include "graph/op_schema.h"
#include "kernels/backend_registry.h"
#include "profiling/energy.h"
#include "profiling/timed_runs.h"
#include "runtime/engine.h"
#include "runtime/session_internal.h"
#include "scheduler/cost_model.h"

namespace braid::profiling {
namespace {

// The devices MeasurePlan opens: the backend registry's, as Session::Open
// opens them.
struct OpenedDevices {
  std::vector<std::unique_ptr<Device>> owned;
  std::vector<EngineDevice> engine;
  std::vector<std::string> notes;
};

StatusOr<OpenedDevices> OpenPlanDevices(const PlanTimerOptions& options, int threads,
                                        KernelRegistry& registry) {
  BackendOptions o;
  ASSIGN_OR_RETURN(o.host_kernels, CpuKernelOptionsOf(options));
  o.vgpu_timing = options.vgpu_timing;
  ASSIGN_OR_RETURN(std::vector<OpenedDevice> opened,
                   OpenBackendDevices(BuiltinBackends(), options.devices, o, registry));
  OpenedDevices d;
  for (OpenedDevice& e : opened) {
    d.owned.push_back(std::move(e.device));
    // The host runs with the measurement's threads; others with their own.
    d.engine.push_back({d.owned.back().get(), e.host_addressable,
                        d.engine.empty() ? threads : e.threads, std::move(e.kernel_time)});
    if (!e.note.empty()) d.notes.push_back(e.note);
  }
  return d;
}

}  // namespace

StatusOr<PlanTimings> MeasurePlan(const std::string& model, const Plan* plan,
                                  const PlanTimerOptions& options) {
  ASSIGN_OR_RETURN(Graph graph, PlannedGraph(model));
  return MeasurePlanOnGraph(std::move(graph), model, plan, options);
}

StatusOr<PlanTimings> MeasurePlanOnGraph(Graph graph, const std::string& model, const Plan* plan,
                                         const PlanTimerOptions& options) {
  if (options.iterations < 1) return InvalidArgument("iterations must be >= 1");
  PlanTimings t;
  t.model = model;
  t.threads = ResolveNumThreads(options.threads);
  t.iterations = options.iterations;
  t.graph = std::move(graph);
  auto registry = std::make_shared<KernelRegistry>();
  ASSIGN_OR_RETURN(OpenedDevices devices, OpenPlanDevices(options, t.threads, *registry));
  for (const auto& d : devices.owned) t.devices.push_back(d->name());
  t.device_notes = devices.notes;
  t.plan = plan ? *plan : SingleDevicePlan(t.graph, "cpu", "cpu-only");
  RETURN_IF_ERROR(ValidatePlan(t.plan, t.graph).WithPrefix("plan for " + model));
  for (const NodePlan& p : t.plan.nodes)
    for (const std::string* d : {&p.device, p.slice ? &p.slice->other_device : nullptr})
      if (d && std::find(t.devices.begin(), t.devices.end(), *d) == t.devices.end())
        return FailedPrecondition("the plan places '" + p.node + "' on '" + *d +
                                  "', which is not among the devices opened (add it to "
                                  "--devices)");

  EngineOptions engine_options;
  engine_options.num_threads = t.threads;
  engine_options.pin_threads = options.pin_threads;
  ASSIGN_OR_RETURN(std::unique_ptr<Engine> engine,
                   Engine::Create(t.graph, t.plan, *registry, devices.engine, engine_options));
  if (!engine->thread_note().empty()) t.device_notes.push_back(engine->thread_note());
  t.placements = engine->placements();

  std::mt19937_64 rng(options.seed);
  std::vector<std::vector<std::byte>> input_data;
  std::vector<const void*> input_ptrs;
  for (ValueId id : t.graph.inputs()) {
    const Value& v = t.graph.value(id);
    input_data.push_back(RandomBytes(v.dtype, ElementCount(v.shape), rng));
    input_ptrs.push_back(input_data.back().data());
  }
  for (int i = 0; i < std::max(1, options.warmup); ++i) RETURN_IF_ERROR(engine->Run(input_ptrs));

  std::unique_ptr<EnergyMeter> meter;
  if (options.measure_energy) {
    meter = std::make_unique<EnergyMeter>(DiscoverEnergySensors("/sys", &t.energy_notes));
    RETURN_IF_ERROR(meter->Start());
  }
  const size_t num_steps = engine->num_steps();
  std::vector<std::vector<double>> starts(num_steps), durations(num_steps);
  std::vector<double> runs;
  std::vector<StepTiming> last;
  for (int i = 0; i < options.iterations; ++i) {
    const auto t0 = Clock::now();
    RETURN_IF_ERROR(engine->Run(input_ptrs));
    runs.push_back(MicrosSince(t0));
    last = engine->timeline();
    for (size_t k = 0; k < last.size() && k < num_steps; ++k) {
      if (!last[k].ran) continue;
      starts[k].push_back(last[k].start_us);
      durations[k].push_back(last[k].end_us - last[k].start_us);
    }
  }
  FinishRuns(meter.get(), runs, options.iterations, t);

  std::map<std::string, const Node*> nodes;
  for (const Node& n : engine->graph().nodes()) nodes[n.name] = &n;
  std::map<std::string, std::string> implementations, placed_on;
  for (const NodePlacement& p : t.placements) {
    implementations[p.node] = p.implementation;
    placed_on[p.node] = p.device;
  }
  // The bytes of the values a node on `device` reads that were made
  // elsewhere (so they arrived by a copy): graph inputs start on the host.
  auto copied_bytes = [&](const Node& node, const std::string& device) {
    const Graph& eg = engine->graph();
    double bytes = 0;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const ValueId in = node.inputs[i];
      if (in == kNoValue || eg.IsConstant(in) || RepeatsEarlierInput(node, i)) continue;
      // A view's bytes were made where the value it views was.
      const NodeId producer = eg.value(ViewRoot(eg, in)).producer;
      const std::string home = producer == kNoNode ? t.devices.front()
                               : placed_on.count(eg.node(producer).name)
                                   ? placed_on[eg.node(producer).name]
                                   : device;
      if (home != device) bytes += ValueBytes(eg, in);
    }
    return bytes;
  };
  for (size_t k = 0; k < last.size() && k < num_steps; ++k) {
    const StepTiming& st = last[k];
    StepProfile s;
    s.name = st.name;
    s.category = st.category;
    s.device = st.device;
    s.track = st.track;
    for (const EngineDevice& d : devices.engine)
      if (d.device->name() == st.device) s.virtual_device = d.device->info().virtual_device;
    s.bytes = static_cast<double>(st.bytes);
    s.view = st.view;
    s.runs = static_cast<int>(durations[k].size());
    s.start_us = Median(starts[k]);
    s.median_us = Median(durations[k]);
    s.end_us = s.start_us + s.median_us;
    if (st.category == "copy") {
      // Tracks name the direction: "<device>/h2d" copies host -> device.
      const bool to_host = st.track.ends_with("/d2h");
      s.from_device = to_host ? st.device : t.devices.front();
      s.to_device = to_host ? t.devices.front() : st.device;
      s.op_class = OpClass::kDataMovement;
    } else if (auto it = nodes.find(st.name); it != nodes.end()) {
      s.op_type = it->second->op_type;
      s.op_class = ClassifyOp(*it->second);
      const OpWork w = OpWorkOf(*it->second, &engine->graph());
      s.op_key = std::string(w.op_type);
      s.sparse_class = std::string(w.sparse_class);
      s.work_bytes = w.bytes;
      s.copied_bytes = copied_bytes(*it->second, s.device);
      s.annotation = it->second->annotation;
      s.implementation = implementations.count(st.name) ? implementations[st.name] : "";
    }
    t.steps.push_back(std::move(s));
  }
  return t;
}

StatusOr<ModelTimings> MeasureModelInEngine(const std::string& model,
                                            const OpTimerOptions& options) {
  ASSIGN_OR_RETURN(Graph graph, PlannedGraph(model));
  return MeasureGraphInEngine(std::move(graph), model, options);
}

StatusOr<ModelTimings> MeasureGraphInEngine(Graph graph, const std::string& model,
                                            const OpTimerOptions& options) {
  PlanTimerOptions plan_options;
  static_cast<OpTimerOptions&>(plan_options) = options;
  plan_options.devices = {"cpu"};
  ASSIGN_OR_RETURN(PlanTimings p, MeasurePlanOnGraph(std::move(graph), model, nullptr,
                                                     plan_options));
  ModelTimings t;
  t.model = model;
  t.threads = p.threads;
  t.end_to_end_median_us = p.end_to_end_median_us;
  t.end_to_end_min_us = p.end_to_end_min_us;
  t.energy_j_per_inference = p.energy_j_per_inference;
  t.energy_source = p.energy_source;
  t.energy_notes = p.energy_notes;
  std::map<std::string, const StepProfile*> steps;
  for (const StepProfile& s : p.steps)
    if (s.category == "kernel") steps[s.name] = &s;
  for (const Node& node : p.graph.nodes()) {
    OpTiming op;
    op.node = node.name;
    op.op_type = node.op_type;
    op.op_class = ClassifyOp(node);
    op.annotation = node.annotation;
    if (auto it = steps.find(node.name); it != steps.end() && it->second->runs > 0) {
      op.implementation = it->second->implementation;
      op.median_us = op.min_us = it->second->median_us;
      op.view = it->second->view;
    }
    t.ops.push_back(std::move(op));
  }
  t.graph = std::move(p.graph);
  t.in_run_order = true;
  return t;
}

StatusOr<VgpuTiming> VgpuTimingFromProfile(const DeviceProfile& profile,
                                           const std::string& device) {
  const DeviceSpec* spec = nullptr;
  for (const DeviceSpec& d : profile.devices)
    if (d.name == device) spec = &d;
  if (spec == nullptr)
    return NotFound("profile '" + profile.name + "' has no device '" + device + "'");
  VgpuTiming timing;
  timing.label = "profile:" + profile.name;
  timing.enabled = true;
  timing.peak_gflops = spec->peak_gflops;
  timing.mem_gbps = spec->memory_bandwidth_gbps;
  timing.launch_us = spec->launch_overhead_us;
  for (const LinkSpec& l : profile.links)
    if (l.to == device && !l.mapped) {
      timing.copy_gbps = l.bandwidth_gbps;
      timing.copy_latency_us = l.latency_us;
    }
  // Pad kernels to the cost model's own estimate for this device (without
  // its floor: the real kernel time underneath is the floor), so the
  // shaping and the simulator's prediction are one function.
  DeviceProfile shaped = profile;
  for (DeviceSpec& d : shaped.devices)
    if (d.name == device) d.floor_device.clear();
  auto model = std::make_shared<const CostModel>(std::move(shaped));
  const int index = model->DeviceIndex(device);
  timing.kernel_model_us = [model, index](double flops, double bytes) {
    return model->Cost(OpClass::kOther, flops, bytes, index).TotalUs();
  };
  return timing;
}

}  // namespace braid::profiling
