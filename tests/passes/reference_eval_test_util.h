// Test-only helpers for the rewriting passes: a tiny, deliberately naive fp64
// interpreter for the ops those passes touch (Conv2D NCHW with groups, pads,
// strides and dilations; Gemm; MatMul with a 2-D B; Reshape by a constant
// shape; Expand by a constant shape; Concat; Flatten; constant Pad; AveragePool; BatchNormalization; broadcasting Add/Sub/Mul; ReduceMean and
// ReduceMax; global pools; Relu, Clip, Sigmoid,
// HardSigmoid, HardSwish, LeakyRelu; Identity, Dropout)
// including the fused "activation" attributes of docs/ir.md, plus small
// graph-building shortcuts. It exists because kernels/reference does not yet;
// it reads shapes from the tensors, so no shape inference is needed.
#ifndef BRAID_TESTS_PASSES_REFERENCE_EVAL_TEST_UTIL_H_
#define BRAID_TESTS_PASSES_REFERENCE_EVAL_TEST_UTIL_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "graph/ir.h"

namespace braid::test_eval {

struct RefTensor {
  std::vector<int64_t> dims;
  std::vector<double> data;
};

inline int64_t Numel(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// Uniform magnitudes in [0.1, 1] with random sign: non-zero by construction.
inline std::vector<double> RandomNonZero(size_t count, std::mt19937& rng) {
  std::uniform_real_distribution<double> magnitude(0.1, 1.0);
  std::bernoulli_distribution negative(0.5);
  std::vector<double> out(count);
  for (double& v : out) v = negative(rng) ? -magnitude(rng) : magnitude(rng);
  return out;
}

inline RefTensor RandomTensor(std::vector<int64_t> dims, std::mt19937& rng) {
  RefTensor t;
  t.data = RandomNonZero(static_cast<size_t>(Numel(dims)), rng);
  t.dims = std::move(dims);
  return t;
}

inline ValueId AddF32(Graph& g, const std::string& name,
                      std::vector<int64_t> dims,
                      const std::vector<double>& values) {
  std::vector<float> f(values.begin(), values.end());
  return g.AddConstant(name, DataType::kF32, StaticShape(dims),
                       TensorData::Copy(f.data(), f.size() * sizeof(float)));
}

inline ValueId AddRandomF32(Graph& g, const std::string& name,
                            std::vector<int64_t> dims, std::mt19937& rng) {
  const size_t count = static_cast<size_t>(Numel(dims));
  return AddF32(g, name, std::move(dims), RandomNonZero(count, rng));
}

// Adds a node whose outputs are new values named `outputs` (empty name:
// kNoValue); returns the first output.
// Adds BN parameters for `channels` channels with variances in [0.1, 2].
inline std::vector<ValueId> AddBnParams(Graph& g, const std::string& prefix,
                                 int64_t channels, std::mt19937& rng) {
  std::vector<ValueId> params;
  for (const char* p : {"scale", "B", "mean"})
    params.push_back(AddRandomF32(g, prefix + p, {channels}, rng));
  std::vector<double> var = RandomNonZero(static_cast<size_t>(channels), rng);
  for (double& v : var) v = std::fabs(v) * 2;
  params.push_back(AddF32(g, prefix + "var", {channels}, var));
  return params;
}

inline ValueId AddOp(Graph& g, const std::string& name, const std::string& op,
                     std::vector<ValueId> inputs,
                     const std::vector<std::string>& outputs,
                     Attributes attrs = {}) {
  Node n;
  n.name = name;
  n.op_type = op;
  n.inputs = std::move(inputs);
  for (const std::string& out : outputs)
    n.outputs.push_back(out.empty() ? kNoValue : g.AddValue(out));
  n.attrs = std::move(attrs);
  ValueId first = n.outputs.empty() ? kNoValue : n.outputs[0];
  g.AddNode(std::move(n));
  return first;
}

inline int CountOps(const Graph& g, const std::string& op) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.op_type == op ? 1 : 0;
  return n;
}

// max |a - b| / max(1, max |a|): an absolute error for small outputs and a
// relative one for large outputs.
inline double MaxScaledError(const RefTensor& a, const RefTensor& b) {
  if (a.dims != b.dims || a.data.size() != b.data.size())
    return std::numeric_limits<double>::infinity();
  double err = 0, mag = 1;
  for (size_t i = 0; i < a.data.size(); ++i) {
    err = std::max(err, std::fabs(a.data[i] - b.data[i]));
    mag = std::max(mag, std::fabs(a.data[i]));
  }
  return err / mag;
}

namespace internal {

inline std::vector<int64_t> Strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

inline StatusOr<RefTensor> Broadcast2(const RefTensor& a, const RefTensor& b,
                                      bool multiply) {
  const size_t rank = std::max(a.dims.size(), b.dims.size());
  auto padded = [&](const std::vector<int64_t>& d) {
    std::vector<int64_t> p(rank - d.size(), 1);
    p.insert(p.end(), d.begin(), d.end());
    return p;
  };
  const std::vector<int64_t> da = padded(a.dims), db = padded(b.dims);
  RefTensor out;
  for (size_t i = 0; i < rank; ++i) {
    if (da[i] != db[i] && da[i] != 1 && db[i] != 1)
      return InvalidArgument("broadcast mismatch");
    out.dims.push_back(std::max(da[i], db[i]));
  }
  const std::vector<int64_t> sa = Strides(da), sb = Strides(db),
                             so = Strides(out.dims);
  out.data.resize(static_cast<size_t>(Numel(out.dims)));
  for (int64_t i = 0; i < Numel(out.dims); ++i) {
    int64_t ia = 0, ib = 0;
    for (size_t k = 0; k < rank; ++k) {
      const int64_t idx = (i / so[k]) % out.dims[k];
      if (da[k] != 1) ia += idx * sa[k];
      if (db[k] != 1) ib += idx * sb[k];
    }
    const double x = a.data[ia], y = b.data[ib];
    out.data[i] = multiply ? x * y : x + y;
  }
  return out;
}

inline StatusOr<RefTensor> Conv2D(const Node& n, const RefTensor& x,
                                  const RefTensor& w, const RefTensor* bias) {
  if (x.dims.size() != 4 || w.dims.size() != 4)
    return Unimplemented("reference Conv is 2-D only");
  const int64_t batch = x.dims[0], c_in = x.dims[1], h = x.dims[2],
                wd = x.dims[3];
  const int64_t m = w.dims[0], c_per_group = w.dims[1], kh = w.dims[2],
                kw = w.dims[3];
  const int64_t groups = n.attrs.GetInt("group", 1);
  const std::vector<int64_t> pads = n.attrs.GetInts("pads", {0, 0, 0, 0});
  const std::vector<int64_t> strides = n.attrs.GetInts("strides", {1, 1});
  const std::vector<int64_t> dil = n.attrs.GetInts("dilations", {1, 1});
  if (c_in != c_per_group * groups || m % groups != 0)
    return InvalidArgument("bad conv channels");
  const int64_t oh = (h + pads[0] + pads[2] - dil[0] * (kh - 1) - 1) / strides[0] + 1;
  const int64_t ow = (wd + pads[1] + pads[3] - dil[1] * (kw - 1) - 1) / strides[1] + 1;
  RefTensor y;
  y.dims = {batch, m, oh, ow};
  y.data.assign(static_cast<size_t>(Numel(y.dims)), 0.0);
  const int64_t m_per_group = m / groups;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t oc = 0; oc < m; ++oc) {
      const int64_t g = oc / m_per_group;
      for (int64_t oy = 0; oy < oh; ++oy)
        for (int64_t ox = 0; ox < ow; ++ox) {
          double acc = bias ? bias->data[oc] : 0.0;
          for (int64_t ic = 0; ic < c_per_group; ++ic)
            for (int64_t ky = 0; ky < kh; ++ky)
              for (int64_t kx = 0; kx < kw; ++kx) {
                const int64_t iy = oy * strides[0] - pads[0] + ky * dil[0];
                const int64_t ix = ox * strides[1] - pads[1] + kx * dil[1];
                if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
                const int64_t c = g * c_per_group + ic;
                acc += x.data[((b * c_in + c) * h + iy) * wd + ix] *
                       w.data[((oc * c_per_group + ic) * kh + ky) * kw + kx];
              }
          y.data[((b * m + oc) * oh + oy) * ow + ox] = acc;
        }
    }
  return y;
}

inline StatusOr<RefTensor> Gemm(const Node& n, const RefTensor& a,
                                const RefTensor& b, const RefTensor* c) {
  const bool ta = n.attrs.GetInt("transA", 0) != 0;
  const bool tb = n.attrs.GetInt("transB", 0) != 0;
  const double alpha = n.attrs.GetFloat("alpha", 1.0f);
  const double beta = n.attrs.GetFloat("beta", 1.0f);
  const int64_t rows = ta ? a.dims[1] : a.dims[0];
  const int64_t k = ta ? a.dims[0] : a.dims[1];
  const int64_t cols = tb ? b.dims[0] : b.dims[1];
  if ((tb ? b.dims[1] : b.dims[0]) != k) return InvalidArgument("bad gemm K");
  RefTensor y;
  y.dims = {rows, cols};
  y.data.assign(static_cast<size_t>(rows * cols), 0.0);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      double acc = 0;
      for (int64_t p = 0; p < k; ++p)
        acc += (ta ? a.data[p * rows + i] : a.data[i * k + p]) *
               (tb ? b.data[j * k + p] : b.data[p * cols + j]);
      y.data[i * cols + j] = alpha * acc;
    }
  if (c == nullptr) return y;
  RefTensor scaled_c = *c;
  for (double& v : scaled_c.data) v *= beta;
  return Broadcast2(y, scaled_c, /*multiply=*/false);
}

