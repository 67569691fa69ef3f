#include "profiling/op_timer.h"

#include <sched.h>

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <thread>

#include "api/model_loader.h"
#include "braid/braid.h"
#include "graph/annotate.h"
#include "graph/op_schema.h"
#include "graph/passes/passes.h"
#include "graph/passes/specialize.h"
#include "kernels/cpu/cpu_device.h"
#include "kernels/cpu/sparse/crossover.h"
#include "profiling/cache_info.h"
#include "profiling/energy.h"
#include "profiling/timed_runs.h"
#include "runtime/engine.h"
#include "runtime/session_internal.h"
#include "runtime/thread_pinning.h"
#include "scheduler/cache_residency.h"
#include "scheduler/profile_fit.h"

namespace braid::profiling {
namespace {

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

StatusOr<CpuKernelOptions> CpuKernelOptionsOf(const OpTimerOptions& options) {
  CpuKernelOptions kernels;
  kernels.sparse = options.sparse_kernels;
  if (!options.sparse_crossover.empty()) {
    StatusOr<SparseCrossover> table =
        ParseSparseCrossover(options.sparse_crossover, kernels.sparse_options.crossover);
    if (!table.ok()) return InvalidArgument("sparse crossover: " + table.status().message());
    kernels.sparse_options.crossover = *table;
  }
  return kernels;
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
// own sequential engine on those inputs (medians into t.ops). Returns the graph-input
// buffers (random) through `input_data` for the caller's end-to-end runs.
Status TimeEachNode(const Graph& graph, const KernelRegistry& registry,
                    const OpTimerOptions& options, ModelTimings& t,
                    std::vector<std::vector<std::byte>>& input_data) {
  std::unique_ptr<Device> cpu = CreateCpuDevice();
  EngineOptions exec_options;  // the sequential path, untimed per step
  exec_options.num_threads = t.threads;
  exec_options.step_times = false;

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
  ASSIGN_OR_RETURN(std::unique_ptr<Engine> whole,
                   Engine::CreateSequential(keep_all, registry, *cpu, exec_options));
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
    StatusOr<std::unique_ptr<Engine>> exec =
        Engine::CreateSequential(std::move(one), registry, *cpu, exec_options);
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
    ASSIGN_OR_RETURN(CpuKernelOptions from_options, CpuKernelOptionsOf(options));
    RegisterCpuKernels(registry, from_options);
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
  ASSIGN_OR_RETURN(CpuKernelOptions cpu_kernels, CpuKernelOptionsOf(options));
  RegisterCpuKernels(*registry, cpu_kernels);
  std::vector<std::vector<std::byte>> input_data;
  RETURN_IF_ERROR(TimeEachNode(graph, *registry, options, t, input_data));
  std::vector<const void*> input_ptrs;
  for (const auto& d : input_data) input_ptrs.push_back(d.data());

  // 3. End to end through the public API.
  if (options.end_to_end) {
    SessionOptions so;
    so.num_threads = options.threads;
    so.sparse_kernels = options.sparse_kernels;
    so.sparse_crossover = options.sparse_crossover;
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

DeviceSpec CpuSpecFromTimings(const std::vector<const ModelTimings*>& timings,
                              double dram_bandwidth_gbps) {
  std::vector<MeasuredOps> runs;
  for (const ModelTimings* t : timings)
    runs.push_back({.label = t->model, .threads = t->threads, .ops = ToMeasurements(*t)});
  return FitCpuSpec(runs, DiscoverHostCaches(), dram_bandwidth_gbps);
}

}  // namespace braid::profiling
