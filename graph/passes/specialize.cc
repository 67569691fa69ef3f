#include "graph/passes/specialize.h"

#include "graph/passes/passes.h"

namespace braid {

Status SpecializeSymbols(Graph& graph,
                         const std::map<std::string, int64_t>& values) {
  for (const auto& [symbol, extent] : values)
    if (extent < 0)
      return InvalidArgument(std::string("SpecializeSymbols: symbol '")
                                 .append(symbol)
                                 .append("' given negative extent ")
                                 .append(std::to_string(extent)));
  for (ValueId id : graph.inputs()) {
    Value& v = graph.value(id);
    for (Dim& d : v.shape) {
      if (d.is_static()) continue;
      auto it = values.find(d.symbol());
      if (it != values.end()) d = Dim(it->second);
    }
  }
  RETURN_IF_ERROR(InferShapes(graph).WithPrefix("SpecializeSymbols"));
  RETURN_IF_ERROR(FoldConstants(graph).WithPrefix("SpecializeSymbols"));
  RETURN_IF_ERROR(EliminateDeadNodes(graph).WithPrefix("SpecializeSymbols"));
  RETURN_IF_ERROR(InferShapes(graph).WithPrefix("SpecializeSymbols"));
  return graph.Validate().WithPrefix("SpecializeSymbols");
}

}  // namespace braid
