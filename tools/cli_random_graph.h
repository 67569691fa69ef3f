// Seeded random CNN-like graphs: a stem, 1-4 stages of conv (3x3 / 1x1 /
// depthwise + pointwise) + BN + ReLU blocks with optional residual adds (a
// DAG), and a Linear head; some convolutions pruned (30-95% of weights
// zeroed). Passes run and annotated. `braid train` learns on
// TrainingGraphSeed(seed, i); the league table evaluates held-out graphs
// from HeldOutGraphSeed(i), a range no training seed reaches.
//
//   ASSIGN_OR_RETURN(braid::Graph g,
//                    braid::cli::RandomTrainingGraph(braid::cli::HeldOutGraphSeed(0)));
#ifndef BRAID_TOOLS_CLI_RANDOM_GRAPH_H_
#define BRAID_TOOLS_CLI_RANDOM_GRAPH_H_

#include <cstdint>

#include "graph/ir.h"
#include "graph/status.h"

namespace braid::cli {

StatusOr<Graph> RandomTrainingGraph(uint64_t seed);

// Graph i of `braid train --seed S`: S * 1000003 + i.
uint64_t TrainingGraphSeed(uint64_t seed, uint64_t index);
// Held-out graph i: kHeldOutGraphSeedBase + i. braid train caps --seed at
// kMaxTrainSeed and --random-graphs at 10,000, so its seeds stay below
// 1000003 * (kMaxTrainSeed + 1) < this base.
inline constexpr uint64_t kMaxTrainSeed = 1'000'000;
inline constexpr uint64_t kHeldOutGraphSeedBase = 2'000'000'000'000ULL;
uint64_t HeldOutGraphSeed(uint64_t index);

}  // namespace braid::cli

#endif  // BRAID_TOOLS_CLI_RANDOM_GRAPH_H_
