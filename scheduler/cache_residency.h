// Which bytes an op touches are no longer in the host CPU's caches when it
// runs: its inputs after the nodes in between streamed their own bytes, and
// its output when the arena bytes it lands on were last touched long ago.
//
//   std::vector<braid::ColdBytes> cold =
//       braid::ColdBytesPerNode(graph, /*cache_bytes=*/1 << 20, /*llc_bytes=*/32 << 20);
//   braid::OpWork work = braid::OpWorkOf(graph.node(n), &graph);
//   braid::AssignColdBytes(cold[n], work);  // cold_bytes, dram_bytes, reclaimed_bytes...
//
// The host runs its nodes in graph order, as the engine runs one device's
// steps, and places their outputs in its arena as the engine does (the same
// requests into the same PlanMemory: HostArenaMirror, which an engine test
// compares with the engine's own layout), so that an output's bytes have a
// history: the values that held those bytes before it.
#ifndef BRAID_SCHEDULER_CACHE_RESIDENCY_H_
#define BRAID_SCHEDULER_CACHE_RESIDENCY_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "graph/ir.h"

namespace braid {

struct ColdBytes {
  // Bytes an LRU cache of cache_bytes no longer holds.
  double beyond_cache = 0;
  // Bytes an LRU cache of llc_bytes (the last level, at least cache_bytes)
  // no longer holds either: they come from DRAM.
  double beyond_llc = 0;
  // Of each, the output's (the rest are inputs'). An output byte beyond the
  // last level is read for ownership and written back later: twice the DRAM
  // traffic of an input byte.
  double written_beyond_cache = 0;
  double written_beyond_llc = 0;
  // Output bytes whose cache lines a copy to another device read since the
  // host wrote them, and which that copy's thread still holds on its own
  // core (the vgpu copies on a worker thread pinned to another core of this
  // host; a DMA engine holds nothing): writing them takes the lines back
  // from that core. Counted in proportion to what that core's nodes have not
  // displaced since the latest such copy: each byte times 1 - (distinct
  // non-constant bytes they touched from the copy to now) / cache_bytes,
  // down to 0 (0 when cache_bytes <= 0). Weights are left out of that count:
  // with them, every line resnet's layer4 joins write counted as displaced
  // (their vgpu parts stream 0.6-1.2 MB of weights), yet those joins read 3x
  // their prediction.
  double written_held_elsewhere = 0;

  // The output's part alone (its inputs arrived otherwise, e.g. by a copy).
  ColdBytes Written() const {
    return {written_beyond_cache, written_beyond_llc, written_beyond_cache, written_beyond_llc,
            written_held_elsewhere};
  }
};

// Per node of `graph`, in node order. A byte is cold when, since it was last
// touched, the nodes that ran touched more distinct bytes than the cache
// holds (weights by value, arena bytes by cache line, so a recycled scratch
// buffer counts once). E.g. a residual Add's skip input after two convs
// streamed their weights, or a MaxPool writing into arena bytes last used
// by the previous run's final layers (resnet18's stem MaxPool: 122 us
// instead of 77 on the AMD host, its 800 KB output from DRAM).
// - Inputs (non-constant, each value once): the bytes since the value was
//   written or last read; a graph input the caller wrote is beyond the cache
//   tier, and beyond the last level when the whole run in between streams
//   more than llc_bytes (runs repeat: its previous reads count).
// - Outputs: per arena byte, since the value that held it last was touched,
//   in this run or the previous one (a view writes nothing); and whether a
//   copy to another device read that value (written_held_elsewhere).
// cache_bytes <= 0: nothing is beyond the cache; llc_bytes <= 0, or a run
// whose distinct bytes (weights, graph inputs, the arena) fit in llc_bytes:
// nothing is beyond the last level. With `runs_here` (one entry per node;
// another size counts as empty), only the nodes marked non-zero run on the
// host: the others neither touch its caches nor count, and what they produce
// is not counted where it is first read here (it arrives by a copy:
// OpWork::copied_bytes) but gets an arena buffer there, as the engine's copy
// does. `on_host_cores` (one entry per node; another size counts as none)
// marks the nodes elsewhere that run, copies included, on a thread on
// another core of this host (the vgpu's): only the lines their copies read
// are held there (written_held_elsewhere), and only their work displaces
// them.
std::vector<ColdBytes> ColdBytesPerNode(const Graph& graph, double cache_bytes, double llc_bytes,
                                        std::span<const uint8_t> runs_here = {},
                                        std::span<const uint8_t> on_host_cores = {});

// One buffer of the host arena: the value it holds (kNoValue: a graph output
// that is a graph input or a constant, which gets bytes of its own), where,
// and between which nodes (graph.num_nodes(): past the last one).
struct ArenaBuffer {
  ValueId value = kNoValue;
  size_t offset = 0;
  size_t bytes = 0;
  int first_node = 0;
  int last_node = 0;
};
// The host arena ColdBytesPerNode uses, in request order: per node in order
// (views on the host excepted: their output is their input's buffer), a
// buffer for each input made elsewhere (its copy in), then one per output;
// then the graph outputs made elsewhere (their copies back) and those that
// are graph inputs or constants. A buffer lives until its last reader on
// the host, or the first reader elsewhere of a value made here (its copy
// out), or past the last node for a graph output. Not seen: a view whose
// layouts (runtime/layout.h) keep it from sharing its input's bytes, which
// the engine copies (none in the zoo, tests/engine/arena_mirror_test.cc),
// and a node that falls back to the CPU unless `runs_here` says so.
std::vector<ArenaBuffer> HostArenaMirror(const Graph& graph,
                                         std::span<const uint8_t> runs_here = {});

}  // namespace braid

#endif  // BRAID_SCHEDULER_CACHE_RESIDENCY_H_
