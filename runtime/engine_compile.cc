// Engine::Create: the plan compiler (see runtime/engine.h for the outline).
#include <algorithm>
#include <map>

#include "graph/annotate.h"
#include "graph/op_schema.h"
#include "runtime/engine.h"
#include "runtime/layout.h"
#include "runtime/node_args.h"
#include "runtime/slicing.h"
#include "scheduler/memory_planner.h"

namespace braid {

namespace {
constexpr size_t kNone = static_cast<size_t>(-1);
}  // namespace

class EngineBuilder {
 public:
  EngineBuilder(Engine& e, const KernelRegistry& registry, bool channels_last,
                bool views_in_place)
      : e_(e), registry_(registry), channels_last_(channels_last),
        views_in_place_(views_in_place) {}

  Status Build(const Plan& plan);

 private:
  // Where one value lives in one memory space.
  struct Loc {
    enum Kind { kArena, kInput, kHostConstant, kDeviceConstant } kind = kArena;
    size_t request = kNone;       // kArena: index into requests_[space]
    size_t input = 0;             // kInput
    const void* host = nullptr;   // kHostConstant
    size_t const_offset = 0;      // kDeviceConstant
    int producer = -1;            // step that writes it (kArena)
    std::vector<int> readers;
  };
  using LocKey = std::pair<ValueId, int>;  // value, space
  // A view's output (RunsAsView) shares its input's arena request; its
  // readers also count as readers of the value that owns the request (the
  // memory-reuse waits go through the owner).
  std::map<LocKey, LocKey> alias_owner_;

  int SpaceOf(int device) const { return e_.devices_[static_cast<size_t>(device)].host_addressable ? 0 : device; }
  StatusOr<TensorDesc> DescOf(ValueId id, const std::string& where) const;
  StatusOr<int> StreamFor(int device, const std::string& kind, int index);
  // The location of `v` in `space`, inserting copy steps as needed.
  StatusOr<LocKey> Ensure(ValueId v, int space);
  size_t NewRequest(int space, size_t bytes, int first_step);
  void ReduceCrossStreamWaits();
  int AddCopy(ValueId v, const LocKey& from, int to_space, int device, bool to_device);
  void Read(const LocKey& key, int step);
  Status PrepareNode(size_t n, const SlicedNode& sliced);
  int DeviceNamed(const std::string& name) const;
  // Chooses nhwc values (runtime/layout.h) from each node's planned device.
  Status AssignLayouts(const SlicedGraph& sliced);
  // Every device with memory of its own has room for the plan's arena,
  // constants and workspaces (Device::FreeMemory), before anything is
  // allocated: else ResourceExhausted with the bytes needed and free.
  Status CheckDeviceMemory(const std::vector<MemoryPlan>& plans) const;

