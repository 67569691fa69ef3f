// FoldQdq: the QDQ form of a quantized Conv / MatMul (ONNX Runtime's
// quantize_static, PyTorch, NNCF) becomes one QLinearConv / QLinearMatMul
// that the int8 kernels run:
//
//   Q(Conv(DQ(x_q, xs, xz), DQ(w_q, ws, wz), bias), ys, yz)
//       -> QLinearConv(x_q, xs, xz, w_q, ws, wz, ys, yz, bias_i32)
//   Q(MatMul(DQ(a_q, as, az), DQ(b_q, bs, bz)), ys, yz)
//       -> QLinearMatMul(a_q, as, az, b_q, bs, bz, ys, yz)
//   Q(Gemm(DQ(a_q, as, az), DQ(b_q, bs, bz), bias), ys, yz)   (transB=1, alpha = beta = 1)
//       -> Reshape(QLinearConv(Reshape(a_q, [N, K, 1, 1]), as, az, b_q as [M, K, 1, 1],
//                              bs, bz, ys, yz, bias_i32), [N, M])
//          (a fully connected layer is a 1x1 conv; its weights stay int8)
//
//   Q(MaxPool(DQ(x_q, s, z)), s, z) -> MaxPool(x_q)   (the same s and z)
//   Q(Add(DQ(a_q, as, az), DQ(b_q, bs, bz)), ys, yz)
//       -> com.microsoft.QLinearAdd(a_q, as, az, b_q, bs, bz, ys, yz)
//          (every parameter per tensor, a, b and y of one type: a residual add
//          between quantized convs stays int8)
//   Q(Concat(DQ(x1_q, s1, z1), ..., DQ(xn_q, sn, zn)), ys, yz)
//       -> com.microsoft.QLinearConcat(ys, yz, x1_q, s1, z1, ..., xn_q, sn, zn)
//          (the same conditions; each input requantized as DQ then Q would:
//          bit for bit the unfolded graph)
//
// Max pooling commutes with the increasing DQ, and Q(DQ(v)) with the same
// parameters is v again, so the pooled int8 / uint8 tensor is exact.
//
// Conditions: every scale and zero point is a constant, per tensor except
// the weights' (per output channel: DQ axis 0 for Conv, the last axis for a
// 2-D MatMul B); the weights are constant; the float Conv / MatMul output
// is read only by the Q (or by a Relu or Clip read only by the Q whose
// bounds the Q's saturation applies anyway: a Relu when the Q's zero point is
// its type's minimum, a Relu6 when the Q's range lies within [0, 6]). The bias is
// DQ(int32 constant) with scale xs * ws (used as is) or an f32 constant,
// quantized here to round(b / (xs * ws)) in int32 (ONNX Runtime's rule; at
// most half a step of xs * ws per channel). The fused node takes the Conv's
// name and the Q's output value; the DQs left unread go with
// EliminateDeadNodes. It runs before FoldConstants, which would otherwise
// turn the weight DQ into f32 weights.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "graph/op_schema.h"
#include "graph/passes/passes.h"
#include "graph/passes/pattern_util.h"

