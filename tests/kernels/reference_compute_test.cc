// Reference compute kernels against hand-computed values (arithmetic in the
// comments) and against independent naive formulations written here (conv as
// im2col + matmul, numpy-style matmul broadcasting, softmax/layernorm
// invariants); parameter errors naming the node; the libonnx-testdata node
// cases of these ops. The op harness runs in op_harness_test.cc.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "graph/onnx_importer.h"
#include "graph/onnx_tensor.h"
#include "kernels/backend.h"
#include "kernels/params/activation.h"
#include "kernels/params/conv.h"
#include "kernels/params/matmul.h"
#include "kernels/reference/registration.h"
#include "tests/kernels/op_harness.h"

namespace braid {
namespace {

using Ints = std::vector<int64_t>;
using Floats = std::vector<float>;

// One input: f32 values (or i64/i32 in `ints`), constant or not.
struct In {
  TensorDesc desc;
  Floats f;
  Ints ints;
  bool constant = false;
};
In F(Ints dims, Floats v, bool constant = false) {
  return In{{DataType::kF32, std::move(dims)}, std::move(v), {}, constant};
}
In I64(Ints dims, Ints v, bool constant = true) {
  return In{{DataType::kI64, std::move(dims)}, {}, std::move(v), constant};
}
In I32(Ints dims, Ints v) { return In{{DataType::kI32, std::move(dims)}, {}, std::move(v), false}; }
In Missing() { return In{}; }
TensorDesc Out(Ints dims, DataType t = DataType::kF32) { return {t, std::move(dims)}; }

Floats Random(int64_t n, uint32_t seed, float low = -1.0f, float high = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(low, high);
  Floats v(static_cast<size_t>(n));
  for (float& x : v) {
    do x = dist(rng); while (std::fabs(x) < 0.01f);
  }
  return v;
}

Node MakeNode(const std::string& op, std::vector<std::pair<std::string, AttributeValue>> attrs = {}) {
  Node n;
  n.name = "n_" + op;
  n.op_type = op;
  for (auto& [k, v] : attrs) n.attrs.Set(k, v);
  return n;
}

const KernelRegistry& ReferenceRegistry() {
  static const KernelRegistry* r = [] {
    auto* reg = new KernelRegistry;
    RegisterReferenceComputeKernels(*reg);
    RegisterReferenceElementwiseAndDataKernels(*reg);  // Add, Relu, Clip (fused Add)
    return reg;
  }();
  return *r;
}

struct Bound {
  std::vector<TensorData> data;
  PrepareArgs args;
};

Bound Bind(const Node& node, int64_t opset, const std::vector<In>& inputs,
           const std::vector<TensorDesc>& outputs) {
  Bound b;
  b.data.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const In& in = inputs[i];
    if (!in.desc.present()) continue;
    b.data[i] = TensorData::Allocate(std::max<size_t>(in.desc.bytes(), 1));
    if (in.desc.dtype == DataType::kF32) {
      EXPECT_EQ(in.f.size(), static_cast<size_t>(in.desc.elements())) << "test input " << i;
      std::copy(in.f.begin(), in.f.end(), b.data[i].mutable_as<float>().begin());
    } else if (in.desc.dtype == DataType::kI64) {
      std::copy(in.ints.begin(), in.ints.end(), b.data[i].mutable_as<int64_t>().begin());
    } else if (in.desc.dtype == DataType::kI32) {
      for (size_t k = 0; k < in.ints.size(); ++k)
        b.data[i].mutable_as<int32_t>()[k] = static_cast<int32_t>(in.ints[k]);
    } else if (in.desc.dtype == DataType::kU8) {
      for (size_t k = 0; k < in.ints.size(); ++k)
        b.data[i].mutable_as<uint8_t>()[k] = static_cast<uint8_t>(in.ints[k]);
    } else if (in.desc.dtype == DataType::kI8) {
      for (size_t k = 0; k < in.ints.size(); ++k)
        b.data[i].mutable_as<int8_t>()[k] = static_cast<int8_t>(in.ints[k]);
    }
  }
  b.args.node = &node;
  b.args.opset = opset;
  b.args.outputs = outputs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    b.args.inputs.push_back(inputs[i].desc);
    b.args.constants.push_back(inputs[i].constant ? &b.data[i] : nullptr);
  }
  return b;
}

// Prepares and runs the reference kernel; returns every output as doubles.
StatusOr<std::vector<std::vector<double>>> RunReference(
    const Node& node, int64_t opset, const std::vector<In>& inputs,
    const std::vector<TensorDesc>& outputs) {
  const KernelEntry* entry = FindReference(ReferenceRegistry(), node.op_type);
  if (entry == nullptr) return NotFound("no reference " + node.op_type);
  Bound b = Bind(node, opset, inputs, outputs);
  std::unique_ptr<Kernel> kernel = entry->create();
  RETURN_IF_ERROR(kernel->Prepare(b.args));
  std::vector<std::vector<std::byte>> out_bytes;
  std::vector<void*> dst;
  for (const TensorDesc& d : outputs) {
    out_bytes.emplace_back(std::max<size_t>(d.bytes(), 1), std::byte{0xff});  // NaN poison
    dst.push_back(d.present() ? out_bytes.back().data() : nullptr);
  }
  std::vector<const void*> src;
  for (size_t i = 0; i < inputs.size(); ++i)
    src.push_back(inputs[i].desc.present() ? b.data[i].data() : nullptr);
  std::vector<std::byte> workspace(kernel->workspace_bytes() + 1);
  RunArgs run;
  run.src = src;
  run.dst = dst;
  run.workspace = workspace.data();
  RETURN_IF_ERROR(kernel->Run(run));
  std::vector<std::vector<double>> result;
  for (size_t o = 0; o < outputs.size(); ++o) {
    std::vector<double> v;
    for (int64_t i = 0; outputs[o].present() && i < outputs[o].elements(); ++i) {
      const std::byte* p = out_bytes[o].data();
      switch (outputs[o].dtype) {
        case DataType::kF32: v.push_back(reinterpret_cast<const float*>(p)[i]); break;
        case DataType::kI64: v.push_back(static_cast<double>(reinterpret_cast<const int64_t*>(p)[i])); break;
        case DataType::kI32: v.push_back(reinterpret_cast<const int32_t*>(p)[i]); break;
        case DataType::kU8: v.push_back(reinterpret_cast<const uint8_t*>(p)[i]); break;
        case DataType::kI8: v.push_back(reinterpret_cast<const int8_t*>(p)[i]); break;
        default: return Internal("test cannot read this output dtype");
      }
    }
    result.push_back(std::move(v));
  }
  return result;
}

std::vector<double> Run1(const Node& node, const std::vector<In>& inputs, TensorDesc out,
                         int64_t opset = 17) {
  auto r = RunReference(node, opset, inputs, {std::move(out)});
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? (*r)[0] : std::vector<double>{};
}

void ExpectNear(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tol + tol * std::fabs(want[i])) << "element " << i;
}

Status PrepareOnly(const Node& node, const std::vector<In>& inputs,
                   const std::vector<TensorDesc>& outputs, int64_t opset = 17) {
  return RunReference(node, opset, inputs, outputs).status();
}

