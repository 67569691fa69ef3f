#include "tools/op_timer.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <random>

#include "braid/braid.h"
#include "graph/annotate.h"
#include "graph/passes/passes.h"
#include "graph/passes/specialize.h"
#include "kernels/cpu/cpu_device.h"
#include "kernels/cuda/cuda_backend.h"
#include "runtime/energy.h"
#include "runtime/engine.h"
#include "runtime/executor.h"
#include "runtime/model_loader.h"
#include "runtime/session_internal.h"

namespace braid::cli {
namespace {

using Clock = std::chrono::steady_clock;

// Stops the energy meter (if any) and fills the end-to-end and energy fields
// shared by ModelTimings and PlanTimings from the timed runs.
template <typename Timings>
void FinishRuns(EnergyMeter* meter, const std::vector<double>& runs, int iterations,
                Timings& t) {
  if (meter != nullptr) {
    StatusOr<EnergyReport> report = meter->Stop();
    if (!report.ok()) {
      t.energy_notes.push_back(report.status().message());
    } else if (report->measured) {
      t.energy_j_per_inference = report->total_joules / iterations;
      t.energy_source = report->total_from;
    }
  }
  t.end_to_end_median_us = Median(runs);
  t.end_to_end_min_us = *std::min_element(runs.begin(), runs.end());
}

double MicrosSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

std::vector<std::byte> RandomBytes(DataType dtype, int64_t elements, std::mt19937_64& rng) {
  std::vector<std::byte> bytes(static_cast<size_t>(elements) * DataTypeSize(dtype));
  if (dtype == DataType::kF32) {
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    float* f = reinterpret_cast<float*>(bytes.data());
    for (int64_t i = 0; i < elements; ++i) f[i] = u(rng);
  }
  return bytes;  // other dtypes: zeros (valid indices / shapes)
}

// A one-node graph around `node` of `g`: non-constant inputs become graph
// inputs, constants are shared.
Graph SingleNodeGraph(const Graph& g, const Node& node, std::vector<ValueId>* fed_values) {
  Graph one;
  one.name() = node.name;
  one.set_opset(g.opset());
  std::map<ValueId, ValueId> remap;
  Node copy = node;
  for (ValueId& in : copy.inputs) {
    if (in == kNoValue) continue;
    auto it = remap.find(in);
    if (it != remap.end()) {
      in = it->second;
      continue;
    }
    const Value& v = g.value(in);
    ValueId id;
    if (v.constant) {
      id = one.AddConstant(v.name, v.dtype, v.shape, *v.constant);
    } else {
      id = one.AddInput(v.name, v.dtype, v.shape);
      fed_values->push_back(in);
    }
    remap[in] = id;
    in = id;
  }
  for (ValueId& out : copy.outputs) {
    if (out == kNoValue) continue;
    Value v = g.value(out);
    v.producer = kNoNode;
    out = one.AddValue(std::move(v));
    one.outputs().push_back(out);
  }
  one.AddNode(std::move(copy));
  return one;
}

}  // namespace

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

StatusOr<Graph> PlannedGraph(const std::string& model) {
  ASSIGN_OR_RETURN(Graph graph, LoadGraphForExecution(model));
  std::map<std::string, int64_t> symbols;
  for (ValueId id : graph.inputs())
    for (const Dim& d : graph.value(id).shape)
      if (!d.is_static()) symbols[d.symbol()] = 1;
  RETURN_IF_ERROR(SpecializeSymbols(graph, symbols).WithPrefix(model));
  RETURN_IF_ERROR(Annotate(graph).WithPrefix(model));
  return graph;
}

StatusOr<ModelTimings> MeasureModel(const std::string& model, const OpTimerOptions& options) {
  if (options.iterations < 1) return InvalidArgument("iterations must be >= 1");
  ModelTimings t;
  t.model = model;
  t.threads = ResolveNumThreads(options.threads);
  ASSIGN_OR_RETURN(Graph graph, PlannedGraph(model));

  auto registry = std::make_shared<KernelRegistry>();
  RegisterCpuKernels(*registry);
  std::unique_ptr<Device> cpu = CreateCpuDevice();
  ExecutorOptions exec_options;
  exec_options.num_threads = t.threads;

  // 1. Run the whole model once keeping every value (all are outputs).
  std::mt19937_64 rng(options.seed);
  std::vector<std::vector<std::byte>> input_data;
  std::vector<const void*> input_ptrs;
  for (ValueId id : graph.inputs()) {
    const Value& v = graph.value(id);
    input_data.push_back(RandomBytes(v.dtype, ElementCount(v.shape), rng));
    input_ptrs.push_back(input_data.back().data());
  }
  Graph keep_all = graph;
  std::vector<ValueId> kept;
  for (const Node& n : keep_all.nodes())
    for (ValueId out : n.outputs)
      if (out != kNoValue && !keep_all.IsConstant(out) && !keep_all.IsGraphOutput(out))
        kept.push_back(out);
  for (ValueId v : kept) keep_all.outputs().push_back(v);
  ASSIGN_OR_RETURN(std::unique_ptr<Executor> whole,
                   Executor::Create(keep_all, *registry, *cpu, exec_options));
  RETURN_IF_ERROR(whole->Run(input_ptrs));
  std::map<ValueId, const void*> value_data;
  for (size_t k = 0; k < graph.inputs().size(); ++k) value_data[graph.inputs()[k]] = input_ptrs[k];
  for (size_t k = 0; k < keep_all.outputs().size(); ++k)
    value_data[keep_all.outputs()[k]] = whole->output(k);

  // 2. Every node alone.
  for (const Node& node : graph.nodes()) {
    OpTiming op;
    op.node = node.name;
    op.op_type = node.op_type;
    op.op_class = ClassifyOp(node);
    op.annotation = node.annotation;
    std::vector<ValueId> fed;
    Graph one = SingleNodeGraph(graph, node, &fed);
    StatusOr<std::unique_ptr<Executor>> exec = Executor::Create(std::move(one), *registry, *cpu,
                                                                exec_options);
    if (!exec.ok()) return exec.status().WithPrefix("timing node '" + node.name + "'");
    std::vector<const void*> ptrs;
    for (ValueId v : fed) ptrs.push_back(value_data.at(v));
    if (!(*exec)->placements().empty()) op.implementation = (*exec)->placements()[0].implementation;
    for (int i = 0; i < options.warmup; ++i) RETURN_IF_ERROR((*exec)->Run(ptrs));
    std::vector<double> times;
    for (int i = 0; i < options.iterations; ++i) {
      const auto t0 = Clock::now();
      RETURN_IF_ERROR((*exec)->Run(ptrs));
      times.push_back(MicrosSince(t0));
    }
    op.median_us = Median(times);
    op.min_us = *std::min_element(times.begin(), times.end());
    t.ops.push_back(std::move(op));
  }
  whole.reset();

  // 3. End to end through the public API.
  if (options.end_to_end) {
    SessionOptions so;
    so.num_threads = options.threads;
    ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::Open(model, so));
    for (size_t k = 0; k < session->inputs().size(); ++k) {
      const TensorInfo& info = session->inputs()[k];
      std::vector<int64_t> dims;
      for (int64_t d : info.dims) dims.push_back(d < 0 ? 1 : d);
      RETURN_IF_ERROR(session->SetInput(
          info.name, Tensor::Borrow(info.dtype, dims, const_cast<void*>(input_ptrs[k]))));
    }
    for (int i = 0; i < std::max(1, options.warmup); ++i) RETURN_IF_ERROR(session->Run());
    std::unique_ptr<EnergyMeter> meter;
    if (options.measure_energy) {
      meter = std::make_unique<EnergyMeter>(DiscoverEnergySensors("/sys", &t.energy_notes));
      RETURN_IF_ERROR(meter->Start());
    }
    std::vector<double> times;
    for (int i = 0; i < options.iterations; ++i) {
      const auto t0 = Clock::now();
      RETURN_IF_ERROR(session->Run());
      times.push_back(MicrosSince(t0));
    }
    FinishRuns(meter.get(), times, options.iterations, t);
  }
  t.graph = std::move(graph);
  return t;
}