namespace braid {
namespace {

using pass_util::InputOrNone;

bool IsQuantizedType(DataType t) { return t == DataType::kI8 || t == DataType::kU8; }

// Element count of a constant, or -1 when `v` is not a constant.
int64_t ConstantElements(const Graph& g, ValueId v) {
  if (!g.IsConstant(v)) return -1;
  return static_cast<int64_t>(g.value(v).constant->size() / DataTypeSize(g.value(v).dtype));
}

// The f32 elements of a constant, or empty.
std::vector<float> ConstantFloats(const Graph& g, ValueId v) {
  if (!g.IsConstant(v) || g.value(v).dtype != DataType::kF32) return {};
  const auto s = g.value(v).constant->as<float>();
  return {s.begin(), s.end()};
}

// A DequantizeLinear (or QuantizeLinear) with constant parameters: scale
// (f32, `per_axis` entries or 1, never <= 0) and zero point (absent, or a
// constant of the data's type). `axis` the per-axis axis (normalized by the
// data rank when known; -1 accepted for the last axis).
struct QParams {
  ValueId data = kNoValue, scale = kNoValue, zero_point = kNoValue;
  int64_t count = 0;  // scale entries
  int64_t axis = 1;
};

bool ReadQParams(const Graph& g, const Node& n, QParams* q) {
  if (n.attrs.GetInt("block_size", 0) != 0) return false;
  q->data = InputOrNone(n, 0);
  q->scale = InputOrNone(n, 1);
  q->zero_point = InputOrNone(n, 2);
  q->axis = n.attrs.GetInt("axis", 1);
  const std::vector<float> s = ConstantFloats(g, q->scale);
  if (s.empty()) return false;
  for (float v : s)
    if (!(v > 0.0f) || !std::isfinite(v)) return false;  // left for the kernels to reject
  q->count = static_cast<int64_t>(s.size());
  if (q->zero_point != kNoValue && ConstantElements(g, q->zero_point) != q->count) return false;
  return true;
}

const Node* Producer(const Graph& g, ValueId v, const char* op) {
  if (v == kNoValue) return nullptr;
  const NodeId p = g.value(v).producer;
  if (p == kNoNode || g.node(p).op_type != op) return nullptr;
  return &g.node(p);
}

// The zero point input for a fused node: the given one, or a new zero of
// `dtype` (the QDQ form leaves it out for uint8 0).
ValueId ZeroPointOr(Graph& g, pass_util::NameAllocator& names, ValueId zp, DataType dtype,
                    const std::string& base) {
  if (zp != kNoValue) return zp;
  const uint8_t zero = 0;
  return g.AddConstant(names.Make(base), dtype, Shape{}, TensorData::Copy(&zero, 1));
}

// The scalar of a per-tensor zero point (0 when absent).
float ZeroPointValue(const Graph& g, ValueId zp, DataType type) {
  if (zp == kNoValue) return 0.0f;
  const TensorData& d = *g.value(zp).constant;
  return type == DataType::kI8 ? static_cast<float>(d.as<int8_t>()[0])
                               : static_cast<float>(d.as<uint8_t>()[0]);
}

// The range QuantizeLinear saturates to: int8's or uint8's.
std::pair<float, float> QuantizedLimits(DataType type) {
  return type == DataType::kI8 ? std::pair{-128.0f, 127.0f} : std::pair{0.0f, 255.0f};
}

// Whether Q(act(v)) == Q(v) for every v, so the Relu or Clip `act` before
// the Q can go: Q is monotone, so it suffices that Q maps the lower bound to
// the type's minimum and the upper bound to its maximum (Relu: [0, inf),
// that is a zero point at the minimum).
// `act` is the Relu / Clip node, or a product with such a fused activation.
bool SaturationClips(const Graph& g, const Node& act, const QParams& yq, DataType y_type) {
  const float kInf = std::numeric_limits<float>::infinity();
  const std::optional<std::pair<float, float>> bounds = pass_util::ClampBounds(g, act);
  if (!bounds) return false;
  const auto [lo, hi] = *bounds;
  const float scale = ConstantFloats(g, yq.scale)[0];
  const double z = ZeroPointValue(g, yq.zero_point, y_type);
  const auto [q_min, q_max] = QuantizedLimits(y_type);
  // As QuantizeLinear rounds: x / scale in float, half to even.
  auto quantized = [&](float x) { return std::nearbyint(static_cast<double>(x / scale)) + z; };
  return (lo == -kInf || quantized(lo) <= q_min) && (hi == kInf || quantized(hi) >= q_max);
}

// Gemm(A, B, C) as a fully connected layer: alpha = beta = 1, A as is, B
// transposed ([M, K], PyTorch's Linear).
bool IsLinearGemm(const Node& gemm) {
  return gemm.attrs.GetFloat("alpha", 1.0f) == 1.0f && gemm.attrs.GetFloat("beta", 1.0f) == 1.0f &&
         gemm.attrs.GetInt("transA", 0) == 0 && gemm.attrs.GetInt("transB", 0) == 1;
}

// Adds Reshape(in, dims) (0 keeps an extent) named from `name`, writing `out`
// (a new value when kNoValue); returns its output.
ValueId AddReshape(Graph& g, pass_util::NameAllocator& names, std::unordered_set<std::string>& node_names,
                   ValueId in, const std::vector<int64_t>& dims, const std::string& name,
                   ValueId out = kNoValue) {
  Node reshape;
  reshape.name = pass_util::UniqueNodeName(name, node_names);
  reshape.op_type = "Reshape";
  reshape.inputs = {in, pass_util::AddI64Constant(g, names, name + "_shape", dims)};
  reshape.outputs = {out != kNoValue ? out : g.AddValue(names.Make(name + "_out"))};
  const ValueId result = reshape.outputs[0];
  g.AddNode(std::move(reshape));
  return result;
}

// Q(MaxPool(DQ(x))) with the same per-tensor scale and zero point (bit for
// bit) and no Indices output: adds MaxPool(x) producing the Q's output.
bool FoldMaxPool(Graph& g, const Node& q, const QParams& yq, const Node& pool) {
  if (pool.outputs.size() != 1) return false;
  const Node* dx = Producer(g, InputOrNone(pool, 0), "DequantizeLinear");
  QParams xq;
  if (dx == nullptr || !ReadQParams(g, *dx, &xq) || xq.count != 1 || xq.zero_point == kNoValue)
    return false;
  const Value& xz = g.value(xq.zero_point);
  const Value& yz = g.value(yq.zero_point);
  const TensorData& xzd = *xz.constant;
  const TensorData& yzd = *yz.constant;
  if (xz.dtype != yz.dtype || xzd.size() != yzd.size() ||
      std::memcmp(xzd.data(), yzd.data(), xzd.size()) != 0 ||
      ConstantFloats(g, xq.scale) != ConstantFloats(g, yq.scale))
    return false;
  Node folded;
  folded.name = pool.name;
  folded.op_type = "MaxPool";
  folded.attrs = pool.attrs;
  folded.inputs = {xq.data};
  folded.outputs = q.outputs;
  g.AddNode(std::move(folded));
  return true;
}

// The quantized type of a DQ's data: its zero point's (before shape
// inference only constants have dtypes), else the data's own.
DataType QuantizedTypeOf(const Graph& g, const QParams& p) {
  return p.zero_point != kNoValue ? g.value(p.zero_point).dtype : g.value(p.data).dtype;
}

// The per-tensor DQ producing `v` whose data is of `type`, with its
// parameters in *q; null when `v` is not such a DQ's output.
const Node* PerTensorDqOf(const Graph& g, ValueId v, DataType type, QParams* q) {
  const Node* dq = Producer(g, v, "DequantizeLinear");
  if (dq == nullptr || !ReadQParams(g, *dq, q) || q->count != 1 || QuantizedTypeOf(g, *q) != type)
    return nullptr;
  return dq;
}

// Q(Add(DQ(a), DQ(b))): adds QLinearAdd producing the Q's output. The
// operands' types must be known (their zero points', else their own) and
// equal the Q's; every parameter per tensor.
bool FoldAdd(Graph& g, pass_util::NameAllocator& names, const Node& q, const QParams& yq,
             DataType y_type, const Node& add) {
  if (add.inputs.size() != 2 || add.outputs.size() != 1) return false;
  QParams aq, bq;
  const Node* da = PerTensorDqOf(g, InputOrNone(add, 0), y_type, &aq);
  const Node* db = PerTensorDqOf(g, InputOrNone(add, 1), y_type, &bq);
  if (da == nullptr || db == nullptr) return false;
  Node fused;
  fused.name = add.name;
  fused.op_type = "com.microsoft.QLinearAdd";
  fused.inputs = {aq.data,
                  aq.scale,
                  ZeroPointOr(g, names, aq.zero_point, y_type, da->name + "_zero_point"),
                  bq.data,
                  bq.scale,
                  ZeroPointOr(g, names, bq.zero_point, y_type, db->name + "_zero_point"),
                  yq.scale,
                  yq.zero_point};
  fused.outputs = q.outputs;
  g.AddNode(std::move(fused));
  return true;
}

// Q(Concat(DQ(x_1), ..., DQ(x_n))): adds QLinearConcat producing the Q's
// output, under FoldAdd's conditions on every input.
bool FoldConcat(Graph& g, pass_util::NameAllocator& names, const Node& q, const QParams& yq,
                DataType y_type, const Node& concat) {
  if (concat.inputs.empty() || concat.outputs.size() != 1) return false;
  std::vector<QParams> xq(concat.inputs.size());
  std::vector<const Node*> dq(concat.inputs.size());
  for (size_t i = 0; i < concat.inputs.size(); ++i) {
    dq[i] = PerTensorDqOf(g, concat.inputs[i], y_type, &xq[i]);
    if (dq[i] == nullptr) return false;
  }
  Node fused;
  fused.name = concat.name;
  fused.op_type = "com.microsoft.QLinearConcat";
  fused.attrs = concat.attrs;
  fused.inputs = {yq.scale, yq.zero_point};
  for (size_t i = 0; i < xq.size(); ++i)
    fused.inputs.insert(fused.inputs.end(),
                        {xq[i].data, xq[i].scale,
                         ZeroPointOr(g, names, xq[i].zero_point, y_type, dq[i]->name + "_zero_point")});
  fused.outputs = q.outputs;
  g.AddNode(std::move(fused));
  return true;
}

// The cone's f32 results for the 256 inputs `x`: a copy of the cone in a
// graph of its own whose source is the constant `x`, folded by
// FoldConstants; nullopt when some op does not fold.
std::optional<std::vector<float>> EvaluateCone(const Graph& g, const pass_util::PointwiseCone& cone,
                                               ValueId sink, const std::vector<float>& x) {
  Graph table;
  std::unordered_map<ValueId, ValueId> copy_of;
  copy_of[cone.source] =
      table.AddConstant(g.value(cone.source).name, DataType::kF32, Shape{Dim(256)},
                        TensorData::Copy(x.data(), x.size() * sizeof(float)));
  for (NodeId p : cone.nodes) {
    const Node& n = g.node(p);
    if (IsViewOp(n.op_type)) {  // the same values
      copy_of[n.outputs[0]] = copy_of.at(n.inputs[0]);
      continue;
    }
    Node copy;
    copy.name = n.name;
    copy.op_type = n.op_type;
    copy.attrs = n.attrs;
    for (ValueId in : n.inputs) {
      if (in == kNoValue) {
        copy.inputs.push_back(kNoValue);
        continue;
      }
      auto it = copy_of.find(in);
      if (it == copy_of.end()) {  // a scalar constant, as rank 0 (it broadcasts to x)
        const Value& c = g.value(in);
        it = copy_of.emplace(in, table.AddConstant(c.name, c.dtype, Shape{}, *c.constant)).first;
      }
      copy.inputs.push_back(it->second);
    }
    copy.outputs = {table.AddValue(g.value(n.outputs[0]).name)};
    copy_of[n.outputs[0]] = copy.outputs[0];
    table.AddNode(std::move(copy));
  }
  table.outputs().push_back(copy_of.at(sink));
  if (!FoldConstants(table).ok()) return std::nullopt;
  const Value& y = table.value(table.outputs()[0]);
  if (!y.constant || y.dtype != DataType::kF32 || y.constant->size() != x.size() * sizeof(float))
    return std::nullopt;
  const auto values = y.constant->as<float>();
  return std::vector<float>(values.begin(), values.end());
}

}  // namespace

Status FoldQdq(Graph& graph) {
  RETURN_IF_ERROR(graph.Validate().WithPrefix("FoldQdq"));
  const pass_util::GraphUses uses(graph);
  pass_util::NameAllocator names(graph);
  std::unordered_set<std::string> node_names = pass_util::NodeNames(graph);
  std::vector<bool> remove(static_cast<size_t>(graph.num_nodes()), false);
  const int num_nodes = graph.num_nodes();
  for (NodeId qid = 0; qid < num_nodes; ++qid) {
    const Node q = graph.node(qid);  // a copy: AddConstant may grow the node list's values
    if (q.op_type != "QuantizeLinear" || q.outputs.size() != 1) continue;
    QParams yq;
    if (!ReadQParams(graph, q, &yq) || yq.count != 1 || yq.zero_point == kNoValue) continue;
    const DataType y_type = graph.value(yq.zero_point).dtype;
    if (!IsQuantizedType(y_type)) continue;
    // Optional Relu or Clip between the product and Q, when saturation does
    // its work.
    ValueId product_out = yq.data;
    NodeId relu_id = kNoNode;
    const Node* act = Producer(graph, product_out, "Relu");
    if (act == nullptr) act = Producer(graph, product_out, "Clip");
    if (act != nullptr) {
      if (!SaturationClips(graph, *act, yq, y_type) || uses.OnlyReader(product_out) != qid) continue;
      relu_id = graph.value(product_out).producer;
      product_out = InputOrNone(*act, 0);
    }
    const NodeId pid = product_out == kNoValue ? kNoNode : graph.value(product_out).producer;
    if (pid == kNoNode || uses.OnlyReader(product_out) != (relu_id != kNoNode ? relu_id : qid))
      continue;
    Node product = graph.node(pid);
    // A fused activation (a .braid converted with fusion) goes as the node
    // would; the int8 node does not take it.
    if (product.attrs.Has("activation")) {
      if (relu_id != kNoNode || !SaturationClips(graph, product, yq, y_type)) continue;
      for (const char* a : {"activation", "activation_min", "activation_max"}) product.attrs.Erase(a);
    }
    // After a fold has added its node (producing the Q's output): the product,
    // any Relu and the Q go.
    auto retire_folded = [&] {
      remove[static_cast<size_t>(pid)] = true;
      remove[static_cast<size_t>(qid)] = true;
      if (relu_id != kNoNode) remove[static_cast<size_t>(relu_id)] = true;
      graph.node(qid).outputs.clear();
    };
    if (product.op_type == "MaxPool") {
      if (relu_id == kNoNode && FoldMaxPool(graph, q, yq, product)) retire_folded();
      continue;
    }
    if (product.op_type == "Add") {
      if (FoldAdd(graph, names, q, yq, y_type, product)) retire_folded();
      continue;
    }
    if (product.op_type == "Concat") {
      if (FoldConcat(graph, names, q, yq, y_type, product)) retire_folded();
      continue;
    }
    // Gemm(A, B, C) with transB=1 (a fully connected layer) is a 1x1 conv of
    // A seen as [N, K, 1, 1] with B as [M, K, 1, 1]; it folds as one.
    const bool gemm = product.op_type == "Gemm";
    if (gemm && !IsLinearGemm(product)) continue;
    const bool conv = product.op_type == "Conv" || gemm;
    if (!conv && product.op_type != "MatMul") continue;
    const Node* dx = Producer(graph, InputOrNone(product, 0), "DequantizeLinear");
    const Node* dw = Producer(graph, InputOrNone(product, 1), "DequantizeLinear");
    if (dx == nullptr || dw == nullptr) continue;
    QParams xq, wq;
    if (!ReadQParams(graph, *dx, &xq) || !ReadQParams(graph, *dw, &wq) || xq.count != 1) continue;
    // Before shape inference only constants have dtypes: x's type is its
    // zero point's.
    const DataType x_type = xq.zero_point != kNoValue ? graph.value(xq.zero_point).dtype
                                                      : graph.value(xq.data).dtype;
    const DataType w_type = graph.value(wq.data).dtype;
    if (!IsQuantizedType(x_type) || !IsQuantizedType(w_type) || !graph.IsConstant(wq.data)) continue;
    const Value& w = graph.value(wq.data);
    if (!w.has_shape || w.shape.size() < 2 || (gemm && w.shape.size() != 2)) continue;
    // Per-channel weights: Conv's output channels (axis 0) or B's columns.
    const int64_t rank = static_cast<int64_t>(w.shape.size());
    const int64_t channel_axis = conv ? 0 : rank - 1;
    const int64_t channels = w.shape[static_cast<size_t>(channel_axis)].extent();
    if (wq.count > 1 &&
        (wq.count != channels || (wq.axis != channel_axis && wq.axis != channel_axis - rank) ||
         (!conv && rank != 2)))
      continue;
    // Bias: DQ(int32) at scale xs * ws, or f32 quantized here.
    ValueId bias = kNoValue;
    const ValueId b = InputOrNone(product, 2);
    if (gemm && b != kNoValue) {
      // Gemm's C broadcasts over [N, M]: per output channel only as [M] or
      // [1, M] (an [M, 1] C adds per row).
      const Node* db = Producer(graph, b, "DequantizeLinear");
      const Value& c = graph.value(db != nullptr ? InputOrNone(*db, 0) : b);
      if (!c.has_shape || (c.shape.size() == 2 ? c.shape[0].extent() != 1 : c.shape.size() > 1)) continue;
    }
    if (conv && b != kNoValue) {
      const float xs = ConstantFloats(graph, xq.scale)[0];
      const std::vector<float> ws = ConstantFloats(graph, wq.scale);
      auto bias_scale = [&](int64_t c) {
        return static_cast<double>(xs) * ws[static_cast<size_t>(wq.count > 1 ? c : 0)];
      };
      if (const Node* db = Producer(graph, b, "DequantizeLinear")) {
        QParams bq;
        if (!ReadQParams(graph, *db, &bq) || graph.value(bq.data).dtype != DataType::kI32 ||
            !graph.IsConstant(bq.data) || ConstantElements(graph, bq.data) != channels)
          continue;
        const std::vector<float> bs = ConstantFloats(graph, bq.scale);
        bool matches = true;
        for (int64_t c = 0; c < channels; ++c) {
          const double want = bias_scale(c), got = bs[static_cast<size_t>(bq.count > 1 ? c : 0)];
          matches = matches && std::fabs(got - want) <= 1e-6 * want;
        }
        if (bq.zero_point != kNoValue) {
          for (int32_t z : graph.value(bq.zero_point).constant->as<int32_t>()) matches = matches && z == 0;
        }
        if (!matches) continue;
        bias = bq.data;
      } else {
        const std::vector<float> bf = ConstantFloats(graph, b);
        if (static_cast<int64_t>(bf.size()) != channels) continue;
        std::vector<int32_t> bi(bf.size());
        bool fits = true;
        for (int64_t c = 0; c < channels; ++c) {
          const double v = std::nearbyint(bf[static_cast<size_t>(c)] / bias_scale(c));
          fits = fits && std::fabs(v) < 2147483647.0;
          bi[static_cast<size_t>(c)] = fits ? static_cast<int32_t>(v) : 0;
        }
        if (!fits) continue;
        bias = graph.AddConstant(names.Make(product.name + "_bias_i32"), DataType::kI32,
                                 Shape{Dim(channels)},
                                 TensorData::Copy(bi.data(), bi.size() * sizeof(int32_t)));
      }
    } else if (b != kNoValue) {
      continue;  // MatMul has no third input
    }
    Node fused;
    fused.name = product.name;
    fused.op_type = conv ? "QLinearConv" : "QLinearMatMul";
    fused.attrs = gemm ? Attributes{} : product.attrs;
    // dx and dw point into the node list: read them before nodes are added.
    const ValueId x_zp = ZeroPointOr(graph, names, xq.zero_point, x_type, dx->name + "_zero_point");
    const ValueId w_zp = ZeroPointOr(graph, names, wq.zero_point, w_type, dw->name + "_zero_point");
    ValueId x_in = xq.data, w_in = wq.data;
    if (gemm) {
      // A [N, K] -> [N, K, 1, 1] (a view); B's bytes shared as [M, K, 1, 1].
      const Shape& b_shape = graph.value(wq.data).shape;  // `w` may have moved
      const std::vector<int64_t> m_k = {b_shape[0].extent(), b_shape[1].extent()};
      w_in = graph.AddConstant(names.Make(dw->name + "_1x1"), w_type,
                               StaticShape(std::vector<int64_t>{m_k[0], m_k[1], 1, 1}),
                               *graph.value(wq.data).constant);
      if (bias != kNoValue && graph.value(bias).shape.size() != 1)  // C as [1, M]
        bias = graph.AddConstant(names.Make(product.name + "_bias_m"), DataType::kI32,
                                 Shape{Dim(channels)}, *graph.value(bias).constant);
      x_in = AddReshape(graph, names, node_names, xq.data, {0, 0, 1, 1}, product.name + "/as_1x1");
    }
    fused.inputs = {x_in, xq.scale, x_zp, w_in, wq.scale, w_zp, yq.scale, yq.zero_point};
    if (bias != kNoValue) fused.inputs.push_back(bias);
    if (gemm) {
      // The conv's [N, M, 1, 1] output, viewed as the Gemm's [N, M].
      fused.outputs = {graph.AddValue(names.Make(product.name + "_1x1_out"))};
      const ValueId conv_out = fused.outputs[0];
      graph.AddNode(std::move(fused));
      AddReshape(graph, names, node_names, conv_out, {0, 0}, product.name + "/from_1x1",
                 q.outputs[0]);
      retire_folded();
      continue;
    }
    fused.outputs = q.outputs;
    graph.AddNode(std::move(fused));
    retire_folded();
  }
  remove.resize(static_cast<size_t>(graph.num_nodes()), false);  // added nodes stay
  graph.RemoveNodes(remove);
  RETURN_IF_ERROR(pass_util::FinishPass(graph, "FoldQdq"));
  // The weight DQs the fused nodes bypass, so FoldConstants does not fold them.
  return EliminateDeadNodes(graph);
}

}  // namespace braid