void ExpectErrorNaming(const Status& s, StatusCode code, const std::string& node,
                       const std::string& fragment) {
  EXPECT_EQ(s.code(), code) << s.ToString();
  EXPECT_NE(s.message().find("node '" + node + "'"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find(fragment), std::string::npos) << s.ToString();
}

// ---------------------------------------------------------------- activation

TEST(FusedActivation, ParsesEveryKindAndApplies) {
  struct Row { std::vector<std::pair<std::string, AttributeValue>> attrs; float x, want; };
  const std::vector<Row> rows = {
      {{}, -2.0f, -2.0f},
      {{{"activation", std::string("Relu")}}, -2.0f, 0.0f},
      {{{"activation", std::string("Clip")}, {"activation_min", 0.0f}, {"activation_max", 6.0f}}, 7.5f, 6.0f},
      // HardSwish(3) = 3 * min(1, 3/6 + 0.5) = 3; (1) = 1 * (1/6 + 1/2) = 0.6666667
      {{{"activation", std::string("HardSwish")}}, 1.0f, 2.0f / 3.0f},
      // Sigmoid(0.5) = 1 / (1 + e^-0.5) = 1 / 1.6065307 = 0.6224593
      {{{"activation", std::string("Sigmoid")}}, 0.5f, 0.6224593f},
      // SiLU(-1) = -1 * sigmoid(-1) = -0.2689414
      {{{"activation", std::string("SiLU")}}, -1.0f, -0.2689414f},
      // HardSigmoid(1; 0.3, 0.4) = 0.3 + 0.4 = 0.7
      {{{"activation", std::string("HardSigmoid")}, {"activation_alpha", 0.3f}, {"activation_beta", 0.4f}}, 1.0f, 0.7f},
      // LeakyRelu(-2; 0.1) = -0.2
      {{{"activation", std::string("LeakyRelu")}, {"activation_alpha", 0.1f}}, -2.0f, -0.2f},
  };
  for (const Row& r : rows) {
    Node node = MakeNode("Conv", r.attrs);
    PrepareArgs args;
    args.node = &node;
    StatusOr<Activation> act = ParseFusedActivation(args);
    ASSERT_TRUE(act.ok()) << act.status().ToString();
    EXPECT_NEAR(act->Apply(r.x), r.want, 1e-6) << act->Name();
  }
}

TEST(FusedActivation, RejectsUnknownNameAndUnorderedClip) {
  Node bad = MakeNode("Gemm", {{"activation", std::string("Swish7")}});
  PrepareArgs args;
  args.node = &bad;
  ExpectErrorNaming(ParseFusedActivation(args).status(), StatusCode::kInvalidArgument,
                    "n_Gemm", "Swish7");
  Node clip = MakeNode("Conv", {{"activation", std::string("Clip")},
                                {"activation_min", 2.0f}, {"activation_max", 1.0f}});
  args.node = &clip;
  ExpectErrorNaming(ParseFusedActivation(args).status(), StatusCode::kInvalidArgument,
                    "n_Conv", "Clip");
}

// ------------------------------------------------- Add + fused activation

// A residual Add carrying a fused activation (FuseActivations) must equal the
// unfused Add followed by the activation op, on same-shape and broadcast
// operands.
TEST(ReferenceAdd, FusedActivationEqualsAddThenActivation) {
  using Attrs = std::vector<std::pair<std::string, AttributeValue>>;
  struct Act {
    Attrs fused;
    std::string op;
    Attrs op_attrs;
    std::vector<In> extra;  // Clip bounds as inputs (opset 17)
  };
  const std::vector<Act> acts = {
      {{{"activation", std::string("Relu")}}, "Relu", {}, {}},
      {{{"activation", std::string("Clip")}, {"activation_min", -0.25f}, {"activation_max", 0.5f}},
       "Clip", {}, {F({}, {-0.25f}, true), F({}, {0.5f}, true)}},
      {{{"activation", std::string("LeakyRelu")}, {"activation_alpha", 0.1f}},
       "LeakyRelu", {{"alpha", 0.1f}}, {}},
      {{{"activation", std::string("HardSwish")}}, "HardSwish", {}, {}},
  };
  const std::vector<std::pair<Ints, Ints>> shapes = {
      {{2, 3, 4, 5}, {2, 3, 4, 5}}, {{2, 3, 4, 5}, {3, 1, 5}}, {{1, 5}, {2, 3, 4, 5}}};
  uint32_t seed = 40;
  for (const auto& [a_dims, b_dims] : shapes) {
    const In a = F(a_dims, Random(TensorDesc{DataType::kF32, a_dims}.elements(), ++seed, -2.0f, 2.0f));
    const In b = F(b_dims, Random(TensorDesc{DataType::kF32, b_dims}.elements(), ++seed, -2.0f, 2.0f));
    const Ints y_dims = {2, 3, 4, 5};
    const std::vector<double> sum = Run1(MakeNode("Add"), {a, b}, Out(y_dims));
    for (const Act& act : acts) {
      const std::vector<double> fused = Run1(MakeNode("Add", act.fused), {a, b}, Out(y_dims));
      std::vector<In> op_in = {F(y_dims, Floats(sum.begin(), sum.end()))};
      op_in.insert(op_in.end(), act.extra.begin(), act.extra.end());
      const std::vector<double> want = Run1(MakeNode(act.op, act.op_attrs), op_in, Out(y_dims));
      SCOPED_TRACE(act.op);
      ExpectNear(fused, want, 1e-6);
      bool changed = false;  // the activation must really act on these inputs
      for (size_t i = 0; i < sum.size(); ++i) changed |= sum[i] != fused[i];
      EXPECT_TRUE(changed);
    }
  }
}

TEST(ReferenceAdd, FusedActivationOnIntegersOrEqualIsRefused) {
  const In a = I32({4}, {1, -2, 3, -4});
  const Status s = PrepareOnly(MakeNode("Add", {{"activation", std::string("Relu")}}),
                               {a, a}, {Out({4}, DataType::kI32)});
  ExpectErrorNaming(s, StatusCode::kUnimplemented, "n_Add", "fused activation");
  const In f = F({4}, {1, -2, 3, -4});
  const Status e = PrepareOnly(MakeNode("Equal", {{"activation", std::string("Relu")}}),
                               {f, f}, {Out({4}, DataType::kBool)});
  ExpectErrorNaming(e, StatusCode::kUnimplemented, "n_Equal", "fused activation");
}

// ---------------------------------------------------------------------- Conv

const Floats kX3x3 = {1, 2, 3, 4, 5, 6, 7, 8, 9};  // [[1,2,3],[4,5,6],[7,8,9]]

TEST(ReferenceConv, HandComputed2x2) {
  // W = [[1,2],[3,4]], bias 0.5: y00 = 1*1 + 2*2 + 3*4 + 4*5 + 0.5 = 37.5,
  // y01 = 2+6+15+24 + .5 = 47.5, y10 = 4+10+21+32 + .5 = 67.5, y11 = 5+12+24+36 + .5 = 77.5
  Node node = MakeNode("Conv");
  ExpectNear(Run1(node, {F({1, 1, 3, 3}, kX3x3), F({1, 1, 2, 2}, {1, 2, 3, 4}, true),
                         F({1}, {0.5f}, true)},
                  Out({1, 1, 2, 2})),
             {37.5, 47.5, 67.5, 77.5}, 1e-6);
}

TEST(ReferenceConv, HandComputedPaddedStrided) {
  // pads 1, stride 2: windows start at -1 and 1 on each axis.
  // y00 = x00*w11 = 4; y01 = x01*w10 + x02*w11 = 6 + 12 = 18;
  // y10 = x10*w01 + x20*w11 = 8 + 28 = 36; y11 = 5 + 12 + 24 + 36 = 77.
  Node node = MakeNode("Conv", {{"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}}});
  ExpectNear(Run1(node, {F({1, 1, 3, 3}, kX3x3), F({1, 1, 2, 2}, {1, 2, 3, 4}, true)},
                  Out({1, 1, 2, 2})),
             {4, 18, 36, 77}, 1e-6);
}

TEST(ReferenceConv, HandComputedDilated1dAndGroupedWithRelu) {
  // 1-D, dilation 2, W = [1, 10]: y[i] = x[i] + 10 * x[i+2] = 1+30, 2+40, 3+50.
  Node dilated = MakeNode("Conv", {{"dilations", Ints{2}}});
  ExpectNear(Run1(dilated, {F({1, 1, 5}, {1, 2, 3, 4, 5}), F({1, 1, 2}, {1, 10}, true)},
                  Out({1, 1, 3})),
             {31, 42, 53}, 1e-6);
  // group 2, 1x1 kernels w = [2, -3], bias [1, 1], then Relu:
  // channel 0: relu(2*[1,2] + 1) = [3,5]; channel 1: relu(-3*[4,-5] + 1) = [0, 16].
  Node grouped = MakeNode("Conv", {{"group", int64_t{2}}, {"activation", std::string("Relu")}});
  ExpectNear(Run1(grouped, {F({1, 2, 1, 2}, {1, 2, 4, -5}), F({2, 1, 1, 1}, {2, -3}, true),
                            F({2}, {1, 1}, true)},
                  Out({1, 2, 1, 2})),
             {3, 5, 0, 16}, 1e-6);
}

// Independent formulation: im2col + matrix product, 2-D only.
std::vector<double> ConvIm2col(const Floats& x, const Ints& xd, const Floats& w, const Ints& wd,
                               const Floats& bias, int64_t group, const Ints& strides,
                               const Ints& dil, const Ints& pads, Ints* out_dims) {
  const int64_t n = xd[0], c = xd[1], h = xd[2], wi = xd[3], m = wd[0], cg = wd[1],
                kh = wd[2], kw = wd[3];
  const int64_t oh = (h + pads[0] + pads[2] - ((kh - 1) * dil[0] + 1)) / strides[0] + 1;
  const int64_t ow = (wi + pads[1] + pads[3] - ((kw - 1) * dil[1] + 1)) / strides[1] + 1;
  *out_dims = {n, m, oh, ow};
  std::vector<double> y(static_cast<size_t>(n * m * oh * ow));
  const int64_t mg = m / group, rows = cg * kh * kw;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t g = 0; g < group; ++g) {
      // columns: [rows, oh*ow]
      std::vector<double> col(static_cast<size_t>(rows * oh * ow), 0.0);
      for (int64_t ci = 0; ci < cg; ++ci)
        for (int64_t r = 0; r < kh; ++r)
          for (int64_t s = 0; s < kw; ++s)
            for (int64_t p = 0; p < oh; ++p)
              for (int64_t q = 0; q < ow; ++q) {
                const int64_t iy = p * strides[0] - pads[0] + r * dil[0];
                const int64_t ix = q * strides[1] - pads[1] + s * dil[1];
                if (iy < 0 || iy >= h || ix < 0 || ix >= wi) continue;
                col[static_cast<size_t>(((ci * kh + r) * kw + s) * oh * ow + p * ow + q)] =
                    x[static_cast<size_t>(((b * c + g * cg + ci) * h + iy) * wi + ix)];
              }
      for (int64_t mo = 0; mo < mg; ++mo) {
        const int64_t oc = g * mg + mo;
        for (int64_t pq = 0; pq < oh * ow; ++pq) {
          double acc = bias.empty() ? 0.0 : bias[static_cast<size_t>(oc)];
          for (int64_t r = 0; r < rows; ++r)
            acc += w[static_cast<size_t>(oc * rows + r)] * col[static_cast<size_t>(r * oh * ow + pq)];
          y[static_cast<size_t>((b * m + oc) * oh * ow + pq)] = acc;
        }
      }
    }
  return y;
}

TEST(ReferenceConv, MatchesIm2colOnRandomConfigurations) {
  struct Config { Ints x, w; int64_t group; Ints strides, dil, pads; bool bias; };
  const std::vector<Config> configs = {
      {{1, 3, 7, 7}, {4, 3, 3, 3}, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, true},
      {{2, 4, 9, 8}, {6, 2, 3, 2}, 2, {2, 1}, {1, 2}, {0, 1, 2, 0}, true},
      {{1, 6, 8, 8}, {6, 1, 3, 3}, 6, {2, 2}, {1, 1}, {1, 1, 1, 1}, false},
      {{1, 2, 10, 6}, {3, 2, 1, 1}, 1, {3, 2}, {1, 1}, {0, 0, 0, 0}, true},
      {{1, 4, 11, 11}, {8, 4, 5, 5}, 1, {2, 2}, {2, 2}, {3, 1, 2, 4}, true},
  };
  uint32_t seed = 11;
  for (const Config& cfg : configs) {
    const Floats x = Random(TensorDesc{DataType::kF32, cfg.x}.elements(), seed++);
    const Floats w = Random(TensorDesc{DataType::kF32, cfg.w}.elements(), seed++);
    const Floats bias = cfg.bias ? Random(cfg.w[0], seed++) : Floats{};
    Ints out_dims;
    const std::vector<double> want = ConvIm2col(x, cfg.x, w, cfg.w, bias, cfg.group,
                                                cfg.strides, cfg.dil, cfg.pads, &out_dims);
    Node node = MakeNode("Conv", {{"group", cfg.group}, {"strides", cfg.strides},
                                  {"dilations", cfg.dil}, {"pads", cfg.pads}});
    std::vector<In> inputs = {F(cfg.x, x), F(cfg.w, w, true)};
    if (cfg.bias) inputs.push_back(F({cfg.w[0]}, bias, true));
    ExpectNear(Run1(node, inputs, Out(out_dims)), want, 1e-5);
  }
}

TEST(ReferenceConv, Conv1dEqualsConv2dWithUnitHeight) {
  const Floats x = Random(2 * 3 * 12, 5), w = Random(4 * 3 * 3, 6), b = Random(4, 7);
  Node c1 = MakeNode("Conv", {{"pads", Ints{2, 1}}, {"strides", Ints{2}}, {"dilations", Ints{2}}});
  Node c2 = MakeNode("Conv", {{"pads", Ints{0, 2, 0, 1}}, {"strides", Ints{1, 2}},
                              {"dilations", Ints{1, 2}}});
  // L_out = (12 + 3 - 5) / 2 + 1 = 6
  const auto y1 = Run1(c1, {F({2, 3, 12}, x), F({4, 3, 3}, w, true), F({4}, b, true)}, Out({2, 4, 6}));
  const auto y2 = Run1(c2, {F({2, 3, 1, 12}, x), F({4, 3, 1, 3}, w, true), F({4}, b, true)},
                       Out({2, 4, 1, 6}));
  ExpectNear(y1, y2, 1e-6);
}

TEST(ReferenceConv, AutoPadResolvesToExplicitPads) {
  // in 9, kernel 4, stride 2: out ceil(9/2) = 5, total pad (5-1)*2 + 4 - 9 = 3:
  // SAME_UPPER pads 1 before / 2 after, SAME_LOWER 2 / 1.
  const Floats x = Random(2 * 9 * 9, 8), w = Random(3 * 2 * 16, 9);
  for (const auto& [mode, explicit_pads] :
       std::vector<std::pair<std::string, Ints>>{{"SAME_UPPER", {1, 1, 2, 2}},
                                                 {"SAME_LOWER", {2, 2, 1, 1}}}) {
    Node same = MakeNode("Conv", {{"auto_pad", mode}, {"strides", Ints{2, 2}}});
    Node expl = MakeNode("Conv", {{"pads", explicit_pads}, {"strides", Ints{2, 2}}});
    std::vector<In> inputs = {F({1, 2, 9, 9}, x), F({3, 2, 4, 4}, w, true)};
    Bound b = Bind(same, 17, inputs, {Out({1, 3, 5, 5})});
    StatusOr<ConvParams> p = ParseConv(b.args);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    EXPECT_EQ(p->pads_begin, (Ints{explicit_pads[0], explicit_pads[1]})) << mode;
    EXPECT_EQ(p->pads_end, (Ints{explicit_pads[2], explicit_pads[3]})) << mode;
    ExpectNear(Run1(same, inputs, Out({1, 3, 5, 5})), Run1(expl, inputs, Out({1, 3, 5, 5})), 0);
  }
}

TEST(ReferenceConv, BadConfigurationsNameTheNode) {
  Node node = MakeNode("Conv", {{"group", int64_t{3}}});
  const Floats x = Random(4 * 9, 1), w = Random(4 * 4 * 9, 2);
  // 4 output channels are not divisible by group 3.
  ExpectErrorNaming(PrepareOnly(node, {F({1, 4, 3, 3}, x), F({4, 4, 3, 3}, w)}, {Out({1, 4, 1, 1})}),
                    StatusCode::kInvalidArgument, "n_Conv", "group 3");
  Node plain = MakeNode("Conv");
  ExpectErrorNaming(PrepareOnly(plain, {F({1, 4, 3, 3}, x), F({4, 4, 3, 3}, w), F({3}, {1, 2, 3})},
                                {Out({1, 4, 1, 1})}),
                    StatusCode::kInvalidArgument, "n_Conv", "bias");
  ExpectErrorNaming(PrepareOnly(plain, {F({1, 4, 3, 3}, x), F({4, 4, 3, 3}, w)}, {Out({1, 4, 2, 2})}),
                    StatusCode::kInvalidArgument, "n_Conv", "output");
  ExpectErrorNaming(PrepareOnly(plain, {F({1, 2, 3, 3}, Random(18, 3)), F({4, 4, 3, 3}, w)},
                                {Out({1, 4, 1, 1})}),
                    StatusCode::kInvalidArgument, "n_Conv", "channels");
  Node bad_pad = MakeNode("Conv", {{"auto_pad", std::string("SAME")}});
  ExpectErrorNaming(PrepareOnly(bad_pad, {F({1, 4, 3, 3}, x), F({4, 4, 3, 3}, w)}, {Out({1, 4, 1, 1})}),
                    StatusCode::kInvalidArgument, "n_Conv", "auto_pad");
  In half{{DataType::kF16, {1, 4, 3, 3}}, {}, {}, false};
  In half_w{{DataType::kF16, {4, 4, 3, 3}}, {}, {}, true};
  ExpectErrorNaming(PrepareOnly(plain, {half, half_w}, {Out({1, 4, 1, 1}, DataType::kF16)}),
                    StatusCode::kUnimplemented, "n_Conv", "f16");
}

// --------------------------------------------------------------------- pools

TEST(ReferencePool, MaxPoolHandComputed) {
  Ints x16(16);
  Floats f16v(16);
  std::iota(f16v.begin(), f16v.end(), 1.0f);  // 1..16, row major 4x4
  Node m = MakeNode("MaxPool", {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}});
  ExpectNear(Run1(m, {F({1, 1, 4, 4}, f16v)}, Out({1, 1, 2, 2})), {6, 8, 14, 16}, 0);
  // Negative input with padding: padding never wins. Windows start at -1, 1:
  // y00 = -1; y01 = max(-2,-3) = -2; y10 = max(-4,-7) = -4; y11 = max(-5,-6,-8,-9) = -5.
  Floats neg(9);
  for (int i = 0; i < 9; ++i) neg[static_cast<size_t>(i)] = -(i + 1.0f);
  Node padded = MakeNode("MaxPool", {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}},
                                     {"pads", Ints{1, 1, 1, 1}}});
  ExpectNear(Run1(padded, {F({1, 1, 3, 3}, neg)}, Out({1, 1, 2, 2})), {-1, -2, -4, -5}, 0);
}

TEST(ReferencePool, MaxPoolCeilModeAndIntegers) {
  // 5x5 = 1..25, kernel 2 stride 2, ceil_mode: out 3 (last window holds one
  // column/row): y = [[7,9,10],[17,19,20],[22,24,25]].
  Floats x(25);
  std::iota(x.begin(), x.end(), 1.0f);
  Node m = MakeNode("MaxPool", {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}},
                                {"ceil_mode", int64_t{1}}});
  ExpectNear(Run1(m, {F({1, 1, 5, 5}, x)}, Out({1, 1, 3, 3})), {7, 9, 10, 17, 19, 20, 22, 24, 25}, 0);
  Node m1 = MakeNode("MaxPool", {{"kernel_shape", Ints{3}}, {"strides", Ints{2}}});
  // windows [5,-3,2] [2,8,-1] -> 5, 8
  ExpectNear(Run1(m1, {I32({1, 1, 5}, {5, -3, 2, 8, -1})}, Out({1, 1, 2}, DataType::kI32)), {5, 8}, 0);
}

// MaxPool's Indices output: tests/kernels/max_pool_indices_test.cc.

