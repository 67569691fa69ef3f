// FuseMatMulBias: MatMul(A, B) + constant bias -> Gemm(A, B, bias), the bias
// added as the matmul writes its output instead of in a second pass over it
// (a transformer exports every Linear this way: vit_tiny has 24 such Adds,
// 2% of its CPU time, one kernel launch each on a GPU).
//
//  * B is a constant 2-D f32 [K, N] (K, N > 0); A has rank >= 2, a static
//    last dim K and no leading dim 0; the MatMul carries no attributes; its
//    output is read by the Add alone and is no graph output; both nodes have
//    the same device pin (the Reshapes take it too).
//  * The Add's other operand is a constant f32 that broadcasts along the last
//    axis only: one element, or [..., 1, N] of rank <= the output's.
//  * A of rank 2 feeds the Gemm directly. A of rank r > 2 ([d0, ..., K]) is
//    reshaped to [rows, K] and the Gemm's [rows, N] back to the output's
//    shape: the two Reshapes run as views (no copy) when A is computed. At
//    most one leading dim may be symbolic (a batch): it becomes -1 in the
//    output shape; rows is -1.
//
// The Gemm keeps the MatMul's name and takes over the Add's output value, so
// both names survive; the Reshapes are named "<MatMul name>/rows" and
// "<MatMul name>/unrows".
#include <algorithm>
#include <unordered_set>
#include <string>
#include <vector>

#include "graph/passes/passes.h"
#include "graph/passes/pattern_util.h"