namespace {

// The devices MeasurePlan opens, mirroring Session::Open.
struct OpenedDevices {
  std::vector<std::unique_ptr<Device>> owned;
  std::vector<EngineDevice> engine;
  std::vector<std::string> notes;
};

StatusOr<OpenedDevices> OpenPlanDevices(const PlanTimerOptions& options, int threads,
                                        KernelRegistry& registry) {
  OpenedDevices d;
  d.owned.push_back(CreateCpuDevice());
  d.engine.push_back({d.owned.back().get(), false, threads});
  RegisterCpuKernels(registry);
  bool vgpu_kernels = false, cuda_kernels = false;
  for (const std::string& name : options.devices) {
    if (name == "cpu") continue;
    for (const auto& owned : d.owned)
      if (owned->name() == name) return InvalidArgument("device '" + name + "' named twice");
    EngineDevice e;
    if (name == "vgpu") {
      VgpuOptions vgpu;
      vgpu.timing = options.vgpu_timing;
      d.owned.push_back(CreateVgpuDevice(vgpu));
      e.threads = vgpu.threads;
      if (!vgpu_kernels) RegisterVgpuKernels(registry);
      vgpu_kernels = true;
      d.notes.push_back("vgpu: braid's VIRTUAL GPU (CPU kernels on their own thread and memory); "
                        "its times are a model, not a GPU measurement; timing shaping: " +
                        vgpu.timing.Describe());
    } else if (name == "cuda" || name.starts_with("cuda:")) {
      const long ordinal = name.size() > 5 ? std::strtol(name.c_str() + 5, nullptr, 10) : 0;
      if (ordinal < 0 || ordinal > 1024) return InvalidArgument("bad device '" + name + "'");
      ASSIGN_OR_RETURN(std::unique_ptr<Device> cuda, CreateCudaDevice(static_cast<int>(ordinal)));
      StatusOr<std::vector<CudaDeviceProperties>> props = QueryCudaDevices();
      if (props.ok())
        for (const CudaDeviceProperties& p : *props)
          if (p.ordinal == ordinal) e.host_addressable = p.integrated && p.can_map_host_memory;
      d.owned.push_back(std::move(cuda));
      if (!cuda_kernels) RegisterCudaKernels(registry);
      cuda_kernels = true;
    } else {
      return InvalidArgument("unknown device '" + name + "' (known: cpu, vgpu, cuda, cuda:K)");
    }
    e.device = d.owned.back().get();
    d.engine.push_back(e);
  }
  return d;
}

}  // namespace