TEST(ReferencePool, AveragePoolPaddingRules) {
  // 3x3 = 1..9, kernel 2, stride 2, pads 1: windows
  // y00 {1}, y01 {2,3}, y10 {4,7}, y11 {5,6,8,9}.
  // exclude pad: 1, 2.5, 5.5, 7; include pad (divide by 4): 0.25, 1.25, 2.75, 7.
  for (int64_t include : {0, 1}) {
    Node a = MakeNode("AveragePool", {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}},
                                      {"pads", Ints{1, 1, 1, 1}}, {"count_include_pad", include}});
    const std::vector<double> want =
        include ? std::vector<double>{0.25, 1.25, 2.75, 7} : std::vector<double>{1, 2.5, 5.5, 7};
    ExpectNear(Run1(a, {F({1, 1, 3, 3}, kX3x3)}, Out({1, 1, 2, 2})), want, 1e-7);
  }
  // ceil_mode overhang never counts: [1..5], kernel 2 stride 2, ceil: windows
  // {1,2} {3,4} {5} -> 1.5, 3.5, 5 even with count_include_pad.
  Node c = MakeNode("AveragePool", {{"kernel_shape", Ints{1, 2}}, {"strides", Ints{1, 2}},
                                    {"ceil_mode", int64_t{1}}, {"count_include_pad", int64_t{1}}});
  ExpectNear(Run1(c, {F({1, 1, 1, 5}, {1, 2, 3, 4, 5})}, Out({1, 1, 1, 3})), {1.5, 3.5, 5}, 1e-7);
}

TEST(ReferencePool, GlobalPools) {
  // channel 0 = [1,2,3,4] -> avg 2.5, max 4; channel 1 = [-1,-5,2,-3] -> avg -1.75, max 2
  const Floats x = {1, 2, 3, 4, -1, -5, 2, -3};
  ExpectNear(Run1(MakeNode("GlobalAveragePool"), {F({1, 2, 2, 2}, x)}, Out({1, 2, 1, 1})),
             {2.5, -1.75}, 1e-7);
  ExpectNear(Run1(MakeNode("GlobalMaxPool"), {F({1, 2, 2, 2}, x)}, Out({1, 2, 1, 1})), {4, 2}, 0);
}

TEST(ReferencePool, BadAttributesNameTheNode) {
  Node m = MakeNode("MaxPool", {{"kernel_shape", Ints{2}}});
  ExpectErrorNaming(PrepareOnly(m, {F({1, 1, 3, 3}, kX3x3)}, {Out({1, 1, 2, 2})}),
                    StatusCode::kInvalidArgument, "n_MaxPool", "kernel_shape");
  Node s = MakeNode("AveragePool", {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{0, 1}}});
  ExpectErrorNaming(PrepareOnly(s, {F({1, 1, 3, 3}, kX3x3)}, {Out({1, 1, 2, 2})}),
                    StatusCode::kInvalidArgument, "n_AveragePool", "positive");
  Node p = MakeNode("MaxPool", {{"kernel_shape", Ints{2, 2}}, {"pads", Ints{2, 0, 0, 0}}});
  ExpectErrorNaming(PrepareOnly(p, {F({1, 1, 3, 3}, kX3x3)}, {Out({1, 1, 4, 2})}),
                    StatusCode::kInvalidArgument, "n_MaxPool", "pads");
}

// ---------------------------------------------------------------- Gemm/MatMul

// A = [[1,2,3],[4,5,6]], B = [[1,0],[0,1],[1,1]]: AB = [[4,5],[10,11]].
const Floats kA = {1, 2, 3, 4, 5, 6}, kAt = {1, 4, 2, 5, 3, 6};
const Floats kB = {1, 0, 0, 1, 1, 1}, kBt = {1, 0, 1, 0, 1, 1};

TEST(ReferenceGemm, AllTransposeCombinations) {
  // alpha 2, beta 0.5, C [M,1] = [10, 20]: [[8+5, 10+5], [20+10, 22+10]].
  const std::vector<double> want = {13, 15, 30, 32};
  for (int64_t ta : {0, 1})
    for (int64_t tb : {0, 1}) {
      Node g = MakeNode("Gemm", {{"transA", ta}, {"transB", tb}, {"alpha", 2.0f}, {"beta", 0.5f}});
      ExpectNear(Run1(g, {F(ta ? Ints{3, 2} : Ints{2, 3}, ta ? kAt : kA),
                          F(tb ? Ints{2, 3} : Ints{3, 2}, tb ? kBt : kB, true),
                          F({2, 1}, {10, 20}, true)},
                      Out({2, 2})),
                 want, 1e-6);
    }
}

TEST(ReferenceGemm, CBroadcastKindsAndActivation) {
  Node g = MakeNode("Gemm");
  // scalar 1: [[5,6],[11,12]]; row [1,2]: [[5,7],[11,13]]; full.
  ExpectNear(Run1(g, {F({2, 3}, kA), F({3, 2}, kB), F({1}, {1})}, Out({2, 2})), {5, 6, 11, 12}, 0);
  ExpectNear(Run1(g, {F({2, 3}, kA), F({3, 2}, kB), F({2}, {1, 2})}, Out({2, 2})), {5, 7, 11, 13}, 0);
  ExpectNear(Run1(g, {F({2, 3}, kA), F({3, 2}, kB), F({1, 2}, {1, 2})}, Out({2, 2})), {5, 7, 11, 13}, 0);
  ExpectNear(Run1(g, {F({2, 3}, kA), F({3, 2}, kB), F({2, 2}, {-4, 0, 0, -20})}, Out({2, 2})),
             {0, 5, 10, -9}, 0);
  // Clip [4.5, 10.5] after the bias: [[4.5,5],[10,10.5]]
  Node clip = MakeNode("Gemm", {{"activation", std::string("Clip")}, {"activation_min", 4.5f},
                                {"activation_max", 10.5f}});
  ExpectNear(Run1(clip, {F({2, 3}, kA), F({3, 2}, kB)}, Out({2, 2})), {4.5, 5, 10, 10.5}, 0);
}

TEST(ReferenceGemm, BadShapesNameTheNode) {
  Node g = MakeNode("Gemm");
  ExpectErrorNaming(PrepareOnly(g, {F({2, 3}, kA), F({2, 3}, kB)}, {Out({2, 3})}),
                    StatusCode::kInvalidArgument, "n_Gemm", "inner dimensions");
  ExpectErrorNaming(PrepareOnly(g, {F({2, 3}, kA), F({3, 2}, kB), F({3}, {1, 2, 3})}, {Out({2, 2})}),
                    StatusCode::kInvalidArgument, "n_Gemm", "broadcast");
}

TEST(ReferenceMatMul, HandComputedAndVectors) {
  Node mm = MakeNode("MatMul");
  ExpectNear(Run1(mm, {F({2, 3}, kA), F({3, 2}, kB)}, Out({2, 2})), {4, 5, 10, 11}, 0);
  // [1,2,3] . [4,5,6] = 4 + 10 + 18 = 32, a scalar.
  ExpectNear(Run1(mm, {F({3}, {1, 2, 3}), F({3}, {4, 5, 6})}, Out({})), {32}, 0);
  // [1,2,3] x B = [1+3, 2+3]; A x [1,1] = [6, 15]
  ExpectNear(Run1(mm, {F({3}, {1, 2, 3}), F({3, 2}, kB)}, Out({2})), {4, 5}, 0);
  ExpectNear(Run1(mm, {F({2, 3}, kA), F({3}, {1, 1, 1})}, Out({2})), {6, 15}, 0);
  Node bad = MakeNode("MatMul");
  ExpectErrorNaming(PrepareOnly(bad, {F({2, 2, 3}, Random(12, 1)), F({3, 3, 2}, Random(18, 2))},
                                {Out({3, 2, 2})}),
                    StatusCode::kInvalidArgument, "n_MatMul", "batch");
}

TEST(ReferenceEinsum, EquationsMatchHandComputedValues) {
  const Floats a = {1, 2, 3, 4, 5, 6};  // [2, 3]
  const Floats b = {1, 0, 2, 1, 0, 3};  // [3, 2]
  auto run = [](const std::string& eq, std::vector<In> inputs, Ints out) {
    return Run1(MakeNode("Einsum", {{"equation", eq}}), inputs, Out(std::move(out)));
  };
  // Matrix product, with spaces and capitals as PyTorch writes them.
  // [1 2 3; 4 5 6] x [1 0; 2 1; 0 3] = [5 11; 14 23].
  ExpectNear(run("I K, K J -> I J", {F({2, 3}, a), F({3, 2}, b)}, {2, 2}), {5, 11, 14, 23}, 0);
  // Transpose, implicit output (letters used once, alphabetically): "ji" -> "ij".
  ExpectNear(run("ji", {F({2, 3}, a)}, {3, 2}), {1, 4, 2, 5, 3, 6}, 0);
  // Sum of everything, a diagonal (repeated label), an outer product.
  ExpectNear(run("ij->", {F({2, 3}, a)}, {}), {21}, 0);
  ExpectNear(run("ii->i", {F({2, 2}, {1, 2, 3, 4})}, {2}), {1, 4}, 0);
  ExpectNear(run("i,j->ij", {F({2}, {2, 3}), F({3}, {1, 2, 3})}, {2, 3}), {2, 4, 6, 3, 6, 9}, 0);
  // An ellipsis axis of extent 1 broadcasts: [2,1,2] x [1,2,2]... batched.
  ExpectNear(run("...ij,...jk->...ik",
                 {F({2, 1, 2}, {1, 2, 3, 4}), F({1, 2, 2}, {1, 0, 0, 1})}, {2, 1, 2}),
             {1, 2, 3, 4}, 0);
}

TEST(ReferenceEinsum, AttentionEquationMatchesNaiveLoops) {
  // MaxViT's "BGHID,BGHJD->BGHIJ" on random inputs against four loops.
  const int g = 2, h = 3, n = 4, d = 5;
  const Floats q = Random(g * h * n * d, 31), k = Random(g * h * n * d, 32);
  std::vector<double> want;
  for (int gi = 0; gi < g; ++gi)
    for (int hi = 0; hi < h; ++hi)
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
          double acc = 0;
          for (int e = 0; e < d; ++e)
            acc += static_cast<double>(q[static_cast<size_t>(((gi * h + hi) * n + i) * d + e)]) *
                   k[static_cast<size_t>(((gi * h + hi) * n + j) * d + e)];
          want.push_back(acc);
        }
  ExpectNear(Run1(MakeNode("Einsum", {{"equation", std::string("BGHID,BGHJD->BGHIJ")}}),
                  {F({1, g, h, n, d}, q), F({1, g, h, n, d}, k)}, Out({1, g, h, n, n})),
             want, 1e-6);
}

TEST(ReferenceEinsum, BadEquationsAreErrors) {
  auto prepare = [](const std::string& eq, std::vector<In> inputs) {
    return PrepareOnly(MakeNode("Einsum", {{"equation", eq}}), inputs, {Out({2})});
  };
  ExpectErrorNaming(prepare("ij,jk->ik", {F({2, 3}, Random(6, 1))}), StatusCode::kInvalidArgument,
                    "n_Einsum", "2 operands");
  ExpectErrorNaming(prepare("i1->i", {F({2, 3}, Random(6, 1))}), StatusCode::kInvalidArgument,
                    "n_Einsum", "not a letter");
  ExpectErrorNaming(prepare("ij->k", {F({2, 3}, Random(6, 1))}), StatusCode::kInvalidArgument,
                    "n_Einsum", "in no operand");
  ExpectErrorNaming(prepare("ijk->i", {F({2, 3}, Random(6, 1))}), StatusCode::kInvalidArgument,
                    "n_Einsum", "rank 2 for 3 letters");
}

TEST(ReferenceMatMul, BroadcastBatchesMatchNaiveIndexing) {
  // A [2,1,4,5] x B [1,3,5,6] -> [2,3,4,6]: batch (i, j) reads A[i,0] and B[0,j].
  const Floats a = Random(2 * 4 * 5, 21), b = Random(3 * 5 * 6, 22);
  std::vector<double> want;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 6; ++c) {
          double acc = 0;
          for (int k = 0; k < 5; ++k)
            acc += static_cast<double>(a[static_cast<size_t>(i * 20 + r * 5 + k)]) *
                   b[static_cast<size_t>(j * 30 + k * 6 + c)];
          want.push_back(acc);
        }
  Node mm = MakeNode("MatMul");
  std::vector<In> inputs = {F({2, 1, 4, 5}, a), F({1, 3, 5, 6}, b)};
  ExpectNear(Run1(mm, inputs, Out({2, 3, 4, 6})), want, 1e-6);
  Bound bound = Bind(mm, 17, inputs, {Out({2, 3, 4, 6})});
  StatusOr<MatMulParams> p = ParseMatMul(bound.args);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->a_offsets, (Ints{0, 0, 0, 20, 20, 20}));
  EXPECT_EQ(p->b_offsets, (Ints{0, 30, 60, 0, 30, 60}));
}

// ------------------------------------------------------------ normalizations

TEST(ReferenceNorm, BatchNormHandComputed) {
  // scale 2, B 1, mean 1, var 15, eps 1: y = 2 (x - 1) / 4 + 1 = (x + 1) / 2.
  // channel 1: scale 1, B 0, mean 0, var 3, eps 1: y = x / 2.
  Node bn = MakeNode("BatchNormalization", {{"epsilon", 1.0f}});
  ExpectNear(Run1(bn, {F({1, 2, 2}, {3, 5, 4, -6}), F({2}, {2, 1}), F({2}, {1, 0}), F({2}, {1, 0}),
                       F({2}, {15, 3})},
                  Out({1, 2, 2}), 15),
             {2, 3, 2, -3}, 1e-7);
  Node train = MakeNode("BatchNormalization", {{"training_mode", int64_t{1}}});
  EXPECT_EQ(PrepareOnly(train, {F({1, 2}, {1, 2}), F({2}, {1, 1}), F({2}, {0, 0}), F({2}, {0, 0}),
                                F({2}, {1, 1})},
                        {Out({1, 2})}, 15)
                .code(),
            StatusCode::kUnimplemented);
}

