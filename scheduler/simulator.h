// A discrete-event simulation of a Plan on a device profile: per-device
// queues and streams, copy engines per direction, dependencies and slices.
// Every figure it reports is simulated (predicted by the cost model).
//
//   braid::CostModel model(profile);
//   ASSIGN_OR_RETURN(braid::SimGraph sim_graph,
//                    braid::BuildSimGraph(graph, model, {"cpu", "cuda:0"}));  // once
//   braid::Simulator sim(sim_graph);
//   ASSIGN_OR_RETURN(std::vector<braid::SimPlacement> placement,
//                    braid::CompilePlacement(sim_graph, plan));
//   const braid::SimResult& r = sim.Run(placement);          // an array walk, no allocation
//   std::cout << r.latency_us << " us simulated, " << r.energy_j << " J simulated\n";
//
// Semantics (docs/scheduler.md): nodes are issued in plan (graph) order.
// A node starts when its inputs are on its device, its stream's previous
// node has finished and one of the device's `concurrent_kernels` slots is
// free. A value read on another device is copied once per destination, on
// the copy engine of that direction, when its first reader there is issued;
// mapped links copy nothing. Graph inputs start on devices[0]; graph outputs
// are copied back to it. Constants are resident on every device. A sliced
// node runs `ratio` of its work on its device and the rest on the other
// device (stream 0), whose part of the output is copied back; the node is
// done when both parts are.
#ifndef BRAID_SCHEDULER_SIMULATOR_H_
#define BRAID_SCHEDULER_SIMULATOR_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "graph/ir.h"
#include "scheduler/cost_model.h"
#include "scheduler/plan.h"

namespace braid {

// The graph and the cost model flattened for one device list: per node and
// device the predicted overhead and work, input/output value lists, value
// sizes and the copy costs between devices.
struct SimGraph {
  std::vector<std::string> devices;  // devices[0] is the host
  std::vector<std::string> node_names;
  std::vector<std::string> op_types;
  int num_nodes = 0;
  int num_devices = 0;
  int num_values = 0;  // graph inputs and node outputs (not constants)

  // [node * num_devices + device]
  std::vector<double> overhead_us;
  std::vector<double> work_us;
  // The work when every input was copied in from another device (not in the
  // cache: OpWork::copied_bytes); Run takes the share of the copied inputs'
  // bytes of the difference to work_us.
  std::vector<double> copied_work_us;
  // A sliced node's join on its main device (overhead included): the
  // engine's "#join" step copies both parts into the full output
  // (runtime/slicing.h), a plain copy of the output's bytes in and out.
  std::vector<double> join_us;
  // CSR: node n reads values in_values[in_begin[n] .. in_begin[n + 1]),
  // writes out_values[out_begin[n] .. out_begin[n + 1]).
  std::vector<int32_t> in_begin, in_values, out_begin, out_values;
  std::vector<double> value_bytes;          // [value]
  // [value]: the value whose bytes it is (itself; a view's output: its
  // input's root, runtime views share the buffer). Whether a reader gets it
  // by a copy follows the root's producer.
  std::vector<int32_t> value_root;
  // [node]: SliceExtent along output channels, the batch and rows (-1: the
  // node cannot be sliced so), for SliceShare.
  std::vector<int32_t> channel_extent, batch_extent, row_extent;
  int32_t SliceExtentOf(int node, SliceAxis axis) const;
  std::vector<int32_t> graph_input_values;  // values present on devices[0] at t = 0
  std::vector<int32_t> graph_output_values;

