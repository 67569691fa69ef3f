// Batch size for throughput mode: which batch gives the most images per
// second within a latency bound, judged by the simulator on a device profile
// (every figure here is SIMULATED). Candidates are 1, 2, 4, ... up to
// max_batch (and max_batch itself).
//
//   braid::BatchSizeOptions o;
//   o.latency_bound_us = 50'000;           // 50 ms per batch at most
//   o.max_batch = 32;
//   // Any latency function: here a fixed cost plus a per-image cost.
//   auto lane = braid::ChooseBatch("cpu", [](int64_t b) -> braid::StatusOr<double> {
//     return 2000.0 + 900.0 * b; }, o);
//   // lane->batch == 32 (images/s grow with b and 2000 + 900 * 32 < 50'000)
//
//   // A model: its batch symbol bound to each candidate, planned with a
//   // policy on all devices (one shared batch) and, with several devices, each
//   // device alone on its own batch running concurrently (data parallel).
//   ASSIGN_OR_RETURN(braid::ThroughputChoice c,
//                    braid::ChooseThroughputBatches(graph, policies, "partition", ctx, o));
//
// Devices in the per-device mode are treated as independent (no shared
// memory bandwidth between them): an optimistic model on a Jetson's shared
// DRAM, said in ThroughputChoice::note.
#ifndef BRAID_SCHEDULER_BATCH_SIZE_H_
#define BRAID_SCHEDULER_BATCH_SIZE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "graph/ir.h"
#include "graph/status.h"
#include "scheduler/policy.h"

namespace braid {

struct BatchSizeOptions {
  double latency_bound_us = 0;  // a batch's latency must not exceed it; 0 = no bound
  int64_t max_batch = 32;       // >= 1
};

// 1, 2, 4, ... < max_batch, then max_batch.
std::vector<int64_t> BatchCandidates(int64_t max_batch);

struct BatchCandidate {
  int64_t batch = 0;
  double latency_us = -1;   // simulated latency of one batch; < 0 on error
  double images_per_s = 0;  // batch / latency (simulated)
  bool within_bound = false;
  std::string error;  // why it could not be evaluated
};

// The choice for one lane: the whole plan, or one device alone.
struct LaneChoice {
  std::string lane;  // "cpu+vgpu (partition)", "cpu", "vgpu"
  int64_t batch = 0;
  double latency_us = 0;
  double images_per_s = 0;
  std::vector<BatchCandidate> candidates;
};

// Evaluates `latency_us(batch)` at every candidate and keeps the one with the
// most images/s among those within the bound (ties: the smaller batch).
// FailedPrecondition when none is (naming the fastest candidate's latency);
// an evaluation error is kept in the candidate and skipped.
StatusOr<LaneChoice> ChooseBatch(const std::string& lane,
                                 const std::function<StatusOr<double>(int64_t)>& latency_us,
                                 const BatchSizeOptions& options);

// The batch dimension of a model: dim 0 of its inputs, symbolic and the same
// symbol in every input that has one. `symbol` is empty when the batch is
// fixed (`fixed_batch` > 0, `why` names the input) or cannot be found.
struct BatchDim {
  std::string symbol;
  int64_t fixed_batch = 0;
  std::string why;
};
BatchDim FindBatchDim(const Graph& graph);

struct ThroughputChoice {
  BatchDim batch_dim;
  LaneChoice shared;                   // one batch over the policy's plan on all devices
  std::vector<LaneChoice> per_device;  // each device alone (>= 2 devices and a symbolic batch)
  bool use_per_device = false;         // the per-device lanes together beat `shared`
  double images_per_s = 0;             // of the chosen mode (simulated)
  std::string note;
};

// `graph` has run its passes and may keep the batch symbolic; for each
// candidate it is specialized (graph/passes/specialize.h) and annotated, the
// policy plans it with `context` (devices, cost model; allowed_devices is
// ignored: node lists change with the batch) and the plan is simulated. A
// fixed batch is evaluated only at that batch. Per-device lanes use cpu-only
// for devices[0] and gpu-only restricted to one accelerator for the others.
StatusOr<ThroughputChoice> ChooseThroughputBatches(const Graph& graph,
                                                   const PolicyRegistry& policies,
                                                   const std::string& policy,
                                                   const PlacementContext& context,
                                                   const BatchSizeOptions& options);

}  // namespace braid

#endif  // BRAID_SCHEDULER_BATCH_SIZE_H_