TEST(ReferenceNorm, LayerNormHandComputedWithStatistics) {
  // row [1,2,3,4]: mean 2.5, variance (2.25+0.25+0.25+2.25)/4 = 1.25,
  // inv_std = 1/sqrt(1.25) = 0.8944272; normalized [-1.5,-.5,.5,1.5] * 0.8944272
  // = [-1.3416408, -0.4472136, 0.4472136, 1.3416408]; scale [1,1,2,2] and
  // bias [0,0,0,1] -> [-1.3416408, -0.4472136, 0.8944272, 3.6832816].
  Node ln = MakeNode("LayerNormalization", {{"epsilon", 0.0f}});
  auto r = RunReference(ln, 17, {F({1, 4}, {1, 2, 3, 4}), F({4}, {1, 1, 2, 2}), F({4}, {0, 0, 0, 1})},
                        {Out({1, 4}), Out({1, 1}), Out({1, 1})});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectNear((*r)[0], {-1.3416408, -0.4472136, 0.8944272, 3.6832816}, 1e-6);
  ExpectNear((*r)[1], {2.5}, 1e-7);
  ExpectNear((*r)[2], {0.8944272}, 1e-6);
}

TEST(ReferenceNorm, LayerNormRowsHaveZeroMeanUnitVariance) {
  // axis 1 of [3,4,5]: each of the 3 rows of 20 elements normalizes to mean 0,
  // variance 1 (eps 1e-6 against a variance ~ 1/3 changes it by ~3e-6).
  const Floats x = Random(60, 31, -3.0f, 3.0f);
  Node ln = MakeNode("LayerNormalization", {{"axis", int64_t{1}}, {"epsilon", 1e-6f}});
  const auto y = Run1(ln, {F({3, 4, 5}, x), F({4, 5}, Floats(20, 1.0f))}, Out({3, 4, 5}));
  ASSERT_EQ(y.size(), 60u);
  for (int row = 0; row < 3; ++row) {
    double mean = 0, var = 0;
    for (int i = 0; i < 20; ++i) mean += y[static_cast<size_t>(row * 20 + i)] / 20;
    for (int i = 0; i < 20; ++i) var += std::pow(y[static_cast<size_t>(row * 20 + i)] - mean, 2) / 20;
    EXPECT_NEAR(mean, 0.0, 1e-6);
    EXPECT_NEAR(var, 1.0, 1e-4);
  }
  // Broadcast scale [1,5] against normalized [4,5]: y = scale[i % 5] * norm.
  const Floats s = Random(5, 32);
  const auto ys = Run1(ln, {F({3, 4, 5}, x), F({1, 5}, s)}, Out({3, 4, 5}));
  for (size_t i = 0; i < 60; ++i) EXPECT_NEAR(ys[i], y[i] * s[i % 5], 1e-5);
  Node bad = MakeNode("LayerNormalization", {{"axis", int64_t{3}}});
  ExpectErrorNaming(PrepareOnly(bad, {F({3, 4, 5}, x), F({5}, s)}, {Out({3, 4, 5})}),
                    StatusCode::kInvalidArgument, "n_LayerNormalization", "axis 3");
}

TEST(ReferenceSoftmax, HandComputedAndStable) {
  // [1,2,3]: exp(-2), exp(-1), 1 = 0.1353353, 0.3678794, 1; sum 1.5032147
  // -> 0.0900306, 0.2447285, 0.6652410. [1000,1001] -> 1/(1+e), e/(1+e).
  Node sm = MakeNode("Softmax");
  ExpectNear(Run1(sm, {F({1, 3}, {1, 2, 3})}, Out({1, 3})), {0.0900306, 0.2447285, 0.6652410}, 1e-6);
  ExpectNear(Run1(sm, {F({2}, {1000, 1001})}, Out({2})), {0.2689414, 0.7310586}, 1e-6);
}

TEST(ReferenceSoftmax, OpsetSemanticsDiffer) {
  // [2,3,4], axis 1: opset 13 normalizes each of 2*4 columns of 3 elements;
  // opset 11 normalizes each of 2 blocks of 12 elements.
  const Floats x = Random(24, 41, -2.0f, 2.0f);
  Node sm = MakeNode("Softmax", {{"axis", int64_t{1}}});
  const auto y13 = Run1(sm, {F({2, 3, 4}, x)}, Out({2, 3, 4}), 13);
  const auto y11 = Run1(sm, {F({2, 3, 4}, x)}, Out({2, 3, 4}), 11);
  for (int b = 0; b < 2; ++b) {
    double block = 0;
    for (int i = 0; i < 12; ++i) block += y11[static_cast<size_t>(b * 12 + i)];
    EXPECT_NEAR(block, 1.0, 1e-6);
    for (int col = 0; col < 4; ++col) {
      double sum = 0;
      for (int a = 0; a < 3; ++a) sum += y13[static_cast<size_t>(b * 12 + a * 4 + col)];
      EXPECT_NEAR(sum, 1.0, 1e-6);
    }
  }
  // Independent check of one opset-13 element: exp(x0) / sum over the column.
  const double d = std::exp(x[0]) + std::exp(x[4]) + std::exp(x[8]);
  EXPECT_NEAR(y13[0], std::exp(x[0]) / d, 1e-6);
  Node bad = MakeNode("Softmax", {{"axis", int64_t{3}}});
  ExpectErrorNaming(PrepareOnly(bad, {F({2, 3, 4}, x)}, {Out({2, 3, 4})}, 13),
                    StatusCode::kInvalidArgument, "n_Softmax", "axis 3");
}

// ---------------------------------------------------------------- reductions

TEST(ReferenceReduce, HandComputed) {
  const Floats x = {1, 2, 3, 4, 5, 6};  // [[1,2,3],[4,5,6]]
  // sum over axis 0: [5,7,9]; mean over axis 1: [2,5]; max over all: 6.
  ExpectNear(Run1(MakeNode("ReduceSum", {{"keepdims", int64_t{0}}}), {F({2, 3}, x), I64({1}, {0})},
                  Out({3}), 13),
             {5, 7, 9}, 0);
  ExpectNear(Run1(MakeNode("ReduceMean", {{"axes", Ints{1}}}), {F({2, 3}, x)}, Out({2, 1}), 13),
             {2, 5}, 0);
  ExpectNear(Run1(MakeNode("ReduceMax", {{"keepdims", int64_t{0}}}), {F({2, 3}, x)}, Out({}), 13),
             {6}, 0);
  // noop_with_empty_axes copies; integer sum over axis 1 of [[1,-2],[3,4]] = [-1, 7].
  ExpectNear(Run1(MakeNode("ReduceSum", {{"noop_with_empty_axes", int64_t{1}}}), {F({2, 3}, x)},
                  Out({2, 3}), 13),
             {1, 2, 3, 4, 5, 6}, 0);
  ExpectNear(Run1(MakeNode("ReduceSum"), {I64({2, 2}, {1, -2, 3, 4}, false), I64({1}, {1})},
                  Out({2, 1}, DataType::kI64), 13),
             {-1, 7}, 0);
}

TEST(ReferenceReduce, NormsProductsAndLogs) {
  const Floats x = {3, -4, 1, 2};  // [[3,-4],[1,2]], reduced over axis 1
  auto run = [&](const char* op) {
    return Run1(MakeNode(op, {{"axes", Ints{1}}, {"keepdims", int64_t{0}}}), {F({2, 2}, x)},
                Out({2}), 13);
  };
  ExpectNear(run("ReduceL1"), {7, 3}, 0);
  ExpectNear(run("ReduceL2"), {5, std::sqrt(5.0)}, 1e-6);
  ExpectNear(run("ReduceSumSquare"), {25, 5}, 0);
  ExpectNear(run("ReduceProd"), {-12, 2}, 0);
  ExpectNear(run("ReduceMin"), {-4, 1}, 0);
  // log(e^3 + e^-4) and log(e + e^2); large values must not overflow.
  ExpectNear(run("ReduceLogSumExp"), {std::log(std::exp(3.0) + std::exp(-4.0)),
                                      std::log(std::exp(1.0) + std::exp(2.0))}, 1e-6);
  ExpectNear(Run1(MakeNode("ReduceLogSumExp", {{"keepdims", int64_t{0}}}), {F({2}, {1000, 1000})},
                  Out({}), 13),
             {1000 + std::log(2.0)}, 1e-6);
  ExpectNear(Run1(MakeNode("ReduceLogSum", {{"keepdims", int64_t{0}}}), {F({3}, {1, 2, 5})},
                  Out({}), 13),
             {std::log(8.0)}, 1e-6);
  // Integer product and L1; the logs and L2 are f32 only.
  ExpectNear(Run1(MakeNode("ReduceProd", {{"keepdims", int64_t{0}}}),
                  {I64({3}, {2, -3, 4}, false)}, Out({}, DataType::kI64), 13),
             {-24}, 0);
  ExpectErrorNaming(PrepareOnly(MakeNode("ReduceL2"), {I64({3}, {2, -3, 4}, false)},
                                {Out({1}, DataType::kI64)}),
                    StatusCode::kUnimplemented, "n_ReduceL2", "i64");
}

TEST(ReferenceSoftmax, LogSoftmaxAndHardmaxHandComputed) {
  // log(e^-2 + e^-1 + 1) = log(1.5032147) = 0.4076060, so x - 3 - 0.4076060.
  ExpectNear(Run1(MakeNode("LogSoftmax"), {F({1, 3}, {1, 2, 3})}, Out({1, 3})),
             {-2.4076060, -1.4076060, -0.4076060}, 1e-6);
  // Large inputs do not overflow: log(1 + e^-1) = 0.3132617.
  ExpectNear(Run1(MakeNode("LogSoftmax"), {F({2}, {1000, 1001})}, Out({2})), {-1.3132617, -0.3132617},
             1e-6);
  // Opset 11 coerces [2, 2] at axis 0 into one row of 4: log(1/4) each.
  ExpectNear(Run1(MakeNode("LogSoftmax", {{"axis", int64_t{0}}}), {F({2, 2}, {0.5, 0.5, 0.5, 0.5})},
                  Out({2, 2}), 11),
             {-1.3862944, -1.3862944, -1.3862944, -1.3862944}, 1e-6);
  // Hardmax: 1 at the first maximum of each row.
  ExpectNear(Run1(MakeNode("Hardmax"), {F({2, 3}, {1, 3, 3, -1, -2, -3})}, Out({2, 3})),
             {0, 1, 0, 1, 0, 0}, 0);
  // Opset 11, axis 1 of [2, 1, 2]: each sample's 2 values form one row.
  ExpectNear(Run1(MakeNode("Hardmax", {{"axis", int64_t{1}}}), {F({2, 1, 2}, {4, 2, 3, 8})},
                  Out({2, 1, 2}), 11),
             {1, 0, 0, 1}, 0);
}

TEST(ReferenceLoss, NegativeLogLikelihoodReductionsWeightsAndIgnoredClasses) {
  // log-probabilities [[-1, -2, -3], [-4, -5, -6]], targets [2, 0]: losses 3 and 4.
  const In input = F({2, 3}, {-1, -2, -3, -4, -5, -6});
  const In target = I64({2}, {2, 0}, false);
  auto nll = [](std::vector<std::pair<std::string, AttributeValue>> attrs) {
    return MakeNode("NegativeLogLikelihoodLoss", std::move(attrs));
  };
  ExpectNear(Run1(nll({{"reduction", std::string("none")}}), {input, target}, Out({2})), {3, 4}, 1e-6);
  ExpectNear(Run1(nll({{"reduction", std::string("sum")}}), {input, target}, Out({})), {7}, 1e-6);
  ExpectNear(Run1(nll({}), {input, target}, Out({})), {3.5}, 1e-6);  // mean by default
  // Weights [0.5, 1, 2]: losses 3 * 2 and 4 * 0.5; mean = 8 / (2 + 0.5) = 3.2.
  const In weight = F({3}, {0.5, 1, 2});
  ExpectNear(Run1(nll({{"reduction", std::string("none")}}), {input, target, weight}, Out({2})), {6, 2},
             1e-6);
  ExpectNear(Run1(nll({}), {input, target, weight}, Out({})), {3.2}, 1e-6);
  // ignore_index 0 drops the second element from the loss and from the mean's count.
  ExpectNear(Run1(nll({{"reduction", std::string("none")}, {"ignore_index", int64_t{0}}}), {input, target},
                  Out({2})),
             {3, 0}, 1e-6);
  ExpectNear(Run1(nll({{"ignore_index", int64_t{0}}}), {input, target}, Out({})), {3}, 1e-6);
  // [N, C, D] = [1, 2, 2] with i32 targets [1, 0]: -x[0, 1, 0] and -x[0, 0, 1].
  ExpectNear(Run1(nll({{"reduction", std::string("none")}}),
                  {F({1, 2, 2}, {-1, -2, -3, -4}), I32({1, 2}, {1, 0})}, Out({1, 2})),
             {3, 2}, 1e-6);
  auto bad = RunReference(nll({}), 17, {input, I64({2}, {3, 0}, false)}, {Out({})});
  ASSERT_FALSE(bad.ok());
  ExpectErrorNaming(bad.status(), StatusCode::kInvalidArgument, "n_NegativeLogLikelihoodLoss",
                    "target 3 at [0, 0] is outside [0, 3)");
}

TEST(ReferenceLoss, SoftmaxCrossEntropyIsLogSoftmaxThenNll) {
  // One sample of scores [1, 2, 3], label 2: loss = -log_softmax[2] = 0.4076060.
  auto sce = RunReference(MakeNode("SoftmaxCrossEntropyLoss"), 17, {F({1, 3}, {1, 2, 3}), I64({1}, {2}, false)},
                          {Out({}), Out({1, 3})});
  ASSERT_TRUE(sce.ok()) << sce.status().ToString();
  ExpectNear((*sce)[0], {0.4076060}, 1e-6);
  ExpectNear((*sce)[1], {-2.4076060, -1.4076060, -0.4076060}, 1e-6);
  // [N, C, D] = [1, 2, 2]: classes (0, 1) at d0 and (0, 0) at d1; labels [1, 0].
  // log_softmax: d0 (-1.3132617, -0.3132617), d1 (-0.6931472, -0.6931472).
  const Node none = MakeNode("SoftmaxCrossEntropyLoss", {{"reduction", std::string("none")}});
  auto spatial = RunReference(none, 17, {F({1, 2, 2}, {0, 0, 1, 0}), I64({1, 2}, {1, 0}, false)},
                              {Out({1, 2}), Out({1, 2, 2})});
  ASSERT_TRUE(spatial.ok()) << spatial.status().ToString();
  ExpectNear((*spatial)[0], {0.3132617, 0.6931472}, 1e-6);
  ExpectNear((*spatial)[1], {-1.3132617, -0.6931472, -0.3132617, -0.6931472}, 1e-6);
  // Without the log_prob output the log-softmax goes to the workspace; weights apply.
  ExpectNear(Run1(MakeNode("SoftmaxCrossEntropyLoss", {{"reduction", std::string("sum")}}),
                  {F({1, 2, 2}, {0, 0, 1, 0}), I64({1, 2}, {1, 0}, false), F({2}, {2, 3})}, Out({})),
             {0.3132617 * 3 + 0.6931472 * 2}, 1e-6);
}

