// LowerEinsum: a two-operand f32 Einsum that is a batched matrix product
// (the form attention layers emit, e.g. MaxViT's "BGHID,BGHJD->BGHIJ" and
// "BGHIJ,BGHJD->BGHID") becomes MatMul between Transposes, which every
// backend runs on its GEMM kernel:
//
//   A' = Transpose(A -> [batch..., i, k]);  B' = Transpose(B -> [batch..., k, j])
//   y  = Transpose(MatMul(A', B') -> the equation's output order)
//
// with batch labels in both operands and the output, one label i only in A
// and the output, one label j only in B and the output, one label k only in
// A and B (summed). Identity Transposes are left out. Not lowered: ellipses,
// a label repeated within an operand, labels summed within one operand,
// several i / j / k labels; the reference kernel runs those. The MatMul
// keeps the Einsum's name and output value.
#include <algorithm>
#include <string>
#include <unordered_set>
#include <vector>

#include "graph/ops/einsum_equation.h"
#include "graph/passes/passes.h"
#include "graph/passes/pattern_util.h"

namespace braid {
namespace {

struct Lowering {
  std::vector<int64_t> perm_a, perm_b, perm_out;  // empty: identity
};

bool IsIdentity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i)) return false;
  return true;
}

// Position of `label` in `labels`.
int64_t IndexOf(const std::vector<int>& labels, int label) {
  return std::find(labels.begin(), labels.end(), label) - labels.begin();
}

std::optional<Lowering> PlanLowering(const EinsumEquation& e) {
  if (e.inputs.size() != 2 || e.num_ellipsis != 0) return std::nullopt;
  const std::vector<int>& a = e.inputs[0];
  const std::vector<int>& b = e.inputs[1];
  auto has = [](const std::vector<int>& v, int l) {
    return std::find(v.begin(), v.end(), l) != v.end();
  };
  for (const std::vector<int>* term : {&a, &b}) {
    std::vector<int> sorted = *term;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) return std::nullopt;
  }
  std::vector<int> batch;  // in output order
  int i = -1, j = -1, k = -1;
  for (int l : e.output)
    if (has(a, l) && has(b, l)) batch.push_back(l);
  for (int l : a) {
    if (has(b, l) && e.InOutput(l)) continue;  // batch
    if (has(b, l)) {
      if (k >= 0) return std::nullopt;
      k = l;
    } else if (e.InOutput(l)) {
      if (i >= 0) return std::nullopt;
      i = l;
    } else {
      return std::nullopt;  // summed within A alone
    }
  }
  for (int l : b) {
    if (has(a, l)) continue;
    if (!e.InOutput(l) || j >= 0) return std::nullopt;
    j = l;
  }
  if (i < 0 || j < 0 || k < 0 || batch.size() + 2 != e.output.size()) return std::nullopt;
  Lowering plan;
  std::vector<int> a_order = batch, b_order = batch, out_order = batch;
  a_order.insert(a_order.end(), {i, k});
  b_order.insert(b_order.end(), {k, j});
  out_order.insert(out_order.end(), {i, j});
  for (int l : a_order) plan.perm_a.push_back(IndexOf(a, l));
  for (int l : b_order) plan.perm_b.push_back(IndexOf(b, l));
  for (int l : e.output) plan.perm_out.push_back(IndexOf(out_order, l));
  for (std::vector<int64_t>* p : {&plan.perm_a, &plan.perm_b, &plan.perm_out})
    if (IsIdentity(*p)) p->clear();
  return plan;
}

Shape Permuted(const Shape& s, const std::vector<int64_t>& perm) {
  Shape out;
  for (int64_t p : perm) out.push_back(s[static_cast<size_t>(p)]);
  return out;
}

}  // namespace

Status LowerEinsum(Graph& graph) {
  RETURN_IF_ERROR(graph.Validate().WithPrefix("LowerEinsum"));
  pass_util::NameAllocator names(graph);
  std::unordered_set<std::string> node_names = pass_util::NodeNames(graph);
  const NodeId original_nodes = graph.num_nodes();
  for (NodeId id = 0; id < original_nodes; ++id) {
    const Node& node = graph.node(id);
    if (node.op_type != "Einsum" || node.inputs.size() != 2 || node.outputs.size() != 1) continue;
    const Value& a = graph.value(node.inputs[0]);
    const Value& b = graph.value(node.inputs[1]);
    if (!a.has_shape || !b.has_shape || a.dtype != DataType::kF32 || b.dtype != DataType::kF32)
      continue;
    StatusOr<EinsumEquation> e = ParseEinsumEquation(node.attrs.GetString("equation", ""),
                                                     {a.shape.size(), b.shape.size()});
    if (!e.ok()) continue;
    const std::optional<Lowering> plan = PlanLowering(*e);
    if (!plan) continue;
    const std::string name = node.name, pin = node.device_pin;
    const ValueId y = node.outputs[0];
    // Transpose(in, perm) into `out`, a new value when kNoValue.
    auto transpose = [&](ValueId in, const std::vector<int64_t>& perm, const std::string& tag,
                         ValueId out) {
      if (out == kNoValue)
        out = pass_util::AddF32Value(graph, names, name + "_" + tag,
                                     Permuted(graph.value(in).shape, perm));
      Node t;
      t.name = pass_util::UniqueNodeName(name + "/" + tag, node_names);
      t.op_type = "Transpose";
      t.device_pin = pin;
      t.attrs.Set("perm", perm);
      t.inputs = {in};
      t.outputs = {out};
      graph.AddNode(std::move(t));
      return out;
    };
    const ValueId a_id = node.inputs[0], b_id = node.inputs[1];
    const ValueId a2 = plan->perm_a.empty() ? a_id : transpose(a_id, plan->perm_a, "a", kNoValue);
    const ValueId b2 = plan->perm_b.empty() ? b_id : transpose(b_id, plan->perm_b, "b", kNoValue);
    ValueId product = y;
    if (!plan->perm_out.empty()) {
      // y = Transpose(product, perm_out): product's axis perm_out[d] is y's axis d.
      std::optional<Shape> product_shape;
      const Value& y_value = graph.value(y);
      if (y_value.has_shape) {
        product_shape = Shape(y_value.shape.size());
        for (size_t d = 0; d < plan->perm_out.size(); ++d)
          (*product_shape)[static_cast<size_t>(plan->perm_out[d])] = y_value.shape[d];
      }
      product = pass_util::AddF32Value(graph, names, name + "_product", product_shape);
      transpose(product, plan->perm_out, "out", y);
    }
    Node& mm = graph.node(id);  // after AddNode: references may have moved
    mm.op_type = "MatMul";
    mm.inputs = {a2, b2};
    mm.outputs = {product};
    mm.attrs = Attributes();
    graph.value(product).producer = id;
  }
  return pass_util::FinishPass(graph, "LowerEinsum");
}

}  // namespace braid
