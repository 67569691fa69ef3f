#include "graph/slimmable.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

#include "graph/annotate.h"
#include "graph/passes/passes.h"

namespace braid {
namespace {

std::vector<std::string> SplitCommas(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

Status CheckSpec(const SlimSpec& spec, const Graph& graph) {
  if (spec.widths.empty()) return InvalidArgument(std::string(kSlimWidthsKey) + " is empty");
  std::set<double> seen;
  for (double w : spec.widths) {
    if (!(w > 0.0 && w <= 1.0))
      return InvalidArgument(std::string(kSlimWidthsKey) + ": width " + std::to_string(w) +
                             " is not in (0, 1]");
    if (!seen.insert(w).second)
      return InvalidArgument(std::string(kSlimWidthsKey) + ": width " + std::to_string(w) +
                             " is listed twice");
  }
  if (!spec.HasWidth(1.0))
    return InvalidArgument(std::string(kSlimWidthsKey) + " must include 1 (the full model)");
  std::set<std::string> names;
  for (const std::string& b : spec.boundaries) {
    const ValueId id = graph.FindValue(b);
    if (id == kNoValue || graph.IsConstant(id) || graph.value(id).producer == kNoNode)
      return InvalidArgument(std::string(kSlimSegmentsKey) + ": '" + b +
                             "' is not a value computed by a node of the graph");
    if (!names.insert(b).second)
      return InvalidArgument(std::string(kSlimSegmentsKey) + ": '" + b + "' is listed twice");
  }
  return Status::Ok();
}

// The leading block `dims` of a row-major tensor of extents `full`.
TensorData LeadingBlock(const TensorData& data, size_t element_size,
                        const std::vector<int64_t>& full, const std::vector<int64_t>& dims) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  TensorData out = TensorData::Allocate(static_cast<size_t>(count) * element_size);
  if (count == 0) return out;
  const size_t rank = full.size();
  // Copy contiguous rows of the last dim; an odometer walks the others.
  const size_t row_bytes = static_cast<size_t>(dims[rank - 1]) * element_size;
  std::vector<int64_t> index(rank, 0);
  std::byte* dst = out.mutable_data();
  for (int64_t row = 0; row < count / dims[rank - 1]; ++row) {
    int64_t offset = 0;
    for (size_t d = 0; d + 1 < rank; ++d) offset = (offset + index[d]) * full[d + 1];
    std::memcpy(dst, data.data() + static_cast<size_t>(offset) * element_size, row_bytes);
    dst += row_bytes;
    for (size_t d = rank - 1; d-- > 0;) {
      if (++index[d] < dims[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

// Ops whose output has its (one) activation input's channels: elementwise
// maps and pooling. Their constant inputs must be scalars (Clip's bounds).
bool KeepsChannels(const std::string& op) {
  static const std::set<std::string> kOps = {
      "Relu", "Clip", "Sigmoid", "Tanh", "HardSwish", "HardSigmoid", "LeakyRelu", "Elu",
      "Gelu", "Erf", "Identity", "Dropout", "Softplus", "Mish", "Neg", "Abs", "Exp", "Sqrt",
      "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"};
  return kOps.count(op) != 0;
}

bool IsBinaryElementwise(const std::string& op) {
  return op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Max" || op == "Min" ||
         op == "Pow";
}

// Derives one segment's graph; see SlimSegmentGraph.
class SegmentBuilder {
 public:
  SegmentBuilder(const Graph& graph, double width) : graph_(graph), width_(width) {}

  Status AddInput(ValueId id, int64_t channels) {
    const Value& v = graph_.value(id);
    RETURN_IF_ERROR(FullChannels(id, "segment input").status());
    Shape shape = v.shape;
    shape[1] = Dim(channels);
    map_[id] = out_.AddInput(v.name, v.dtype, shape);
    channels_[id] = channels;
    return Status::Ok();
  }

  Status AddNode(const Node& node) {
    Node copy = node;
    std::map<size_t, ValueId> replaced;  // input index -> sliced constant in the segment graph
    const std::string& op = node.op_type;
    ASSIGN_OR_RETURN(ValueId x, FirstActivation(node));
    const int64_t c = channels_.at(x);
    ASSIGN_OR_RETURN(const int64_t full, FullChannels(x, "input of node '" + node.name + "'"));
    int64_t out_channels = c;
    if (op == "Conv") {
      const Value& w = graph_.value(node.inputs[1]);
      const std::vector<int64_t> wd = Extents(w);
      if (!graph_.IsConstant(node.inputs[1]) || wd.size() < 3)
        return Where(node, "its weight is not a constant");
      const int64_t group = node.attrs.GetInt("group", 1);
      std::vector<int64_t> dims = wd;
      if (group == 1) {
        out_channels = SlimChannels(wd[0], width_);
        dims[0] = out_channels;
        dims[1] = c;
      } else if (group == full && wd[0] == full && wd[1] == 1) {  // depthwise
        out_channels = c;
        dims[0] = c;
        copy.attrs.Set("group", c);
      } else {
        return Unimplemented(Name(node) + ": grouped convolution (group " +
                             std::to_string(group) + ") other than depthwise is not slimmable");
      }
      ASSIGN_OR_RETURN(replaced[1], Sliced(node.inputs[1], dims));
      if (node.inputs.size() > 2 && node.inputs[2] != kNoValue) {
        ASSIGN_OR_RETURN(replaced[2], Sliced(node.inputs[2], {out_channels}));
      }
    } else if (op == "GroupNormalization" || op == "BatchNormalization" ||
               op == "InstanceNormalization") {
      const int64_t groups = op == "GroupNormalization" ? node.attrs.GetInt("num_groups", 1) : 1;
      if (groups <= 0 || c % groups != 0)
        return InvalidArgument(Name(node) + ": width " + std::to_string(width_) + " leaves " +
                               std::to_string(c) + " channels, not a multiple of num_groups " +
                               std::to_string(groups));
      for (size_t i = 1; i < node.inputs.size(); ++i) {
        if (node.inputs[i] == kNoValue) continue;
        const std::vector<int64_t> pd = Extents(graph_.value(node.inputs[i]));
        if (pd == std::vector<int64_t>{full}) {
          ASSIGN_OR_RETURN(replaced[i], Sliced(node.inputs[i], {c}));
        } else if (!(op == "GroupNormalization" && pd == std::vector<int64_t>{groups})) {
          return Where(node, "parameter " + std::to_string(i) + " is not per channel");
        }
      }
    } else if (op == "Gemm" || op == "MatMul") {
      // A head: its input features slim, its outputs keep their full count.
      const ValueId b = node.inputs[1];
      const std::vector<int64_t> bd = Extents(graph_.value(b));
      if (!graph_.IsConstant(b) || bd.size() != 2) return Where(node, "its weight is not a 2-D constant");
      const bool trans_b = op == "Gemm" && node.attrs.GetInt("transB", 0) != 0;
      if (op == "Gemm" && node.attrs.GetInt("transA", 0) != 0) return Where(node, "transA is set");
      std::vector<int64_t> dims = bd;
      dims[trans_b ? 1 : 0] = c;
      ASSIGN_OR_RETURN(replaced[1], Sliced(b, dims));
      out_channels = trans_b ? bd[0] : bd[1];
    } else if (op == "Flatten") {
      if (node.attrs.GetInt("axis", 1) != 1) return Where(node, "axis is not 1");
      const std::vector<int64_t> xd = Extents(graph_.value(x));
      int64_t inner = 1;
      for (size_t d = 2; d < xd.size(); ++d) inner *= xd[d];
      out_channels = c * inner;  // leading channels are leading rows of the flattened features
    } else if (KeepsChannels(op) || IsBinaryElementwise(op)) {
      RETURN_IF_ERROR(SliceChannelOperands(node, x, full, c, replaced));
    } else {
      return Unimplemented(Name(node) + ": " + op + " is not slimmable (docs/slimmable.md lists "
                           "the ops a slimmable segment may contain)");
    }
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const ValueId in = node.inputs[i];
      if (in == kNoValue) continue;
      if (auto it = replaced.find(i); it != replaced.end()) {
        copy.inputs[i] = it->second;
        continue;
      }
      ASSIGN_OR_RETURN(copy.inputs[i], Mapped(in, node));
    }
    for (ValueId& out : copy.outputs) {
      if (out == kNoValue) continue;
      const ValueId old = out;
      Value v;
      v.name = graph_.value(old).name;
      v.dtype = graph_.value(old).dtype;
      out = out_.AddValue(std::move(v));
      map_[old] = out;
      channels_[old] = out_channels;
    }
    out_.AddNode(std::move(copy));
    return Status::Ok();
  }

  Graph Finish(const std::vector<ValueId>& outputs) && {
    for (ValueId id : outputs) out_.outputs().push_back(map_.at(id));
    return std::move(out_);
  }
  Graph& graph() { return out_; }
  bool Has(ValueId id) const { return map_.count(id) != 0; }

 private:
  static std::vector<int64_t> Extents(const Value& v) {
    std::vector<int64_t> out;
    for (const Dim& d : v.shape) out.push_back(d.is_static() ? d.extent() : -1);
    return out;
  }

  static std::string Name(const Node& node) {
    return "node '" + node.name + "' (" + node.op_type + ")";
  }
  static Status Where(const Node& node, const std::string& what) {
    return Unimplemented(Name(node) + ": not slimmable: " + what);
  }

  StatusOr<int64_t> FullChannels(ValueId id, const std::string& what) const {
    const Value& v = graph_.value(id);
    if (!v.has_shape || v.shape.size() < 2 || !v.shape[1].is_static())
      return InvalidArgument(what + " '" + v.name + "' has no static channel dim (shape " +
                             ShapeToString(v.shape) + ")");
    return v.shape[1].extent();
  }

  // The first input that is not a constant (the activation).
  StatusOr<ValueId> FirstActivation(const Node& node) const {
    for (ValueId in : node.inputs)
      if (in != kNoValue && !graph_.IsConstant(in)) {
        if (channels_.count(in) == 0)
          return InvalidArgument(Name(node) + " reads '" + graph_.value(in).name +
                                 "', which its segment neither computes nor takes as input");
        return in;
      }
    return Where(node, "it has no activation input");
  }

  // Binary elementwise and channel-keeping ops: activation operands must
  // agree; constants are scalars (kept) or per-channel (sliced).
  Status SliceChannelOperands(const Node& node, ValueId x, int64_t full, int64_t c,
                              std::map<size_t, ValueId>& replaced) {
    const size_t rank = graph_.value(x).shape.size();
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const ValueId in = node.inputs[i];
      if (in == kNoValue) continue;
      if (!graph_.IsConstant(in)) {
        if (channels_.count(in) == 0 || channels_.at(in) != c)
          return InvalidArgument(Name(node) + ": its inputs have different widths");
        continue;
      }
      const std::vector<int64_t> dims = Extents(graph_.value(in));
      int64_t elements = 1;
      for (int64_t d : dims) elements *= d;
      if (elements == 1) continue;
      // The constant dim that broadcasts against the channel axis (1).
      const int64_t axis = 1 - static_cast<int64_t>(rank - dims.size());
      bool per_channel = axis >= 0 && axis < static_cast<int64_t>(dims.size()) &&
                         dims[static_cast<size_t>(axis)] == full;
      for (size_t d = 0; d < dims.size() && per_channel; ++d)
        if (static_cast<int64_t>(d) != axis && dims[d] != 1) per_channel = false;
      if (!per_channel)
        return Where(node, "constant '" + graph_.value(in).name + "' is neither a scalar nor per channel");
      std::vector<int64_t> sliced = dims;
      sliced[static_cast<size_t>(axis)] = c;
      ASSIGN_OR_RETURN(replaced[i], Sliced(in, sliced));
    }
    return Status::Ok();
  }

  StatusOr<ValueId> Mapped(ValueId in, const Node& node) {
    if (auto it = map_.find(in); it != map_.end()) return it->second;
    if (!graph_.IsConstant(in))
      return InvalidArgument(Name(node) + " reads '" + graph_.value(in).name +
                             "', which its segment neither computes nor takes as input");
    const Value& v = graph_.value(in);
    const ValueId id = out_.AddConstant(v.name, v.dtype, v.shape, *v.constant);  // shared bytes
    map_[in] = id;
    return id;
  }

  // A new constant holding the leading `dims` block of constant `in`.
  StatusOr<ValueId> Sliced(ValueId in, const std::vector<int64_t>& dims) {
    const Value& v = graph_.value(in);
    const std::vector<int64_t> full = Extents(v);
    if (!graph_.IsConstant(in) || full.size() != dims.size())
      return InvalidArgument("'" + v.name + "' is not a constant of rank " +
                             std::to_string(dims.size()));
    for (size_t d = 0; d < dims.size(); ++d)
      if (dims[d] < 0 || dims[d] > full[d])
        return InvalidArgument("'" + v.name + "' " + ShapeToString(v.shape) +
                               " cannot be cut to " + ShapeToString(StaticShape(dims)));
    if (dims == full) return Mapped(in, Node{});
    const TensorData data = LeadingBlock(*v.constant, DataTypeSize(v.dtype), full, dims);
    return out_.AddConstant(v.name, v.dtype, StaticShape(dims), data);
  }

  const Graph& graph_;
  double width_;
  Graph out_;
  std::unordered_map<ValueId, ValueId> map_;          // full graph -> segment graph
  std::unordered_map<ValueId, int64_t> channels_;     // activations: channels in the segment
};

}  // namespace

bool SlimSpec::HasWidth(double width) const {
  return std::any_of(widths.begin(), widths.end(),
                     [&](double w) { return std::abs(w - width) < 1e-9; });
}

StatusOr<SlimSpec> ReadSlimSpec(const Graph& graph) {
  const auto widths = graph.metadata().find(kSlimWidthsKey);
  if (widths == graph.metadata().end())
    return NotFound("the model is not slimmable: it has no '" + std::string(kSlimWidthsKey) +
                    "' metadata (docs/slimmable.md)");
  SlimSpec spec;
  for (const std::string& item : SplitCommas(widths->second)) {
    char* end = nullptr;
    const double w = std::strtod(item.c_str(), &end);
    if (end == item.c_str() || *end != '\0')
      return InvalidArgument(std::string(kSlimWidthsKey) + ": '" + item + "' is not a number");
    spec.widths.push_back(w);
  }
  std::sort(spec.widths.rbegin(), spec.widths.rend());
  if (auto it = graph.metadata().find(kSlimSegmentsKey); it != graph.metadata().end())
    spec.boundaries = SplitCommas(it->second);
  RETURN_IF_ERROR(CheckSpec(spec, graph));
  return spec;
}

Status WriteSlimSpec(const SlimSpec& spec, Graph& graph) {
  RETURN_IF_ERROR(CheckSpec(spec, graph));
  std::ostringstream widths, segments;
  for (size_t i = 0; i < spec.widths.size(); ++i) widths << (i ? "," : "") << spec.widths[i];
  for (size_t i = 0; i < spec.boundaries.size(); ++i)
    segments << (i ? "," : "") << spec.boundaries[i];
  graph.metadata()[kSlimWidthsKey] = widths.str();
  graph.metadata()[kSlimSegmentsKey] = segments.str();
  return Status::Ok();
}

int64_t SlimChannels(int64_t full, double width) {
  const auto c = static_cast<int64_t>(std::llround(static_cast<double>(full) * width));
  return std::clamp<int64_t>(c, 1, std::max<int64_t>(full, 1));
}

StatusOr<Graph> SlimSegmentGraph(const Graph& graph, const SlimSpec& spec, int segment,
                                 double width, double input_width) {
  RETURN_IF_ERROR(CheckSpec(spec, graph));
  const int segments = spec.num_segments();
  if (segment < 0 || segment >= segments)
    return InvalidArgument("segment " + std::to_string(segment) + " is out of range: the model has " +
                           std::to_string(segments) + " segments");
  for (double w : {width, segment > 0 ? input_width : 1.0})
    if (!spec.HasWidth(w))
      return InvalidArgument("width " + std::to_string(w) + " is not one of the model's widths (" +
                             graph.metadata().at(kSlimWidthsKey) + ")");

  // Each node's segment: the first boundary it is an ancestor of (or produces).
  const int num_nodes = graph.num_nodes();
  std::vector<int> node_segment(static_cast<size_t>(num_nodes), segments - 1);
  for (int k = segments - 2; k >= 0; --k) {
    std::vector<ValueId> stack = {graph.FindValue(spec.boundaries[static_cast<size_t>(k)])};
    std::vector<bool> seen(static_cast<size_t>(num_nodes), false);
    while (!stack.empty()) {
      const NodeId producer = graph.value(stack.back()).producer;
      stack.pop_back();
      if (producer == kNoNode || seen[static_cast<size_t>(producer)]) continue;
      seen[static_cast<size_t>(producer)] = true;
      node_segment[static_cast<size_t>(producer)] = k;
      for (ValueId in : graph.node(producer).inputs)
        if (in != kNoValue && !graph.IsConstant(in)) stack.push_back(in);
    }
  }
  // Boundaries in order, each cutting the graph: a node reads only its own
  // segment's values and the previous boundary.
  for (int k = 0; k + 1 < segments; ++k) {
    const ValueId b = graph.FindValue(spec.boundaries[static_cast<size_t>(k)]);
    if (node_segment[static_cast<size_t>(graph.value(b).producer)] != k)
      return InvalidArgument(std::string(kSlimSegmentsKey) + ": '" + spec.boundaries[static_cast<size_t>(k)] +
                             "' is computed before an earlier boundary; list boundaries in order");
  }
  for (NodeId n = 0; n < num_nodes; ++n) {
    const int k = node_segment[static_cast<size_t>(n)];
    for (ValueId in : graph.node(n).inputs) {
      if (in == kNoValue || graph.IsConstant(in)) continue;
      const NodeId producer = graph.value(in).producer;
      const int from = producer == kNoNode ? 0 : node_segment[static_cast<size_t>(producer)];
      const bool previous_boundary =
          k > 0 && graph.value(in).name == spec.boundaries[static_cast<size_t>(k - 1)];
      if (from != k && !previous_boundary)
        return InvalidArgument(std::string(kSlimSegmentsKey) + " does not cut the graph: node '" +
                               graph.node(n).name + "' (segment " + std::to_string(k) + ") reads '" +
                               graph.value(in).name + "' from segment " + std::to_string(from));
    }
  }

  SegmentBuilder builder(graph, width);
  std::ostringstream name;
  name << graph.name() << ".segment" << segment << "@" << width;
  builder.graph().name() = name.str();
  builder.graph().set_opset(graph.opset());
  if (segment == 0) {
    for (ValueId in : graph.inputs()) {  // the model's inputs, unslimmed
      const Value& v = graph.value(in);
      const int64_t channels = v.shape.size() > 1 && v.shape[1].is_static() ? v.shape[1].extent() : 0;
      RETURN_IF_ERROR(builder.AddInput(in, channels));
    }
  } else {
    const ValueId in = graph.FindValue(spec.boundaries[static_cast<size_t>(segment - 1)]);
    const Value& v = graph.value(in);
    if (!v.has_shape || v.shape.size() < 2 || !v.shape[1].is_static())
      return InvalidArgument("boundary '" + v.name + "' has no static channel dim");
    RETURN_IF_ERROR(builder.AddInput(in, SlimChannels(v.shape[1].extent(), input_width)));
  }
  for (NodeId n = 0; n < num_nodes; ++n)
    if (node_segment[static_cast<size_t>(n)] == segment) RETURN_IF_ERROR(builder.AddNode(graph.node(n)));
  std::vector<ValueId> outputs;
  if (segment + 1 < segments)
    outputs.push_back(graph.FindValue(spec.boundaries[static_cast<size_t>(segment)]));
  else
    outputs = graph.outputs();
  for (ValueId out : outputs)
    if (!builder.Has(out))
      return InvalidArgument("segment " + std::to_string(segment) + " does not compute '" +
                             graph.value(out).name + "'");
  Graph out = std::move(builder).Finish(outputs);
  out.metadata()["braid.slim.segment"] = std::to_string(segment);
  RETURN_IF_ERROR(InferShapes(out));
  RETURN_IF_ERROR(Annotate(out));
  RETURN_IF_ERROR(out.Validate());
  return out;
}

}  // namespace braid