TEST(ReferenceNorm, InstanceNormHandComputed) {
  // One plane [1, 2, 3, 6]: mean 3, population variance 3.5; scale 2, B 1.
  const double inv = 1.0 / std::sqrt(3.5 + 1e-5);
  std::vector<double> want;
  for (double v : {1.0, 2.0, 3.0, 6.0}) want.push_back(2 * (v - 3) * inv + 1);
  ExpectNear(Run1(MakeNode("InstanceNormalization"), {F({1, 1, 4}, {1, 2, 3, 6}), F({1}, {2}), F({1}, {1})},
                  Out({1, 1, 4}), 6),
             want, 1e-6);
  ExpectErrorNaming(PrepareOnly(MakeNode("InstanceNormalization"), {F({1, 2, 4}, Random(8, 3)), F({3}, {1, 1, 1}),
                                                                  F({2}, {0, 0})},
                                {Out({1, 2, 4})}),
                    StatusCode::kInvalidArgument, "n_InstanceNormalization", "scale");
}

TEST(ReferenceNorm, GroupNormHandComputed) {
  // Two groups of two channels: {1, 3, 5, 7} (mean 4, variance 5) and
  // {2, 2, 4, 8} (mean 4, variance 6); per-channel scale and bias (opset 21).
  const double a = 1 / std::sqrt(5.0 + 1e-5), b = 1 / std::sqrt(6.0 + 1e-5);
  const std::vector<double> want = {-3 * a, -1 * a, 2 * a, 6 * a, 1 - 2 * b, 1 - 2 * b, 0, 4 * b};
  const Node node = MakeNode("GroupNormalization", {{"num_groups", int64_t{2}}});
  ExpectNear(Run1(node, {F({1, 4, 2}, {1, 3, 5, 7, 2, 2, 4, 8}), F({4}, {1, 2, 1, 1}), F({4}, {0, 0, 1, 0})},
                  Out({1, 4, 2}), 21),
             want, 1e-6);
  // Opset 18's per-group parameters: group 0 scaled by 2, group 1 shifted by 1.
  const std::vector<double> want_per_group = {-6 * a, -2 * a, 2 * a, 6 * a, 1 - 2 * b, 1 - 2 * b, 1, 1 + 4 * b};
  ExpectNear(Run1(node, {F({1, 4, 2}, {1, 3, 5, 7, 2, 2, 4, 8}), F({2}, {2, 1}), F({2}, {0, 1})}, Out({1, 4, 2}), 18),
             want_per_group, 1e-6);
  ExpectErrorNaming(PrepareOnly(MakeNode("GroupNormalization", {{"num_groups", int64_t{3}}}),
                                {F({1, 4, 2}, Random(8, 3)), F({4}, {1, 1, 1, 1}), F({4}, {0, 0, 0, 0})},
                                {Out({1, 4, 2})}),
                    StatusCode::kInvalidArgument, "n_GroupNormalization", "num_groups");
}

TEST(ReferenceNorm, LRNSumsSquaresOverAClippedChannelWindow) {
  // x = [1, 2, 3] over channels; alpha / size = 1, beta 1, bias 1.
  // size 3 (1 below, 1 above): sums 1+4, 1+4+9, 4+9 -> 1/6, 2/15, 3/14.
  ExpectNear(Run1(MakeNode("LRN", {{"size", int64_t{3}}, {"alpha", 3.0f}, {"beta", 1.0f}}),
                  {F({1, 3, 1, 1}, {1, 2, 3})}, Out({1, 3, 1, 1}), 13),
             {1.0 / 6, 2.0 / 15, 3.0 / 14}, 1e-6);
  // size 2 (0 below, 1 above): 1+4, 4+9, 9 -> 1/6, 2/14, 3/10; beta 0.5 takes square roots.
  ExpectNear(Run1(MakeNode("LRN", {{"size", int64_t{2}}, {"alpha", 2.0f}, {"beta", 0.5f}}),
                  {F({1, 3, 1, 1}, {1, 2, 3})}, Out({1, 3, 1, 1}), 13),
             {1 / std::sqrt(6.0), 2 / std::sqrt(14.0), 3 / std::sqrt(10.0)}, 1e-6);
  ExpectErrorNaming(PrepareOnly(MakeNode("LRN"), {F({1, 3, 1, 1}, {1, 2, 3})}, {Out({1, 3, 1, 1})}),
                    StatusCode::kInvalidArgument, "n_LRN", "size 0 must be positive");
}

TEST(ReferenceNorm, MeanVarianceNormalizationPerKeptCoordinate) {
  // Default axes [0, 2, 3]: one group per channel. Channel 0 = [1, 3] (mean 2,
  // std 1), channel 1 = [2, 6] (mean 4, std 2): both become [-1, 1].
  ExpectNear(Run1(MakeNode("MeanVarianceNormalization"), {F({1, 2, 1, 2}, {1, 3, 2, 6})},
                  Out({1, 2, 1, 2}), 13),
             {-1, 1, -1, 1}, 1e-6);
  // Axes [1]: [1, 2, 3, 6] across four channels, mean 3, population variance 3.5.
  const double sigma = std::sqrt(3.5);
  ExpectNear(Run1(MakeNode("MeanVarianceNormalization", {{"axes", Ints{1}}}),
                  {F({1, 4, 1, 1}, {1, 2, 3, 6})}, Out({1, 4, 1, 1}), 13),
             {-2 / sigma, -1 / sigma, 0, 3 / sigma}, 1e-6);
  ExpectErrorNaming(PrepareOnly(MakeNode("MeanVarianceNormalization", {{"axes", Ints{4}}}),
                                {F({1, 4, 1, 1}, {1, 2, 3, 6})}, {Out({1, 4, 1, 1})}),
                    StatusCode::kInvalidArgument, "n_MeanVarianceNormalization", "axes entry 4");
}

TEST(ReferenceGridSample, ModesPaddingsAndAlignCorners) {
  // X = [[1, 2], [3, 4]]; grid points (x, y).
  const In x = F({1, 1, 2, 2}, {1, 2, 3, 4});
  auto sample = [&x](std::vector<std::pair<std::string, AttributeValue>> attrs, Floats grid) {
    const int64_t points = static_cast<int64_t>(grid.size()) / 2;
    return Run1(MakeNode("GridSample", std::move(attrs)), {x, F({1, 1, points, 2}, std::move(grid))},
                Out({1, 1, 1, points}), 16);
  };
  // Bilinear, align_corners 0: (0, 0) is pixel (0.5, 0.5), the mean; (-1, -1)
  // is (-0.5, -0.5), a quarter of pixel 1 and zeros; (1, 1) a quarter of 4.
  ExpectNear(sample({}, {0, 0, -1, -1, 1, 1}), {2.5, 0.25, 1.0}, 1e-6);
  // Border padding repeats the edge: (-1, -1) is pixel 1 itself.
  ExpectNear(sample({{"padding_mode", std::string("border")}}, {-1, -1}), {1.0}, 1e-6);
  // align_corners 1: (1, -1) is pixel (x 1, y 0) exactly.
  ExpectNear(sample({{"align_corners", int64_t{1}}}, {0, 0, 1, -1}), {2.5, 2.0}, 1e-6);
  // Nearest: (0.2, -0.6) -> (0.7, -0.1) rounds to (1, 0); (-0.5, 0.5) -> (0, 1).
  ExpectNear(sample({{"mode", std::string("nearest")}}, {0.2f, -0.6f, -0.5f, 0.5f}), {2.0, 3.0}, 1e-6);
  // Reflection: x 1.5 -> 2.0 reflects about 1.5 to 1.0; y 0.5 -> (2 + 4) / 2.
  ExpectNear(sample({{"padding_mode", std::string("reflection")}}, {1.5f, 0}), {3.0}, 1e-6);
  // Bicubic at (0.5, 0.5): Keys' weights (-0.09375, 0.59375, 0.59375, -0.09375);
  // with zeros only the inner 2x2 taps count: 0.59375^2 * (1 + 2 + 3 + 4).
  ExpectNear(sample({{"mode", std::string("bicubic")}}, {0, 0}), {0.59375 * 0.59375 * 10}, 1e-6);
  ExpectNear(sample({{"mode", std::string("bicubic")}, {"padding_mode", std::string("border")}}, {0, 0}),
             {2.5}, 1e-6);
  ExpectErrorNaming(PrepareOnly(MakeNode("GridSample", {{"mode", std::string("area")}}),
                                {x, F({1, 1, 1, 2}, {0, 0})}, {Out({1, 1, 1, 1})}, 16),
                    StatusCode::kInvalidArgument, "n_GridSample", "mode 'area'");
}

TEST(ReferenceReduce, NonContiguousAxesMatchNaiveLoop) {
  // [2,3,4] over axes {0,2} -> [1,3,1]: out[j] = sum_{i,k} x[i][j][k].
  const Floats x = Random(24, 51);
  std::vector<double> want(3, 0.0);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) want[static_cast<size_t>(j)] += x[static_cast<size_t>(i * 12 + j * 4 + k)];
  ExpectNear(Run1(MakeNode("ReduceSum"), {F({2, 3, 4}, x), I64({2}, {2, 0})}, Out({1, 3, 1}), 13),
             want, 1e-6);
  for (double& w : want) w /= 8;
  ExpectNear(Run1(MakeNode("ReduceMean", {{"axes", Ints{0, -1}}}), {F({2, 3, 4}, x)}, Out({1, 3, 1}), 13),
             want, 1e-6);
}

TEST(ReferenceReduce, BadAxesNameTheNode) {
  const Floats x = Random(6, 3);
  ExpectErrorNaming(PrepareOnly(MakeNode("ReduceMean", {{"axes", Ints{2}}}), {F({2, 3}, x)}, {Out({2, 3})}),
                    StatusCode::kInvalidArgument, "n_ReduceMean", "axis 2");
  ExpectErrorNaming(PrepareOnly(MakeNode("ReduceMax", {{"axes", Ints{1, -1}}}), {F({2, 3}, x)}, {Out({2, 1})}),
                    StatusCode::kInvalidArgument, "n_ReduceMax", "repeat");
  // Axes computed at run time: the output shape is not static.
  ExpectErrorNaming(PrepareOnly(MakeNode("ReduceSum"), {F({2, 3}, x), I64({1}, {1}, false)},
                                {Out({2, 1})}, 13),
                    StatusCode::kUnimplemented, "n_ReduceSum", "constant");
  ExpectErrorNaming(PrepareOnly(MakeNode("ReduceSum"), {F({2, 3}, x), Missing()}, {Out({2, 1})}, 13),
                    StatusCode::kInvalidArgument, "n_ReduceSum", "output");
}

// ------------------------------------------------- quantized products

In U8(Ints dims, Ints v, bool constant = true) {
  return In{{DataType::kU8, std::move(dims)}, {}, std::move(v), constant};
}
In S8(Ints dims, Ints v, bool constant = true) {
  return In{{DataType::kI8, std::move(dims)}, {}, std::move(v), constant};
}
In Sc(Ints dims, Floats v) { return F(std::move(dims), std::move(v), true); }

TEST(ReferenceQuantized, QLinearMatMulPerColumnScaleRoundsHalfToEven) {
  // a - 1 = [[2, 4], [6, 8]]; b = [[1, -2], [3, 4]]:
  // acc = [[2+12, -4+16], [6+24, -12+32]] = [[14, 12], [30, 20]];
  // multipliers a_scale * b_scale / y_scale = [0.5*0.25, 0.5*0.5] = [0.125, 0.25]
  // (per column): [[1.75, 3], [3.75, 5]] -> round [[2, 3], [4, 5]] + 10.
  const std::vector<In> in = {U8({2, 2}, {3, 5, 7, 9}, false), Sc({}, {0.5f}), U8({}, {1}),
                              S8({2, 2}, {1, -2, 3, 4}), Sc({2}, {0.25f, 0.5f}), S8({2}, {0, 0}),
                              Sc({}, {1.0f}), U8({}, {10})};
  ExpectNear(Run1(MakeNode("QLinearMatMul"), in, Out({2, 2}, DataType::kU8), 13), {12, 13, 14, 15}, 0);
  // y_scale 0.25: multipliers [0.5, 1]: [[7, 12], [15, 20]] with zero point 0.
  std::vector<In> tie = in;
  tie[6] = Sc({}, {0.25f});
  tie[7] = U8({}, {0});
  ExpectNear(Run1(MakeNode("QLinearMatMul"), tie, Out({2, 2}, DataType::kU8), 13), {7, 12, 15, 20}, 0);
  // Saturation: y_zp 250 pushes every value past 255.
  tie[7] = U8({}, {250});
  ExpectNear(Run1(MakeNode("QLinearMatMul"), tie, Out({2, 2}, DataType::kU8), 13),
             {255, 255, 255, 255}, 0);
  // Ties: b_scale 0.25 for both columns, multiplier 0.125:
  // [[1.75, 1.5], [3.75, 2.5]] -> [[2, 2], [4, 2]] (1.5 up, 2.5 down: half to even).
  std::vector<In> halves = in;
  halves[4] = Sc({2}, {0.25f, 0.25f});
  halves[7] = U8({}, {0});
  ExpectNear(Run1(MakeNode("QLinearMatMul"), halves, Out({2, 2}, DataType::kU8), 13), {2, 2, 4, 2}, 0);
}

