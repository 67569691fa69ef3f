#include "runtime/slicing.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "kernels/backend.h"
#include "kernels/params/conv.h"

namespace braid {
namespace {

struct Range {
  int64_t lo = 0;
  int64_t hi = 0;
};

std::vector<int64_t> DimsOf(const Value& v) {
  std::vector<int64_t> dims;
  for (const Dim& d : v.shape) dims.push_back(d.extent());
  return dims;
}

// The block [lo, hi) of `dims[axis]` out of a row-major constant.
TensorData SliceConstant(const TensorData& data, const std::vector<int64_t>& dims,
                         size_t axis, Range r, size_t element_bytes) {
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < axis; ++i) outer *= dims[i];
  for (size_t i = axis + 1; i < dims.size(); ++i) inner *= dims[i];
  const size_t row = static_cast<size_t>(inner) * element_bytes;
  const size_t part = static_cast<size_t>(r.hi - r.lo);
  TensorData out = TensorData::Allocate(static_cast<size_t>(outer) * part * row);
  std::byte* dst = out.mutable_data();
  for (int64_t o = 0; o < outer; ++o) {
    const std::byte* src =
        data.data() + (static_cast<size_t>(o) * static_cast<size_t>(dims[axis]) +
                       static_cast<size_t>(r.lo)) * row;
    std::memcpy(dst, src, part * row);
    dst += part * row;
  }
  return out;
}

ValueId I64Constant(Graph& g, const std::string& name, int64_t v) {
  TensorData data = TensorData::Allocate(sizeof(int64_t));
  std::memcpy(data.mutable_data(), &v, sizeof(v));
  const int64_t one[] = {1};
  return g.AddConstant(name, DataType::kI64, StaticShape(one), data);
}

// A 2-D Conv's window along rows, with auto_pad resolved (as its kernels see it).
struct RowWindow {
  int64_t in_rows = 0, kernel = 1, stride = 1, dilation = 1, pad_top = 0;
  std::vector<int64_t> pads;  // ONNX order: top, left, bottom, right
};

StatusOr<RowWindow> ConvRowWindow(const Graph& g, const Node& node) {
  PrepareArgs args;
  args.node = &node;
  args.opset = g.opset();
  for (ValueId in : node.inputs) {
    TensorDesc desc;
    if (in != kNoValue) desc = TensorDesc{g.value(in).dtype, DimsOf(g.value(in))};
    args.inputs.push_back(std::move(desc));
  }
  const Value& y = g.value(node.outputs[0]);
  args.outputs.push_back(TensorDesc{y.dtype, DimsOf(y)});
  ASSIGN_OR_RETURN(ConvParams c, ParseConv(args));
  if (c.spatial_rank != 2) return InvalidArgument("rows split a 2-D convolution only");
  RowWindow w;
  w.in_rows = c.in_spatial[0];
  w.kernel = c.kernel[0];
  w.stride = c.strides[0];
  w.dilation = c.dilations[0];
  w.pad_top = c.pads_begin[0];
  w.pads = {c.pads_begin[0], c.pads_begin[1], c.pads_end[0], c.pads_end[1]};
  return w;
}

// Output rows [out.lo, out.hi) read input rows [in.lo, in.hi) plus `top` /
// `bottom` rows of padding (output row o reads input rows
// o * stride - pad_top + k * dilation).
struct RowHalo {
  Range in;
  int64_t top = 0, bottom = 0;
};

RowHalo HaloOf(const RowWindow& w, Range out) {
  const int64_t first = out.lo * w.stride - w.pad_top;
  const int64_t end = (out.hi - 1) * w.stride - w.pad_top + (w.kernel - 1) * w.dilation + 1;
  RowHalo h;
  h.in = {std::max<int64_t>(first, 0), std::min(end, w.in_rows)};
  h.top = h.in.lo - first;
  h.bottom = end - h.in.hi;
  return h;
}

// A split whose part would read only padding (pads wider than the window, a
// 1x1 conv with pads 1) moves inward to the nearest split where both parts
// read at least one input row; nullopt when there is none.
std::optional<int64_t> RowSplitReadingInput(const RowWindow& w, int64_t extent, int64_t split) {
  auto reads = [&](Range out) {
    const RowHalo h = HaloOf(w, out);
    return h.in.hi > h.in.lo;
  };
  for (int64_t d = 0; d < extent; ++d)
    for (int64_t s : {split - d, split + d})
      if (s >= 1 && s < extent && reads({0, s}) && reads({s, extent})) return s;
  return std::nullopt;
}

// Which input dims follow the output's slice axis: input index -> input dim.
StatusOr<std::vector<int>> InputAxes(const Graph& g, const Node& node, SliceAxis axis,
                                     int64_t extent) {
  std::vector<int> axes(node.inputs.size(), -1);
  auto rank = [&](size_t i) -> int {
    if (i >= node.inputs.size() || node.inputs[i] == kNoValue) return -1;
    return static_cast<int>(g.value(node.inputs[i]).shape.size());
  };
  auto dim = [&](size_t i, int d) { return g.value(node.inputs[i]).shape[static_cast<size_t>(d)].extent(); };
  const std::string where = "slicing node '" + node.name + "' (" + node.op_type + ")";
  const int out_rank = static_cast<int>(g.value(node.outputs[0]).shape.size());
  if (node.op_type == "Conv") {
    if (axis == SliceAxis::kRows) {
      axes[0] = 2;  // with its halo (HaloOf); weights and bias are whole
    } else if (axis == SliceAxis::kBatch) {
      axes[0] = 0;
    } else {
      axes[1] = 0;
      if (rank(2) == 1) axes[2] = 0;
    }
  } else if (node.op_type == "Gemm") {
    const bool trans_a = node.attrs.GetInt("transA", 0) != 0;
    const bool trans_b = node.attrs.GetInt("transB", 0) != 0;
    if (axis == SliceAxis::kBatch) {
      axes[0] = trans_a ? 1 : 0;
      if (rank(2) == 2 && dim(2, 0) == extent) axes[2] = 0;
    } else {
      axes[1] = trans_b ? 0 : 1;
      const int rc = rank(2);
      if (rc >= 1 && dim(2, rc - 1) == extent) axes[2] = rc - 1;
    }
  } else if (node.op_type == "MatMul") {
    if (axis == SliceAxis::kBatch) {
      if (out_rank == 2) {
        axes[0] = 0;
      } else {
        for (size_t i = 0; i < 2; ++i)
          if (rank(i) == out_rank && dim(i, 0) == extent) axes[i] = 0;
      }
    } else {
      if (rank(1) < 2) return Unimplemented(where + ": B must have rank >= 2 to split columns");
      axes[1] = rank(1) - 1;
    }
  } else {
    return Unimplemented(where + ": op cannot be sliced");
  }
  return axes;
}

}  // namespace