  Engine& e_;
  const KernelRegistry& registry_;
  const bool channels_last_;
  const bool views_in_place_;
  std::vector<TensorLayout> layouts_;       // per value; empty: all plain
  std::vector<ChannelsLastProbe> probes_;   // per node
  std::vector<int> node_device_;
  std::vector<int> node_stream_;
  std::map<LocKey, Loc> locs_;
  std::map<ValueId, int> home_;  // space where a produced value is written
  std::vector<std::vector<BufferRequest>> requests_;  // per space
  std::vector<std::vector<LocKey>> request_owner_;    // per space
  std::vector<size_t> const_bytes_;                   // per space
  std::vector<std::pair<LocKey, const TensorData*>> device_constants_;
  std::vector<int> input_index_;
  std::map<std::tuple<int, std::string, int>, int> stream_index_;
  std::vector<std::vector<int>> extra_deps_;  // per step (memory reuse)
  std::vector<size_t> node_step_;  // sliced-graph node -> step
};

StatusOr<TensorDesc> EngineBuilder::DescOf(ValueId id, const std::string& where) const {
  const Value& value = e_.graph_.value(id);
  if (!value.has_shape || !IsStatic(value.shape))
    return InvalidArgument(where + ": value '" + value.name + "' has shape " +
                           (value.has_shape ? ShapeToString(value.shape) : "?") +
                           ", not a static one; bind every symbolic dimension through the inputs");
  ASSIGN_OR_RETURN(std::vector<int64_t> dims, StaticExtents(value.shape));
  const TensorLayout layout =
      layouts_.empty() ? TensorLayout::kPlain : layouts_[static_cast<size_t>(id)];
  return TensorDesc{value.dtype, std::move(dims), layout};
}

int EngineBuilder::DeviceNamed(const std::string& name) const {
  for (size_t d = 0; d < e_.devices_.size(); ++d)
    if (e_.devices_[d].device->name() == name) return static_cast<int>(d);
  return -1;
}

Status EngineBuilder::AssignLayouts(const SlicedGraph& sliced) {
  const Graph& g = e_.graph_;
  std::vector<bool> handles(g.nodes().size(), false);
  probes_.resize(g.nodes().size());
  for (size_t n = 0; n < g.nodes().size(); ++n) {
    const int device = DeviceNamed(sliced.nodes[n].device);
    if (device < 0) continue;  // PrepareNode reports it
    const Node& node = g.node(static_cast<NodeId>(n));
    auto plain_args = [&]() -> StatusOr<PrepareArgs> {
      ASSIGN_OR_RETURN(PrepareArgs args,
                       NodePrepareArgs(g, node, [this](ValueId v, const std::string& w) {
                         return DescOf(v, w);
                       }));
      args.device = e_.devices_[static_cast<size_t>(device)].device;
      args.num_threads =
          device == 0 ? e_.num_threads_ : e_.devices_[static_cast<size_t>(device)].threads;
      return args;
    };
    StatusOr<ChannelsLastProbe> probe =
        ProbeChannelsLast(registry_, e_.devices_[static_cast<size_t>(device)].device->kind(),
                          node, plain_args);
    if (!probe.ok()) return probe.status().WithPrefix(NodeWhere(node));
    probes_[n] = std::move(*probe);
    probes_[n].accepted_plain = PreparedKernel();  // PrepareNode prepares again
    handles[n] = probes_[n].handles;
  }
  layouts_ = AssignChannelsLast(g, handles);
  return Status::Ok();
}

Status EngineBuilder::CheckDeviceMemory(const std::vector<MemoryPlan>& plans) const {
  for (size_t s = 1; s < e_.devices_.size(); ++s) {
    if (SpaceOf(static_cast<int>(s)) != static_cast<int>(s)) continue;  // shares the host's
    const Device& device = *e_.devices_[s].device;
    // Workspaces: one per stream of the device, the largest its kernels ask.
    std::map<int, size_t> workspace;
    for (const Engine::Step& step : e_.steps_)
      if (step.kernel && step.device == static_cast<int>(s))
        workspace[step.stream] = std::max(workspace[step.stream], step.kernel->workspace_bytes());
    size_t workspaces = 0;
    for (const auto& [stream, bytes] : workspace) workspaces += bytes;
    const size_t needed = plans[s].arena_bytes + const_bytes_[s] + workspaces;
    StatusOr<size_t> free_bytes = device.FreeMemory();
    if (!free_bytes.ok() || needed <= *free_bytes) continue;  // unknown: allocation will say
    return ResourceExhausted(
        "'" + e_.graph_.name() + "' does not fit on " + device.name() + ": the plan needs " +
        std::to_string(needed) + " bytes there (activations " +
        std::to_string(plans[s].arena_bytes) + ", weights " + std::to_string(const_bytes_[s]) +
        ", workspaces " + std::to_string(workspaces) + ") and " + std::to_string(*free_bytes) +
        " are free; nothing was allocated (place fewer nodes there, or a smaller batch)");
  }
  return Status::Ok();
}

StatusOr<int> EngineBuilder::StreamFor(int device, const std::string& kind, int index) {
  // CPU stream 0 is the calling thread.
  if (device == 0 && kind == "stream" && index == 0) return -1;
  auto key = std::make_tuple(device, kind, index);
  auto it = stream_index_.find(key);
  if (it != stream_index_.end()) return it->second;
  const EngineDevice& d = e_.devices_[static_cast<size_t>(device)];
  Engine::ExecStream s;
  s.device = device;
  s.track = d.device->name() + "/" + (kind == "stream" ? "stream" + std::to_string(index) : kind);
  if (d.device->kind() == DeviceKind::kCpu) {
    s.stream = std::make_unique<WorkerStream>(*d.device, "cpu-" + std::to_string(index),
                                              e_.num_threads_);
  } else {
    StatusOr<std::unique_ptr<Stream>> stream = d.device->CreateStream();
    if (!stream.ok())
      return stream.status().WithPrefix("creating a stream on " + d.device->name());
    s.stream = std::move(*stream);
  }
  e_.streams_.push_back(std::move(s));
  const int id = static_cast<int>(e_.streams_.size()) - 1;
  stream_index_[key] = id;
  return id;
}

// Every stream runs its steps in step order, so a wait on step d of stream T
// also covers T's earlier steps and all that d waited for itself: one vector
// clock per stream (the newest step of each stream known done) drops the
// waits it implies. Each wait left costs a cross-thread wake-up (20-40 us on
// a 2-vCPU VM, measured with perf sched); a WAR chain of buffer reuse used
// to make one step wait on ten.
void EngineBuilder::ReduceCrossStreamWaits() {
  const size_t num_clocks = e_.streams_.size() + 1;  // slot 0: the calling thread
  auto slot = [](int stream) { return static_cast<size_t>(stream + 1); };
  std::vector<std::vector<int>> known(num_clocks, std::vector<int>(num_clocks, -1));
  std::vector<std::vector<int>> clock_after(e_.steps_.size());
  for (size_t i = 0; i < e_.steps_.size(); ++i) {
    Engine::Step& s = e_.steps_[i];
    const int self = static_cast<int>(i);
    std::vector<int> newest(num_clocks, -1);  // per other stream: the newest step needed
    std::vector<int> later;                   // steps after this one: kept as they are
    auto need = [&](int d) {
      if (d < 0 || d == self || e_.steps_[static_cast<size_t>(d)].stream == s.stream) return;
      if (d > self) {
        later.push_back(d);
        return;
      }
      int& n = newest[slot(e_.steps_[static_cast<size_t>(d)].stream)];
      n = std::max(n, d);
    };
    for (int d : s.waits) need(d);
    for (int d : extra_deps_[i]) need(d);
    std::vector<int>& mine = known[slot(s.stream)];
    s.waits.clear();
    // Newest first: a later step's clock most often covers the others.
    std::vector<int> candidates;
    for (int d : newest)
      if (d >= 0) candidates.push_back(d);
    std::sort(candidates.rbegin(), candidates.rend());
    for (int d : candidates) {
      const size_t t = slot(e_.steps_[static_cast<size_t>(d)].stream);
      if (d <= mine[t]) continue;
      s.waits.push_back(d);
      for (size_t u = 0; u < num_clocks; ++u)
        mine[u] = std::max(mine[u], clock_after[static_cast<size_t>(d)][u]);
    }
    std::sort(later.begin(), later.end());
    later.erase(std::unique(later.begin(), later.end()), later.end());
    s.waits.insert(s.waits.end(), later.begin(), later.end());
    std::sort(s.waits.begin(), s.waits.end());
    mine[slot(s.stream)] = self;
    clock_after[i] = mine;
  }
}

size_t EngineBuilder::NewRequest(int space, size_t bytes, int first_step) {
  auto& reqs = requests_[static_cast<size_t>(space)];
  reqs.push_back({bytes, first_step, first_step});
  return reqs.size() - 1;
}

void EngineBuilder::Read(const LocKey& key, int step) {
  Loc& loc = locs_.at(key);
  loc.readers.push_back(step);
  if (auto owner = alias_owner_.find(key); owner != alias_owner_.end())
    locs_.at(owner->second).readers.push_back(step);
  if (loc.kind == Loc::kArena) {
    BufferRequest& r = requests_[static_cast<size_t>(key.second)][loc.request];
    r.last_step = std::max(r.last_step, step);
  }
  if (loc.producer >= 0) e_.steps_[static_cast<size_t>(step)].waits.push_back(loc.producer);
}

int EngineBuilder::AddCopy(ValueId v, const LocKey& from, int to_space, int device,
                           bool to_device) {
  const Value& value = e_.graph_.value(v);
  Engine::Step step;
  step.is_copy = true;
  step.device = device;
  step.to_device = to_device;
  step.bytes = TensorDesc{value.dtype, *StaticExtents(value.shape)}.bytes();
  const std::string& dev_name = e_.devices_[static_cast<size_t>(device)].device->name();
  step.name = "copy " + value.name + (to_device ? " -> " + dev_name : " -> cpu");
  e_.steps_.push_back(std::move(step));
  const int index = static_cast<int>(e_.steps_.size()) - 1;
  extra_deps_.emplace_back();
  Read(from, index);
  Loc loc;
  loc.kind = Loc::kArena;
  loc.request = NewRequest(to_space, e_.steps_.back().bytes, index);
  loc.producer = index;
  const LocKey key{v, to_space};
  request_owner_[static_cast<size_t>(to_space)].push_back(key);
  locs_[key] = loc;
  return index;
}

StatusOr<EngineBuilder::LocKey> EngineBuilder::Ensure(ValueId v, int space) {
  const LocKey key{v, space};
  if (locs_.count(key)) return key;
  const Value& value = e_.graph_.value(v);
  if (value.constant) {
    Loc loc;
    if (space == 0) {
      loc.kind = Loc::kHostConstant;
      loc.host = value.constant->data();
    } else {
      loc.kind = Loc::kDeviceConstant;
      size_t& used = const_bytes_[static_cast<size_t>(space)];
      loc.const_offset = used;
      used += (value.constant->size() + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
      device_constants_.push_back({key, &*value.constant});
    }
    locs_[key] = loc;
    return key;
  }
  const int input = input_index_[static_cast<size_t>(v)];
  if (input >= 0 && space == 0) {
    Loc loc;
    loc.kind = Loc::kInput;
    loc.input = static_cast<size_t>(input);
    locs_[key] = loc;
    return key;
  }
  int home = 0;
  if (input < 0) {
    auto it = home_.find(v);
    if (it == home_.end())
      return Internal("value '" + value.name + "' is neither constant, graph input nor produced");
    home = it->second;
  }
  if (space == 0) {
    // From a device space to the host: on that device's d2h copy stream.
    const LocKey from{v, home};
    AddCopy(v, from, 0, home, /*to_device=*/false);
    return key;
  }
  ASSIGN_OR_RETURN(LocKey host, Ensure(v, 0));
  AddCopy(v, host, space, space, /*to_device=*/true);
  return key;
}

Status EngineBuilder::PrepareNode(size_t n, const SlicedNode& sliced) {
  const Graph& g = e_.graph_;
  const Node& node = g.node(static_cast<NodeId>(n));
  const std::string where = NodeWhere(node);
  int device = DeviceNamed(sliced.device);
  if (device < 0) return InvalidArgument(where + ": plan device '" + sliced.device + "' is not open");
  ASSIGN_OR_RETURN(PrepareArgs args,
                   NodePrepareArgs(g, node, [this](ValueId v, const std::string& w) {
                     return DescOf(v, w);
                   }));
  auto prepare_on = [&](int d) {
    args.device = e_.devices_[static_cast<size_t>(d)].device;
    args.num_threads = d == 0 ? e_.num_threads_ : e_.devices_[static_cast<size_t>(d)].threads;
    return PrepareFirstAccepting(registry_, args.device->kind(), args);
  };
  StatusOr<PreparedKernel> prepared = prepare_on(device);
  NodePlacement placement;
  placement.node = node.name;
  placement.op_type = node.op_type;
  placement.slice = sliced.slice_note;
  int stream_index = sliced.stream;
  if (!prepared.ok() && prepared.status().code() == StatusCode::kUnimplemented && device != 0) {
    // No kernel of that device accepts the node: the CPU runs it, reported.
    placement.fallback = true;
    placement.reason = "planned on " + sliced.device + ": " + prepared.status().message() +
                       "; fell back to cpu";
    device = 0;
    stream_index = 0;
    prepared = prepare_on(0);
  }
  if (!prepared.ok()) return prepared.status();
  if (n < probes_.size()) RestoreProbeReasons(probes_[n], *prepared);
  placement.device = e_.devices_[static_cast<size_t>(device)].device->name();
  placement.implementation = prepared->entry->impl;
  if (prepared->fell_back()) placement.fallback = true;
  for (const DeclinedCandidate& d : prepared->declined) {
    if (!placement.reason.empty()) placement.reason += "; ";
    placement.reason += d.impl + ": " + d.reason;
  }
  e_.placements_.push_back(std::move(placement));
  node_device_[n] = device;
  node_stream_[n] = stream_index;
  Engine::Step step;
  step.device = device;
  step.name = node.name;
  step.node = &node;
  step.kernel = std::move(prepared->kernel);
  if (const auto& shape = e_.devices_[static_cast<size_t>(device)].kernel_time)
    step.modelled = shape(node.annotation.flops, node.annotation.bytes);
  for (const TensorDesc& d : args.outputs) step.bytes += d.present() ? d.bytes() : 0;
  e_.steps_.push_back(std::move(step));
  return Status::Ok();
}

Status EngineBuilder::Build(const Plan& plan) {
  ASSIGN_OR_RETURN(SlicedGraph sliced, ExpandSlices(e_.graph_, plan));
  e_.graph_ = std::move(sliced.graph);
  // Exact FLOPs / bytes for the timing model (static shapes; parts included).
  if (!Annotate(e_.graph_).ok()) {
    for (Node& n : e_.graph_.nodes()) n.annotation = {};
  }
  const Graph& g = e_.graph_;
  const size_t num_values = static_cast<size_t>(g.num_values());
  const size_t num_nodes = static_cast<size_t>(g.num_nodes());
  const size_t num_spaces = e_.devices_.size();
  requests_.resize(num_spaces);
  request_owner_.resize(num_spaces);
  const_bytes_.assign(num_spaces, 0);
  node_device_.assign(num_nodes, 0);
  node_stream_.assign(num_nodes, 0);
  node_step_.assign(num_nodes, 0);
  input_index_.assign(num_values, -1);
  if (channels_last_) RETURN_IF_ERROR(AssignLayouts(sliced));
  for (size_t k = 0; k < g.inputs().size(); ++k) {
    input_index_[static_cast<size_t>(g.inputs()[k])] = static_cast<int>(k);
    ASSIGN_OR_RETURN(TensorDesc d, DescOf(g.inputs()[k], "graph input"));
    e_.input_descs_.push_back(std::move(d));
  }

  // Steps in order: the copies a node needs, then the node.
  for (size_t n = 0; n < num_nodes; ++n) {
    const Node& node = g.node(static_cast<NodeId>(n));
    // Prepare first: a fallback changes the device, and so the copies.
    RETURN_IF_ERROR(PrepareNode(n, sliced.nodes[n]));
    Engine::Step step = std::move(e_.steps_.back());
    e_.steps_.pop_back();
    const int device = node_device_[n];
    const int space = SpaceOf(device);
    std::vector<LocKey> in_keys;
    for (ValueId in : node.inputs) {
      if (in == kNoValue) {
        in_keys.push_back({kNoValue, -1});
        continue;
      }
      ASSIGN_OR_RETURN(LocKey key, Ensure(in, space));
      in_keys.push_back(key);
    }
    e_.steps_.push_back(std::move(step));
    extra_deps_.emplace_back();
    const int index = static_cast<int>(e_.steps_.size()) - 1;
    node_step_[n] = static_cast<size_t>(index);
    for (const LocKey& key : in_keys)
      if (key.second >= 0) Read(key, index);
    // A view on a buffer of this space: the output is that buffer, and the
    // step moves nothing (the arena holds one copy instead of two).
    if (views_in_place_ && RunsAsView(g, node) && in_keys[0].second == space &&
        locs_.at(in_keys[0]).kind == Loc::kArena) {
      ASSIGN_OR_RETURN(TensorDesc out_desc, DescOf(node.outputs[0], NodeWhere(node)));
      ASSIGN_OR_RETURN(TensorDesc in_desc, DescOf(node.inputs[0], NodeWhere(node)));
      if (ViewSharesBytes(in_desc, out_desc)) {
        const Loc& in_loc = locs_.at(in_keys[0]);
        Loc loc;
        loc.kind = Loc::kArena;
        loc.request = in_loc.request;
        loc.producer = index;
        const LocKey out_key{node.outputs[0], space};
        const auto owner = alias_owner_.find(in_keys[0]);
        alias_owner_[out_key] = owner != alias_owner_.end() ? owner->second : in_keys[0];
        locs_[out_key] = loc;
        home_[node.outputs[0]] = space;
        e_.placements_.back().implementation = "view";  // PrepareNode's entry for this node
        Engine::Step& view = e_.steps_.back();
        view.view = true;
        view.bytes = 0;
        view.modelled = std::chrono::nanoseconds(0);
        continue;
      }
    }
    for (ValueId out : node.outputs) {
      if (out == kNoValue || g.IsConstant(out)) continue;
      ASSIGN_OR_RETURN(TensorDesc d, DescOf(out, NodeWhere(node)));
      Loc loc;
      loc.kind = Loc::kArena;
      loc.request = NewRequest(space, d.bytes(), index);
      loc.producer = index;
      request_owner_[static_cast<size_t>(space)].push_back({out, space});
      locs_[{out, space}] = loc;
      home_[out] = space;
    }
  }
  // Graph outputs end on the host; ones that are inputs or constants get
  // their own slot (copied at the end of Run). Every output's buffer lives
  // past the last step, the copies that bring outputs back included (the end
  // step taken before them let two outputs copied back from a device's
  // memory share host bytes).
  std::vector<LocKey> output_keys;
  std::vector<size_t> output_own_request(g.outputs().size(), kNone);
  for (size_t k = 0; k < g.outputs().size(); ++k) {
    const ValueId out = g.outputs()[k];
    if (g.IsConstant(out) || input_index_[static_cast<size_t>(out)] >= 0) {
      ASSIGN_OR_RETURN(TensorDesc d, DescOf(out, "graph output"));
      output_own_request[k] = NewRequest(0, d.bytes(), 0);
      request_owner_[0].push_back({kNoValue, 0});
      output_keys.push_back({kNoValue, 0});
      continue;
    }
    ASSIGN_OR_RETURN(LocKey key, Ensure(out, 0));
    output_keys.push_back(key);
  }
  const int end_step = static_cast<int>(e_.steps_.size()) + 1;
  for (size_t k = 0; k < g.outputs().size(); ++k) {
    const size_t request = output_own_request[k] != kNone
                               ? output_own_request[k]
                               : locs_.at(output_keys[k]).request;
    requests_[0][request].last_step = end_step;
  }

  // Streams (after fallbacks are known).
  std::vector<size_t> step_node(e_.steps_.size(), 0);  // kernel step -> its node
  for (size_t n = 0; n < node_step_.size(); ++n) step_node[node_step_[n]] = n;
  for (size_t i = 0; i < e_.steps_.size(); ++i) {
    Engine::Step& s = e_.steps_[i];
    int stream = -1;
    if (s.is_copy) {
      ASSIGN_OR_RETURN(stream, StreamFor(s.device, s.to_device ? "h2d" : "d2h", 0));
    } else {
      ASSIGN_OR_RETURN(stream, StreamFor(s.device, "stream", node_stream_[step_node[i]]));
    }
    s.stream = stream;
    s.track = stream < 0 ? "cpu/stream0" : e_.streams_[static_cast<size_t>(stream)].track;
  }

  // Memory: one arena per space; the host arena is mapped by an integrated
  // accelerator, else pinned by a discrete one, else plain CPU memory.
  std::vector<std::byte*> arena_base(num_spaces, nullptr);
  std::vector<MemoryPlan> plans(num_spaces);
  for (size_t s = 0; s < num_spaces; ++s)
    if (s == 0 || SpaceOf(static_cast<int>(s)) == static_cast<int>(s))
      plans[s] = PlanMemory(requests_[s]);
  RETURN_IF_ERROR(CheckDeviceMemory(plans));
  for (size_t s = 0; s < num_spaces; ++s) {
    if (s != 0 && SpaceOf(static_cast<int>(s)) != static_cast<int>(s)) continue;
    if (s == 0)
      for (size_t r = 0; r < requests_[0].size(); ++r)
        e_.host_arena_.push_back({request_owner_[0][r].first, plans[0].offsets[r],
                                  requests_[0][r].bytes, requests_[0][r].first_step,
                                  requests_[0][r].last_step});
    if (requests_[s].empty() && const_bytes_[s] == 0) continue;
    Device* allocator = e_.devices_[s].device;
    MemoryKind kind = MemoryKind::kDevice;
    if (s == 0) {
      for (size_t d = 1; d < e_.devices_.size(); ++d) {
        if (e_.devices_[d].host_addressable) {
          allocator = e_.devices_[d].device;
          kind = MemoryKind::kHostMapped;
          break;
        }
        if (kind == MemoryKind::kDevice) {
          allocator = e_.devices_[d].device;
          kind = MemoryKind::kHostPinned;
        }
      }
    }
    auto allocate = [&](size_t bytes, const char* what) -> StatusOr<std::byte*> {
      StatusOr<std::unique_ptr<Buffer>> b = allocator->Allocate(std::max<size_t>(bytes, 1), kind);
      if (!b.ok())
        return Status(b.status().code(), std::string("allocating the ")
                                             .append(std::to_string(bytes))
                                             .append("-byte ")
                                             .append(what)
                                             .append(" of '")
                                             .append(g.name())
                                             .append("' on ")
                                             .append(allocator->name())
                                             .append(": ")
                                             .append(b.status().message()));
      std::byte* p = static_cast<std::byte*>((*b)->data());
      e_.buffers_.push_back(std::move(*b));
      return p;
    };
    ASSIGN_OR_RETURN(arena_base[s], allocate(plans[s].arena_bytes, "activation arena"));
    e_.arena_bytes_ += plans[s].arena_bytes;
    if (const_bytes_[s] > 0) {
      ASSIGN_OR_RETURN(std::byte* consts, allocate(const_bytes_[s], "constant buffer"));
      // Upload every constant read on this device once.
      ASSIGN_OR_RETURN(std::unique_ptr<Stream> upload, allocator->CreateStream());
      for (auto& [key, data] : device_constants_) {
        if (key.second != static_cast<int>(s)) continue;
        Loc& loc = locs_.at(key);
        loc.host = consts + loc.const_offset;
        RETURN_IF_ERROR(upload->CopyToDevice(consts + loc.const_offset, data->data(), data->size()));
      }
      RETURN_IF_ERROR(upload->Synchronize().WithPrefix("uploading constants to " + allocator->name()));
    }
  }
  auto pointer = [&](const LocKey& key) -> void* {
    const Loc& loc = locs_.at(key);
    switch (loc.kind) {
      case Loc::kArena: return arena_base[static_cast<size_t>(key.second)] +
                               plans[static_cast<size_t>(key.second)].offsets[loc.request];
      case Loc::kHostConstant:
      case Loc::kDeviceConstant: return const_cast<void*>(loc.host);
      case Loc::kInput: return nullptr;
    }
    return nullptr;
  };

  // Memory reuse across concurrent streams: a step that writes a block must
  // wait for every step that used an earlier tenant of the same bytes.
  for (size_t s = 0; s < num_spaces; ++s) {
    const auto& reqs = requests_[s];
    for (size_t r = 0; r < reqs.size(); ++r) {
      if (reqs[r].bytes == 0) continue;
      const size_t r_lo = plans[s].offsets[r], r_hi = r_lo + reqs[r].bytes;
      for (size_t q = 0; q < reqs.size(); ++q) {
        if (q == r || reqs[q].bytes == 0 || reqs[q].last_step >= reqs[r].first_step) continue;
        const size_t q_lo = plans[s].offsets[q], q_hi = q_lo + reqs[q].bytes;
        if (q_hi <= r_lo || r_hi <= q_lo) continue;
        const LocKey& owner = request_owner_[s][q];
        if (owner.first == kNoValue) continue;
        const Loc& loc = locs_.at(owner);
        auto& deps = extra_deps_[static_cast<size_t>(reqs[r].first_step)];
        deps.push_back(loc.producer);
        deps.insert(deps.end(), loc.readers.begin(), loc.readers.end());
      }
    }
  }

  // Pointers, workspaces and cross-stream waits.
  std::map<int, size_t> workspace_bytes;  // per stream
  for (const Engine::Step& s : e_.steps_)
    if (s.kernel) workspace_bytes[s.stream] = std::max(workspace_bytes[s.stream], s.kernel->workspace_bytes());
  std::map<int, void*> workspace;
  for (auto& [stream, bytes] : workspace_bytes) {
    if (bytes == 0) continue;
    const int device = stream < 0 ? 0 : e_.streams_[static_cast<size_t>(stream)].device;
    Device* dev = e_.devices_[static_cast<size_t>(device)].device;
    ASSIGN_OR_RETURN(std::unique_ptr<Buffer> b, dev->Allocate(bytes, MemoryKind::kDevice));
    workspace[stream] = b->data();
    e_.buffers_.push_back(std::move(b));
  }
  for (size_t i = 0; i < e_.steps_.size(); ++i) {
    Engine::Step& s = e_.steps_[i];
    if (!s.is_copy) {
      const Node& node = *s.node;
      const int space = SpaceOf(s.device);
      for (ValueId in : node.inputs) {
        if (in == kNoValue) {
          s.src.push_back(nullptr);
          continue;
        }
        const LocKey key{in, space};
        if (locs_.at(key).kind == Loc::kInput)
          e_.input_patches_.push_back({i, static_cast<int>(s.src.size()), locs_.at(key).input});
        s.src.push_back(pointer(key));
      }
      for (ValueId out : node.outputs)
        s.dst.push_back(out == kNoValue || g.IsConstant(out) ? nullptr : pointer({out, space}));
      s.workspace = workspace.count(s.stream) ? workspace[s.stream] : nullptr;
    }
  }
  for (const auto& [key, loc] : locs_) {
    if (loc.kind != Loc::kArena || loc.producer < 0) continue;
    Engine::Step& producer = e_.steps_[static_cast<size_t>(loc.producer)];
    if (!producer.is_copy) continue;
    producer.copy_dst = pointer(key);
  }
  // Copy sources: the location each copy step reads.
  for (const auto& [key, loc] : locs_) {
    for (int reader : loc.readers) {
      Engine::Step& s = e_.steps_[static_cast<size_t>(reader)];
      if (!s.is_copy) continue;
      if (loc.kind == Loc::kInput) {
        e_.input_patches_.push_back({static_cast<size_t>(reader), -1, loc.input});
      } else {
        s.copy_src = pointer(key);
      }
    }
  }
  ReduceCrossStreamWaits();
  for (size_t i = 0; i < e_.steps_.size(); ++i) {
    for (int d : e_.steps_[i].waits) {
      Engine::Step& producer = e_.steps_[static_cast<size_t>(d)];
      producer.needs_event = true;
      if (producer.stream < 0 && !producer.manual_event)
        producer.manual_event = std::make_shared<ManualEvent>();
    }
  }
  RETURN_IF_ERROR(e_.CreateEvents());

  // Outputs.
  for (size_t k = 0; k < g.outputs().size(); ++k) {
    const ValueId out = g.outputs()[k];
    Engine::Output o;
    ASSIGN_OR_RETURN(o.desc, DescOf(out, "graph output"));
    if (output_own_request[k] != kNone) {
      o.data = arena_base[0] + plans[0].offsets[output_own_request[k]];
      Engine::OutputCopy copy;
      copy.dst = o.data;
      copy.bytes = o.desc.bytes();
      if (g.IsConstant(out)) {
        copy.constant_src = g.value(out).constant->data();
      } else {
        copy.input = static_cast<size_t>(input_index_[static_cast<size_t>(out)]);
      }
      e_.output_copies_.push_back(copy);
    } else {
      o.data = pointer(output_keys[k]);
    }
    if (HasDataDependentRows(g, out)) {
      const Node* producer = &g.node(g.value(out).producer);
      for (size_t i = 0; i < e_.steps_.size(); ++i)
        if (!e_.steps_[i].is_copy && e_.steps_[i].node == producer)
          o.rows_step = static_cast<int>(i);
      if (o.rows_step < 0)
        return Internal("graph output '" + g.value(out).name + "': no step runs its producer");
      o.rows_bound = o.desc.dims[0];
    }
    e_.outputs_.push_back(std::move(o));
  }
  return Status::Ok();
}

Status Engine::PinThreads() {
  std::vector<std::pair<WorkerStream*, const std::string*>> workers;  // stream, track
  for (ExecStream& s : streams_)  // not a CUDA stream: the driver's threads
    if (auto* worker = dynamic_cast<WorkerStream*>(s.stream.get()))
      workers.emplace_back(worker, &s.track);
  // Without worker threads there is nothing to keep apart, and a pinned
  // thread could not dodge another process's load.
  if (workers.empty()) {
    thread_note_ = "threads not pinned: the plan has no worker thread";
    return Status::Ok();
  }
  const CoreSplit split = SplitAllowedCores(num_threads_);
  if (!split.usable) {
    thread_note_ = "threads not pinned: fewer than two cores to split";
    return Status::Ok();
  }
  // Each worker pins its own thread, before any step.
  const cpu_set_t worker_cores = split.workers;
  for (auto [worker, track] : workers) {
    RETURN_IF_ERROR(worker->Submit([worker_cores] { return PinCurrentThread(worker_cores); }));
    RETURN_IF_ERROR(worker->Synchronize().WithPrefix("pinning " + *track));
  }
  caller_cores_ = split.caller;
  pin_caller_ = true;
  thread_note_ = "threads pinned: " + split.description;
  return Status::Ok();
}

StatusOr<std::unique_ptr<Engine>> Engine::Create(Graph graph, const Plan& plan,
                                                 const KernelRegistry& registry,
                                                 std::span<const EngineDevice> devices,
                                                 const EngineOptions& options) {
  if (options.num_threads < 1)
    return InvalidArgument("Engine: num_threads must be >= 1, got " +
                           std::to_string(options.num_threads));
  if (devices.empty() || devices[0].device == nullptr ||
      devices[0].device->kind() != DeviceKind::kCpu)
    return InvalidArgument("Engine: the first device must be the host CPU");
  for (const EngineDevice& d : devices)
    if (d.device == nullptr) return InvalidArgument("Engine: null device");
  auto build = [&](Graph g, bool channels_last) -> StatusOr<std::unique_ptr<Engine>> {
    std::unique_ptr<Engine> e(new Engine());
    e->graph_ = std::move(g);
    e->devices_.assign(devices.begin(), devices.end());
    e->devices_[0].host_addressable = true;
    e->num_threads_ = options.num_threads;
    e->step_times_ = options.step_times;
    EngineBuilder builder(*e, registry, channels_last, options.views_in_place);
    RETURN_IF_ERROR(builder.Build(plan));
    e->sequential_ = e->streams_.empty();
    if (e->sequential_)
      for (Engine::Step& step : e->steps_)
        e->sequential_steps_.push_back(
            {step.view ? nullptr : step.kernel.get(),
             RunArgs{step.src, step.dst, step.workspace, nullptr, &step.output_rows}, &step});
    if (options.pin_threads) RETURN_IF_ERROR(e->PinThreads());
    return e;
  };
  if (!options.channels_last) return build(std::move(graph), false);
  // A kernel that handles nhwc may still decline one node with no
  // nhwc-capable implementation behind it: then run the plan plain, and say so.
  Graph plain_copy = graph;
  StatusOr<std::unique_ptr<Engine>> e = build(std::move(graph), true);
  if (e.ok() || e.status().code() != StatusCode::kUnimplemented) return e;
  StatusOr<std::unique_ptr<Engine>> plain = build(std::move(plain_copy), false);
  if (plain.ok())
    (*plain)->layout_note_ = "channels-last layout turned off: " + e.status().message();
  return plain;
}

StatusOr<std::unique_ptr<Engine>> Engine::CreateSequential(Graph graph,
                                                           const KernelRegistry& registry,
                                                           Device& cpu,
                                                           const EngineOptions& options) {
  const Plan plan = SingleDevicePlan(graph, cpu.name(), "sequential");
  const EngineDevice devices[] = {{&cpu}};
  return Create(std::move(graph), plan, registry, devices, options);
}

}  // namespace braid