TEST(ReferenceQuantized, ConvIntegerSubtractsZeroPoints) {
  // x - 1 = 0..8 in a 3x3 plane; a 2x2 kernel of ones (w - 0): window sums
  // 0+1+3+4 = 8, 1+2+4+5 = 12, 3+4+6+7 = 20, 4+5+7+8 = 24.
  const std::vector<In> in = {U8({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}, false), U8({1, 1, 2, 2}, {1, 1, 1, 1}),
                              U8({}, {1})};
  ExpectNear(Run1(MakeNode("ConvInteger"), in, Out({1, 1, 2, 2}, DataType::kI32), 10), {8, 12, 20, 24}, 0);
  // Padding holds the zero point: with pads 1, the corner output reads only
  // x[0][0] - 1 = 0 plus three padded taps, 0 in total.
  auto padded = Run1(MakeNode("ConvInteger", {{"pads", Ints{1, 1, 1, 1}}}), in,
                     Out({1, 1, 4, 4}, DataType::kI32), 10);
  ASSERT_EQ(padded.size(), 16u);
  EXPECT_EQ(padded[0], 0);
  EXPECT_EQ(padded[5], 8);   // the unpadded first window
  EXPECT_EQ(padded[15], 8);  // x[2][2] - 1 alone
  // A per-output-channel weight zero point: w - [1, 0] gives kernels of 0
  // and of 1.
  const std::vector<In> per_channel = {in[0], U8({2, 1, 2, 2}, {1, 1, 1, 1, 1, 1, 1, 1}), U8({}, {1}),
                                       U8({2}, {1, 0})};
  ExpectNear(Run1(MakeNode("ConvInteger"), per_channel, Out({1, 2, 2, 2}, DataType::kI32), 10),
             {0, 0, 0, 0, 8, 12, 20, 24}, 0);
}

TEST(ReferenceQuantized, MatMulIntegerPerRowZeroPoint) {
  // a - [1, 4] per row = [[0, 1, 2], [0, 1, 2]]; b - 2 = [[-1], [0], [3]]:
  // 0 + 0 + 6 = 6 for both rows.
  const std::vector<In> in = {U8({2, 3}, {1, 2, 3, 4, 5, 6}, false), U8({3, 1}, {1, 2, 5}),
                              U8({2}, {1, 4}), U8({}, {2})};
  ExpectNear(Run1(MakeNode("MatMulInteger"), in, Out({2, 1}, DataType::kI32), 10), {6, 6}, 0);
}

TEST(ReferenceQuantized, DynamicQuantizeLinearRangeIncludesZero) {
  // min(0, min x) = 0, max = 5.1: scale 5.1 / 255 = 0.02, zero point 0;
  // x / scale = [25, 255, 127.5 -> 128 (half to even), 50].
  auto r = RunReference(MakeNode("DynamicQuantizeLinear"), 11, {F({4}, {0.5f, 5.1f, 2.55f, 1.0f})},
                        {Out({4}, DataType::kU8), Out({}), Out({}, DataType::kU8)});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NEAR((*r)[1][0], 0.02, 1e-7);
  EXPECT_EQ((*r)[2][0], 0);
  ExpectNear((*r)[0], {25, 255, 128, 50}, 0);
  // All zeros: range 0, scale 1 (as ONNX Runtime) instead of a division by 0.
  r = RunReference(MakeNode("DynamicQuantizeLinear"), 11, {F({2}, {0.0f, 0.0f})},
                   {Out({2}, DataType::kU8), Out({}), Out({}, DataType::kU8)});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[1][0], 1.0);
  ExpectNear((*r)[0], {0, 0}, 0);
}

TEST(ReferenceQuantized, BadParametersNameTheNode) {
  const std::vector<In> good = {U8({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}, false), Sc({}, {0.5f}),
                                U8({}, {1}), S8({2, 1, 2, 2}, {1, 1, 1, 1, 1, 1, 1, 1}),
                                Sc({2}, {0.1f, 0.2f}), S8({2}, {0, 0}), Sc({}, {1.0f}), U8({}, {0})};
  const TensorDesc out = Out({1, 2, 2, 2}, DataType::kU8);
  EXPECT_TRUE(PrepareOnly(MakeNode("QLinearConv"), good, {out}, 10).ok());
  std::vector<In> bad = good;
  bad[1] = Sc({}, {0.0f});
  ExpectErrorNaming(PrepareOnly(MakeNode("QLinearConv"), bad, {out}, 10), StatusCode::kInvalidArgument,
                    "n_QLinearConv", "a_scale 0.0");
  bad = good;
  bad[4] = Sc({2}, {0.1f, -0.2f});
  ExpectErrorNaming(PrepareOnly(MakeNode("QLinearConv"), bad, {out}, 10), StatusCode::kInvalidArgument,
                    "n_QLinearConv", "not a finite positive scale");
  bad = good;
  bad[4] = Sc({3}, {0.1f, 0.2f, 0.3f});  // 3 scales for 2 output channels
  ExpectErrorNaming(PrepareOnly(MakeNode("QLinearConv"), bad, {out}, 10), StatusCode::kInvalidArgument,
                    "n_QLinearConv", "mismatched axis");
  bad = good;
  bad[2] = S8({}, {1});  // an int8 zero point for uint8 data
  ExpectErrorNaming(PrepareOnly(MakeNode("QLinearConv"), bad, {out}, 10), StatusCode::kInvalidArgument,
                    "n_QLinearConv", "a_zero_point");
  bad = good;
  bad[5] = S8({2, 1}, {0, 0});  // not 1-D
  ExpectErrorNaming(PrepareOnly(MakeNode("QLinearConv"), bad, {out}, 10), StatusCode::kInvalidArgument,
                    "n_QLinearConv", "b_zero_point");
  // Float data is not quantized: declined (Unimplemented) naming the node.
  bad = good;
  bad[0] = F({1, 1, 3, 3}, Random(9, 5));
  ExpectErrorNaming(PrepareOnly(MakeNode("QLinearConv"), bad, {out}, 10), StatusCode::kUnimplemented,
                    "n_QLinearConv", "int8 and uint8");
  // Geometry errors are ParseConv's, naming the node.
  bad = good;
  bad[3] = S8({2, 2, 2, 2}, Ints(16, 1));
  ExpectErrorNaming(PrepareOnly(MakeNode("QLinearConv"), bad, {out}, 10), StatusCode::kInvalidArgument,
                    "n_QLinearConv", "input channels");
}

// ------------------------------------------------- ONNX backend node cases

namespace fs = std::filesystem;


In ToIn(const TensorAttr& t, bool constant) {
  In in{{t.dtype, t.dims}, {}, {}, constant};
  const auto n = static_cast<size_t>(in.desc.elements());
  for (size_t i = 0; i < n; ++i) {
    switch (t.dtype) {
      case DataType::kF32: in.f.push_back(t.data.as<float>()[i]); break;
      case DataType::kI64: in.ints.push_back(t.data.as<int64_t>()[i]); break;
      case DataType::kI32: in.ints.push_back(t.data.as<int32_t>()[i]); break;
      case DataType::kU8: in.ints.push_back(t.data.as<uint8_t>()[i]); break;
      case DataType::kI8: in.ints.push_back(t.data.as<int8_t>()[i]); break;
      default: break;
    }
  }
  return in;
}

// The libonnx-testdata node cases of the compute ops, found by prefix; the
// excluded ones need what the reference kernels leave Unimplemented.
std::vector<std::string> OnnxComputeCases() {
  std::vector<std::string> names;
  const fs::path root = fs::path(BRAID_ONNX_TESTDATA_DIR) / "node";
  if (!fs::exists(root)) return names;
  const char* const prefixes[] = {"test_conv_", "test_basic_conv_", "test_maxpool_", "test_averagepool_",
                                  "test_globalaveragepool", "test_globalmaxpool", "test_gemm_",
                                  "test_matmul_", "test_batchnorm_", "test_layer_normalization_",
                                  "test_softmax_", "test_reduce_sum_", "test_reduce_mean_",
                                  "test_reduce_max_", "test_basic_convinteger", "test_convinteger_",
                                  "test_matmulinteger", "test_qlinearconv", "test_qlinearmatmul_",
                                  "test_dynamicquantizelinear", "test_rnn_", "test_simple_rnn_", "test_gru_",
                                  "test_lstm_", "test_det_", "test_maxunpool_", "test_roialign_"};
  const char* const excluded[] = {"expanded", "training_mode", "with_argmax", "reduce_sum_square"};
  for (const auto& entry : fs::directory_iterator(root)) {
    const std::string name = entry.path().filename().string();
    bool match = false;
    for (const char* p : prefixes) match = match || name.rfind(p, 0) == 0;
    for (const char* e : excluded) match = match && name.find(e) == std::string::npos;
    if (match) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

class ReferenceOnnxComputeTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ReferenceOnnxComputeTest, MatchesExpectedOutputs) {
  const fs::path dir = fs::path(BRAID_ONNX_TESTDATA_DIR) / "node" / GetParam();
  StatusOr<Graph> graph = ImportOnnxFile((dir / "model.onnx").string());
  if (!graph.ok() && graph.status().message().find("older than braid supports") != std::string::npos)
    GTEST_SKIP() << graph.status().ToString();  // opset-1 models (global pools)
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  ASSERT_EQ(graph->num_nodes(), 1);
  const Node& node = graph->node(0);
  std::vector<In> inputs;
  for (ValueId id : node.inputs) {
    if (id == kNoValue) {
      inputs.push_back(Missing());
      continue;
    }
    const Value& v = graph->value(id);
    const auto pos = std::find(graph->inputs().begin(), graph->inputs().end(), id);
    StatusOr<TensorAttr> t =
        v.constant ? StatusOr<TensorAttr>(TensorAttr{v.dtype, *StaticExtents(v.shape), *v.constant})
                   : onnx_import::ReadTensorProtoFile(
                         (dir / "test_data_set_0" /
                          ("input_" + std::to_string(pos - graph->inputs().begin()) + ".pb"))
                             .string());
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    // Integer inputs after the first (axes) are initializers in real models.
    inputs.push_back(ToIn(*t, v.constant || (!inputs.empty() && t->dtype == DataType::kI64)));
  }
  // output_k.pb is graph output k; a node output the graph does not list
  // (GRU's Y where only Y_h is checked) is left out.
  std::vector<TensorAttr> expected;
  std::vector<TensorDesc> outputs;
  for (size_t o = 0; o < node.outputs.size(); ++o) {
    const auto out = std::find(graph->outputs().begin(), graph->outputs().end(), node.outputs[o]);
    if (node.outputs[o] == kNoValue || out == graph->outputs().end()) {
      outputs.emplace_back();
      expected.emplace_back();
      continue;
    }
    StatusOr<TensorAttr> t = onnx_import::ReadTensorProtoFile(
        (dir / "test_data_set_0" /
         ("output_" + std::to_string(out - graph->outputs().begin()) + ".pb")).string());
    if (!t.ok()) break;
    outputs.push_back({t->dtype, t->dims});
    expected.push_back(std::move(*t));
  }
  auto got = RunReference(node, graph->opset(), inputs, outputs);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  for (size_t o = 0; o < expected.size(); ++o) {
    if (!outputs[o].present()) continue;
    const In want = ToIn(expected[o], false);
    std::vector<double> w(want.f.begin(), want.f.end());
    if (w.empty()) w.assign(want.ints.begin(), want.ints.end());
    SCOPED_TRACE("output " + std::to_string(o));
    // The test data is computed in float; RoiAlign's is written out to 4 decimals.
    ExpectNear((*got)[o], w, GetParam().rfind("test_roialign_", 0) == 0 ? 1e-4 : 1e-5);
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, ReferenceOnnxComputeTest, ::testing::ValuesIn(OnnxComputeCases()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// ------------------------------------------------------------- NaN and Inf
// The reference kernels' NaN / Inf / denormal semantics, with the expected
// values ONNX Runtime 1.32 (CPU EP) gives for the same inputs
// (bench/nan_inf_check.py compares whole models; docs/ops.md "NaN and Inf").

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
const Floats kSpecial = {static_cast<float>(kNaN), static_cast<float>(kInf),
                         -static_cast<float>(kInf), -1.0f, 0.0f, 2.0f, 1e-40f, -1e-40f, 7.0f};

// NaN where want is NaN, the same infinity where want is infinite, finite
// values within tol (relative and absolute).
void ExpectSameSpecials(const std::vector<double>& got, const std::vector<double>& want,
                        double tol = 1e-6) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "element " << i << " = " << got[i] << ", want NaN";
    } else if (std::isinf(want[i])) {
      EXPECT_EQ(got[i], want[i]) << "element " << i;
    } else {
      EXPECT_NEAR(got[i], want[i], tol + tol * std::fabs(want[i])) << "element " << i;
    }
  }
}

std::vector<double> RunSpecial(const std::string& op,
                               std::vector<std::pair<std::string, AttributeValue>> attrs = {},
                               std::vector<In> extra = {}, int64_t opset = 17) {
  const Node node = MakeNode(op, std::move(attrs));
  std::vector<In> inputs = {F({9}, kSpecial)};
  for (In& in : extra) inputs.push_back(std::move(in));
  return Run1(node, inputs, Out({9}), opset);
}

TEST(ReferenceNanInf, ActivationsKeepNanAsOnnxRuntime) {
  // ORT: Relu(NaN) = NaN (a `x > 0 ? x : 0` Relu gives 0), Relu(-Inf) = 0.
  ExpectSameSpecials(RunSpecial("Relu"), {kNaN, kInf, 0, 0, 0, 2, 1e-40, 0, 7});
  ExpectSameSpecials(RunSpecial("LeakyRelu", {{"alpha", 0.1f}}),
                     {kNaN, kInf, -kInf, -0.1, 0, 2, 1e-40, -1e-41, 7});
  // ORT Clip(0, 6): NaN stays NaN, +-Inf clamp to the bounds.
  ExpectSameSpecials(RunSpecial("Clip", {}, {F({}, {0.0f}, true), F({}, {6.0f}, true)}),
                     {kNaN, 6, 0, 0, 0, 2, 1e-40, 0, 6});
  // ORT Clip(x, None, 6): the absent min is numeric_limits<float>::lowest(),
  // so -Inf gives -FLT_MAX.
  ExpectSameSpecials(RunSpecial("Clip", {}, {Missing(), F({}, {6.0f}, true)}),
                     {kNaN, 6, std::numeric_limits<float>::lowest(), -1, 0, 2, 1e-40, -1e-40, 6});
  // ORT HardSigmoid (0.2, 0.5): NaN stays NaN (fmax/fmin would give 1).
  ExpectSameSpecials(RunSpecial("HardSigmoid"), {kNaN, 1, 0, 0.3, 0.5, 0.9, 0.5, 0.5, 1});
  // ORT HardSwish: -Inf * 0 = NaN.
  ExpectSameSpecials(RunSpecial("HardSwish"),
                     {kNaN, kInf, kNaN, -1.0 / 3, 0, 5.0 / 3, 5e-41, -5e-41, 7});
  ExpectSameSpecials(RunSpecial("Sigmoid"), {kNaN, 1, 0, 0.26894143, 0.5, 0.8807971, 0.5, 0.5,
                                             0.99908894});
  // ORT Celu / Elu: NaN stays NaN, -Inf gives -alpha.
  ExpectSameSpecials(RunSpecial("Celu"),
                     {kNaN, kInf, -1, -0.63212055, 0, 2, 1e-40, -1e-40, 7}, 1e-6);
  ExpectSameSpecials(RunSpecial("Elu"), {kNaN, kInf, -1, -0.63212055, 0, 2, 1e-40, -1e-40, 7});
  ExpectSameSpecials(RunSpecial("Softplus"), {kNaN, kInf, 0, 0.3132617, 0.6931472, 2.126928,
                                              0.6931472, 0.6931472, 7.000911});
  // ORT ThresholdedRelu (alpha 1) is `x > alpha ? x : 0`: NaN gives 0.
  ExpectSameSpecials(RunSpecial("ThresholdedRelu"), {0, kInf, 0, 0, 0, 2, 0, 0, 7});
}

TEST(ReferenceNanInf, MaxMinPropagateNanAsOnnxRuntime) {
  const In b = F({9}, {1, static_cast<float>(kNaN), 0, static_cast<float>(kNaN),
                       static_cast<float>(kNaN), static_cast<float>(kInf),
                       -static_cast<float>(kInf), static_cast<float>(kNaN), 1});
  ExpectSameSpecials(RunSpecial("Max", {}, {b}), {kNaN, kNaN, 0, kNaN, kNaN, kInf, 1e-40, kNaN, 7});
  ExpectSameSpecials(RunSpecial("Min", {}, {b}), {kNaN, kNaN, -kInf, kNaN, kNaN, 2, -kInf, kNaN, 1});
}

// x = arange(16) - 8 as [1, 1, 4, 4] with x[1][1] (-3) replaced by `v`.
In Plane4x4(float v) {
  Floats x(16);
  for (int i = 0; i < 16; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i - 8);
  x[5] = v;
  return F({1, 1, 4, 4}, x);
}

TEST(ReferenceNanInf, PoolsAndSoftmax) {
  using A = std::vector<std::pair<std::string, AttributeValue>>;
  const A k2s2 = {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}};
  const A k3s1 = {{"kernel_shape", Ints{3, 3}}};
  const float nan = static_cast<float>(kNaN), inf = static_cast<float>(kInf);
  // AveragePool / GlobalAveragePool as ORT: the window's NaN / +-Inf wins.
  ExpectSameSpecials(Run1(MakeNode("AveragePool", k2s2), {Plane4x4(nan)}, Out({1, 1, 2, 2})),
                     {kNaN, -3.5, 2.5, 4.5});
  ExpectSameSpecials(Run1(MakeNode("AveragePool", k2s2), {Plane4x4(-inf)}, Out({1, 1, 2, 2})),
                     {-kInf, -3.5, 2.5, 4.5});
  ExpectSameSpecials(Run1(MakeNode("GlobalAveragePool"), {Plane4x4(inf)}, Out({1, 1, 1, 1})),
                     {kInf});
  // MaxPool: +Inf wins, -Inf loses, as in ORT. A NaN wins too (numpy.max).
  // ORT's MLAS keeps a NaN only when it is the last element of the window
  // (k2s2 here: NaN, as below; k3s1, where it never is: 2, 3, 6, 7), an
  // artefact of its vector max; braid propagates every NaN instead.
  ExpectSameSpecials(Run1(MakeNode("MaxPool", k2s2), {Plane4x4(nan)}, Out({1, 1, 2, 2})),
                     {kNaN, -1, 5, 7});
  ExpectSameSpecials(Run1(MakeNode("MaxPool", k3s1), {Plane4x4(nan)}, Out({1, 1, 2, 2})),
                     {kNaN, kNaN, kNaN, kNaN});
  ExpectSameSpecials(Run1(MakeNode("MaxPool", k3s1), {Plane4x4(inf)}, Out({1, 1, 2, 2})),
                     {kInf, kInf, kInf, kInf});
  ExpectSameSpecials(Run1(MakeNode("MaxPool", k2s2), {Plane4x4(-inf)}, Out({1, 1, 2, 2})),
                     {-4, -1, 5, 7});
  ExpectSameSpecials(Run1(MakeNode("GlobalMaxPool"), {Plane4x4(nan)}, Out({1, 1, 1, 1})), {kNaN});
  // Softmax over rows of 4 (row 1 holds the special value), as ORT: a NaN
  // or +Inf makes the row NaN, -Inf gets 0.
  const Node softmax = MakeNode("Softmax", {{"axis", int64_t{1}}});
  auto rows = [](float v) {
    Floats x(16);
    for (int i = 0; i < 16; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i - 8);
    x[5] = v;
    return F({4, 4}, x);
  };
  const std::vector<double> plain = {0.0320586, 0.08714432, 0.23688284, 0.6439143};
  for (float v : {nan, inf}) {
    std::vector<double> want = plain;
    want.insert(want.end(), {kNaN, kNaN, kNaN, kNaN});
    for (int r = 0; r < 2; ++r) want.insert(want.end(), plain.begin(), plain.end());
    ExpectSameSpecials(Run1(softmax, {rows(v)}, Out({4, 4}), 13), want, 1e-5);
  }
  std::vector<double> want = plain;
  want.insert(want.end(), {0.03511903, 0, 0.25949648, 0.70538455});
  for (int r = 0; r < 2; ++r) want.insert(want.end(), plain.begin(), plain.end());
  ExpectSameSpecials(Run1(softmax, {rows(-inf)}, Out({4, 4}), 13), want, 1e-5);
}