StatusOr<SlicedGraph> ExpandSlices(const Graph& graph, const Plan& plan) {
  if (plan.nodes.size() != graph.nodes().size())
    return InvalidArgument("plan has " + std::to_string(plan.nodes.size()) +
                           " node entries, the graph has " +
                           std::to_string(graph.nodes().size()));
  SlicedGraph out;
  out.graph = graph;
  Graph& g = out.graph;
  std::vector<Node> nodes;
  nodes.reserve(graph.nodes().size());
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    const Node& node = graph.nodes()[i];
    const NodePlan& p = plan.nodes[i];
    if (!p.slice) {
      nodes.push_back(node);
      out.nodes.push_back({p.device, p.stream, i, ""});
      continue;
    }
    const SliceSpec& spec = *p.slice;
    const std::string where = "slicing node '" + node.name + "' (" + node.op_type + ")";
    if (!IsSliceable(node, spec.axis))
      return InvalidArgument(where + ": cannot be sliced along " + SliceAxisName(spec.axis));
    if (node.outputs.size() != 1 || node.outputs[0] == kNoValue)
      return InvalidArgument(where + ": expects exactly one output");
    const ValueId y = node.outputs[0];
    const Value y_value = g.value(y);
    if (!y_value.has_shape || !IsStatic(y_value.shape))
      return InvalidArgument(where + ": output shape is not static");
    const int out_rank = static_cast<int>(y_value.shape.size());
    const int out_axis = SliceOutputAxis(node, spec.axis, out_rank);
    if (out_rank == 0 || out_axis >= out_rank) return InvalidArgument(where + ": output rank too small");
    const int64_t extent = y_value.shape[static_cast<size_t>(out_axis)].extent();
    if (extent < 2)
      return InvalidArgument(where + ": extent " + std::to_string(extent) + " along " +
                             SliceAxisName(spec.axis) + " cannot be split");
    int64_t split = SliceSplitIndex(extent, spec.ratio, spec.axis);
    ASSIGN_OR_RETURN(std::vector<int> axes, InputAxes(g, node, spec.axis, extent));
    RowWindow rows;
    if (spec.axis == SliceAxis::kRows) {
      StatusOr<RowWindow> w = ConvRowWindow(g, node);
      if (!w.ok()) return InvalidArgument(where + ": " + w.status().message());
      rows = std::move(*w);
      const std::optional<int64_t> reading = RowSplitReadingInput(rows, extent, split);
      if (!reading)
        return InvalidArgument(where + ": no row split leaves both parts an input row to read");
      split = *reading;
    }
    const Range ranges[2] = {{0, split}, {split, extent}};
    const std::string devices[2] = {p.device, spec.other_device};
    ValueId parts[2];
    for (int part = 0; part < 2; ++part) {
      const Range r = ranges[part];
      const std::string suffix = "#" + std::to_string(part);
      const std::string note = std::string(SliceAxisName(spec.axis)) + " [" +
                               std::to_string(r.lo) + "," + std::to_string(r.hi) + ") of " +
                               std::to_string(extent);
      Node part_node = node;
      part_node.name = node.name + suffix;
      Range in_range = r;  // of the input dims that follow the output's
      if (spec.axis == SliceAxis::kRows) {
        const RowHalo halo = HaloOf(rows, r);  // reads an input row: RowSplitReadingInput
        in_range = halo.in;
        std::vector<int64_t> pads = rows.pads;
        pads[0] = halo.top;
        pads[2] = halo.bottom;
        part_node.attrs.Set("pads", AttributeValue(std::move(pads)));
        part_node.attrs.Erase("auto_pad");  // resolved into the pads above
      }
      for (size_t k = 0; k < node.inputs.size(); ++k) {
        if (axes[k] < 0) continue;
        const ValueId in = node.inputs[k];
        const Value in_value = g.value(in);
        const std::vector<int64_t> dims = DimsOf(in_value);
        const size_t a = static_cast<size_t>(axes[k]);
        if (in_range.lo == 0 && in_range.hi == dims[a]) continue;  // the part reads all of it
        std::vector<int64_t> part_dims = dims;
        part_dims[a] = in_range.hi - in_range.lo;
        const std::string name = in_value.name + "#" + node.name + suffix;
        if (in_value.constant) {
          // Partitioned once, here: each side keeps only its share.
          part_node.inputs[k] = g.AddConstant(
              name, in_value.dtype, StaticShape(part_dims),
              SliceConstant(*in_value.constant, dims, a, in_range, DataTypeSize(in_value.dtype)));
          continue;
        }
        if (g.opset() != 0 && g.opset() < 10)
          return Unimplemented(where + ": splitting computed input '" + in_value.name +
                               "' needs Slice with inputs (opset >= 10), the model has opset " +
                               std::to_string(g.opset()));
        Value sliced;
        sliced.name = name;
        sliced.dtype = in_value.dtype;
        sliced.shape = StaticShape(part_dims);
        sliced.has_shape = true;
        const ValueId sliced_id = g.AddValue(std::move(sliced));
        Node slice;
        slice.name = name + "#slice";
        slice.op_type = "Slice";
        slice.inputs = {in, I64Constant(g, name + "#starts", in_range.lo),
                        I64Constant(g, name + "#ends", in_range.hi),
                        I64Constant(g, name + "#axes", axes[k])};
        slice.outputs = {sliced_id};
        nodes.push_back(std::move(slice));
        out.nodes.push_back({devices[part], part == 0 ? p.stream : 0, i, note});
        part_node.inputs[k] = sliced_id;
      }
      std::vector<int64_t> y_part = DimsOf(y_value);
      y_part[static_cast<size_t>(out_axis)] = r.hi - r.lo;
      Value part_value;
      part_value.name = y_value.name + suffix;
      part_value.dtype = y_value.dtype;
      part_value.shape = StaticShape(y_part);
      part_value.has_shape = true;
      parts[part] = g.AddValue(std::move(part_value));
      part_node.outputs = {parts[part]};
      nodes.push_back(std::move(part_node));
      out.nodes.push_back({devices[part], part == 0 ? p.stream : 0, i, note});
    }
    Node join;
    join.name = node.name + "#join";
    join.op_type = "Concat";
    join.attrs.Set("axis", AttributeValue(static_cast<int64_t>(out_axis)));
    join.inputs = {parts[0], parts[1]};
    join.outputs = {y};
    nodes.push_back(std::move(join));
    out.nodes.push_back({p.device, p.stream, i,
                         std::string("join of ") + SliceAxisName(spec.axis) + " split at " +
                             std::to_string(split) + " of " + std::to_string(extent)});
    ++out.sliced_nodes;
  }
  g.nodes() = std::move(nodes);
  g.Compact();  // producers renumbered; the unsplit weights are dropped
  return out;
}

}  // namespace braid
