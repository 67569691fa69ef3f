#include "scheduler/plan.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "graph/json.h"

namespace braid {

const char* SliceAxisName(SliceAxis axis) {
  switch (axis) {
    case SliceAxis::kOutputChannels: return "channels";
    case SliceAxis::kBatch: return "batch";
    case SliceAxis::kRows: return "rows";
  }
  return "?";
}

const NodePlan* Plan::Find(std::string_view name) const {
  for (const NodePlan& n : nodes)
    if (n.node == name) return &n;
  return nullptr;
}

Plan SingleDevicePlan(const Graph& graph, const std::string& device, std::string policy) {
  Plan plan;
  plan.policy = std::move(policy);
  plan.devices = {device};
  plan.nodes.reserve(graph.nodes().size());
  for (const Node& n : graph.nodes()) {
    NodePlan p;
    p.node = n.name;
    p.device = device;
    plan.nodes.push_back(std::move(p));
  }
  return plan;
}

bool PinMatchesDevice(std::string_view pin, std::string_view device) {
  if (pin == device) return true;
  // "cuda" names every "cuda:K".
  return device.size() > pin.size() && device.substr(0, pin.size()) == pin &&
         device[pin.size()] == ':';
}

Status ApplyDevicePins(const Graph& graph, Plan& plan) {
  if (plan.nodes.size() != graph.nodes().size())
    return InvalidArgument("plan has " + std::to_string(plan.nodes.size()) +
                           " node entries, the graph has " +
                           std::to_string(graph.nodes().size()));
  for (size_t i = 0; i < plan.nodes.size(); ++i) {
    const std::string& pin = graph.nodes()[i].device_pin;
    if (pin.empty()) continue;
    auto it = std::find_if(plan.devices.begin(), plan.devices.end(),
                           [&](const std::string& d) { return PinMatchesDevice(pin, d); });
    if (it == plan.devices.end())
      return NotFound("node '" + graph.nodes()[i].name + "' is pinned to '" + pin +
                      "', which is not among the plan's devices");
    NodePlan& p = plan.nodes[i];
    p.device = *it;
    p.slice.reset();
    p.pinned = true;
    p.reason = "pinned in the model file";
  }
  return Status::Ok();
}

bool IsSliceable(const Node& node, SliceAxis axis) {
  if (node.op_type == "Conv") {
    // Grouped convolutions would need the group structure split too; batch
    // and row parts keep every channel.
    return node.attrs.GetInt("group", 1) == 1 || axis != SliceAxis::kOutputChannels;
  }
  return (node.op_type == "Gemm" || node.op_type == "MatMul") && axis != SliceAxis::kRows;
}

int64_t SliceExtent(const Graph& graph, const Node& node, SliceAxis axis) {
  if (node.outputs.empty()) return -1;
  const Shape& shape = graph.value(node.outputs[0]).shape;
  if (shape.empty()) return -1;
  if (axis == SliceAxis::kOutputChannels && node.op_type == "Conv" && shape.size() < 2) return -1;
  if (axis == SliceAxis::kRows && shape.size() != 4) return -1;  // 2-D convolutions only
  if (axis == SliceAxis::kBatch && node.op_type == "MatMul" && shape.size() < 3)
    return -1;  // a 2-D MatMul has no batch dimension
  const auto dim = static_cast<size_t>(SliceOutputAxis(node, axis, static_cast<int>(shape.size())));
  return shape[dim].is_static() ? shape[dim].extent() : -1;
}

int SliceOutputAxis(const Node& node, SliceAxis axis, int out_rank) {
  if (axis == SliceAxis::kBatch) return 0;
  if (axis == SliceAxis::kRows) return 2;
  return node.op_type == "Conv" ? 1 : out_rank - 1;
}

int64_t SliceSplitStep(int64_t extent, SliceAxis axis) {
  return axis == SliceAxis::kOutputChannels && extent >= 2 * kSliceChannelMultiple
             ? kSliceChannelMultiple
             : 1;
}

int64_t SliceSplitIndex(int64_t extent, double ratio, SliceAxis axis) {
  const int64_t block = SliceSplitStep(extent, axis);
  const int64_t split =
      block * static_cast<int64_t>(std::llround(ratio * static_cast<double>(extent) /
                                                static_cast<double>(block)));
  return std::clamp<int64_t>(split, block, (extent - 1) / block * block);
}

Status ValidatePlan(const Plan& plan, const Graph& graph) {
  if (plan.devices.empty()) return InvalidArgument("plan lists no devices");
  if (plan.nodes.size() != graph.nodes().size())
    return InvalidArgument("plan has " + std::to_string(plan.nodes.size()) +
                           " node entries, the graph has " +
                           std::to_string(graph.nodes().size()));
  auto known = [&](const std::string& d) {
    return std::find(plan.devices.begin(), plan.devices.end(), d) != plan.devices.end();
  };
  for (size_t i = 0; i < plan.nodes.size(); ++i) {
    const Node& node = graph.nodes()[i];
    const NodePlan& p = plan.nodes[i];
    const std::string where = "plan entry " + std::to_string(i) + " ('" + p.node + "')";
    if (p.node != node.name)
      return InvalidArgument(where + " does not match graph node " + std::to_string(i) + " ('" +
                             node.name + "')");
    if (!known(p.device))
      return InvalidArgument(where + ": device '" + p.device + "' is not among the plan's devices");
    if (p.stream < 0) return InvalidArgument(where + ": negative stream");
    if (!node.device_pin.empty() && !PinMatchesDevice(node.device_pin, p.device))
      return InvalidArgument(where + ": the model pins it to '" + node.device_pin + "'");
    if (!p.slice) continue;
    const SliceSpec& s = *p.slice;
    if (!node.device_pin.empty())
      return InvalidArgument(where + ": a pinned node cannot be sliced");
    if (!IsSliceable(node, s.axis))
      return InvalidArgument(where + ": " + node.op_type + " cannot be sliced along " +
                             SliceAxisName(s.axis));
    if (!known(s.other_device))
      return InvalidArgument(where + ": slice device '" + s.other_device +
                             "' is not among the plan's devices");
    if (s.other_device == p.device)
      return InvalidArgument(where + ": a slice needs two different devices");
    if (!(s.ratio > 0 && s.ratio < 1))
      return InvalidArgument(where + ": slice ratio must be in (0, 1)");
    if (SliceExtent(graph, node, s.axis) < 2)
      return InvalidArgument(where + ": the " + SliceAxisName(s.axis) +
                             " extent is unknown or below 2");
  }
  return Status::Ok();
}

std::string PlanToJson(const Plan& plan) {
  std::ostringstream out;
  out << "{\"policy\":" << JsonString(plan.policy) << ",\"devices\":[";
  for (size_t i = 0; i < plan.devices.size(); ++i)
    out << (i ? "," : "") << JsonString(plan.devices[i]);
  out << "],\"nodes\":[";
  for (size_t i = 0; i < plan.nodes.size(); ++i) {
    const NodePlan& p = plan.nodes[i];
    out << (i ? ",\n" : "\n") << "{\"node\":" << JsonString(p.node)
        << ",\"device\":" << JsonString(p.device) << ",\"stream\":" << p.stream;
    if (p.slice)
      out << ",\"slice\":{\"axis\":" << JsonString(SliceAxisName(p.slice->axis))
          << ",\"other_device\":" << JsonString(p.slice->other_device)
          << ",\"ratio\":" << JsonNumber(p.slice->ratio) << "}";
    if (p.pinned) out << ",\"pinned\":true";
    if (!p.reason.empty()) out << ",\"reason\":" << JsonString(p.reason);
    if (p.predicted_ms >= 0) out << ",\"predicted_ms\":" << JsonNumber(p.predicted_ms);
    out << "}";
  }
  out << "]}\n";
  return out.str();
}

namespace {

StatusOr<NodePlan> NodePlanFromJson(const JsonValue& v) {
  if (!v.is_object()) return InvalidArgument("is not an object");
  NodePlan p;
  ASSIGN_OR_RETURN(p.node, v.GetString("node", ""));
  ASSIGN_OR_RETURN(p.device, v.GetString("device", ""));
  if (p.node.empty()) return InvalidArgument("has no \"node\"");
  if (p.device.empty()) return InvalidArgument("has no \"device\"");
  ASSIGN_OR_RETURN(double stream, v.GetNumber("stream", 0));
  if (stream < 0 || stream > 1024 || stream != std::floor(stream))
    return InvalidArgument("has a bad \"stream\"");
  p.stream = static_cast<int>(stream);
  ASSIGN_OR_RETURN(p.pinned, v.GetBool("pinned", false));
  ASSIGN_OR_RETURN(p.reason, v.GetString("reason", ""));
  ASSIGN_OR_RETURN(p.predicted_ms, v.GetNumber("predicted_ms", -1));
  if (const JsonValue* s = v.Find("slice"); s != nullptr && !s->is_null()) {
    if (!s->is_object()) return InvalidArgument("has a \"slice\" that is not an object");
    SliceSpec spec;
    ASSIGN_OR_RETURN(std::string axis, s->GetString("axis", "channels"));
    if (axis == "channels") {
      spec.axis = SliceAxis::kOutputChannels;
    } else if (axis == "batch") {
      spec.axis = SliceAxis::kBatch;
    } else if (axis == "rows") {
      spec.axis = SliceAxis::kRows;
    } else {
      return InvalidArgument("has slice axis '" + axis + "' (expected channels, batch or rows)");
    }
    ASSIGN_OR_RETURN(spec.other_device, s->GetString("other_device", ""));
    if (spec.other_device.empty()) return InvalidArgument("has a slice without \"other_device\"");
    ASSIGN_OR_RETURN(spec.ratio, s->GetNumber("ratio", -1));
    p.slice = std::move(spec);
  }
  return p;
}

}  // namespace

StatusOr<Plan> PlanFromJson(std::string_view json) {
  ASSIGN_OR_RETURN(JsonValue doc, ParseJson(json));
  if (!doc.is_object()) return InvalidArgument("plan: the document is not a JSON object");
  Plan plan;
  ASSIGN_OR_RETURN(plan.policy, doc.GetString("policy", "file"));
  const JsonValue* devices = doc.Find("devices");
  if (devices == nullptr || !devices->is_array())
    return InvalidArgument("plan: \"devices\" must be an array of device names");
  for (const JsonValue& d : devices->array()) {
    if (!d.is_string()) return InvalidArgument("plan: \"devices\" must hold strings");
    plan.devices.push_back(d.string());
  }
  const JsonValue* nodes = doc.Find("nodes");
  if (nodes == nullptr || !nodes->is_array())
    return InvalidArgument("plan: \"nodes\" must be an array");
  for (size_t i = 0; i < nodes->array().size(); ++i) {
    StatusOr<NodePlan> p = NodePlanFromJson(nodes->array()[i]);
    if (!p.ok()) return p.status().WithPrefix("plan: nodes[" + std::to_string(i) + "]");
    plan.nodes.push_back(std::move(*p));
  }
  return plan;
}

}  // namespace braid
