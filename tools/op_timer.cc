#include "tools/op_timer.h"

#include "tools/cli_common.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <numeric>
#include <optional>
#include <random>
#include <thread>

#include "braid/braid.h"
#include "graph/annotate.h"
#include "graph/op_schema.h"
#include "graph/passes/passes.h"
#include "graph/passes/specialize.h"
#include "kernels/cpu/cpu_device.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/vgpu/streaming_copy.h"
#include "kernels/vgpu/vgpu_device.h"
#include "kernels/vgpu/worker_stream.h"
#include "models/graph_builder.h"
#include "runtime/energy.h"
#include "runtime/engine.h"
#include "runtime/executor.h"
#include "runtime/model_loader.h"
#include "runtime/session_internal.h"
#include "runtime/thread_pinning.h"
#include "scheduler/cache_residency.h"

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

namespace {

// Runs `graph` once keeping every value, then times every node alone in its
// own executor on those inputs (medians into t.ops). Returns the graph-input
// buffers (random) through `input_data` for the caller's end-to-end runs.
Status TimeEachNode(const Graph& graph, const KernelRegistry& registry,
                    const OpTimerOptions& options, ModelTimings& t,
                    std::vector<std::vector<std::byte>>& input_data) {
  std::unique_ptr<Device> cpu = CreateCpuDevice();
  ExecutorOptions exec_options;
  exec_options.num_threads = t.threads;

  // 1. Run the whole model once keeping every value (all are outputs).
  std::mt19937_64 rng(options.seed);
  std::vector<const void*> input_ptrs;
  input_data.clear();
  for (ValueId id : graph.inputs()) {
    const Value& v = graph.value(id);
    input_data.push_back(RandomBytes(v.dtype, ElementCount(v.shape), rng));
  }
  for (const auto& d : input_data) input_ptrs.push_back(d.data());
  Graph keep_all = graph;
  std::vector<ValueId> kept;
  for (const Node& n : keep_all.nodes())
    for (ValueId out : n.outputs)
      if (out != kNoValue && !keep_all.IsConstant(out) && !keep_all.IsGraphOutput(out))
        kept.push_back(out);
  for (ValueId v : kept) keep_all.outputs().push_back(v);
  ASSIGN_OR_RETURN(std::unique_ptr<Executor> whole,
                   Executor::Create(keep_all, registry, *cpu, exec_options));
  RETURN_IF_ERROR(whole->Run(input_ptrs));
  std::map<ValueId, const void*> value_data;
  for (size_t k = 0; k < graph.inputs().size(); ++k) value_data[graph.inputs()[k]] = input_ptrs[k];
  for (size_t k = 0; k < keep_all.outputs().size(); ++k)
    value_data[keep_all.outputs()[k]] = whole->output(k);

  // 2. Every node alone. With evict_bytes, one walk buffer per core the
  // op's threads may run on (a worker's L2 holds its chunk of the last
  // repeat's output too): the process's first t.threads allowed cores.
  std::vector<int> eviction_cores;
  if (options.evict_bytes > 0 && t.threads > 1) {
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (sched_getaffinity(0, sizeof allowed, &allowed) == 0)
      for (int c = 0; c < CPU_SETSIZE && static_cast<int>(eviction_cores.size()) < t.threads; ++c)
        if (CPU_ISSET(c, &allowed)) eviction_cores.push_back(c);
  }
  std::vector<unsigned char> eviction(
      options.evict_bytes * std::max<size_t>(1, eviction_cores.size()));
  for (const Node& node : graph.nodes()) {
    OpTiming op;
    op.node = node.name;
    op.op_type = node.op_type;
    op.op_class = ClassifyOp(node);
    op.annotation = node.annotation;
    std::vector<ValueId> fed;
    Graph one = SingleNodeGraph(graph, node, &fed);
    StatusOr<std::unique_ptr<Executor>> exec = Executor::Create(std::move(one), registry, *cpu,
                                                                exec_options);
    if (!exec.ok()) return exec.status().WithPrefix("timing node '" + node.name + "'");
    std::vector<const void*> ptrs;
    for (ValueId v : fed) ptrs.push_back(value_data.at(v));
    if (!(*exec)->placements().empty()) op.implementation = (*exec)->placements()[0].implementation;
    std::vector<size_t> fed_bytes;
    for (ValueId v : fed) fed_bytes.push_back(static_cast<size_t>(ValueBytes(graph, v)));
    // On each core the op's threads may use: walk (write, so the lines are
    // owned and then dropped like a model's) that core's share of `eviction`,
    // then read the inputs.
    auto walk_and_read = [&](size_t core, bool pin) {
      if (pin) {  // a walker thread of its own
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(eviction_cores[core], &one);
        (void)PinCurrentThread(one);
      }
      unsigned char* mine = eviction.data() + core * options.evict_bytes;
      for (size_t b = 0; b < options.evict_bytes; b += 64) ++mine[b];
      unsigned char sum = 0;
      for (size_t k = 0; k < ptrs.size(); ++k) {
        const auto* bytes = static_cast<const unsigned char*>(ptrs[k]);
        for (size_t b = 0; b < fed_bytes[k]; b += 64) sum += bytes[b];
      }
      mine[0] += sum;  // keeps the reads
    };
    auto prepare_caches = [&] {
      if (eviction.empty()) return;
      if (eviction_cores.size() < 2) return walk_and_read(0, false);
      std::vector<std::thread> walkers;
      for (size_t core = 0; core < eviction_cores.size(); ++core)
        walkers.emplace_back(walk_and_read, core, true);
      for (std::thread& w : walkers) w.join();
    };
    for (int i = 0; i < options.warmup; ++i) {
      prepare_caches();
      RETURN_IF_ERROR((*exec)->Run(ptrs));
    }
    std::vector<double> times;
    for (int i = 0; i < options.iterations; ++i) {
      prepare_caches();
      const auto t0 = Clock::now();
      RETURN_IF_ERROR((*exec)->Run(ptrs));
      times.push_back(MicrosSince(t0));
    }
    op.median_us = Median(times);
    op.min_us = *std::min_element(times.begin(), times.end());
    t.ops.push_back(std::move(op));
  }
  return Status::Ok();
}

}  // namespace