// A [..., M, K] times a 2-D B [K, N].
inline StatusOr<RefTensor> MatMul2DB(const RefTensor& a, const RefTensor& b) {
  if (a.dims.size() < 2 || b.dims.size() != 2 || a.dims.back() != b.dims[0])
    return InvalidArgument("bad matmul shapes");
  const int64_t k = b.dims[0], cols = b.dims[1], rows = Numel(a.dims) / k;
  RefTensor y;
  y.dims = a.dims;
  y.dims.back() = cols;
  y.data.assign(static_cast<size_t>(rows * cols), 0.0);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      double acc = 0;
      for (int64_t p = 0; p < k; ++p) acc += a.data[i * k + p] * b.data[p * cols + j];
      y.data[i * cols + j] = acc;
    }
  return y;
}

// `target` as ONNX Reshape reads it (one -1 inferred, 0 copies the dim).
inline StatusOr<RefTensor> Reshape(const RefTensor& x, std::span<const int64_t> target) {
  RefTensor y = x;
  y.dims.clear();
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t d = target[i];
    if (d == 0) d = x.dims.at(i);
    if (d == -1) {
      infer = static_cast<int64_t>(i);
      d = 1;
    } else {
      known *= d;
    }
    y.dims.push_back(d);
  }
  if (infer >= 0) y.dims[static_cast<size_t>(infer)] = Numel(x.dims) / known;
  if (Numel(y.dims) != Numel(x.dims)) return InvalidArgument("bad reshape");
  return y;
}