namespace braid {
namespace {

using pass_util::GraphUses;

// The Add's constant operand as the Gemm's bias [N], or nullopt.
std::optional<std::vector<double>> LastAxisBias(const Graph& graph, ValueId addend, int64_t n,
                                                size_t out_rank) {
  const std::optional<std::vector<int64_t>> dims = pass_util::ConstantF32Dims(graph, addend);
  std::optional<std::vector<double>> values = pass_util::ReadConstantF32(graph, addend);
  if (!dims || !values || dims->size() > out_rank) return std::nullopt;
  if (values->size() == 1) return std::vector<double>(static_cast<size_t>(n), (*values)[0]);
  if (static_cast<int64_t>(values->size()) != n || dims->empty() || dims->back() != n)
    return std::nullopt;
  return values;
}

// A new f32 value named after `base`: of `dims` when all are known (>= 0),
// else without a shape (InferShapes, run after the passes, gives it one).
// A new f32 value of static `dims`, or without a shape when one is -1 (a
// symbolic leading dim; inference fills it in).
ValueId AddF32Value(Graph& graph, pass_util::NameAllocator& names, const std::string& base,
                    const std::vector<int64_t>& dims) {
  const bool known = std::all_of(dims.begin(), dims.end(), [](int64_t d) { return d >= 0; });
  return pass_util::AddF32Value(graph, names, base,
                                known ? std::optional<Shape>(StaticShape(dims)) : std::nullopt);
}

}  // namespace

Status FuseMatMulBias(Graph& graph) {
  RETURN_IF_ERROR(graph.Validate().WithPrefix("FuseMatMulBias"));
  // Matches are disjoint (the MatMul's output is private to its Add), so the
  // readers table computed up front stays accurate.
  const GraphUses uses(graph);
  pass_util::NameAllocator names(graph);
  std::unordered_set<std::string> node_names = pass_util::NodeNames(graph);
  std::vector<bool> remove(static_cast<size_t>(graph.num_nodes()), false);
  const NodeId original_nodes = graph.num_nodes();
  for (NodeId id = 0; id < original_nodes; ++id) {
    const Node& mm = graph.node(id);
    // A MatMul carrying attributes (a fused activation) would lose them.
    if (mm.op_type != "MatMul" || mm.inputs.size() != 2 || mm.outputs.size() != 1 ||
        !mm.attrs.map().empty())
      continue;
    const ValueId a = mm.inputs[0], b = mm.inputs[1], y = mm.outputs[0];
    if (a == kNoValue || b == kNoValue || y == kNoValue) continue;
    const std::optional<std::vector<int64_t>> b_dims = pass_util::ConstantF32Dims(graph, b);
    if (!b_dims || b_dims->size() != 2) continue;
    const Value& a_value = graph.value(a);
    if (!a_value.has_shape || a_value.dtype != DataType::kF32 || a_value.shape.size() < 2)
      continue;
    const Shape a_shape = a_value.shape;
    const int64_t k = (*b_dims)[0], n = (*b_dims)[1];
    if (!a_shape.back().is_static() || a_shape.back().extent() != k || k == 0 || n == 0) continue;
    const NodeId add_id = uses.OnlyReader(y);
    if (add_id == kNoNode || remove[static_cast<size_t>(add_id)]) continue;
    const Node& add = graph.node(add_id);
    if (add.op_type != "Add" || add.inputs.size() != 2 || add.outputs.size() != 1 ||
        add.outputs[0] == kNoValue || !add.attrs.map().empty() || add.inputs[0] == add.inputs[1] ||
        add.device_pin != mm.device_pin)
      continue;
    const ValueId addend = add.inputs[0] == y ? add.inputs[1] : add.inputs[0];
    const std::optional<std::vector<double>> bias =
        LastAxisBias(graph, addend, n, a_shape.size());
    if (!bias) continue;
    // Leading dims: all static but at most one (it becomes -1), none 0 (a
    // Reshape target's 0 copies the input's dim).
    std::vector<int64_t> out_dims;
    int symbolic = 0;
    bool empty = false;
    for (size_t d = 0; d + 1 < a_shape.size(); ++d) {
      symbolic += a_shape[d].is_static() ? 0 : 1;
      empty = empty || (a_shape[d].is_static() && a_shape[d].extent() == 0);
      out_dims.push_back(a_shape[d].is_static() ? a_shape[d].extent() : -1);
    }
    if (symbolic > 1 || empty) continue;
    out_dims.push_back(n);
    const ValueId z = add.outputs[0];
    const std::string name = mm.name, pin = mm.device_pin;
    pass_util::AdoptShapeIfMissing(graph, z, y);
    const ValueId c = pass_util::AddF32Constant(graph, names, name + "_bias", {n}, *bias);
    ValueId gemm_a = a, gemm_y = z;
    if (a_shape.size() > 2) {
      int64_t rows = 1;  // -1 with a symbolic leading dim
      for (size_t d = 0; d + 1 < a_shape.size(); ++d)
        rows = a_shape[d].is_static() && rows >= 0 ? rows * a_shape[d].extent() : -1;
      gemm_a = AddF32Value(graph, names, name + "_rows", {rows, k});
      Node in;
      in.name = pass_util::UniqueNodeName(name + "/rows", node_names);
      in.op_type = "Reshape";
      in.device_pin = pin;
      const std::vector<int64_t> rows_target = {-1, k};
      in.inputs = {a, pass_util::AddI64Constant(graph, names, name + "_rows_shape", rows_target)};
      in.outputs = {gemm_a};
      graph.AddNode(std::move(in));
      gemm_y = AddF32Value(graph, names, name + "_rows_out", {rows, n});
      Node out;
      out.name = pass_util::UniqueNodeName(name + "/unrows", node_names);
      out.op_type = "Reshape";
      out.device_pin = pin;
      out.inputs = {gemm_y,
                    pass_util::AddI64Constant(graph, names, name + "_unrows_shape", out_dims)};
      out.outputs = {z};
      graph.AddNode(std::move(out));
    }
    Node& gemm = graph.node(id);  // after AddNode: references may have moved
    gemm.op_type = "Gemm";
    gemm.inputs = {gemm_a, b, c};
    gemm.outputs = {gemm_y};
    gemm.attrs = Attributes();
    graph.value(gemm_y).producer = id;
    remove[static_cast<size_t>(add_id)] = true;
  }
  remove.resize(static_cast<size_t>(graph.num_nodes()), false);
  graph.RemoveNodes(remove);
  return pass_util::FinishPass(graph, "FuseMatMulBias");
}

}  // namespace braid