StatusOr<ModelTimings> MeasureGraph(Graph graph, const std::string& label,
                                    const OpTimerOptions& options,
                                    const CpuKernelOptions* kernels) {
  if (options.iterations < 1) return InvalidArgument("iterations must be >= 1");
  ModelTimings t;
  t.model = label;
  t.threads = ResolveNumThreads(options.threads);
  KernelRegistry registry;
  if (kernels != nullptr) {
    RegisterCpuKernels(registry, *kernels);
  } else {
    ASSIGN_OR_RETURN(CpuKernelOptions from_env, CpuKernelOptionsFromEnvironment());
    RegisterCpuKernels(registry, from_env);
  }
  std::vector<std::vector<std::byte>> input_data;
  RETURN_IF_ERROR(TimeEachNode(graph, registry, options, t, input_data).WithPrefix(label));
  t.graph = std::move(graph);
  return t;
}

StatusOr<ModelTimings> MeasureModel(const std::string& model, const OpTimerOptions& options) {
  if (options.iterations < 1) return InvalidArgument("iterations must be >= 1");
  ModelTimings t;
  t.model = model;
  t.threads = ResolveNumThreads(options.threads);
  ASSIGN_OR_RETURN(Graph graph, PlannedGraph(model));
  auto registry = std::make_shared<KernelRegistry>();
  ASSIGN_OR_RETURN(CpuKernelOptions cpu_kernels, CpuKernelOptionsFromEnvironment());
  RegisterCpuKernels(*registry, cpu_kernels);
  std::vector<std::vector<std::byte>> input_data;
  RETURN_IF_ERROR(TimeEachNode(graph, *registry, options, t, input_data));
  std::vector<const void*> input_ptrs;
  for (const auto& d : input_data) input_ptrs.push_back(d.data());

  // 3. End to end through the public API.
  if (options.end_to_end) {
    SessionOptions so;
    so.num_threads = options.threads;
    ASSIGN_OR_RETURN(SparseEnvironment sparse, ReadSparseEnvironment());
    so.sparse_kernels = sparse.sparse;
    so.sparse_crossover = sparse.crossover;
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
  ASSIGN_OR_RETURN(CpuKernelOptions cpu_kernels, CpuKernelOptionsFromEnvironment());
  RegisterCpuKernels(registry, cpu_kernels);
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
      if (!vgpu_kernels) RegisterVgpuKernels(registry, cpu_kernels);
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

std::vector<OpMeasurement> ToMeasurements(const ModelTimings& t) {
  std::vector<OpMeasurement> out;
  const bool with_graph = t.graph.num_nodes() == static_cast<int>(t.ops.size());
  // The host's caches, as CpuSpecFromTimings records them for the fit.
  const std::vector<ColdBytes> cold =
      with_graph && t.in_run_order
          ? ColdBytesPerNode(t.graph, CacheBytesPerCore(), LastLevelCacheBytes())
          : std::vector<ColdBytes>(t.ops.size());
  for (size_t i = 0; i < t.ops.size(); ++i) {
    const OpTiming& op = t.ops[i];
    if (op.view) continue;  // no kernel ran: nothing to fit
    OpMeasurement m;
    m.op_class = op.op_class;
    m.flops = op.annotation.flops;
    m.bytes = op.annotation.bytes;
    m.measured_us = op.median_us;
    m.op_type = op.op_type;
    m.weight_sparsity = op.annotation.weight_sparsity;
    if (with_graph) {
      const OpWork w = OpWorkOf(t.graph.node(static_cast<NodeId>(i)), &t.graph);
      m.bytes = w.bytes;  // a Gather's rows, not its table
      m.sparse_class = std::string(w.sparse_class);
      m.op_type = std::string(w.op_type);  // kernel variant key ("Conv:1x1", ...)
      AssignColdBytes(cold[i], m);
    }
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace braid::cli

namespace braid::cli {

double CacheBytesPerCore() {
  long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  if (l2 > 0) return static_cast<double>(l2);
  std::ifstream f("/sys/devices/system/cpu/cpu0/cache/index2/size");
  std::string text;
  if (f >> text && !text.empty()) {
    const double v = std::strtod(text.c_str(), nullptr);
    if (text.back() == 'K') return v * 1024;
    if (text.back() == 'M') return v * 1024 * 1024;
    return v;
  }
  return 0;
}

double LastLevelCacheBytes(const std::string& cache_dir) {
  // sysfs, not sysconf: a KVM guest here reported a 320 MB L3 through
  // sysconf and 32 MB (the CPU's) through sysfs.
  double best = 0;
  int best_level = 0;
  for (int index = 0; index < 16; ++index) {
    const std::string dir = cache_dir + "/index" + std::to_string(index);
    std::ifstream level_file(dir + "/level"), type_file(dir + "/type"), size_file(dir + "/size");
    int level = 0;
    std::string type, size;
    if (!(level_file >> level) || !(type_file >> type) || !(size_file >> size) || size.empty())
      continue;
    if (type == "Instruction" || level < best_level) continue;
    double bytes = std::strtod(size.c_str(), nullptr);
    if (size.back() == 'K') bytes *= 1024;
    if (size.back() == 'M') bytes *= 1024 * 1024;
    best = bytes;
    best_level = level;
  }
  return best_level >= 3 ? best : 0;
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

DeviceSpec CpuSpecFromTimings(const std::vector<const ModelTimings*>& timings,
                              double dram_bandwidth_gbps) {
  DeviceSpec d;
  d.name = "cpu";
  d.kind = "cpu";
  d.description = "host CPU (calibrated)";
  d.cache_bytes = CacheBytesPerCore();
  if (const double llc = LastLevelCacheBytes(); dram_bandwidth_gbps > 0 && llc > d.cache_bytes) {
    d.llc_bytes = llc;
    d.dram_bandwidth_gbps = dram_bandwidth_gbps;
  }
  double best_gflops = 0, best_gbps = 0, best_cache_gbps = 0, best_dram_gbps = 0;
  std::vector<double> small;
  std::vector<OpMeasurement> all;
  std::string models;
  for (const ModelTimings* t : timings) {
    d.compute_units = t->threads;
    models += (models.empty() ? "" : ", ") + t->model;
    for (const OpMeasurement& m : ToMeasurements(*t)) {
      all.push_back(m);
      if (m.measured_us <= 0) continue;
      const double gflops = m.flops / m.measured_us * 1e-3;
      const double gbps = m.bytes / m.measured_us * 1e-3;
      if (m.op_class == OpClass::kConv || m.op_class == OpClass::kGemm)
        best_gflops = std::max(best_gflops, gflops);
      // Streaming ops only (a Reshape / Flatten may not touch its bytes).
      if (m.op_class == OpClass::kElementwise || m.op_class == OpClass::kPool ||
          m.op_class == OpClass::kNormalization || m.op_class == OpClass::kGemm) {
        if (m.op_class != OpClass::kGemm || m.flops < 4 * m.bytes) {  // GEMV-like
          best_gbps = std::max(best_gbps, gbps);
          if (d.cache_bytes > 0 && m.bytes <= d.cache_bytes)
            best_cache_gbps = std::max(best_cache_gbps, gbps);
          if (d.cache_bytes > 0 && m.bytes > 2 * d.cache_bytes)
            best_dram_gbps = std::max(best_dram_gbps, gbps);
        }
      }
      small.push_back(m.measured_us);
    }
  }
  d.peak_gflops = best_gflops > 0 ? best_gflops : 1;
  // With a cache tier: DRAM bandwidth from ops well beyond the cache, cache
  // bandwidth from ops inside it; without samples on both sides, one tier.
  if (best_cache_gbps > 0 && best_dram_gbps > 0 && best_cache_gbps > best_dram_gbps) {
    d.memory_bandwidth_gbps = best_dram_gbps;
    d.cache_bandwidth_gbps = best_cache_gbps;
  } else {
    d.memory_bandwidth_gbps = best_gbps > 0 ? best_gbps : 1;
    d.cache_bytes = 0;
  }
  std::sort(small.begin(), small.end());
  d.launch_overhead_us = small.empty() ? 0 : small[small.size() / 20];  // 5th percentile op
  d.active_power_w = 0;
  d.idle_power_w = 0;
  FitDevice(d, all);
  const std::string how = "measured by braid calibrate (" + models + ", " +
                          std::to_string(d.compute_units) + " threads)";
  d.sources["compute_units"] = "intra-op threads used while measuring";
  d.sources["peak_gflops"] = "best conv/GEMM throughput " + how;
  d.sources["memory_bandwidth_gbps"] =
      d.cache_bytes > 0 ? "best memory-bound op throughput above 2x cache_bytes " + how
                        : "best memory-bound op throughput " + how;
  if (d.llc_bytes > 0) {
    d.sources["llc_bytes"] = "last-level cache (sysfs)";
    d.sources["dram_bandwidth_gbps"] =
        "measured by braid calibrate: two Adds over vectors of 2x llc_bytes (64 MB at least), "
        "bytes read plus twice the bytes written over time, " +
        std::to_string(d.compute_units) + " threads";
  }
  if (d.cache_bytes > 0) {
    d.sources["cache_bytes"] = "L2 cache per core (sysconf / sysfs)";
    d.sources["cache_bandwidth_gbps"] = "best memory-bound op throughput within cache_bytes " + how;
  }
  d.sources["launch_overhead_us"] = "5th percentile per-op time " + how;
  d.sources["efficiency"] = "per-class fit to per-op medians " + how;
  if (!d.op_types.empty())
    d.sources["op_types"] = "per-op-type factor on the class fit's residual " + how;
  d.sources["active_power_w"] = "not measured (no power sensor used by calibrate); 0";
  d.sources["idle_power_w"] = "not measured; 0";
  return d;
}

}  // namespace braid::cli
