// MeasureActivationSparsity: expose the watched tensors as graph outputs, run
// a Session on the host device alone on random or given inputs, count zeros.
#include "runtime/activation_sparsity.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <utility>

#include "kernels/backend_registry.h"
#include "kernels/params/elementwise.h"
#include "runtime/session_internal.h"

namespace braid {
namespace {

struct ZeroCount {
  int64_t zeros = 0;
  int64_t elements = 0;
};

ZeroCount CountZeros(const Tensor& t) {
  ZeroCount c;
  if (t.dtype() != DataType::kF32) return c;
  const float* p = t.data<float>();
  const int64_t n = t.elements();
  int64_t zeros = 0;
  for (int64_t i = 0; i < n; ++i) zeros += p[i] == 0.0f;  // +0 and -0
  c.zeros = zeros;
  c.elements = n;
  return c;
}

std::string ListInputs(const std::vector<TensorInfo>& inputs) {
  std::string s;
  for (const TensorInfo& i : inputs) s += (s.empty() ? "" : ", ") + i.ToString();
  return s;
}

// N(0,1) draws: roughly what normalized image inputs look like, and never
// exactly zero in practice, so the graph inputs themselves count as dense.
struct RandomInput {
  std::vector<int64_t> dims;
  std::vector<std::byte> bytes;
  Tensor tensor;
};

// Integer and bool inputs are indices, masks or ids: random values could be
// out of range, so they must be given.
Status CheckRandomisable(const TensorInfo& info) {
  if (info.dtype == DataType::kF32 || info.dtype == DataType::kF16) return Status::Ok();
  return InvalidArgument("input " + info.ToString() + " is " +
                         DataTypeName(info.dtype) +
                         ": random values may not be valid indices, masks or ids; give real "
                         "data for it");
}

StatusOr<RandomInput> MakeRandomInput(const TensorInfo& info, int64_t batch,
                                      std::mt19937_64& rng) {
  RETURN_IF_ERROR(CheckRandomisable(info));
  RandomInput r;
  for (int64_t d : info.dims) r.dims.push_back(d < 0 ? batch : d);
  ASSIGN_OR_RETURN(uint64_t bytes, CheckedTensorBytes(info.dtype, r.dims));
  r.bytes.resize(bytes);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const size_t n = bytes / DataTypeSize(info.dtype);
  if (info.dtype == DataType::kF32) {
    auto* p = reinterpret_cast<float*>(r.bytes.data());
    for (size_t i = 0; i < n; ++i) p[i] = normal(rng);
  } else {
    auto* p = reinterpret_cast<uint16_t*>(r.bytes.data());
    for (size_t i = 0; i < n; ++i) p[i] = FloatToHalf(normal(rng));
  }
  r.tensor = Tensor::Borrow(info.dtype, r.dims, r.bytes.data());
  return r;
}

bool Watched(const Graph& g, ValueId v) {
  return v != kNoValue && !g.IsConstant(v) && g.value(v).dtype == DataType::kF32;
}

// The model run with the `watched` values exposed: calls observe(value,
// tensor) for each of them on every run. `what` prefixes errors.
struct ObservedRuns {
  int runs = 0;
  std::vector<std::string> random_inputs;
};

StatusOr<ObservedRuns> ObserveActivations(
    const Graph& graph, const ActivationSparsityOptions& options, const std::set<ValueId>& watched,
    const std::string& what, const std::function<void(ValueId, const Tensor&)>& observe) {
  if (options.samples < 1)
    return InvalidArgument(what + ": samples must be >= 1, got " + std::to_string(options.samples));
  if (options.batch < 1)
    return InvalidArgument(what + ": batch must be >= 1, got " + std::to_string(options.batch));
  if (options.num_threads < 0) return InvalidArgument(what + ": num_threads must be >= 0");
  std::set<ValueId> graph_inputs(graph.inputs().begin(), graph.inputs().end());

  // Graph inputs are observed from the data fed; the rest become extra
  // graph outputs.
  Graph probe = graph;
  std::map<ValueId, std::string> output_name;  // watched non-input value -> its name
  for (ValueId v : watched) {
    if (graph_inputs.count(v)) continue;
    Value& value = probe.value(v);
    if (value.name.empty()) value.name = "__braid_activation_" + std::to_string(v);
    output_name[v] = value.name;
    if (!probe.IsGraphOutput(v)) probe.outputs().push_back(v);
  }

  // The host alone (the backend registry's host, with its default kernels).
  auto registry = std::make_shared<KernelRegistry>();
  StatusOr<std::vector<OpenedDevice>> host =
      OpenBackendDevices(BuiltinBackends(), {}, BackendOptions{}, *registry);
  if (!host.ok()) return host.status().WithPrefix(what);
  SessionOptions session_options;
  session_options.num_threads = options.num_threads;
  StatusOr<std::unique_ptr<Session>> opened = CreateSession(
      std::move(probe), session_options, registry, std::move(host->front().device));
  if (!opened.ok()) return opened.status().WithPrefix(what);
  Session& session = **opened;

  // Inputs: given ones must name a model input; the rest are random.
  for (const auto& [name, tensors] : options.inputs) {
    const bool known = std::any_of(session.inputs().begin(), session.inputs().end(),
                                   [&](const TensorInfo& i) { return i.name == name; });
    if (!known)
      return InvalidArgument(what + ": the model has no input '" + name +
                             "'; its inputs are: " + ListInputs(session.inputs()));
    if (tensors.empty())
      return InvalidArgument(what + ": no tensor given for input '" + name + "'");
  }
  ObservedRuns observed;
  size_t longest_given = 0;
  for (const TensorInfo& info : session.inputs()) {
    auto given = options.inputs.find(info.name);
    if (given == options.inputs.end()) {
      observed.random_inputs.push_back(info.name);
      RETURN_IF_ERROR(CheckRandomisable(info).WithPrefix(what));
    } else {
      longest_given = std::max(longest_given, given->second.size());
    }
  }
  observed.runs = observed.random_inputs.empty() ? static_cast<int>(longest_given) : options.samples;

  std::mt19937_64 rng(options.seed);
  std::vector<RandomInput> random(session.inputs().size());
  for (int run = 0; run < observed.runs; ++run) {
    for (size_t k = 0; k < session.inputs().size(); ++k) {
      const TensorInfo& info = session.inputs()[k];
      const ValueId id = graph.inputs()[k];
      auto given = options.inputs.find(info.name);
      Tensor tensor;
      if (given != options.inputs.end()) {
        tensor = given->second[static_cast<size_t>(run) % given->second.size()];
      } else {
        ASSIGN_OR_RETURN(random[k], MakeRandomInput(info, options.batch, rng));
        tensor = random[k].tensor;
      }
      if (Status s = session.SetInput(info.name, tensor); !s.ok()) return s.WithPrefix(what);
      if (watched.count(id)) observe(id, tensor);
    }
    if (Status s = session.Run(); !s.ok()) return s.WithPrefix(what);
    for (const auto& [v, name] : output_name) {
      ASSIGN_OR_RETURN(Tensor t, session.GetOutput(name));
      observe(v, t);
    }
    if (options.on_run) options.on_run(run + 1, observed.runs);
  }
  return observed;
}

// Every non-constant f32 node input; an error names a value without a dtype.
StatusOr<std::set<ValueId>> NodeInputsToWatch(const Graph& graph, const std::string& what) {
  std::set<ValueId> watched;
  for (const Node& n : graph.nodes())
    for (ValueId v : n.inputs) {
      if (v == kNoValue || graph.IsConstant(v)) continue;
      if (graph.value(v).dtype == DataType::kUndefined)
        return FailedPrecondition(what + ": value '" + graph.value(v).name + "' read by node '" +
                                  n.name + "' has no dtype; run the graph passes (shape inference) first");
      if (Watched(graph, v)) watched.insert(v);
    }
  return watched;
}

// The second pass of percentile calibration: histograms over the measured
// ranges, then each range narrowed to the percentiles.
Status ClipToPercentiles(const Graph& graph, const ActivationSparsityOptions& options,
                         double percentile, ActivationRangeReport& report) {
  constexpr int kBins = 2048;
  std::set<ValueId> watched;
  std::map<ValueId, std::vector<int64_t>> histograms;
  for (const auto& [v, range] : report.ranges) {
    if (!(range.max > range.min)) continue;  // one value: nothing to clip
    watched.insert(v);
    histograms[v].assign(kBins, 0);
  }
  ActivationSparsityOptions quiet = options;
  quiet.on_run = nullptr;
  RETURN_IF_ERROR(ObserveActivations(graph, quiet, watched, "activation histograms",
                                     [&](ValueId v, const Tensor& t) {
                                       if (t.dtype() != DataType::kF32) return;
                                       const ActivationRange& r = report.ranges.at(v);
                                       std::vector<int64_t>& bins = histograms.at(v);
                                       const double width =
                                           (static_cast<double>(r.max) - r.min) / kBins;
                                       const float* p = t.data<float>();
                                       for (int64_t i = 0; i < t.elements(); ++i) {
                                         if (!std::isfinite(p[i])) continue;
                                         // In double and clamped before the cast: a
                                         // range wider than FLT_MAX stays finite.
                                         const double bin = std::clamp(
                                             (static_cast<double>(p[i]) - r.min) / width, 0.0,
                                             kBins - 1.0);
                                         ++bins[static_cast<size_t>(bin)];
                                       }
                                     })
                      .status());
  const double tail = (100.0 - percentile) / 100.0;
  for (auto& [v, bins] : histograms) {
    ActivationRange& r = report.ranges.at(v);
    int64_t total = 0;
    for (int64_t c : bins) total += c;
    if (total == 0) continue;
    const double cut = tail * static_cast<double>(total);
    const double width = (static_cast<double>(r.max) - r.min) / kBins;
    auto count = [&](int bin) { return static_cast<double>(bins[static_cast<size_t>(bin)]); };
    // The bins wholly within a tail are dropped.
    int low = 0, high = kBins - 1;
    for (double below = 0; low < kBins - 1 && below + count(low) <= cut; ++low) below += count(low);
    for (double above = 0; high > 0 && above + count(high) <= cut; --high) above += count(high);
    if (low > high) continue;
    const float lo = static_cast<float>(r.min + width * low);
    const float hi = static_cast<float>(r.min + width * (high + 1));
    r.min = std::max(r.min, lo);
    r.max = std::min(r.max, hi);
  }
  return Status::Ok();
}

}  // namespace

StatusOr<ActivationSparsityReport> MeasureActivationSparsity(
    Graph& graph, const ActivationSparsityOptions& options) {
  const std::string what = "activation sparsity";
  ASSIGN_OR_RETURN(const std::set<ValueId> watched, NodeInputsToWatch(graph, what));
  std::map<ValueId, ZeroCount> counts;
  ASSIGN_OR_RETURN(const ObservedRuns observed,
                   ObserveActivations(graph, options, watched, what,
                                      [&](ValueId v, const Tensor& t) {
                                        const ZeroCount c = CountZeros(t);
                                        counts[v].zeros += c.zeros;
                                        counts[v].elements += c.elements;
                                      }));
  ActivationSparsityReport report;
  report.runs = observed.runs;
  report.random_inputs = observed.random_inputs;

  // Per node, element-weighted over its watched inputs; set only now, so an
  // error above leaves the graph as it was.
  for (NodeId id = 0; id < graph.num_nodes(); ++id) {
    Node& n = graph.node(id);
    ZeroCount total;
    for (ValueId v : n.inputs) {
      auto c = counts.find(v);
      if (c == counts.end()) continue;
      total.zeros += c->second.zeros;
      total.elements += c->second.elements;
    }
    if (total.elements == 0) {
      ++report.unmeasured_nodes;
      continue;
    }
    NodeActivationSparsity m;
    m.node = id;
    m.name = n.name;
    m.op_type = n.op_type;
    m.sparsity = static_cast<double>(total.zeros) / static_cast<double>(total.elements);
    m.elements = total.elements / report.runs;
    n.annotation.activation_sparsity = m.sparsity;
    report.nodes.push_back(std::move(m));
  }
  return report;
}

StatusOr<ActivationRangeReport> MeasureActivationRanges(const Graph& graph,
                                                        const ActivationSparsityOptions& options,
                                                        double percentile) {
  const std::string what = "activation ranges";
  if (!(percentile > 50 && percentile <= 100))
    return InvalidArgument(what + ": the percentile must be in (50, 100], got " +
                           std::to_string(percentile));
  ASSIGN_OR_RETURN(std::set<ValueId> watched, NodeInputsToWatch(graph, what));
  for (const Node& n : graph.nodes())
    for (ValueId v : n.outputs)
      if (Watched(graph, v)) watched.insert(v);
  ActivationRangeReport report;
  ASSIGN_OR_RETURN(const ObservedRuns observed,
                   ObserveActivations(graph, options, watched, what, [&](ValueId v, const Tensor& t) {
                     if (t.dtype() != DataType::kF32 || t.elements() == 0) return;
                     const float* p = t.data<float>();
                     float lo = std::numeric_limits<float>::infinity(), hi = -lo;
                     for (int64_t i = 0; i < t.elements(); ++i) {
                       if (!std::isfinite(p[i])) continue;  // a fault, not the range
                       lo = std::min(lo, p[i]);
                       hi = std::max(hi, p[i]);
                     }
                     if (lo > hi) return;  // nothing finite
                     auto [it, fresh] = report.ranges.try_emplace(v, ActivationRange{lo, hi});
                     if (!fresh) {
                       it->second.min = std::min(it->second.min, lo);
                       it->second.max = std::max(it->second.max, hi);
                     }
                   }));
  report.runs = observed.runs;
  report.random_inputs = observed.random_inputs;
  if (percentile < 100) RETURN_IF_ERROR(ClipToPercentiles(graph, options, percentile, report));
  return report;
}

namespace {

// Sums for SQNR and cosine of a pair of tensors, accumulated over runs.
struct PairSums {
  double dot = 0, norm_a = 0, norm_b = 0, diff = 0;
  void Add(const float* a, const float* b, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      dot += static_cast<double>(a[i]) * b[i];
      norm_a += static_cast<double>(a[i]) * a[i];
      norm_b += static_cast<double>(b[i]) * b[i];
      const double d = static_cast<double>(a[i]) - b[i];
      diff += d * d;
    }
  }
  double Cosine() const {
    if (norm_a == 0 && norm_b == 0) return 1;
    if (norm_a == 0 || norm_b == 0) return 0;
    return dot / std::sqrt(norm_a * norm_b);
  }
};

std::vector<float> CopyFloats(const Tensor& t) {
  const float* p = t.data<float>();
  return std::vector<float>(p, p + t.elements());
}

}  // namespace

