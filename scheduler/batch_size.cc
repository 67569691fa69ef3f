#include "scheduler/batch_size.h"

#include <cstdio>

#include "graph/annotate.h"
#include "graph/passes/specialize.h"
#include "scheduler/cost_model.h"
#include "scheduler/simulator.h"

namespace braid {

std::vector<int64_t> BatchCandidates(int64_t max_batch) {
  std::vector<int64_t> out;
  for (int64_t b = 1; b < max_batch; b *= 2) out.push_back(b);
  if (max_batch >= 1) out.push_back(max_batch);
  return out;
}

StatusOr<LaneChoice> ChooseBatch(const std::string& lane,
                                 const std::function<StatusOr<double>(int64_t)>& latency_us,
                                 const BatchSizeOptions& options) {
  if (options.max_batch < 1)
    return InvalidArgument("batch size: max_batch must be >= 1, got " +
                           std::to_string(options.max_batch));
  if (options.latency_bound_us < 0)
    return InvalidArgument("batch size: the latency bound must be >= 0 (0 = none)");
  LaneChoice choice;
  choice.lane = lane;
  const BatchCandidate* best = nullptr;
  const BatchCandidate* fastest = nullptr;
  for (int64_t b : BatchCandidates(options.max_batch)) {
    BatchCandidate c;
    c.batch = b;
    StatusOr<double> us = latency_us(b);
    if (!us.ok() || !(*us > 0)) {
      c.error = us.ok() ? "non-positive latency" : us.status().message();
    } else {
      c.latency_us = *us;
      c.images_per_s = static_cast<double>(b) / (*us * 1e-6);
      c.within_bound = options.latency_bound_us == 0 || *us <= options.latency_bound_us;
    }
    choice.candidates.push_back(std::move(c));
  }
  for (const BatchCandidate& c : choice.candidates) {
    if (c.latency_us < 0) continue;
    if (fastest == nullptr || c.latency_us < fastest->latency_us) fastest = &c;
    if (c.within_bound && (best == nullptr || c.images_per_s > best->images_per_s)) best = &c;
  }
  if (best == nullptr) {
    if (fastest == nullptr) {
      std::string why = choice.candidates.empty() ? "no candidates" : choice.candidates[0].error;
      return FailedPrecondition("batch size (" + lane +
                                "): no candidate could be evaluated: " + why);
    }
    char buf[160];
    std::snprintf(buf, sizeof(buf),
                  "batch size (%s): no batch meets the latency bound %.3f ms; the fastest, "
                  "batch %lld, takes %.3f ms (simulated)",
                  lane.c_str(), options.latency_bound_us / 1e3,
                  static_cast<long long>(fastest->batch), fastest->latency_us / 1e3);
    return FailedPrecondition(buf);
  }
  choice.batch = best->batch;
  choice.latency_us = best->latency_us;
  choice.images_per_s = best->images_per_s;
  return choice;
}

BatchDim FindBatchDim(const Graph& graph) {
  BatchDim dim;
  for (ValueId id : graph.inputs()) {
    const Value& v = graph.value(id);
    if (v.shape.empty()) continue;
    const Dim& d0 = v.shape[0];
    if (d0.is_static()) {
      if (dim.fixed_batch == 0) {
        dim.fixed_batch = d0.extent();
        dim.why = "input '" + v.name + "' has a fixed batch dimension (" +
                  std::to_string(d0.extent()) + ")";
      }
      continue;
    }
    if (!dim.symbol.empty() && dim.symbol != d0.symbol()) {
      dim.why =
          "inputs disagree on the batch symbol ('" + dim.symbol + "' and '" + d0.symbol() + "')";
      dim.symbol.clear();
      return dim;
    }
    dim.symbol = d0.symbol();
  }
  if (!dim.symbol.empty()) {
    dim.fixed_batch = 0;
    dim.why.clear();
  } else if (dim.fixed_batch == 0) {
    dim.why = "the model has no input with a batch dimension";
  }
  return dim;
}

namespace {

// Simulated latency of `graph` at `batch` planned by `policy` on `devices`.
StatusOr<double> LatencyAt(const Graph& graph, const BatchDim& dim, int64_t batch,
                           const PolicyRegistry& policies, const std::string& policy,
                           const PlacementContext& base, const std::vector<std::string>& devices) {
  Graph g = graph;
  if (!dim.symbol.empty()) RETURN_IF_ERROR(SpecializeSymbols(g, {{dim.symbol, batch}}));
  RETURN_IF_ERROR(Annotate(g));
  PlacementContext ctx;
  ctx.devices = devices;
  ctx.cost_model = base.cost_model;
  ASSIGN_OR_RETURN(Plan plan, MakePlan(policies, policy, g, ctx));
  ASSIGN_OR_RETURN(SimGraph sim_graph, BuildSimGraph(g, *base.cost_model, devices));
  ASSIGN_OR_RETURN(SimResult result, SimulatePlan(sim_graph, plan));
  return result.latency_us;
}

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : "+") + x;
  return s;
}

}  // namespace

