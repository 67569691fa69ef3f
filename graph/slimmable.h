// Slimmable models (docs/slimmable.md): a model cut into sequential segments,
// each runnable at a width w from a set such as {1, 0.75, 0.5, 0.25}, where a
// width uses the leading channels of every convolution's weights (universally
// slimmable networks; normalisation by GroupNormalization, whose statistics
// do not drift across widths). One weight blob serves every combination: a
// segment's graph at a width is derived from the full graph on demand.
//
//   ASSIGN_OR_RETURN(braid::SlimSpec spec, braid::ReadSlimSpec(graph));
//   // segment 1 at width 0.5, reading segment 0's output computed at 0.75
//   ASSIGN_OR_RETURN(braid::Graph part, braid::SlimSegmentGraph(graph, spec, 1, 0.5, 0.75));
//
// The spec lives in the graph's metadata (the .braid file, or the ONNX
// model's metadata_props):
//   braid.slim.segments  value names that end segments 0 .. S-2, comma-separated
//                        (the last segment ends at the graph outputs)
//   braid.slim.widths    the widths, comma-separated, 1 among them
#ifndef BRAID_GRAPH_SLIMMABLE_H_
#define BRAID_GRAPH_SLIMMABLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "graph/ir.h"

namespace braid {

inline constexpr char kSlimSegmentsKey[] = "braid.slim.segments";
inline constexpr char kSlimWidthsKey[] = "braid.slim.widths";

struct SlimSpec {
  std::vector<std::string> boundaries;  // values ending segments 0 .. S-2
  std::vector<double> widths;           // descending, widths[0] == 1

  int num_segments() const { return static_cast<int>(boundaries.size()) + 1; }
  bool HasWidth(double width) const;
};

// NotFound when the graph carries no slim metadata; InvalidArgument naming the
// key for malformed values or boundaries that are not values of the graph.
StatusOr<SlimSpec> ReadSlimSpec(const Graph& graph);
// Records `spec` in the graph's metadata (checked as ReadSlimSpec does).
Status WriteSlimSpec(const SlimSpec& spec, Graph& graph);

// Channels a width keeps of `full`: round(full * width), at least 1.
int64_t SlimChannels(int64_t full, double width);

// The graph of segment `segment` with every convolution at `width`, reading
// the previous segment's output computed at `input_width` (unused for
// segment 0), shapes inferred and annotated. Constants are leading slices of
// the full graph's (copies; unsliced ones share its storage). Ops and their
// rules are listed in docs/slimmable.md; any other op in the segment is
// Unimplemented naming the node, and a boundary that does not cut the graph
// is InvalidArgument.
StatusOr<Graph> SlimSegmentGraph(const Graph& graph, const SlimSpec& spec, int segment,
                                 double width, double input_width);

}  // namespace braid

#endif  // BRAID_GRAPH_SLIMMABLE_H_
