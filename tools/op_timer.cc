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
#include "runtime/energy.h"
#include "runtime/executor.h"
#include "runtime/model_loader.h"
#include "runtime/session_internal.h"

namespace braid::cli {
namespace {

using Clock = std::chrono::steady_clock;

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

StatusOr<ModelTimings> MeasureModel(const std::string& model, const OpTimerOptions& options) {
  if (options.iterations < 1) return InvalidArgument("iterations must be >= 1");
  ModelTimings t;
  t.model = model;
  t.threads = ResolveNumThreads(options.threads);
  ASSIGN_OR_RETURN(Graph graph, LoadGraphForExecution(model));
  std::map<std::string, int64_t> symbols;
  for (ValueId id : graph.inputs())
    for (const Dim& d : graph.value(id).shape)
      if (!d.is_static()) symbols[d.symbol()] = 1;
  RETURN_IF_ERROR(SpecializeSymbols(graph, symbols).WithPrefix(model));
  RETURN_IF_ERROR(Annotate(graph).WithPrefix(model));

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
    if (meter) {
      StatusOr<EnergyReport> report = meter->Stop();
      if (!report.ok()) {
        t.energy_notes.push_back(report.status().message());
      } else if (report->measured) {
        t.energy_j_per_inference = report->total_joules / options.iterations;
        t.energy_source = report->total_from;
      }
    }
    t.end_to_end_median_us = Median(times);
    t.end_to_end_min_us = *std::min_element(times.begin(), times.end());
  }
  t.graph = std::move(graph);
  return t;
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