inline double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
inline double HardSigmoid(double x, double alpha, double beta) {
  return std::clamp(alpha * x + beta, 0.0, 1.0);
}

// Applies a named activation elementwise (ONNX semantics).
inline Status ApplyActivation(const std::string& kind, double lo, double hi,
                              double alpha, double beta, RefTensor& t) {
  for (double& v : t.data) {
    if (kind == "Relu") v = std::max(v, 0.0);
    else if (kind == "Clip") v = std::min(std::max(v, lo), hi);
    else if (kind == "Sigmoid") v = Sigmoid(v);
    else if (kind == "SiLU") v = v * Sigmoid(v);
    else if (kind == "HardSwish") v = v * HardSigmoid(v, 1.0 / 6.0, 0.5);
    else if (kind == "HardSigmoid") v = HardSigmoid(v, alpha, beta);
    else if (kind == "LeakyRelu") v = v < 0 ? alpha * v : v;
    else if (kind == "Erf") v = std::erf(v);
    else if (kind == "Gelu") v = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
    else if (kind == "GeluTanh")
      v = 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
    else return Unimplemented("reference: activation " + kind);
  }
  return Status::Ok();
}

inline Status ApplyFusedActivation(const Node& n, RefTensor& t) {
  if (!n.attrs.Has("activation")) return Status::Ok();
  constexpr float kInf = std::numeric_limits<float>::infinity();
  std::string kind = n.attrs.GetString("activation", "");
  if (kind == "Gelu" && n.attrs.GetString("activation_approximate", "none") == "tanh")
    kind = "GeluTanh";
  return ApplyActivation(kind,
                         n.attrs.GetFloat("activation_min", -kInf),
                         n.attrs.GetFloat("activation_max", kInf),
                         n.attrs.GetFloat("activation_alpha", 0.f),
                         n.attrs.GetFloat("activation_beta", 0.f), t);
}

