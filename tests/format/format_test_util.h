// Graphs and comparisons shared by the .braid format tests.
#ifndef BRAID_TESTS_FORMAT_FORMAT_TEST_UTIL_H_
#define BRAID_TESTS_FORMAT_FORMAT_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "graph/braid_format.h"
#include "graph/ir.h"

namespace braid::format_test {

template <typename T>
TensorData MakeTensor(const std::vector<T>& v) {
  return TensorData::Copy(v.data(), v.size() * sizeof(T));
}

// Bytes 0..n-1 scrambled with `seed`, so every tensor's content differs.
inline TensorData PatternBytes(size_t n, uint32_t seed) {
  std::vector<uint8_t> bytes(n);
  std::mt19937 rng(seed);
  for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng() | 1);
  return TensorData::Copy(bytes.data(), bytes.size());
}

inline TensorData RandomFloats(size_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(count);
  for (float& x : v) x = dist(rng);
  return MakeTensor(v);
}

// A small graph exercising every field the format stores: every dtype,
// symbolic and static dims, a scalar and an empty constant, constants of odd
// byte sizes, every attribute kind, omitted inputs and outputs, annotations
// and a device pin.
inline Graph MakeRichGraph() {
  Graph g;
  g.name() = "rich graph \xce\xbb";
  g.set_opset(17);
  ValueId x = g.AddInput("x", DataType::kF32,
                         {Dim::Symbol("N"), 3, Dim::Symbol("H"), 7});
  ValueId mask = g.AddInput("mask", DataType::kBool, {Dim::Symbol("N"), 1});
  ValueId w = g.AddConstant("w_f32", DataType::kF32, {7}, PatternBytes(28, 1));
  ValueId h =
      g.AddConstant("w_f16", DataType::kF16, {3, 5}, PatternBytes(30, 2));
  ValueId i64 = g.AddConstant("c_i64", DataType::kI64, {3},
                              MakeTensor<int64_t>({-1, 0, INT64_MAX}));
  ValueId i32 =
      g.AddConstant("c_i32", DataType::kI32, {1}, MakeTensor<int32_t>({-7}));
  ValueId i8 = g.AddConstant("c_i8", DataType::kI8, {13}, PatternBytes(13, 3));
  ValueId u8 =
      g.AddConstant("c_u8", DataType::kU8, {2, 3, 5}, PatternBytes(30, 4));
  ValueId b = g.AddConstant("c_bool", DataType::kBool, {3},
                            MakeTensor<uint8_t>({1, 0, 1}));
  ValueId scalar =
      g.AddConstant("c_scalar", DataType::kF32, {}, MakeTensor<float>({3.5f}));
  ValueId empty =
      g.AddConstant("c_empty", DataType::kF32, {0, 4}, TensorData::Allocate(0));

  ValueId y = g.AddValue("y");  // dtype and shape unknown
  ValueId z = g.AddValue("z");
  g.value(z).dtype = DataType::kF16;
  g.value(z).has_shape = true;
  g.value(z).shape = {Dim::Symbol("N"), 0, 5};
  ValueId out = g.AddValue("out");
  g.value(out).dtype = DataType::kF32;

  Node n0;
  n0.name = "fancy0";
  n0.op_type = "FancyOp";
  n0.inputs = {x, w, kNoValue, h, i64, i32, i8, u8, b, scalar, empty, mask};
  n0.outputs = {y, kNoValue, z};
  n0.attrs.Set("an_int", int64_t{-42});
  n0.attrs.Set("a_float", 0.25f);
  n0.attrs.Set("a_nan", std::numeric_limits<float>::quiet_NaN());
  n0.attrs.Set("a_string", std::string("with\0nul", 8));
  n0.attrs.Set("ints", std::vector<int64_t>{1, -2, INT64_MIN, INT64_MAX});
  n0.attrs.Set("floats", std::vector<float>{1.5f, -0.0f, 1e30f});
  n0.attrs.Set("strings", std::vector<std::string>{"a", "", "ccc"});
  n0.attrs.Set("empty_ints", std::vector<int64_t>{});
  n0.attrs.Set("tensor_i64",
               TensorAttr{DataType::kI64, {2}, MakeTensor<int64_t>({5, -6})});
  n0.attrs.Set("tensor_f16",
               TensorAttr{DataType::kF16, {1, 3}, PatternBytes(6, 5)});
  n0.attrs.Set("tensor_scalar",
               TensorAttr{DataType::kU8, {}, MakeTensor<uint8_t>({9})});
  n0.attrs.Set("tensor_empty",
               TensorAttr{DataType::kF32, {0}, TensorData::Allocate(0)});
  n0.annotation = {.flops = 1234.5,
                   .bytes = 99,
                   .intensity = 1234.5 / 99,
                   .params = 77,
                   .weight_sparsity = 0.125,
                   .activation_sparsity = 0.5};
  n0.device_pin = "cuda";
  g.AddNode(std::move(n0));

  Node n1;
  n1.name = "";  // unnamed nodes exist in ONNX exports
  n1.op_type = "Add";
  n1.inputs = {y, y};
  n1.outputs = {out};
  g.AddNode(std::move(n1));  // default annotation: activation_sparsity -1

  g.outputs() = {out, z, w};
  return g;
}

