// A Plan: per graph node, the device it runs on, the stream on that device,
// and optionally a slice that gives part of its output to a second device.
// Policies (scheduler/) produce plans, the runtime compiles and runs them,
// `braid plan --save/--load` and `braid run --plan` move them as JSON.
//
//   braid::Plan plan = braid::SingleDevicePlan(graph, "cpu", "cpu-only");
//   plan.nodes[3].device = "vgpu";
//   plan.nodes[5].slice = braid::SliceSpec{braid::SliceAxis::kOutputChannels, "vgpu", 0.6};
//   braid::ApplyDevicePins(graph, plan);                  // pins in the model file win
//   RETURN_IF_ERROR(braid::ValidatePlan(plan, graph));
//   std::string json = braid::PlanToJson(plan);
//   ASSIGN_OR_RETURN(braid::Plan again, braid::PlanFromJson(json));
//
// Transfers are implied: a value produced on one device and read on another
// is copied once per destination by the runtime's plan compiler.
#ifndef BRAID_SCHEDULER_PLAN_H_
#define BRAID_SCHEDULER_PLAN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "graph/ir.h"
#include "graph/status.h"

namespace braid {

enum class SliceAxis {
  kOutputChannels,  // Conv: output channels (dim 1); Gemm/MatMul: output columns (last dim)
  kBatch,           // dim 0 of the output
  // Conv with two spatial dims: output rows (dim 2). Each part reads only
  // the input rows its output rows need (their halo) and keeps every
  // channel and weight, so any group count splits, one row at a time.
  kRows,
};
const char* SliceAxisName(SliceAxis axis);  // "channels", "batch", "rows"

// Splits a node's output along `axis`: the node's own device computes
// [0, split), `other_device` computes [split, extent). `ratio` is the share of
// the node's own device; the runtime rounds ratio * extent to a split in
// [1, extent - 1], on channel axes to whole blocks of kSliceChannelMultiple
// (see SliceSplitIndex).
struct SliceSpec {
  SliceAxis axis = SliceAxis::kOutputChannels;
  std::string other_device;
  double ratio = 0.5;  // in (0, 1)
};

struct NodePlan {
  std::string node;     // Node::name
  std::string device;   // a name from Plan::devices: "cpu", "vgpu", "cuda:0"
  int stream = 0;       // stream index on that device (>= 0)
  std::optional<SliceSpec> slice;
  bool pinned = false;  // the device came from the model's device pin
  std::string reason;   // why the policy chose this placement (for `braid plan` / profiles)
  double predicted_ms = -1;  // the cost model's prediction; < 0 when unknown
};

struct Plan {
  std::string policy;                // "cpu-only", "threshold", "file", ...
  std::vector<std::string> devices;  // every device the plan may use
  std::vector<NodePlan> nodes;       // one per graph node, in graph order

  // The entry for node `name`, or nullptr.
  const NodePlan* Find(std::string_view name) const;
};

// Every node on `device`, stream 0.
Plan SingleDevicePlan(const Graph& graph, const std::string& device, std::string policy);

// True when a model-file pin such as "cuda" or "cuda:1" names `device`
// ("cuda" matches "cuda:0"; "cpu" matches "cpu").
bool PinMatchesDevice(std::string_view pin, std::string_view device);

// Moves every pinned node onto the first plan device its pin matches, clears
// its slice and marks it pinned. Returns NotFound naming the node when no
// plan device matches a pin.
Status ApplyDevicePins(const Graph& graph, Plan& plan);

// Ops the runtime can slice, and along which axes.
bool IsSliceable(const Node& node, SliceAxis axis);
// The extent of `axis` in the node's first output (needs a static shape), or
// -1 when unknown.
int64_t SliceExtent(const Graph& graph, const Node& node, SliceAxis axis);
// The output dim `axis` splits in an output of `out_rank` dims: 0 for the
// batch; for output channels 1 (Conv) or the last dim (Gemm, MatMul); 2 for
// rows.
int SliceOutputAxis(const Node& node, SliceAxis axis, int out_rank);
// Output-channel slices split at a multiple of this many channels when the
// extent holds two such blocks: oneDNN's f32 convs compute output channels in
// blocks of 16 (AVX-512), so a part of 56 of 64 channels ran longer than all
// 64 (3x3 conv, 56x56, one thread: 2168 against 1976 us; 48 channels 1467
// us), and cuDNN / cuBLAS favour multiples of 8.
inline constexpr int64_t kSliceChannelMultiple = 16;
// The unit a split along `axis` moves in: kSliceChannelMultiple along output
// channels of an extent >= 2 * kSliceChannelMultiple, else 1.
int64_t SliceSplitStep(int64_t extent, SliceAxis axis);
// The first part's extent: ratio * extent rounded to a multiple of
// SliceSplitStep and clamped to [step, extent - 1]; extent must be >= 2.
int64_t SliceSplitIndex(int64_t extent, double ratio, SliceAxis axis);

// Structure only (the runtime checks that each device has kernels): one entry
// per graph node in graph order with matching names, devices from
// plan.devices, non-negative streams, slices only on sliceable ops with
// ratio in (0, 1), a second device different from the first and an extent of
// at least 2, and pinned nodes on their pinned device. Errors name the node.
Status ValidatePlan(const Plan& plan, const Graph& graph);

// JSON form: {"policy":..., "devices":[...], "nodes":[{"node","device",
// "stream","slice":{"axis","other_device","ratio"},"pinned","reason",
// "predicted_ms"}]} (axis: "channels", "batch" or "rows"). Parsing rejects unknown axes, wrong types and missing
// node/device fields with an error naming the entry.
std::string PlanToJson(const Plan& plan);
StatusOr<Plan> PlanFromJson(std::string_view json);

}  // namespace braid

#endif  // BRAID_SCHEDULER_PLAN_H_