inline StatusOr<RefTensor> BatchNorm(const Node& n,
                                     const std::vector<const RefTensor*>& in) {
  const double eps = n.attrs.GetFloat("epsilon", 1e-5f);
  RefTensor y = *in[0];
  const int64_t channels = y.dims[1];
  int64_t inner = 1;
  for (size_t i = 2; i < y.dims.size(); ++i) inner *= y.dims[i];
  for (size_t i = 0; i < y.data.size(); ++i) {
    const int64_t c = (static_cast<int64_t>(i) / inner) % channels;
    y.data[i] = (y.data[i] - in[3]->data[c]) /
                    std::sqrt(in[4]->data[c] + eps) * in[1]->data[c] +
                in[2]->data[c];
  }
  return y;
}

// AveragePool 2-D with count_include_pad=1 (or no pads): a depthwise Conv
// whose weights are all 1 / (kh * kw).
inline StatusOr<RefTensor> AveragePool2D(const Node& n, const RefTensor& x) {
  const std::vector<int64_t> kernel = n.attrs.GetInts("kernel_shape", {});
  const std::vector<int64_t> pads = n.attrs.GetInts("pads", {0, 0, 0, 0});
  bool padded = false;
  for (int64_t p : pads) padded |= p != 0;
  if (x.dims.size() != 4 || kernel.size() != 2 ||
      (padded && n.attrs.GetInt("count_include_pad", 0) == 0) || n.attrs.GetInt("ceil_mode", 0))
    return Unimplemented("reference AveragePool: 2-D, count_include_pad=1, ceil_mode=0 only");
  Node conv = n;
  conv.attrs.Set("group", x.dims[1]);
  RefTensor w;
  w.dims = {x.dims[1], 1, kernel[0], kernel[1]};
  w.data.assign(static_cast<size_t>(Numel(w.dims)), 1.0 / static_cast<double>(kernel[0] * kernel[1]));
  return Conv2D(conv, x, w, nullptr);
}

// Pad, mode constant, of a 4-D tensor by [begin..., end...] with `value`.
inline StatusOr<RefTensor> Pad4D(const RefTensor& x, std::span<const int64_t> pads, double value) {
  if (x.dims.size() != 4 || pads.size() != 8) return Unimplemented("reference Pad is 4-D only");
  RefTensor y;
  for (size_t d = 0; d < 4; ++d) y.dims.push_back(x.dims[d] + pads[d] + pads[4 + d]);
  y.data.assign(static_cast<size_t>(Numel(y.dims)), value);
  const std::vector<int64_t> xs = Strides(x.dims), ys = Strides(y.dims);
  for (int64_t i = 0; i < Numel(x.dims); ++i) {
    int64_t o = 0;
    for (size_t d = 0; d < 4; ++d) o += ((i / xs[d]) % x.dims[d] + pads[d]) * ys[d];
    y.data[static_cast<size_t>(o)] = x.data[static_cast<size_t>(i)];
  }
  return y;
}

// Mean or max over `axes` (normalised), keeping them as extent 1 when
// `keepdims`: ReduceMean / ReduceMax, and the global pools (axes 2..rank-1).
inline RefTensor Reduce(const RefTensor& x, std::vector<int64_t> axes, bool keepdims,
                        bool mean) {
  const size_t rank = x.dims.size();
  std::vector<bool> reduced(rank, false);
  for (int64_t a : axes) reduced[static_cast<size_t>(a < 0 ? a + static_cast<int64_t>(rank) : a)] = true;
  std::vector<int64_t> kept_dims;  // output dims with keepdims
  for (size_t d = 0; d < rank; ++d) kept_dims.push_back(reduced[d] ? 1 : x.dims[d]);
  const std::vector<int64_t> in_strides = Strides(x.dims), out_strides = Strides(kept_dims);
  RefTensor out;
  out.data.assign(static_cast<size_t>(Numel(kept_dims)),
                  mean ? 0.0 : -std::numeric_limits<double>::infinity());
  const double count = static_cast<double>(Numel(x.dims)) / static_cast<double>(out.data.size());
  for (int64_t i = 0; i < Numel(x.dims); ++i) {
    int64_t o = 0;
    for (size_t d = 0; d < rank; ++d)
      if (!reduced[d]) o += (i / in_strides[d]) % x.dims[d] * out_strides[d];
    double& acc = out.data[static_cast<size_t>(o)];
    acc = mean ? acc + x.data[static_cast<size_t>(i)] / count
               : std::max(acc, x.data[static_cast<size_t>(i)]);
  }
  for (size_t d = 0; d < rank; ++d)
    if (keepdims || !reduced[d]) out.dims.push_back(kept_dims[d]);
  return out;
}

}  // namespace internal