StatusOr<ReferenceOutputs> ReferenceOutputs::Capture(const Graph& graph,
                                                     const ActivationSparsityOptions& options) {
  ReferenceOutputs reference;
  reference.options_ = options;
  reference.options_.on_run = nullptr;  // its captures may not outlive the call
  std::set<ValueId> watched;
  for (ValueId v : graph.outputs())
    if (Watched(graph, v)) watched.insert(v);
  if (watched.empty()) return reference;
  RETURN_IF_ERROR(ObserveActivations(graph, options, watched, "reference outputs",
                                     [&](ValueId v, const Tensor& t) {
                                       reference.outputs_[graph.value(v).name].push_back(
                                           CopyFloats(t));
                                     })
                      .status());
  return reference;
}

StatusOr<double> ReferenceOutputs::Cosine(const Graph& candidate) const {
  const std::string what = "output comparison";
  std::set<ValueId> watched;
  for (ValueId v : candidate.outputs())
    if (Watched(candidate, v) && outputs_.count(candidate.value(v).name)) watched.insert(v);
  if (watched.empty())
    return FailedPrecondition(what + ": the model shares no f32 output with the reference");
  std::map<ValueId, PairSums> sums;
  std::map<ValueId, size_t> run_of;  // the next run per output
  RETURN_IF_ERROR(ObserveActivations(candidate, options_, watched, what,
                                     [&](ValueId v, const Tensor& t) {
                                       const auto& runs = outputs_.at(candidate.value(v).name);
                                       const size_t run = run_of[v]++;
                                       if (run >= runs.size() ||
                                           static_cast<int64_t>(runs[run].size()) != t.elements())
                                         return;
                                       sums[v].Add(t.data<float>(), runs[run].data(), t.elements());
                                     })
                      .status());
  double lowest = 1;
  for (ValueId v : watched) {
    auto s = sums.find(v);
    if (s == sums.end() || run_of[v] != outputs_.at(candidate.value(v).name).size())
      return FailedPrecondition(what + ": output '" + candidate.value(v).name +
                                "' differs from the reference's in size or runs");
    lowest = std::min(lowest, s->second.Cosine());
  }
  return lowest;
}