  // [from * num_devices + to]. Latency of a handoff: the link's latency
  // (copying links) plus the wake-ups of the copying and the reading streams
  // (DeviceSpec::sync_us); a mapped link has only the reader's.
  std::vector<double> link_latency_us, link_us_per_byte;
  std::vector<uint8_t> link_mapped;
  std::vector<int32_t> copy_engines;
  // [device]
  std::vector<int32_t> concurrent_kernels;
  std::vector<double> active_power_w, idle_power_w;
  double static_power_w = 0;
};

// `devices` are plan device names, each matched to a profile device by the
// CostModel; the first is the host. Errors: a device missing from the
// profile, two devices without a link, a node without annotations
// (Annotate first) is accepted with zero FLOPs/bytes.
StatusOr<SimGraph> BuildSimGraph(const Graph& graph, const CostModel& model,
                                 const std::vector<std::string>& devices);

// A plan compiled to indices into SimGraph::devices.
struct SimPlacement {
  int16_t device = 0;
  int16_t stream = 0;
  int16_t other_device = -1;  // slice partner, -1 for none
  float ratio = 1.0f;         // share of `device` asked for when sliced
  SliceAxis axis = SliceAxis::kOutputChannels;  // when sliced
};
// The same placement: devices, and for a slice its ratio and axis.
inline bool SamePlacement(const SimPlacement& a, const SimPlacement& b) {
  return a.device == b.device && a.other_device == b.other_device &&
         (a.other_device < 0 || (a.ratio == b.ratio && a.axis == b.axis));
}
// The share of its work node `node` runs on p.device: 1 unsliced, else the
// split the engine makes of p.ratio (SliceSplitIndex: whole channels, in
// blocks of kSliceChannelMultiple, whole batch items or whole rows) over the
// extent. A row part's halo (the input rows it shares with the other part)
// is not priced: at most (kernel - 1) x dilation rows of each part.
double SliceShare(const SimGraph& sim_graph, int node, const SimPlacement& p);
// Structure must match (one entry per node); device names must be among
// sim_graph.devices. Run ValidatePlan for the full checks.
StatusOr<std::vector<SimPlacement>> CompilePlacement(const SimGraph& sim_graph, const Plan& plan);

struct SimDeviceStats {
  double busy_us = 0;         // sum of kernel time on the device
  double idle_us = 0;         // latency - busy (>= 0)
  int kernels = 0;
  int idle_gaps = 0;          // times the device went idle and resumed
  double largest_gap_us = 0;
  double energy_j = 0;
};

struct SimNodeTime {
  int16_t device = 0;
  double start_us = 0, end_us = 0;
  int16_t other_device = -1;  // slice part
  double other_start_us = 0, other_end_us = 0;
  double done_us = 0;  // outputs ready on `device` (a slice: after its join)
};

struct SimCopy {
  int32_t value = 0;
  // The node whose issue made the copy (a reader's input, or a slice's part
  // copied back); -1 for the graph outputs' copies to the host.
  int32_t node = -1;
  int16_t from = 0, to = 0;
  double bytes = 0;
  double start_us = 0, end_us = 0;
};

struct SimResult {
  double latency_us = 0;          // simulated
  double energy_j = 0;            // simulated: devices + static board power
  double bytes_moved = 0;         // over non-mapped links
  double bytes_mapped = 0;        // read across devices without a copy
  int copies = 0;
  std::vector<SimDeviceStats> devices;
  // Filled only when Run is asked for a timeline.
  std::vector<SimNodeTime> nodes;
  std::vector<SimCopy> copy_log;
};

// Reusable simulation state for one SimGraph: Run allocates nothing after
// the first call (without a timeline).
class Simulator {
 public:
  explicit Simulator(const SimGraph& graph);
  // `placement` has one entry per node (CompilePlacement). The result is
  // valid until the next Run.
  const SimResult& Run(std::span<const SimPlacement> placement, bool timeline = false);

 private:
  double Available(int value, int device);
  // `value` reached `device` by a copy (its home is elsewhere, not mapped).
  bool CopiedIn(int value, int device) const;
  double Copy(int value, int from, int to, double ready_us, double bytes);
  double RunKernel(int device, int stream, double ready_us, double duration_us);

  const SimGraph& g_;
  int max_streams_ = 1;
  std::vector<double> value_ready_;  // [value * D + device], < 0: not there
  std::vector<int16_t> value_home_;  // [value]: producing device
  std::vector<double> stream_free_;  // [device * max_streams + stream]
  std::vector<double> slot_free_;    // [device * max_slots + slot]
  std::vector<double> engine_free_;  // [(from * D + to) * max_engines + engine]
  std::vector<double> device_last_end_;
  int max_slots_ = 1;
  int max_engines_ = 1;
  bool timeline_ = false;
  int32_t current_node_ = -1;  // for SimCopy::node
  SimResult result_;
};

// Compiles and simulates in one call (allocates; for tools, not for search).
StatusOr<SimResult> SimulatePlan(const SimGraph& sim_graph, const Plan& plan,
                                 bool timeline = false);

}  // namespace braid

#endif  // BRAID_SCHEDULER_SIMULATOR_H_