StatusOr<PlanTimings> MeasurePlan(const std::string& model, const Plan* plan,
                                  const PlanTimerOptions& options) {
  if (options.iterations < 1) return InvalidArgument("iterations must be >= 1");
  PlanTimings t;
  t.model = model;
  t.threads = ResolveNumThreads(options.threads);
  t.iterations = options.iterations;
  ASSIGN_OR_RETURN(t.graph, PlannedGraph(model));
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
  ASSIGN_OR_RETURN(std::unique_ptr<Engine> engine,
                   Engine::Create(t.graph, t.plan, *registry, devices.engine, engine_options));
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
  std::map<std::string, std::string> implementations;
  for (const NodePlacement& p : t.placements) implementations[p.node] = p.implementation;
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
      s.annotation = it->second->annotation;
      s.implementation = implementations.count(st.name) ? implementations[st.name] : "";
    }
    t.steps.push_back(std::move(s));
  }
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
  return timing;
}

std::vector<OpMeasurement> ToMeasurements(const ModelTimings& t) {
  std::vector<OpMeasurement> out;
  for (const OpTiming& op : t.ops)
    out.push_back({op.op_class, op.annotation.flops, op.annotation.bytes, op.median_us});
  return out;
}

}  // namespace braid::cli

namespace braid::cli {

DeviceSpec CpuSpecFromTimings(const std::vector<const ModelTimings*>& timings) {
  DeviceSpec d;
  d.name = "cpu";
  d.kind = "cpu";
  d.description = "host CPU (calibrated)";
  double best_gflops = 0, best_gbps = 0;
  std::vector<double> small;
  std::vector<OpMeasurement> all;
  std::string models;
  for (const ModelTimings* t : timings) {
    d.compute_units = t->threads;
    models += (models.empty() ? "" : ", ") + t->model;
    for (const OpTiming& op : t->ops) {
      if (op.median_us <= 0) continue;
      const double gflops = op.annotation.flops / op.median_us * 1e-3;
      const double gbps = op.annotation.bytes / op.median_us * 1e-3;
      if (op.op_class == OpClass::kConv || op.op_class == OpClass::kGemm)
        best_gflops = std::max(best_gflops, gflops);
      if (op.op_class == OpClass::kElementwise || op.op_class == OpClass::kPool ||
          op.op_class == OpClass::kDataMovement || op.op_class == OpClass::kNormalization)
        best_gbps = std::max(best_gbps, gbps);
      small.push_back(op.median_us);
    }
    for (const OpMeasurement& m : ToMeasurements(*t)) all.push_back(m);
  }
  d.peak_gflops = best_gflops > 0 ? best_gflops : 1;
  d.memory_bandwidth_gbps = best_gbps > 0 ? best_gbps : 1;
  std::sort(small.begin(), small.end());
  d.launch_overhead_us = small.empty() ? 0 : small[small.size() / 20];  // 5th percentile op
  d.active_power_w = 0;
  d.idle_power_w = 0;
  d.efficiency = FitEfficiency(d, all);
  const std::string how = "measured by braid calibrate (" + models + ", " +
                          std::to_string(d.compute_units) + " threads)";
  d.sources["compute_units"] = "intra-op threads used while measuring";
  d.sources["peak_gflops"] = "best conv/GEMM throughput " + how;
  d.sources["memory_bandwidth_gbps"] = "best memory-bound op throughput " + how;
  d.sources["launch_overhead_us"] = "5th percentile per-op time " + how;
  d.sources["efficiency"] = "per-class fit to per-op medians " + how;
  d.sources["active_power_w"] = "not measured (no power sensor used by calibrate); 0";
  d.sources["idle_power_w"] = "not measured; 0";
  return d;
}

}  // namespace braid::cli
