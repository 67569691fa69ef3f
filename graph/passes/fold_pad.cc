// FoldPad: a zero-valued constant Pad of the spatial axes whose only reader
// is a Conv or an AveragePool becomes that node's own padding, so no padded
// copy is made (PyTorch exports avg_pool2d(padding=p) with the default
// count_include_pad as Pad -> AveragePool: InceptionV3 9x, DenseNet's
// transitions with an all-zero Pad 3x):
//
//   Conv(Pad(x, p), W)            ->  Conv(x, W, pads += p)
//   AveragePool(Pad(x, p))        ->  AveragePool(x, pads += p, count_include_pad=1)
//
// Conditions: mode "constant" with value 0 (absent, attribute or constant
// input), pads constant (input 1, or the attribute before opset 11), no
// `axes` input, none negative, none on the batch or channel axis; the
// reader takes the Pad's output as input 0, has auto_pad NOTSET, and (a
// pool) ceil_mode 0 and either count_include_pad=1 or no pads of its own
// (the padded zeros are counted, as count_include_pad=1 counts them). The
// Pad's output must not be a graph output.
#include <algorithm>
#include <string>
#include <vector>

#include "graph/passes/passes.h"
#include "graph/passes/pattern_util.h"

namespace braid {
namespace {

using pass_util::InputOrNone;

// The Pad's [begin..., end...] amounts when it pads only spatial axes with
// zeros, else empty.
std::vector<int64_t> ZeroSpatialPads(const Graph& graph, const Node& pad) {
  if (pad.attrs.GetString("mode", "constant") != "constant") return {};
  if (InputOrNone(pad, 3) != kNoValue) return {};  // axes (opset 18)
  const ValueId x = InputOrNone(pad, 0);
  if (x == kNoValue || !graph.value(x).has_shape) return {};
  const size_t rank = graph.value(x).shape.size();
  std::vector<int64_t> pads;
  if (pad.attrs.Has("pads")) {
    pads = pad.attrs.GetInts("pads", {});
    if (pad.attrs.GetFloat("value", 0.0f) != 0.0f) return {};
  } else {
    std::optional<std::vector<int64_t>> p = pass_util::ReadConstantI64(graph, InputOrNone(pad, 1));
    if (!p) return {};
    pads = *p;
    const ValueId value = InputOrNone(pad, 2);
    if (value != kNoValue) {
      std::optional<std::vector<double>> v = pass_util::ReadConstantF32(graph, value);
      if (!v || v->size() != 1 || (*v)[0] != 0.0) return {};
    }
  }
  if (rank < 3 || pads.size() != 2 * rank) return {};
  for (int64_t p : pads)
    if (p < 0) return {};
  if (pads[0] != 0 || pads[1] != 0 || pads[rank] != 0 || pads[rank + 1] != 0) return {};
  return pads;
}

}  // namespace

Status FoldPad(Graph& graph) {
  RETURN_IF_ERROR(graph.Validate().WithPrefix("FoldPad"));
  const pass_util::GraphUses uses(graph);
  std::vector<bool> remove(static_cast<size_t>(graph.num_nodes()), false);
  for (NodeId id = 0; id < graph.num_nodes(); ++id) {
    const Node& pad = graph.node(id);
    if (pad.op_type != "Pad" || pad.outputs.size() != 1 || graph.value(pad.inputs[0]).dtype != DataType::kF32)
      continue;
    const std::vector<int64_t> pads = ZeroSpatialPads(graph, pad);
    if (pads.empty()) continue;
    if (std::all_of(pads.begin(), pads.end(), [](int64_t p) { return p == 0; }) &&
        !uses.IsGraphOutput(pad.outputs[0])) {
      // Pads nothing (Swin's window padding when the window divides the
      // feature map): every reader reads the input instead.
      graph.ReplaceAllUses(pad.outputs[0], pad.inputs[0]);
      remove[static_cast<size_t>(id)] = true;
      continue;
    }
    const NodeId reader_id = uses.OnlyReader(pad.outputs[0]);
    if (reader_id == kNoNode) continue;
    Node& reader = graph.node(reader_id);
    const bool conv = reader.op_type == "Conv";
    if (!conv && reader.op_type != "AveragePool") continue;
    if (reader.inputs.empty() || reader.inputs[0] != pad.outputs[0]) continue;
    if (reader.attrs.GetString("auto_pad", "NOTSET") != "NOTSET") continue;
    const size_t spatial = pads.size() / 2 - 2;
    std::vector<int64_t> own = reader.attrs.GetInts("pads", std::vector<int64_t>(2 * spatial, 0));
    if (own.size() != 2 * spatial) continue;
    bool own_zero = true;
    for (int64_t p : own) own_zero &= p == 0;
    if (!conv && (reader.attrs.GetInt("ceil_mode", 0) != 0 ||
                  (!own_zero && reader.attrs.GetInt("count_include_pad", 0) == 0)))
      continue;
    for (size_t d = 0; d < spatial; ++d) {
      own[d] += pads[2 + d];
      own[spatial + d] += pads[spatial + 2 + 2 + d];
    }
    reader.attrs.Set("pads", own);
    if (!conv) reader.attrs.Set("count_include_pad", int64_t{1});
    reader.inputs[0] = pad.inputs[0];
    remove[static_cast<size_t>(id)] = true;
  }
  graph.RemoveNodes(remove);
  return pass_util::FinishPass(graph, "FoldPad");
}

}  // namespace braid
