#include "runtime/layout.h"

#include <numeric>
#include <optional>
#include <string_view>

#include "graph/op_schema.h"

namespace braid {
namespace {

bool IsConv(const Node& node) { return HasOpTrait(node.op_type, kOpConvLayout); }

// f32, and the int8 / uint8 activations of a quantized model.
bool IsLayoutType(DataType t) {
  return t == DataType::kF32 || t == DataType::kU8 || t == DataType::kI8;
}

// The ops an int8 / uint8 activation may go nhwc through: others (a u8
// MaxPool, say) keep theirs plain, since their nhwc kernels are f32 only.
bool TakesQuantizedChannelsLast(const Node& node) {
  return HasOpTrait(node.op_type, kOpQuantizedChannelsLast);
}

// A 4-D f32 (or int8 / uint8) activation with a static shape and more than
// one pixel: the tensors whose layout matters.
bool IsSpatialActivation(const Graph& graph, ValueId id) {
  if (id == kNoValue || graph.IsConstant(id)) return false;
  const Value& v = graph.value(id);
  if (!IsLayoutType(v.dtype) || v.shape.size() != 4 || !IsStatic(v.shape)) return false;
  return v.shape[2].extent() * v.shape[3].extent() > 1;
}

class Groups {
 public:
  explicit Groups(size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0); }
  size_t Find(size_t x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void Join(size_t a, size_t b) { parent_[Find(a)] = Find(b); }

 private:
  std::vector<size_t> parent_;
};

// A 4-D f32 (or int8 / uint8) tensor with more than one pixel: what goes
// nhwc in a chain.
bool IsRelayable(const TensorDesc& d) {
  return IsLayoutType(d.dtype) && d.rank() == 4 && d.dims[2] * d.dims[3] > 1;
}

}  // namespace

bool TakesPartInChannelsLast(const Node& node) {
  return HasOpTrait(node.op_type, kOpChannelsLast);
}

std::vector<TensorLayout> AssignChannelsLast(const Graph& graph,
                                             const std::vector<bool>& node_handles_channels_last) {
  const size_t num_values = static_cast<size_t>(graph.num_values());
  std::vector<TensorLayout> layout(num_values, TensorLayout::kPlain);
  std::vector<bool> can(num_values, false);
  for (size_t v = 0; v < num_values; ++v)
    can[v] = IsSpatialActivation(graph, static_cast<ValueId>(v));
  for (ValueId id : graph.inputs()) can[static_cast<size_t>(id)] = false;
  for (ValueId id : graph.outputs()) can[static_cast<size_t>(id)] = false;

  // A value can go nhwc only when its producer and every consumer handle it.
  auto handles = [&](size_t node) {
    return node < node_handles_channels_last.size() && node_handles_channels_last[node] &&
           TakesPartInChannelsLast(graph.nodes()[node]);
  };
  std::vector<bool> produced(num_values, false);
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    const Node& node = graph.nodes()[n];
    for (ValueId out : node.outputs) {
      if (out == kNoValue) continue;
      produced[static_cast<size_t>(out)] = true;
      if (!handles(n)) can[static_cast<size_t>(out)] = false;
    }
    if (!TakesQuantizedChannelsLast(node))
      for (ValueId v : node.inputs)
        if (v != kNoValue && graph.value(v).dtype != DataType::kF32) can[static_cast<size_t>(v)] = false;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      // A conv reads only its data input (0) in either layout; weights and
      // bias are plain.
      const bool layout_free_slot = IsConv(node) && i == 0;
      if (node.inputs[i] != kNoValue && (!handles(n) || (IsConv(node) && !layout_free_slot)))
        can[static_cast<size_t>(node.inputs[i])] = false;
    }
  }
  for (size_t v = 0; v < num_values; ++v)
    if (!produced[v]) can[v] = false;

  // Non-conv nodes want one layout over their spatial operands.
  Groups groups(num_values);
  for (const Node& node : graph.nodes()) {
    if (IsConv(node)) continue;
    ValueId first = kNoValue;
    auto join = [&](ValueId id) {
      if (!IsSpatialActivation(graph, id)) return;
      if (first == kNoValue) first = id;
      else groups.Join(static_cast<size_t>(first), static_cast<size_t>(id));
    };
    for (ValueId in : node.inputs) join(in);
    for (ValueId out : node.outputs) join(out);
  }
  std::vector<bool> group_ok(num_values, true);
  for (size_t v = 0; v < num_values; ++v)
    if (IsSpatialActivation(graph, static_cast<ValueId>(v)) && !can[v])
      group_ok[groups.Find(v)] = false;
  for (size_t v = 0; v < num_values; ++v)
    if (can[v] && group_ok[groups.Find(v)]) layout[v] = TensorLayout::kChannelsLast;
  return layout;
}

StatusOr<ChannelsLastProbe> ProbeChannelsLast(
    const KernelRegistry& registry, DeviceKind device, const Node& node,
    const std::function<StatusOr<PrepareArgs>()>& plain_args) {
  ChannelsLastProbe probe;
  if (!TakesPartInChannelsLast(node)) return probe;
  std::optional<PrepareArgs> args;
  PrepareArgs node_only;  // what EntryMayTake needs beyond the layouts
  node_only.node = &node;
  for (const KernelEntry* entry : registry.Candidates(node.op_type, device)) {
    if (Status may = EntryMayTake(*entry, node_only); !may.ok()) {
      if (may.code() != StatusCode::kUnimplemented) return may;
      probe.declined.push_back({entry->impl, may.message(), entry->specialized});
      continue;
    }
    if (entry->channels_last && !entry->specialized) {
      probe.handles = true;
      return probe;
    }
    if (!args) {
      ASSIGN_OR_RETURN(PrepareArgs a, plain_args());
      args = std::move(a);
    }
    if (entry->channels_last) {
      // A specialized kernel takes only some nodes: it handles channels-last
      // here only if it accepts the node as it would run so (every spatial
      // activation nhwc). Otherwise it may still take the node plain, below.
      PrepareArgs nhwc = *args;
      for (size_t i = 0; i < nhwc.inputs.size(); ++i)
        if (IsRelayable(nhwc.inputs[i]) &&
            (i >= nhwc.constants.size() || nhwc.constants[i] == nullptr))
          nhwc.inputs[i].layout = TensorLayout::kChannelsLast;
      for (TensorDesc& d : nhwc.outputs)
        if (IsRelayable(d)) d.layout = TensorLayout::kChannelsLast;
      Status s = entry->create()->Prepare(nhwc);
      if (s.ok()) {
        probe.handles = true;
        return probe;
      }
      if (s.code() != StatusCode::kUnimplemented) return s;
    }
    std::unique_ptr<Kernel> kernel = entry->create();
    Status s = kernel->Prepare(*args);
    if (s.ok()) {
      probe.accepted_plain = PreparedKernel{std::move(kernel), entry, probe.declined};
      return probe;
    }
    if (s.code() != StatusCode::kUnimplemented) return s;
    probe.declined.push_back({entry->impl, s.message(), entry->specialized});
  }
  return probe;
}

void RestoreProbeReasons(const ChannelsLastProbe& probe, PreparedKernel& prepared) {
  for (DeclinedCandidate& d : prepared.declined)
    for (const DeclinedCandidate& plain : probe.declined)
      if (plain.impl == d.impl) d = plain;
}

bool ViewSharesBytes(const TensorDesc& in, const TensorDesc& out) {
  return in.layout == TensorLayout::kPlain && out.layout == TensorLayout::kPlain &&
         in.bytes() == out.bytes();
}

}  // namespace braid