// Runs `graph` (in its node order) on `inputs` (one per graph input) and
// returns the graph outputs.
// Concat along `axis` (negative counts from the end).
inline StatusOr<RefTensor> Concat(const std::vector<const RefTensor*>& in, int64_t axis) {
  if (in.empty() || in[0] == nullptr) return InvalidArgument("Concat: no inputs");
  const int64_t rank = static_cast<int64_t>(in[0]->dims.size());
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return InvalidArgument("Concat: bad axis");
  RefTensor out;
  out.dims = in[0]->dims;
  out.dims[static_cast<size_t>(axis)] = 0;
  for (const RefTensor* t : in) out.dims[static_cast<size_t>(axis)] += t->dims[static_cast<size_t>(axis)];
  int64_t outer = 1, inner = 1;
  for (int64_t a = 0; a < axis; ++a) outer *= out.dims[static_cast<size_t>(a)];
  for (int64_t a = axis + 1; a < rank; ++a) inner *= out.dims[static_cast<size_t>(a)];
  for (int64_t o = 0; o < outer; ++o)
    for (const RefTensor* t : in) {
      const int64_t block = t->dims[static_cast<size_t>(axis)] * inner;
      out.data.insert(out.data.end(), t->data.begin() + o * block, t->data.begin() + (o + 1) * block);
    }
  return out;
}