// A conv-net-shaped graph with about `channels^2 * 9 * 4 * layers` bytes of
// f32 weights plus BatchNormalization parameters, like an un-fused export.
inline Graph MakeConvNet(int layers, int channels, uint32_t seed) {
  Graph g;
  g.name() = "convnet";
  g.set_opset(13);
  ValueId act =
      g.AddInput("input", DataType::kF32, {Dim::Symbol("N"), channels, 16, 16});
  for (int l = 0; l < layers; ++l) {
    const std::string p = "layer" + std::to_string(l);
    const int64_t c = channels;
    ValueId w = g.AddConstant(p + ".weight", DataType::kF32, {c, c, 3, 3},
                              RandomFloats(c * c * 9, seed + 10 * l));
    ValueId bias = g.AddConstant(p + ".bias", DataType::kF32, {c},
                                 RandomFloats(c, seed + 10 * l + 1));
    ValueId conv_out = g.AddValue(p + ".conv");
    Node conv;
    conv.name = p + "/Conv";
    conv.op_type = "Conv";
    conv.inputs = {act, w, bias};
    conv.outputs = {conv_out};
    conv.attrs.Set("pads", std::vector<int64_t>{1, 1, 1, 1});
    conv.attrs.Set("strides", std::vector<int64_t>{1, 1});
    conv.attrs.Set("kernel_shape", std::vector<int64_t>{3, 3});
    conv.annotation = {.flops = 2.0 * c * c * 9 * 256,
                       .bytes = 4.0 * (c * c * 9 + 2 * c * 256),
                       .intensity = 1.5,
                       .params = c * c * 9 + c,
                       .weight_sparsity = 0,
                       .activation_sparsity = -1};
    g.AddNode(std::move(conv));

    std::vector<ValueId> bn_inputs = {conv_out};
    for (const char* param : {"scale", "B", "mean", "var"})
      bn_inputs.push_back(g.AddConstant(p + ".bn." + param, DataType::kF32, {c},
                                        RandomFloats(c, seed + l * 7)));
    ValueId bn_out = g.AddValue(p + ".bn");
    Node bn;
    bn.name = p + "/BatchNormalization";
    bn.op_type = "BatchNormalization";
    bn.inputs = bn_inputs;
    bn.outputs = {bn_out};
    bn.attrs.Set("epsilon", 1e-5f);
    g.AddNode(std::move(bn));

    ValueId relu_out = g.AddValue(p + ".relu");
    Node relu;
    relu.name = p + "/Relu";
    relu.op_type = "Relu";
    relu.inputs = {bn_out};
    relu.outputs = {relu_out};
    g.AddNode(std::move(relu));
    act = relu_out;
  }
  ValueId shape = g.AddConstant("flatten_shape", DataType::kI64, {2},
                                MakeTensor<int64_t>({0, -1}));
  ValueId flat = g.AddValue("flat");
  Node reshape;
  reshape.name = "Reshape";
  reshape.op_type = "Reshape";
  reshape.inputs = {act, shape};
  reshape.outputs = {flat};
  g.AddNode(std::move(reshape));
  g.outputs() = {flat};
  return g;
}