TEST(ReferenceNanInf, FusedActivationApplyKeepsNan) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const char* name : {"Relu", "Clip", "HardSwish", "Sigmoid", "SiLU", "HardSigmoid",
                           "LeakyRelu", "Gelu"}) {
    Node node = MakeNode("Conv", {{"activation", std::string(name)}});
    if (std::string(name) == "Clip") {
      node.attrs.Set("activation_min", 0.0f);
      node.attrs.Set("activation_max", 6.0f);
    }
    PrepareArgs args;
    args.node = &node;
    StatusOr<Activation> act = ParseFusedActivation(args);
    ASSERT_TRUE(act.ok()) << act.status().ToString();
    EXPECT_TRUE(std::isnan(act->Apply(nan))) << name;
  }
}

// ---------------------------------------------------------------- recurrent

using NamedAttrs = std::vector<std::pair<std::string, AttributeValue>>;

std::vector<std::vector<double>> RunAll(const Node& node, const std::vector<In>& inputs,
                                        const std::vector<TensorDesc>& outputs) {
  auto r = RunReference(node, 14, inputs, outputs);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : std::vector<std::vector<double>>(outputs.size());
}

double Sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

TEST(ReferenceRecurrent, RnnDirectionsByHand) {
  // hidden 1, input 1: H_t = Relu(2 x_t + 0.5 H_{t-1} + 1 - 0.5), x = 1, 2, 3.
  const NamedAttrs relu = {{"activations", std::vector<std::string>{"Relu"}}};
  const In x = F({3, 1, 1}, {1, 2, 3});
  const In w = F({1, 1, 1}, {2}), r = F({1, 1, 1}, {0.5f}), bias = F({1, 2}, {1, -0.5f});
  // Forward: 2 + 0.5 = 2.5; 4 + 1.25 + 0.5 = 5.75; 6 + 2.875 + 0.5 = 9.375.
  auto fwd = RunAll(MakeNode("RNN", relu), {x, w, r, bias}, {Out({3, 1, 1, 1}), Out({1, 1, 1})});
  ExpectNear(fwd[0], {2.5, 5.75, 9.375}, 1e-6);
  ExpectNear(fwd[1], {9.375}, 1e-6);
  // Reverse from x = 3: 6.5; 4 + 3.25 + 0.5 = 7.75; 2 + 3.875 + 0.5 = 6.375 (Y in time order).
  NamedAttrs reverse = relu;
  reverse.push_back({"direction", std::string("reverse")});
  auto rev = RunAll(MakeNode("RNN", reverse), {x, w, r, bias}, {Out({3, 1, 1, 1}), Out({1, 1, 1})});
  ExpectNear(rev[0], {6.375, 7.75, 6.5}, 1e-6);
  ExpectNear(rev[1], {6.375}, 1e-6);
  // Bidirectional: Y [3, 2, 1, 1] interleaves both; Y_h [2, 1, 1] = last of each.
  const NamedAttrs both = {{"activations", std::vector<std::string>{"Relu", "Relu"}},
                           {"direction", std::string("bidirectional")}};
  auto bi = RunAll(MakeNode("RNN", both),
                   {x, F({2, 1, 1}, {2, 2}), F({2, 1, 1}, {0.5f, 0.5f}), F({2, 2}, {1, -0.5f, 1, -0.5f})},
                   {Out({3, 2, 1, 1}), Out({2, 1, 1})});
  ExpectNear(bi[0], {2.5, 6.375, 5.75, 7.75, 9.375, 6.5}, 1e-6);
  ExpectNear(bi[1], {9.375, 6.375}, 1e-6);
  // clip 1 bounds each pre-activation: every step is Relu(1) = 1.
  NamedAttrs clipped = relu;
  clipped.push_back({"clip", 1.0f});
  ExpectNear(RunAll(MakeNode("RNN", clipped), {x, w, r, bias}, {Out({3, 1, 1, 1})})[0], {1, 1, 1}, 1e-6);
  // LeakyRelu takes the first activation_alpha: x = -1 -> 0.25 * (-2 + 0.5) = -0.375.
  const NamedAttrs leaky = {{"activations", std::vector<std::string>{"LeakyRelu"}},
                            {"activation_alpha", std::vector<float>{0.25f}}};
  ExpectNear(RunAll(MakeNode("RNN", leaky), {F({1, 1, 1}, {-1}), w, r, bias}, {Out({1, 1, 1, 1})})[0],
             {-0.375}, 1e-6);
}

TEST(ReferenceRecurrent, SequenceLensZeroPadsAndStopsEachRow) {
  // Batch 2, lengths 3 and 1, layout 0, no bias, H_0 = [0.5, -1]:
  // row 1 runs one step, H = tanh(2 * 4 + 0.5 * -1) = tanh(7.5); Y is 0 after it.
  const In x = F({3, 2, 1}, {1, 4, 2, 5, 3, 6});
  auto out = RunAll(MakeNode("RNN"),
                    {x, F({1, 1, 1}, {2}), F({1, 1, 1}, {0.5f}), Missing(), I32({2}, {3, 1}),
                     F({1, 2, 1}, {0.5f, -1})},
                    {Out({3, 1, 2, 1}), Out({1, 2, 1})});
  const double h1 = std::tanh(2 + 0.25), h2 = std::tanh(4 + 0.5 * h1), h3 = std::tanh(6 + 0.5 * h2);
  ExpectNear(out[0], {h1, std::tanh(7.5), h2, 0, h3, 0}, 1e-6);
  ExpectNear(out[1], {h3, std::tanh(7.5)}, 1e-6);
  // A row of length 0 gives Y 0 and a zero Y_h (ONNX Runtime's choice), not H_0.
  auto empty = RunAll(MakeNode("RNN"),
                      {x, F({1, 1, 1}, {2}), F({1, 1, 1}, {0.5f}), Missing(), I32({2}, {3, 0}),
                       F({1, 2, 1}, {0.5f, -1})},
                      {Out({3, 1, 2, 1}), Out({1, 2, 1})});
  ExpectNear(empty[0], {h1, 0, h2, 0, h3, 0}, 1e-6);
  ExpectNear(empty[1], {h3, 0}, 1e-6);
  // A length past seq_length is an error naming the row.
  auto bad = RunReference(MakeNode("RNN"),
                          14, {x, F({1, 1, 1}, {2}), F({1, 1, 1}, {0.5f}), Missing(), I32({2}, {3, 4})},
                          {Out({3, 1, 2, 1})});
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("node 'n_RNN' (RNN): sequence_lens[1] = 4"), std::string::npos)
      << bad.status().ToString();
}

TEST(ReferenceRecurrent, LstmOneStepByHand) {
  // hidden 1, input 1, x = 0.5, H_0 = 0, C_0 = 1; W rows i, o, f, c = 1, 2, 3, 4.
  const In x = F({1, 1, 1}, {0.5f}), w = F({1, 4, 1}, {1, 2, 3, 4}), r = F({1, 4, 1}, {7, 7, 7, 7});
  const In h0 = F({1, 1, 1}, {0}), c0 = F({1, 1, 1}, {1});
  const std::vector<TensorDesc> outs = {Out({1, 1, 1, 1}), Out({1, 1, 1}), Out({1, 1, 1})};
  {
    const double i = Sigmoid(0.5), o = Sigmoid(1), f = Sigmoid(1.5), g = std::tanh(2);
    const double c = f * 1 + i * g, h = o * std::tanh(c);
    auto got = RunAll(MakeNode("LSTM"), {x, w, r, Missing(), Missing(), h0, c0}, outs);
    ExpectNear(got[0], {h}, 1e-6);
    ExpectNear(got[1], {h}, 1e-6);
    ExpectNear(got[2], {c}, 1e-6);
  }
  {  // Peepholes P = [Pi, Po, Pf] = [0.1, 0.2, 0.3]: i, f see C_0, o sees the new C.
    const double i = Sigmoid(0.5 + 0.1), f = Sigmoid(1.5 + 0.3), g = std::tanh(2);
    const double c = f + i * g, o = Sigmoid(1 + 0.2 * c), h = o * std::tanh(c);
    auto got = RunAll(MakeNode("LSTM"),
                      {x, w, r, Missing(), Missing(), h0, c0, F({1, 3}, {0.1f, 0.2f, 0.3f})}, outs);
    ExpectNear(got[1], {h}, 1e-6);
    ExpectNear(got[2], {c}, 1e-6);
  }
  {  // input_forget couples f = 1 - i.
    const double i = Sigmoid(0.5), o = Sigmoid(1), g = std::tanh(2);
    const double c = (1 - i) + i * g, h = o * std::tanh(c);
    auto got = RunAll(MakeNode("LSTM", {{"input_forget", int64_t{1}}}), {x, w, r, Missing(), Missing(), h0, c0},
                      outs);
    ExpectNear(got[2], {c}, 1e-6);
    ExpectNear(got[1], {h}, 1e-6);
  }
}