namespace braid {

Status FoldQdqLookups(Graph& graph) {
  RETURN_IF_ERROR(graph.Validate().WithPrefix("FoldQdqLookups"));
  const pass_util::GraphUses uses(graph);
  pass_util::NameAllocator names(graph);
  std::vector<bool> remove(static_cast<size_t>(graph.num_nodes()), false);
  auto is_dq_output = [&](ValueId v) {
    const NodeId p = graph.value(v).producer;
    return p != kNoNode && graph.node(p).op_type == "DequantizeLinear";
  };
  const int num_nodes = graph.num_nodes();
  for (NodeId qid = 0; qid < num_nodes; ++qid) {
    const Node q = graph.node(qid);  // a copy: AddConstant may grow the lists
    if (q.op_type != "QuantizeLinear" || q.outputs.size() != 1) continue;
    QParams yq;
    if (!ReadQParams(graph, q, &yq) || yq.count != 1 || yq.zero_point == kNoValue) continue;
    const DataType y_type = graph.value(yq.zero_point).dtype;
    if (!IsQuantizedType(y_type)) continue;
    const std::optional<pass_util::PointwiseCone> cone =
        pass_util::FindPointwiseCone(graph, uses, yq.data, is_dq_output, qid);
    if (!cone) continue;
    const Node& dq = graph.node(graph.value(cone->source).producer);
    QParams xq;
    if (!ReadQParams(graph, dq, &xq) || xq.count != 1) continue;
    const DataType x_type = QuantizedTypeOf(graph, xq);
    if (!IsQuantizedType(x_type) || graph.IsConstant(xq.data)) continue;
    // Every input byte dequantized as DequantizeLinear does, through the
    // cone, then quantized as QuantizeLinear does (RequantizeElement's
    // arithmetic): the table is the QDQ graph's map.
    const float xs = ConstantFloats(graph, xq.scale)[0];
    const float xz = ZeroPointValue(graph, xq.zero_point, x_type);
    std::vector<float> x(256);
    for (int b = 0; b < 256; ++b) {
      const float v = x_type == DataType::kI8 ? static_cast<float>(static_cast<int8_t>(b))
                                              : static_cast<float>(b);
      x[static_cast<size_t>(b)] = (v - xz) * xs;
    }
    const std::optional<std::vector<float>> f = EvaluateCone(graph, *cone, yq.data, x);
    if (!f) continue;
    const float ys = ConstantFloats(graph, yq.scale)[0];
    const float yz = ZeroPointValue(graph, yq.zero_point, y_type);
    const auto [lo, hi] = QuantizedLimits(y_type);
    std::vector<uint8_t> table(256);
    for (size_t b = 0; b < 256; ++b) {
      const float v = std::nearbyint((*f)[b] / ys) + yz;
      const float q_value = std::isnan(v) ? 0.0f : std::clamp(v, lo, hi);
      table[b] = y_type == DataType::kI8 ? static_cast<uint8_t>(static_cast<int8_t>(q_value))
                                         : static_cast<uint8_t>(q_value);
    }
    Node lookup;
    lookup.name = graph.node(graph.value(yq.data).producer).name;  // the cone's last node
    lookup.op_type = "braid.TableLookup";
    lookup.inputs = {xq.data, graph.AddConstant(names.Make(lookup.name + "_table"), y_type,
                                                Shape{Dim(256)}, TensorData::Copy(table.data(), 256))};
    lookup.outputs = q.outputs;
    for (NodeId p : cone->nodes) remove[static_cast<size_t>(p)] = true;
    remove[static_cast<size_t>(qid)] = true;
    graph.node(qid).outputs.clear();
    graph.AddNode(std::move(lookup));
  }
  remove.resize(static_cast<size_t>(graph.num_nodes()), false);  // added nodes stay
  graph.RemoveNodes(remove);
  RETURN_IF_ERROR(pass_util::FinishPass(graph, "FoldQdqLookups"));
  return EliminateDeadNodes(graph);  // DQs no other node reads
}

}  // namespace braid
