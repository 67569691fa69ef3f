// Symbol specialization: turns a graph with a symbolic batch into one with
// concrete shapes, so the PyTorch Shape->Gather->Concat chains fold away and
// every value gets a static shape the memory planner can size.
//
//   RETURN_IF_ERROR(braid::SpecializeSymbols(graph, {{"N", 4}}));
//   // every value derived from the inputs' N now has extent 4
#ifndef BRAID_GRAPH_PASSES_SPECIALIZE_H_
#define BRAID_GRAPH_PASSES_SPECIALIZE_H_

#include <cstdint>
#include <map>
#include <string>

#include "graph/ir.h"

namespace braid {

// Replaces each graph-input dim whose symbol is a key of `values` by that
// extent, then runs InferShapes, FoldConstants, EliminateDeadNodes and
// InferShapes. Symbols not in `values` stay symbolic. A negative extent is
// InvalidArgument.
Status SpecializeSymbols(Graph& graph,
                         const std::map<std::string, int64_t>& values);

}  // namespace braid

#endif  // BRAID_GRAPH_PASSES_SPECIALIZE_H_
