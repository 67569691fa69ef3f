// The channels-last pass: chooses which 4-D activations stay nhwc between CPU
// kernels that accept it, so a chain of convolutions (with pools, residual
// adds, activations and concats between them) runs without a reorder per
// conv. Graph inputs and outputs stay plain.
//
//   std::vector<bool> handles(graph.nodes().size());
//   for (size_t i = 0; i < handles.size(); ++i)
//     handles[i] = /* node i's kernel accepts TensorLayout::kChannelsLast */;
//   std::vector<braid::TensorLayout> layout = braid::AssignChannelsLast(graph, handles);
//   desc.layout = layout[value_id];
//
// Convolutions reorder whatever they receive, so their inputs and outputs are
// free; every other node that takes part (pools, binary ops, unary
// activations, concat) wants one layout on all of its 4-D operands, so those
// operands are grouped and a group goes nhwc only when every value in it can.
// A [N,C,1,1] tensor has the same bytes in both layouts: it is left plain and
// never holds a group back (kernels describe it in their operands' layout).
#ifndef BRAID_RUNTIME_LAYOUT_H_
#define BRAID_RUNTIME_LAYOUT_H_

#include <functional>
#include <vector>

#include "graph/ir.h"
#include "kernels/backend.h"

namespace braid {

// Ops the pass can route channels-last tensors through (when their kernel
// handles it): Conv, pools, binary elementwise, unary activations, Concat,
// and for int8 / uint8 tensors QLinearConv, ConvInteger, QuantizeLinear and
// DequantizeLinear only.
bool TakesPartInChannelsLast(const Node& node);

// One layout per graph value. `node_handles_channels_last[i]` says whether
// node i's kernel accepts channels-last tensors; the graph must have static
// shapes.
std::vector<TensorLayout> AssignChannelsLast(const Graph& graph,
                                             const std::vector<bool>& node_handles_channels_last);

// Whether a view (RunsAsView) of `in` can share its buffer as `out`: plain
// on both sides (views take no part in channels-last) and the same bytes,
// so the same bytes in the same order.
bool ViewSharesBytes(const TensorDesc& in, const TensorDesc& out);

// Whether `node` on a `device` kernel will take nhwc: candidates ranked above
// the first general nhwc-capable one (e.g. sparse kernels) are prepared with
// the plain args from `plain_args`; if one accepts, the node stays plain and
// the probe hands back that prepared kernel. A specialized nhwc-capable
// candidate (braid's Pad and broadcast binary kernels) counts only if
// it accepts the node with its spatial activations nhwc, so that a node it
// declines (a reflect Pad) never lands nhwc on kernels that cannot take it.
// Declines along the way are kept so the placement can give their real reasons.
struct ChannelsLastProbe {
  bool handles = false;
  PreparedKernel accepted_plain;              // set when a plain-only kernel accepted
  std::vector<DeclinedCandidate> declined;    // plain-only candidates that declined
};
StatusOr<ChannelsLastProbe> ProbeChannelsLast(
    const KernelRegistry& registry, DeviceKind device, const Node& node,
    const std::function<StatusOr<PrepareArgs>()>& plain_args);

// Replaces the "no channels-last" reasons in `prepared.declined` with the
// reasons the same candidates gave when probed plain.
void RestoreProbeReasons(const ChannelsLastProbe& probe, PreparedKernel& prepared);

}  // namespace braid

#endif  // BRAID_RUNTIME_LAYOUT_H_
