#include "runtime/executor.h"


#include <algorithm>
#include <cstring>
#include <string>

#include "graph/op_schema.h"
#include "kernels/cpu/omp_team.h"
#include "runtime/layout.h"
#include "runtime/node_args.h"
#include "scheduler/memory_planner.h"

namespace braid {
namespace {

std::string Megabytes(size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f MB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

constexpr size_t kNoRequest = static_cast<size_t>(-1);

}  // namespace

StatusOr<std::unique_ptr<Executor>> Executor::Create(Graph graph,
                                                     const KernelRegistry& registry,
                                                     Device& device,
                                                     const ExecutorOptions& options) {
  if (!options.channels_last) return Build(std::move(graph), registry, device, options);
  // A kernel that handles nhwc may still decline one node at Prepare with no
  // nhwc-capable implementation behind it: then run the model plain, and say so.
  Graph plain_copy = graph;
  StatusOr<std::unique_ptr<Executor>> exec = Build(std::move(graph), registry, device, options);
  if (exec.ok() || exec.status().code() != StatusCode::kUnimplemented) return exec;
  ExecutorOptions plain = options;
  plain.channels_last = false;
  StatusOr<std::unique_ptr<Executor>> retry =
      Build(std::move(plain_copy), registry, device, plain);
  if (retry.ok())
    (*retry)->layout_note_ = "channels-last layout turned off: " + exec.status().message();
  return retry;
}

StatusOr<std::unique_ptr<Executor>> Executor::Build(Graph graph,
                                                    const KernelRegistry& registry,
                                                    Device& device,
                                                    const ExecutorOptions& options) {
  if (options.num_threads < 1)
    return InvalidArgument("Executor: num_threads must be >= 1, got " +
                           std::to_string(options.num_threads));
  std::unique_ptr<Executor> exec(new Executor());
  exec->graph_ = std::move(graph);
  exec->num_threads_ = options.num_threads;
  const Graph& g = exec->graph_;
  const size_t num_values = static_cast<size_t>(g.num_values());
  const size_t num_steps = static_cast<size_t>(g.num_nodes());

  // Static descriptors of every value a node or the caller touches.
  std::vector<TensorDesc> descs(num_values);
  for (size_t v = 0; v < num_values; ++v) {
    const Value& value = g.value(static_cast<ValueId>(v));
    if (!value.has_shape) continue;  // checked where used
    StatusOr<std::vector<int64_t>> extents = StaticExtents(value.shape);
    if (!extents.ok()) continue;
    descs[v] = TensorDesc{value.dtype, std::move(*extents)};
  }
  auto desc_of = [&](ValueId id, const std::string& where) -> StatusOr<TensorDesc> {
    const Value& value = g.value(id);
    if (!value.has_shape || !IsStatic(value.shape))
      return InvalidArgument(where + ": value '" + value.name + "' has shape " +
                             (value.has_shape ? ShapeToString(value.shape) : "?") +
                             ", not a static one; bind every symbolic dimension "
                             "through the inputs");
    return descs[static_cast<size_t>(id)];
  };

  for (ValueId id : g.inputs()) {
    ASSIGN_OR_RETURN(TensorDesc d, desc_of(id, "graph input"));
    exec->input_descs_.push_back(std::move(d));
  }
  std::vector<int> input_index(num_values, -1);
  for (size_t k = 0; k < g.inputs().size(); ++k)
    input_index[static_cast<size_t>(g.inputs()[k])] = static_cast<int>(k);

  // Lifetimes: a node output lives from its producing step to its last
  // reader; graph outputs to the end (step num_steps, where copies happen).
  std::vector<size_t> request_of(num_values, kNoRequest);
  std::vector<BufferRequest> requests;
  for (size_t n = 0; n < num_steps; ++n) {
    for (ValueId out : g.node(static_cast<NodeId>(n)).outputs) {
      if (out == kNoValue || g.IsConstant(out)) continue;
      request_of[static_cast<size_t>(out)] = requests.size();
      requests.push_back({0, static_cast<int>(n), static_cast<int>(n)});
    }
  }
  for (size_t n = 0; n < num_steps; ++n) {
    for (ValueId in : g.node(static_cast<NodeId>(n)).inputs) {
      if (in == kNoValue) continue;
      const size_t r = request_of[static_cast<size_t>(in)];
      if (r != kNoRequest)
        requests[r].last_step = std::max(requests[r].last_step, static_cast<int>(n));
    }
  }
  std::vector<size_t> output_request(g.outputs().size(), kNoRequest);
  for (size_t k = 0; k < g.outputs().size(); ++k) {
    const ValueId out = g.outputs()[k];
    size_t r = request_of[static_cast<size_t>(out)];
    if (r == kNoRequest) {
      // A graph input or constant returned as an output gets its own slot.
      r = requests.size();
      requests.push_back({0, 0, static_cast<int>(num_steps)});
    }
    requests[r].last_step = static_cast<int>(num_steps);
    output_request[k] = r;
  }

  // Prepare one kernel per node.
  auto make_args = [&](size_t n) -> StatusOr<PrepareArgs> {
    ASSIGN_OR_RETURN(PrepareArgs args, NodePrepareArgs(g, g.node(static_cast<NodeId>(n)), desc_of));
    args.num_threads = options.num_threads;
    args.device = &device;
    return args;
  };
  auto prepare_node = [&](size_t n) -> StatusOr<PreparedKernel> {
    ASSIGN_OR_RETURN(PrepareArgs args, make_args(n));
    return PrepareFirstAccepting(registry, device.kind(), args);
  };

  // Channels-last (runtime/layout.h): a node takes part when the kernel that
  // will run it handles nhwc. Candidates ahead of the first nhwc-capable one
  // (e.g. sparse kernels) are prepared plain: if one accepts, the node stays
  // plain and keeps it; their decline reasons are kept for the placement.
  std::vector<ChannelsLastProbe> probes(num_steps);
  std::vector<PreparedKernel> prepared_plain(num_steps);
  if (options.channels_last) {
    std::vector<bool> handles(num_steps, false);
    for (size_t n = 0; n < num_steps; ++n) {
      const Node& node = g.node(static_cast<NodeId>(n));
      StatusOr<ChannelsLastProbe> probe =
          ProbeChannelsLast(registry, device.kind(), node, [&] { return make_args(n); });
      if (!probe.ok()) return probe.status().WithPrefix(NodeWhere(node));
      probes[n] = std::move(*probe);
      handles[n] = probes[n].handles;
      prepared_plain[n] = std::move(probes[n].accepted_plain);
    }
    const std::vector<TensorLayout> layouts = AssignChannelsLast(g, handles);
    for (size_t v = 0; v < num_values; ++v) descs[v].layout = layouts[v];
    for (size_t n = 0; n < num_steps; ++n) {
      if (prepared_plain[n].kernel == nullptr) continue;
      const Node& node = g.node(static_cast<NodeId>(n));
      bool relaid = false;
      for (const std::vector<ValueId>* ids : {&node.inputs, &node.outputs})
        for (ValueId id : *ids)
          relaid |= id != kNoValue && layouts[static_cast<size_t>(id)] != TensorLayout::kPlain;
      if (relaid) prepared_plain[n] = PreparedKernel();  // prepared again, nhwc
    }
  }

  // Views (RunsAsView, plain on both sides): the output is the input's slot,
  // which lives as long as either; no kernel runs for them.
  std::vector<bool> view(num_steps, false);
  for (size_t n = 0; n < num_steps; ++n) {
    const Node& node = g.node(static_cast<NodeId>(n));
    if (!options.views_in_place || !RunsAsView(g, node)) continue;
    const auto in = static_cast<size_t>(node.inputs[0]), out = static_cast<size_t>(node.outputs[0]);
    if (request_of[in] == kNoRequest || !ViewSharesBytes(descs[in], descs[out])) continue;
    const size_t merged = request_of[out];
    BufferRequest& keep = requests[request_of[in]];
    keep.last_step = std::max(keep.last_step, requests[merged].last_step);
    requests[merged].last_step = requests[merged].first_step;  // left empty (0 bytes)
    for (size_t& r : output_request)
      if (r == merged) r = request_of[in];
    request_of[out] = request_of[in];  // `merged` was out's own request
    view[n] = true;
  }

  for (size_t n = 0; n < num_steps; ++n) {
    const Node& node = g.node(static_cast<NodeId>(n));
    PreparedKernel prepared;
    if (prepared_plain[n].kernel != nullptr) {
      prepared = std::move(prepared_plain[n]);
    } else {
      ASSIGN_OR_RETURN(prepared, prepare_node(n));
      RestoreProbeReasons(probes[n], prepared);
    }
    NodePlacement placement;
    placement.node = node.name;
    placement.op_type = node.op_type;
    placement.device = device.name();
    placement.implementation = view[n] ? "view" : prepared.entry->impl;
    placement.fallback = prepared.fell_back();
    for (const DeclinedCandidate& d : prepared.declined) {
      if (!placement.reason.empty()) placement.reason += "; ";
      placement.reason += d.impl + ": " + d.reason;
    }
    exec->placements_.push_back(std::move(placement));
    exec->workspace_bytes_ =
        std::max(exec->workspace_bytes_, prepared.kernel->workspace_bytes());
    Step step;
    step.node = &node;
    step.kernel = std::move(prepared.kernel);
    step.view = view[n];
    exec->steps_.push_back(std::move(step));
  }

  // Sizes, then offsets.
  for (size_t v = 0; v < num_values; ++v)
    if (request_of[v] != kNoRequest) requests[request_of[v]].bytes = descs[v].bytes();
  for (size_t k = 0; k < g.outputs().size(); ++k) {
    const ValueId out = g.outputs()[k];
    if (request_of[static_cast<size_t>(out)] == kNoRequest) {
      ASSIGN_OR_RETURN(TensorDesc d, desc_of(out, "graph output"));
      requests[output_request[k]].bytes = d.bytes();
    }
  }
  const MemoryPlan plan = PlanMemory(requests);
  exec->arena_bytes_ = plan.arena_bytes;

  auto allocate = [&](size_t bytes, const char* what) -> StatusOr<std::unique_ptr<Buffer>> {
    StatusOr<std::unique_ptr<Buffer>> buffer = device.Allocate(std::max<size_t>(bytes, 1));
    if (!buffer.ok())
      return Status(buffer.status().code(),
                    std::string("allocating the ")
                        .append(Megabytes(bytes))
                        .append(" ")
                        .append(what)
                        .append(" of '")
                        .append(g.name())
                        .append("' on ")
                        .append(device.name())
                        .append(": ")
                        .append(buffer.status().message()));
    return buffer;
  };
  ASSIGN_OR_RETURN(exec->arena_, allocate(plan.arena_bytes, "activation arena"));
  if (exec->workspace_bytes_ > 0) {
    ASSIGN_OR_RETURN(exec->workspace_, allocate(exec->workspace_bytes_, "kernel workspace"));
  }
  ASSIGN_OR_RETURN(exec->stream_, device.CreateStream());

  // Pointers.
  std::byte* base = static_cast<std::byte*>(exec->arena_->data());
  auto arena_pointer = [&](size_t request) { return base + plan.offsets[request]; };
  for (size_t n = 0; n < num_steps; ++n) {
    Step& step = exec->steps_[n];
    const Node& node = *step.node;
    for (ValueId in : node.inputs) {
      const void* p = nullptr;
      if (in != kNoValue) {
        const size_t v = static_cast<size_t>(in);
        if (g.IsConstant(in)) {
          p = g.value(in).constant->data();
        } else if (input_index[v] >= 0) {
          exec->input_patches_.push_back(
              {n, step.src.size(), static_cast<size_t>(input_index[v])});
        } else if (request_of[v] != kNoRequest) {
          p = arena_pointer(request_of[v]);
        } else {
          return Internal(NodeWhere(node) + ": input '" + g.value(in).name +
                          "' is neither constant, graph input nor produced");
        }
      }
      step.src.push_back(p);
    }
    for (ValueId out : node.outputs)
      step.dst.push_back(out == kNoValue || g.IsConstant(out)
                             ? nullptr
                             : arena_pointer(request_of[static_cast<size_t>(out)]));
  }
  for (size_t k = 0; k < g.outputs().size(); ++k) {
    const ValueId out = g.outputs()[k];
    Output o;
    o.desc = descs[static_cast<size_t>(out)];
    o.data = arena_pointer(output_request[k]);
    if (request_of[static_cast<size_t>(out)] == kNoRequest) {
      OutputCopy copy;
      copy.dst = o.data;
      copy.bytes = o.desc.bytes();
      if (g.IsConstant(out)) {
        copy.constant_src = g.value(out).constant->data();
      } else {
        copy.input = static_cast<size_t>(input_index[static_cast<size_t>(out)]);
      }
      exec->output_copies_.push_back(copy);
    }
    exec->outputs_.push_back(std::move(o));
  }
  return exec;
}

Status Executor::Run(std::span<const void* const> inputs) {
  if (inputs.size() != input_descs_.size())
    return InvalidArgument("Executor::Run: " + std::to_string(inputs.size()) +
                           " inputs given, the plan has " +
                           std::to_string(input_descs_.size()));
  for (const InputPatch& patch : input_patches_)
    steps_[patch.step].src[patch.slot] = inputs[patch.input];
  // This thread's OpenMP team size for the kernels below (oneDNN and braid's
  // CPU kernels read it), the caller's given back after.
  ScopedOmpThreads team(num_threads_);
  void* workspace = workspace_ ? workspace_->data() : nullptr;
  for (Step& step : steps_) {
    if (step.view) continue;  // its output is its input's bytes
    RunArgs args;
    args.src = step.src;
    args.dst = step.dst;
    args.workspace = workspace;
    args.stream = stream_.get();
    Status s = step.kernel->Run(args);
    if (!s.ok()) {
      const std::string where = NodeWhere(*step.node);
      if (s.message().find(where) != std::string::npos) return s;
      return s.WithPrefix(where);
    }
  }
  for (const OutputCopy& copy : output_copies_) {
    const void* src = copy.constant_src ? copy.constant_src : inputs[copy.input];
    if (copy.bytes > 0) std::memcpy(copy.dst, src, copy.bytes);
  }
  return Status::Ok();
}

}  // namespace braid