inline bool SameDouble(double a, double b) {
  return std::memcmp(&a, &b, sizeof(double)) == 0;
}

// Compares every stored field; constant bytes bitwise.
inline void ExpectGraphsEqual(const Graph& expected, const Graph& actual) {
  EXPECT_EQ(expected.name(), actual.name());
  EXPECT_EQ(expected.opset(), actual.opset());
  EXPECT_EQ(expected.metadata(), actual.metadata());
  EXPECT_EQ(expected.inputs(), actual.inputs());
  EXPECT_EQ(expected.outputs(), actual.outputs());
  ASSERT_EQ(expected.num_values(), actual.num_values());
  for (ValueId id = 0; id < expected.num_values(); ++id) {
    const Value& e = expected.value(id);
    const Value& a = actual.value(id);
    SCOPED_TRACE("value '" + e.name + "'");
    EXPECT_EQ(e.name, a.name);
    EXPECT_EQ(e.dtype, a.dtype);
    EXPECT_EQ(e.has_shape, a.has_shape);
    EXPECT_EQ(e.shape, a.shape)
        << ShapeToString(e.shape) << " vs " << ShapeToString(a.shape);
    EXPECT_EQ(e.producer, a.producer);
    ASSERT_EQ(e.constant.has_value(), a.constant.has_value());
    if (e.constant) {
      EXPECT_EQ(e.constant->size(), a.constant->size());
      EXPECT_TRUE(e.constant->ContentEquals(*a.constant));
    }
  }
  ASSERT_EQ(expected.num_nodes(), actual.num_nodes());
  for (NodeId id = 0; id < expected.num_nodes(); ++id) {
    const Node& e = expected.node(id);
    const Node& a = actual.node(id);
    SCOPED_TRACE("node '" + e.name + "' (" + e.op_type + ")");
    EXPECT_EQ(e.name, a.name);
    EXPECT_EQ(e.op_type, a.op_type);
    EXPECT_EQ(e.inputs, a.inputs);
    EXPECT_EQ(e.outputs, a.outputs);
    EXPECT_EQ(e.device_pin, a.device_pin);
    EXPECT_TRUE(e.attrs == a.attrs);
    EXPECT_EQ(e.attrs.map().size(), a.attrs.map().size());
    EXPECT_TRUE(SameDouble(e.annotation.flops, a.annotation.flops));
    EXPECT_TRUE(SameDouble(e.annotation.bytes, a.annotation.bytes));
    EXPECT_TRUE(SameDouble(e.annotation.intensity, a.annotation.intensity));
    EXPECT_EQ(e.annotation.params, a.annotation.params);
    EXPECT_TRUE(
        SameDouble(e.annotation.weight_sparsity, a.annotation.weight_sparsity));
    EXPECT_TRUE(SameDouble(e.annotation.activation_sparsity,
                           a.annotation.activation_sparsity));
  }
}

// A per-test file path under the build tree's temp area.
inline std::string TempPath(const std::string& name) {
  const testing::TestInfo* info =
      testing::UnitTest::GetInstance()->current_test_info();
  std::string unique =
      std::string(info->test_suite_name()) + "_" + info->name() + "_" + name;
  for (char& c : unique)
    if (c == '/') c = '_';  // parameterized test names contain slashes
  return testing::TempDir() + "braid_format_" + unique;
}

}  // namespace braid::format_test

#endif  // BRAID_TESTS_FORMAT_FORMAT_TEST_UTIL_H_