TEST(ReferenceRecurrent, GruLinearBeforeResetByHand) {
  // hidden 1, x = 1, H_0 = 0.6; W rows z, r, h = 0.5, -0.5, 1; R = 0.2, 0.3, 0.4; Rb_h = 0.1.
  const In x = F({1, 1, 1}, {1}), w = F({1, 3, 1}, {0.5f, -0.5f, 1}), r = F({1, 3, 1}, {0.2f, 0.3f, 0.4f});
  const In bias = F({1, 6}, {0, 0, 0, 0, 0, 0.1f}), h0 = F({1, 1, 1}, {0.6f});
  const double z = Sigmoid(0.5 + 0.2 * 0.6), rr = Sigmoid(-0.5 + 0.3 * 0.6);
  const double before = std::tanh(1 + 0.4 * (rr * 0.6) + 0.1);  // reset, then the product
  const double after = std::tanh(1 + rr * (0.4 * 0.6 + 0.1));    // the product, then reset
  auto got0 = RunAll(MakeNode("GRU"), {x, w, r, bias, Missing(), h0}, {Out({1, 1, 1, 1})});
  ExpectNear(got0[0], {(1 - z) * before + z * 0.6}, 1e-6);
  auto got1 = RunAll(MakeNode("GRU", {{"linear_before_reset", int64_t{1}}}), {x, w, r, bias, Missing(), h0},
                     {Out({1, 1, 1, 1})});
  ExpectNear(got1[0], {(1 - z) * after + z * 0.6}, 1e-6);
}

TEST(ReferenceRecurrent, LayoutOneIsLayoutZeroTransposed) {
  // Seeded random bidirectional GRU and LSTM: layout 1 on X^T (batch first)
  // gives Y and Y_h of layout 0 with batch moved first.
  const int64_t seq = 4, batch = 3, in = 2, hid = 3;
  for (const char* op : {"GRU", "LSTM"}) {
    const int64_t gates = std::string(op) == "GRU" ? 3 : 4;
    const Floats x0 = Random(seq * batch * in, 61);
    Floats x1(x0.size());
    for (int64_t t = 0; t < seq; ++t)
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t i = 0; i < in; ++i) x1[static_cast<size_t>((b * seq + t) * in + i)] = x0[static_cast<size_t>((t * batch + b) * in + i)];
    const In w = F({2, gates * hid, in}, Random(2 * gates * hid * in, 62));
    const In r = F({2, gates * hid, hid}, Random(2 * gates * hid * hid, 63));
    const In bias = F({2, 2 * gates * hid}, Random(2 * 2 * gates * hid, 64));
    const NamedAttrs dir = {{"direction", std::string("bidirectional")}};
    NamedAttrs dir1 = dir;
    dir1.push_back({"layout", int64_t{1}});
    auto a = RunAll(MakeNode(op, dir), {F({seq, batch, in}, x0), w, r, bias},
                    {Out({seq, 2, batch, hid}), Out({2, batch, hid})});
    auto b = RunAll(MakeNode(op, dir1), {F({batch, seq, in}, x1), w, r, bias},
                    {Out({batch, seq, 2, hid}), Out({batch, 2, hid})});
    ASSERT_EQ(a[0].size(), b[0].size());
    for (int64_t t = 0; t < seq; ++t)
      for (int64_t d = 0; d < 2; ++d)
        for (int64_t n = 0; n < batch; ++n)
          for (int64_t k = 0; k < hid; ++k)
            EXPECT_NEAR(a[0][static_cast<size_t>(((t * 2 + d) * batch + n) * hid + k)],
                        b[0][static_cast<size_t>(((n * seq + t) * 2 + d) * hid + k)], 1e-6)
                << op;
    for (int64_t d = 0; d < 2; ++d)
      for (int64_t n = 0; n < batch; ++n)
        for (int64_t k = 0; k < hid; ++k)
          EXPECT_NEAR(a[1][static_cast<size_t>((d * batch + n) * hid + k)],
                      b[1][static_cast<size_t>((n * 2 + d) * hid + k)], 1e-6)
              << op;
    // The forward half of Y's last step is Y_h's forward half; the backward
    // half of Y's first step is Y_h's backward half.
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t k = 0; k < hid; ++k) {
        EXPECT_NEAR(a[0][static_cast<size_t>(((3 * 2 + 0) * batch + n) * hid + k)],
                    a[1][static_cast<size_t>(n * hid + k)], 1e-7);
        EXPECT_NEAR(a[0][static_cast<size_t>(((0 * 2 + 1) * batch + n) * hid + k)],
                    a[1][static_cast<size_t>((batch + n) * hid + k)], 1e-7);
      }
  }
}

TEST(ReferenceRecurrent, BadAttributesNameTheNode) {
  const In x = F({2, 1, 1}, {1, 2}), w = F({1, 1, 1}, {1}), r = F({1, 1, 1}, {1});
  ExpectErrorNaming(PrepareOnly(MakeNode("RNN", {{"direction", std::string("up")}}), {x, w, r},
                                {Out({2, 1, 1, 1})}),
                    StatusCode::kInvalidArgument, "n_RNN", "direction 'up'");
  ExpectErrorNaming(PrepareOnly(MakeNode("RNN", {{"activations", std::vector<std::string>{"Gelu"}}}),
                                {x, w, r}, {Out({2, 1, 1, 1})}),
                    StatusCode::kInvalidArgument, "n_RNN", "unknown function 'Gelu'");
  ExpectErrorNaming(PrepareOnly(MakeNode("RNN"), {x, F({1, 2, 1}, {1, 1}), r}, {Out({2, 1, 1, 1})}),
                    StatusCode::kInvalidArgument, "n_RNN", "W ");
}

// ---------------------------------------------------------------- Det, MaxUnpool, RoiAlign

TEST(ReferenceDet, ByHandAndRowOperations) {
  // det [[1, 2], [3, 4]] = -2; det [[2, 0, 1], [1, 3, 2], [1, 1, 2]] = 2 * 4 - 0 + 1 * -2 = 6;
  // a matrix with equal rows is singular.
  ExpectNear(Run1(MakeNode("Det"), {F({2, 2}, {1, 2, 3, 4})}, Out({})), {-2}, 1e-6);
  ExpectNear(Run1(MakeNode("Det"), {F({2, 3, 3}, {2, 0, 1, 1, 3, 2, 1, 1, 2, 1, 2, 3, 1, 2, 3, 4, 5, 6})},
                  Out({2})),
             {6, 0}, 1e-6);
  // Seeded random 4x4: swapping two rows negates, doubling one row doubles.
  const Floats a = Random(16, 71);
  Floats swapped = a, doubled = a;
  for (int j = 0; j < 4; ++j) {
    std::swap(swapped[static_cast<size_t>(j)], swapped[static_cast<size_t>(8 + j)]);
    doubled[static_cast<size_t>(4 + j)] *= 2;
  }
  const auto d = Run1(MakeNode("Det"), {F({3, 4, 4}, [&] {
                        Floats all = a;
                        all.insert(all.end(), swapped.begin(), swapped.end());
                        all.insert(all.end(), doubled.begin(), doubled.end());
                        return all;
                      }())},
                      Out({3}));
  ASSERT_EQ(d.size(), 3u);
  EXPECT_GT(std::fabs(d[0]), 1e-3);
  EXPECT_NEAR(d[1], -d[0], 1e-5);
  EXPECT_NEAR(d[2], 2 * d[0], 1e-5);
  ExpectErrorNaming(PrepareOnly(MakeNode("Det"), {F({2, 3}, Random(6, 1))}, {Out({})}),
                    StatusCode::kInvalidArgument, "n_Det", "[*, M, M]");
}

TEST(ReferenceMaxUnpool, ScattersByIndexIntoTheUnpooledOrLargerShape) {
  // kernel 2, stride 2: [1, 1, 2, 2] unpools to [1, 1, 4, 4].
  const std::vector<std::pair<std::string, AttributeValue>> attrs = {{"kernel_shape", Ints{2, 2}},
                                                                     {"strides", Ints{2, 2}}};
  const In x = F({1, 1, 2, 2}, {1, 2, 3, 4});
  const In indices = I64({1, 1, 2, 2}, {0, 3, 9, 14}, false);
  std::vector<double> want(16, 0.0);
  want[0] = 1, want[3] = 2, want[9] = 3, want[14] = 4;
  ExpectNear(Run1(MakeNode("MaxUnpool", attrs), {x, indices}, Out({1, 1, 4, 4}), 11), want, 0);
  // output_shape [1, 1, 5, 5] keeps the coordinates: 3 = (0, 3) -> 3, 9 = (2, 1) -> 11, 14 = (3, 2) -> 17.
  std::vector<double> wide(25, 0.0);
  wide[0] = 1, wide[3] = 2, wide[11] = 3, wide[17] = 4;
  ExpectNear(Run1(MakeNode("MaxUnpool", attrs), {x, indices, I64({4}, {1, 1, 5, 5})}, Out({1, 1, 5, 5}), 11),
             wide, 0);
  auto bad = RunReference(MakeNode("MaxUnpool", attrs), 11, {x, I64({1, 1, 2, 2}, {0, 3, 9, 16}, false)},
                          {Out({1, 1, 4, 4})});
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("I[3] = 16"), std::string::npos) << bad.status().ToString();
}

TEST(ReferenceRoiAlign, ModesCoordinatesAndSamplingByHand) {
  // X[h][w] = 4h + w: bilinear sampling of a linear function is exact, so a
  // bin's average is 4 * mean(y) + mean(x) over its samples.
  Floats ramp(16);
  for (int i = 0; i < 16; ++i) ramp[static_cast<size_t>(i)] = static_cast<float>(i);
  const In x = F({1, 1, 4, 4}, ramp);
  using A = std::vector<std::pair<std::string, AttributeValue>>;
  auto run = [&](A attrs, Floats roi, Ints out_hw, int64_t opset = 16) {
    const int64_t n = static_cast<int64_t>(roi.size()) / 4;
    attrs.push_back({"output_height", out_hw[0]});
    attrs.push_back({"output_width", out_hw[1]});
    return Run1(MakeNode("RoiAlign", std::move(attrs)),
                {x, F({n, 4}, std::move(roi)), I64({n}, Ints(static_cast<size_t>(n), 0), false)},
                Out({n, 1, out_hw[0], out_hw[1]}), opset);
  };
  // half_pixel, roi (0, 0)-(2, 2) -> [-0.5, 1.5], 2x2 samples at 0 and 1: 4 * 0.5 + 0.5.
  ExpectNear(run({{"sampling_ratio", int64_t{2}}}, {0, 0, 2, 2}, {1, 1}), {2.5}, 1e-6);
  // output_half_pixel (opset 10's only mode): samples at 0.5 and 1.5: 4 + 1.
  const A output_half = {{"sampling_ratio", int64_t{2}},
                         {"coordinate_transformation_mode", std::string("output_half_pixel")}};
  ExpectNear(run(output_half, {0, 0, 2, 2}, {1, 1}), {5.0}, 1e-6);
  ExpectNear(run({{"sampling_ratio", int64_t{2}}}, {0, 0, 2, 2}, {1, 1}, 10), {5.0}, 1e-6);
  // spatial_scale 0.5 on (0, 0)-(4, 4) is the same box.
  A scaled = output_half;
  scaled.push_back({"spatial_scale", 0.5f});
  ExpectNear(run(scaled, {0, 0, 4, 4}, {1, 1}), {5.0}, 1e-6);
  // max: the largest weighted tap (each tap 0.25 here): the sample (1.5, 1.5)
  // has taps 5, 6, 9, 10 -> 0.25 * 10.
  A max = output_half;
  max.push_back({"mode", std::string("max")});
  ExpectNear(run(max, {0, 0, 2, 2}, {1, 1}), {2.5}, 1e-6);
  // sampling_ratio 0 (adaptive): roi 3, 2x2 bins of 1.5 -> ceil(1.5) = 2 samples a
  // side at 0.375, 1.125 | 1.875, 2.625: bin means 0.75 and 2.25.
  const A adaptive = {{"coordinate_transformation_mode", std::string("output_half_pixel")}};
  ExpectNear(run(adaptive, {0, 0, 3, 3}, {2, 2}), {3.75, 5.25, 9.75, 11.25}, 1e-6);
  // A roi past the image samples nothing.
  ExpectNear(run({{"sampling_ratio", int64_t{2}}}, {10, 10, 12, 12}, {1, 1}), {0.0}, 0);
  ExpectErrorNaming(PrepareOnly(MakeNode("RoiAlign", {{"mode", std::string("min")}}),
                                {x, F({1, 4}, {0, 0, 1, 1}), I64({1}, {0}, false)}, {Out({1, 1, 1, 1})}, 16),
                    StatusCode::kInvalidArgument, "n_RoiAlign", "mode 'min'");
  auto bad = RunReference(MakeNode("RoiAlign"), 16, {x, F({1, 4}, {0, 0, 1, 1}), I64({1}, {1}, false)},
                          {Out({1, 1, 1, 1})});
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("batch_indices[0] = 1"), std::string::npos);
}

}  // namespace
}  // namespace braid
