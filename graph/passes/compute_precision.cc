// MarkComputePrecision (graph/passes/passes.h): the "precision" attribute
// (docs/ir.md) on every f32 Conv, MatMul and Gemm.
#include <string>

#include "graph/passes/passes.h"

namespace braid {

StatusOr<ComputePrecisionReport> MarkComputePrecision(Graph& graph,
                                                      const std::string& precision) {
  if (precision != "f32" && precision != "bf16")
    return InvalidArgument("compute precision '" + precision + "': braid computes in f32 or bf16");
  ComputePrecisionReport report;
  for (Node& node : graph.nodes()) {
    if (node.op_type != "Conv" && node.op_type != "MatMul" && node.op_type != "Gemm") continue;
    const DataType dtype =
        node.inputs.empty() ? DataType::kUndefined : graph.value(node.inputs[0]).dtype;
    if (dtype != DataType::kF32) {
      report.kept.emplace_back(node.name, std::string("its input is ") + DataTypeName(dtype) +
                                              ", not f32");
      continue;
    }
    if (precision == "f32") {
      node.attrs.Erase("precision");
    } else {
      node.attrs.Set("precision", precision);
    }
    report.marked.push_back(node.name);
  }
  return report;
}

}  // namespace braid
