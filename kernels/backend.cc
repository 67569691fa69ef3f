#include "kernels/backend.h"

#include <algorithm>
#include <set>

namespace braid {

const char* DeviceKindName(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::kCpu: return "cpu";
    case DeviceKind::kCuda: return "cuda";
    case DeviceKind::kVirtualGpu: return "vgpu";
    case DeviceKind::kFirstCustom: break;
  }
  return "custom";
}

int64_t TensorDesc::elements() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::vector<int> TensorDesc::MemoryOrder() const {
  if (layout == TensorLayout::kChannelsLast && rank() == 4) return {0, 2, 3, 1};
  std::vector<int> order(static_cast<size_t>(rank()));
  for (int i = 0; i < rank(); ++i) order[static_cast<size_t>(i)] = i;
  return order;
}

std::string TensorDesc::ToString() const {
  std::string s = DataTypeName(dtype);
  s += "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(dims[i]);
  }
  return s + (layout == TensorLayout::kChannelsLast ? "]nhwc" : "]");
}

StatusOr<double> Event::MicrosecondsSince(const Event&) const {
  return Unimplemented("this device's events keep no timestamps");
}

StatusOr<size_t> Device::FreeMemory() const {
  return Unimplemented(name() + " does not report its free memory");
}

const char* ComputePrecisionName(ComputePrecision precision) {
  switch (precision) {
    case ComputePrecision::kF32: return "f32";
    case ComputePrecision::kBF16: return "bf16";
  }
  return "?";
}

StatusOr<ComputePrecision> NodeComputePrecision(const Node& node) {
  if (!node.attrs.Has("precision")) return ComputePrecision::kF32;
  const std::string value = node.attrs.GetString("precision", "");
  for (ComputePrecision p : {ComputePrecision::kF32, ComputePrecision::kBF16})
    if (value == ComputePrecisionName(p)) return p;
  return InvalidArgument("node '" + node.name + "' (" + node.op_type +
                         "): attribute 'precision' is '" + value +
                         "'; braid computes in 'f32' or 'bf16'");
}

std::string PrepareArgs::Where() const {
  if (node == nullptr) return "kernel";
  return "node '" + node->name + "' (" + node->op_type + ")";
}

void KernelRegistry::Register(KernelEntry entry) {
  entries_.push_back(std::make_unique<KernelEntry>(std::move(entry)));
}

std::vector<const KernelEntry*> KernelRegistry::Candidates(
    std::string_view op_type, DeviceKind device) const {
  std::vector<const KernelEntry*> out;
  for (const auto& e : entries_)
    if (e->op_type == op_type && e->device == device) out.push_back(e.get());
  // Stable: among equal priorities, registration order decides.
  std::stable_sort(out.begin(), out.end(),
                   [](const KernelEntry* a, const KernelEntry* b) {
                     return a->priority > b->priority;
                   });
  return out;
}

std::vector<std::string> KernelRegistry::OpTypes(DeviceKind device) const {
  std::set<std::string> ops;
  for (const auto& e : entries_)
    if (e->device == device) ops.insert(e->op_type);
  return {ops.begin(), ops.end()};
}

Status EntryMayTake(const KernelEntry& entry, const PrepareArgs& args) {
  auto channels_last = [](const TensorDesc& d) {
    return d.layout == TensorLayout::kChannelsLast;
  };
  if (!entry.channels_last &&
      (std::any_of(args.inputs.begin(), args.inputs.end(), channels_last) ||
       std::any_of(args.outputs.begin(), args.outputs.end(), channels_last)))
    return Unimplemented("no channels-last (nhwc) support");
  if (args.node == nullptr) return Status::Ok();
  ASSIGN_OR_RETURN(ComputePrecision precision, NodeComputePrecision(*args.node));
  if ((entry.precisions & PrecisionBit(precision)) == 0)
    return Unimplemented(std::string("no ") + ComputePrecisionName(precision) +
                         " arithmetic (the node's precision attribute asks for it)");
  return Status::Ok();
}

StatusOr<PreparedKernel> PrepareFirstAccepting(const KernelRegistry& registry,
                                               DeviceKind device,
                                               const PrepareArgs& args) {
  const std::string op = args.node ? args.node->op_type : "";
  std::vector<const KernelEntry*> candidates = registry.Candidates(op, device);
  if (candidates.empty())
    return Unimplemented(args.Where() + ": no " + DeviceKindName(device) +
                         " kernel for op " + op);
  std::string declined;
  std::vector<DeclinedCandidate> declined_candidates;
  auto decline = [&](const KernelEntry& entry, const std::string& reason) {
    declined += (declined.empty() ? "" : "; ") + entry.impl + ": " + reason;
    declined_candidates.push_back({entry.impl, reason, entry.specialized});
  };
  for (const KernelEntry* entry : candidates) {
    if (Status may = EntryMayTake(*entry, args); !may.ok()) {
      if (may.code() != StatusCode::kUnimplemented) return may;
      decline(*entry, may.message());
      continue;
    }
    std::unique_ptr<Kernel> kernel = entry->create();
    Status s = kernel->Prepare(args);
    if (s.ok())
      return PreparedKernel{std::move(kernel), entry, std::move(declined_candidates)};
    if (s.code() != StatusCode::kUnimplemented) return s;
    decline(*entry, s.message());
  }
  return Unimplemented(args.Where() + ": no " + DeviceKindName(device) +
                       " kernel accepts it (" + declined + ")");
}

}  // namespace braid