StatusOr<ThroughputChoice> ChooseThroughputBatches(const Graph& graph,
                                                   const PolicyRegistry& policies,
                                                   const std::string& policy,
                                                   const PlacementContext& context,
                                                   const BatchSizeOptions& options) {
  if (context.cost_model == nullptr)
    return FailedPrecondition("batch size: needs a cost model (a device profile)");
  if (context.devices.empty()) return InvalidArgument("batch size: no devices");
  ThroughputChoice out;
  out.batch_dim = FindBatchDim(graph);
  BatchSizeOptions o = options;
  const bool fixed = out.batch_dim.symbol.empty();
  if (fixed) {
    if (out.batch_dim.fixed_batch <= 0)
      return FailedPrecondition("batch size: " + out.batch_dim.why);
    // Only the model's own batch can run: evaluate that one.
    o.max_batch = 1;
    out.note = out.batch_dim.why + ": the batch cannot be chosen";
  }
  const int64_t scale = fixed ? out.batch_dim.fixed_batch : 1;
  auto lane = [&](const std::string& name, const std::string& lane_policy,
                  const std::vector<std::string>& devices) -> StatusOr<LaneChoice> {
    auto latency = [&](int64_t b) -> StatusOr<double> {
      return LatencyAt(graph, out.batch_dim, b * scale, policies, lane_policy, context, devices);
    };
    ASSIGN_OR_RETURN(LaneChoice c, ChooseBatch(name, latency, o));
    if (fixed) {  // candidates were counted in units of the fixed batch
      c.batch *= scale;
      c.images_per_s *= static_cast<double>(scale);
      for (BatchCandidate& k : c.candidates) {
        k.batch *= scale;
        k.images_per_s *= static_cast<double>(scale);
      }
    }
    return c;
  };
  ASSIGN_OR_RETURN(out.shared,
                   lane(Join(context.devices) + " (" + policy + ")", policy, context.devices));
  out.images_per_s = out.shared.images_per_s;
  if (fixed || context.devices.size() < 2) return out;
  // Data parallel: each device alone on its own batch, all at once.
  double total = 0;
  for (size_t d = 0; d < context.devices.size(); ++d) {
    const std::string& device = context.devices[d];
    StatusOr<LaneChoice> c = d == 0 ? lane(device, "cpu-only", {device})
                                    : lane(device, "gpu-only", {context.devices.front(), device});
    if (!c.ok()) {
      out.note = "per-device lanes skipped: " + c.status().message();
      out.per_device.clear();
      return out;
    }
    total += c->images_per_s;
    out.per_device.push_back(std::move(*c));
  }
  out.use_per_device = total > out.shared.images_per_s;
  if (out.use_per_device) out.images_per_s = total;
  out.note =
      "per-device lanes run concurrently and are simulated as independent devices (no shared "
      "memory bandwidth)";
  return out;
}

}  // namespace braid