StatusOr<std::vector<LayerQuantizationError>> MeasureQuantizationSensitivity(
    const Graph& graph, const std::map<ValueId, ActivationRange>& ranges,
    const ActivationSparsityOptions& options, const ReferenceOutputs& f32,
    const std::function<void(int, int)>& on_layer) {
  const std::string what = "quantization sensitivity";
  Graph twins = graph;
  StaticQuantizationOptions quantization;
  quantization.float_twins = true;
  StatusOr<StaticQuantizationReport> report = QuantizeStatic(twins, ranges, quantization);
  if (!report.ok()) return report.status().WithPrefix(what);
  if (report->twins.empty()) return std::vector<LayerQuantizationError>{};
  RETURN_IF_ERROR(InferShapes(twins).WithPrefix(what));

  // 1. Each node's own error: its output against its twin's, in one run.
  std::map<ValueId, ValueId> partner;  // both ways
  std::set<ValueId> watched, references;
  for (const StaticQuantizationTwin& t : report->twins) {
    partner[t.quantized] = t.reference;
    partner[t.reference] = t.quantized;
    watched.insert({t.quantized, t.reference});
    references.insert(t.reference);
  }
  std::map<ValueId, PairSums> sums;            // by the quantized value
  std::map<ValueId, std::vector<float>> held;  // the first of a pair seen in a run
  auto observe = [&](ValueId v, const Tensor& t) {
    if (t.dtype() != DataType::kF32) return;
    auto other = held.find(partner.at(v));
    if (other == held.end()) {
      held[v] = CopyFloats(t);
      return;
    }
    if (static_cast<int64_t>(other->second.size()) == t.elements()) {
      const bool is_reference = references.count(v) > 0;
      const float* mine = t.data<float>();
      const float* quantized = is_reference ? other->second.data() : mine;
      const float* reference = is_reference ? mine : other->second.data();
      sums[is_reference ? other->first : v].Add(quantized, reference, t.elements());
    }
    held.erase(other);
  };
  ActivationSparsityOptions quiet = options;
  quiet.on_run = nullptr;
  RETURN_IF_ERROR(ObserveActivations(twins, quiet, watched, what, observe).status());

  // 2. The model's outputs with each node alone int8.
  std::map<std::string, std::string> all_float;
  for (const StaticQuantizationTwin& t : report->twins) all_float[t.node] = "";
  std::vector<LayerQuantizationError> layers;
  for (const StaticQuantizationTwin& t : report->twins) {
    LayerQuantizationError e;
    e.node = t.node;
    e.op_type = t.op_type;
    auto s = sums.find(t.quantized);
    if (s == sums.end()) {
      e.sqnr_db = e.cosine = std::numeric_limits<double>::quiet_NaN();
    } else {
      e.sqnr_db = s->second.diff == 0 ? std::numeric_limits<double>::infinity()
                                      : 10.0 * std::log10(s->second.norm_b / s->second.diff);
      e.cosine = s->second.Cosine();
    }
    Graph alone = graph;
    StaticQuantizationOptions only;
    only.keep_float = all_float;
    only.keep_float.erase(t.node);
    RETURN_IF_ERROR(QuantizeStatic(alone, ranges, only).status().WithPrefix(what));
    RETURN_IF_ERROR(RunDefaultPasses(alone).WithPrefix(what));
    ASSIGN_OR_RETURN(e.output_cosine, f32.Cosine(alone));
    layers.push_back(std::move(e));
    if (on_layer) on_layer(static_cast<int>(layers.size()), static_cast<int>(report->twins.size()));
  }
  std::stable_sort(layers.begin(), layers.end(),
                   [](const LayerQuantizationError& a, const LayerQuantizationError& b) {
                     // NaN (outputs not finite) first: the worst.
                     auto key = [](double c) { return std::isnan(c) ? -2.0 : c; };
                     return key(a.output_cosine) < key(b.output_cosine);
                   });
  return layers;
}

}  // namespace braid