inline StatusOr<std::vector<RefTensor>> Evaluate(
    const Graph& graph, const std::vector<RefTensor>& inputs) {
  using namespace internal;  // NOLINT: test helper
  std::vector<RefTensor> env(static_cast<size_t>(graph.num_values()));
  std::vector<bool> ready(env.size(), false);
  for (ValueId v = 0; v < graph.num_values(); ++v) {
    const Value& value = graph.value(v);
    if (!value.constant) continue;
    ready[v] = true;
    // Only f32 contents are read; other constants (Dropout's training flag)
    // are present but empty.
    if (value.dtype != DataType::kF32) continue;
    for (const Dim& d : value.shape) env[v].dims.push_back(d.extent());
    for (float f : value.constant->as<float>()) env[v].data.push_back(f);
  }
  if (inputs.size() != graph.inputs().size())
    return InvalidArgument("wrong input count");
  for (size_t i = 0; i < inputs.size(); ++i) {
    env[graph.inputs()[i]] = inputs[i];
    ready[graph.inputs()[i]] = true;
  }
  for (const Node& n : graph.nodes()) {
    std::vector<const RefTensor*> in;
    for (ValueId v : n.inputs) {
      if (v != kNoValue && !ready[v])
        return InvalidArgument("node " + n.name + " reads an unready value");
      in.push_back(v == kNoValue ? nullptr : &env[v]);
    }
    auto input = [&](size_t i) -> const RefTensor* {
      return i < in.size() ? in[i] : nullptr;
    };
    StatusOr<RefTensor> out = InvalidArgument("unset");
    const std::string& op = n.op_type;
    if (op == "Conv") {
      out = Conv2D(n, *in[0], *in[1], input(2));
    } else if (op == "Gemm") {
      out = Gemm(n, *in[0], *in[1], input(2));
    } else if (op == "MatMul") {
      out = MatMul2DB(*in[0], *in[1]);
    } else if (op == "Reshape") {
      const Value& shape = graph.value(n.inputs[1]);
      if (!shape.constant) return InvalidArgument(n.name + ": shape not constant");
      out = Reshape(*in[0], shape.constant->as<int64_t>());
    } else if (op == "BatchNormalization") {
      out = BatchNorm(n, in);
    } else if (op == "Concat") {
      out = Concat(in, n.attrs.GetInt("axis", 0));
    } else if (op == "Expand") {
      const Value& shape = graph.value(n.inputs[1]);
      if (!shape.constant) return InvalidArgument(n.name + ": shape not constant");
      RefTensor ones;
      for (int64_t d : shape.constant->as<int64_t>()) ones.dims.push_back(d);
      ones.data.assign(static_cast<size_t>(Numel(ones.dims)), 1.0);
      out = Broadcast2(*in[0], ones, /*multiply=*/true);
    } else if (op == "Add" || op == "Mul") {
      out = Broadcast2(*in[0], *in[1], op == "Mul");
    } else if (op == "Div") {
      RefTensor reciprocal = *in[1];
      for (double& v : reciprocal.data) v = 1.0 / v;
      out = Broadcast2(*in[0], reciprocal, /*mul=*/true);
    } else if (op == "Sub") {
      RefTensor negated = *in[1];
      for (double& v : negated.data) v = -v;
      out = Broadcast2(*in[0], negated, /*mul=*/false);
    } else if (op == "AveragePool") {
      out = AveragePool2D(n, *in[0]);
    } else if (op == "Pad") {
      std::vector<int64_t> pads = n.attrs.GetInts("pads", {});
      if (!n.attrs.Has("pads"))
        for (int64_t p : graph.value(n.inputs[1]).constant->as<int64_t>()) pads.push_back(p);
      const double value = input(2) ? input(2)->data[0] : n.attrs.GetFloat("value", 0.0f);
      out = Pad4D(*in[0], pads, value);
    } else if (op == "ReduceMean" || op == "ReduceMax") {
      std::vector<int64_t> axes = n.attrs.GetInts("axes", {});
      if (!n.attrs.Has("axes") && n.inputs.size() > 1)
        for (int64_t a : graph.value(n.inputs[1]).constant->as<int64_t>()) axes.push_back(a);
      out = Reduce(*in[0], axes, n.attrs.GetInt("keepdims", 1) != 0, op == "ReduceMean");
    } else if (op == "GlobalAveragePool" || op == "GlobalMaxPool") {
      std::vector<int64_t> axes;
      for (size_t d = 2; d < in[0]->dims.size(); ++d) axes.push_back(static_cast<int64_t>(d));
      out = Reduce(*in[0], axes, true, op == "GlobalAveragePool");
    } else if (op == "Flatten") {
      const int64_t axis = n.attrs.GetInt("axis", 1);
      int64_t outer = 1;
      for (int64_t d = 0; d < axis; ++d) outer *= in[0]->dims[static_cast<size_t>(d)];
      const int64_t target[] = {outer, Numel(in[0]->dims) / outer};
      out = Reshape(*in[0], target);
    } else if (op == "Identity" || op == "Dropout") {
      out = *in[0];
    } else {
      RefTensor t = *in[0];
      constexpr double kInf = std::numeric_limits<double>::infinity();
      double lo = n.attrs.GetFloat("min", -kInf), hi = n.attrs.GetFloat("max", kInf);
      if (input(1)) lo = input(1)->data[0];
      if (input(2)) hi = input(2)->data[0];
      const double default_alpha = op == "LeakyRelu" ? 0.01 : 0.2;
      const bool gelu_tanh = op == "Gelu" && n.attrs.GetString("approximate", "none") == "tanh";
      Status s = ApplyActivation(gelu_tanh ? "GeluTanh" : op, lo, hi,
                                 n.attrs.GetFloat("alpha", default_alpha),
                                 n.attrs.GetFloat("beta", 0.5f), t);
      if (!s.ok()) return s;
      out = std::move(t);
    }
    if (!out.ok()) return out.status().WithPrefix(n.name);
    if (op == "Conv" || op == "Gemm" || op == "Add")
      RETURN_IF_ERROR(ApplyFusedActivation(n, *out));
    env[n.outputs[0]] = std::move(*out);
    ready[n.outputs[0]] = true;
  }
  std::vector<RefTensor> result;
  for (ValueId v : graph.outputs()) {
    if (!ready[v]) return InvalidArgument("output never computed");
    result.push_back(env[v]);
  }
  return result;
}

// Evaluates both graphs on the same random non-zero inputs (shapes from the
// static graph-input shapes of `before`) and expects every output within
// `tolerance` by MaxScaledError.
inline void ExpectEquivalent(const Graph& before, const Graph& after,
                             uint32_t seed, double tolerance) {
  std::mt19937 rng(seed);
  std::vector<RefTensor> inputs;
  for (ValueId v : before.inputs()) {
    std::vector<int64_t> dims;
    for (const Dim& d : before.value(v).shape) dims.push_back(d.extent());
    inputs.push_back(RandomTensor(dims, rng));
  }
  StatusOr<std::vector<RefTensor>> want = Evaluate(before, inputs);
  StatusOr<std::vector<RefTensor>> got = Evaluate(after, inputs);
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(want->size(), got->size());
  for (size_t i = 0; i < want->size(); ++i) {
    EXPECT_EQ((*want)[i].dims, (*got)[i].dims) << "output " << i;
    EXPECT_LE(MaxScaledError((*want)[i], (*got)[i]), tolerance)
        << "output " << i;
  }
}

}  // namespace braid::test_eval

#endif  // BRAID_TESTS_PASSES_REFERENCE_EVAL_TEST_UTIL_H_
