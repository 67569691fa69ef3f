// The importer on hand-built ModelProtos: the resulting IR is checked exactly
// (values, dtypes, shapes, attributes, constant bytes).
#include "graph/onnx_importer.h"

#include <cstring>
#include <random>

#include "graph/passes/passes.h"
#include "gtest/gtest.h"
#include "tests/onnx/onnx_builders.h"

namespace braid {
namespace {

using namespace braid::testing;  // NOLINT: test helpers
using onnx::TensorProto;

StatusOr<Graph> Import(const onnx::ModelProto& model,
                       const OnnxImportOptions& options = {}) {
  std::string bytes = Serialize(model);
  return ImportOnnxBytes(bytes.data(), bytes.size(), "", options);
}

std::vector<float> SeededFloats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

template <typename T>
bool BytesEqual(const TensorData& data, const std::vector<T>& expected) {
  return data.size() == expected.size() * sizeof(T) &&
         (expected.empty() ||
          std::memcmp(data.data(), expected.data(), data.size()) == 0);
}

const Value& ValueNamed(const Graph& g, const std::string& name) {
  ValueId id = g.FindValue(name);
  EXPECT_NE(id, kNoValue) << name;
  static const Value kMissing;
  return id == kNoValue ? kMissing : g.value(id);
}

TEST(OnnxImporterTest, ConvReluGraphIsImportedExactly) {
  onnx::ModelProto m = MakeModel(13);
  AddInput(m, "x", TensorProto::FLOAT, {std::string("N"), 3, 8, 8});
  const std::vector<float> weights = SeededFloats(4 * 3 * 3 * 3, 1);
  AddInitializer(m, RawTensor("w", TensorProto::FLOAT, {4, 3, 3, 3}, weights));
  // The bias uses the typed float_data field instead of raw_data.
  const std::vector<float> bias = SeededFloats(4, 2);
  TensorProto* b = m.mutable_graph()->add_initializer();
  b->set_name("b");
  b->set_data_type(TensorProto::FLOAT);
  b->add_dims(4);
  for (float v : bias) b->add_float_data(v);
  onnx::NodeProto* conv = AddNode(m, "Conv", {"x", "w", "b"}, {"c"}, "conv0");
  SetIntsAttr(conv, "pads", {1, 1, 1, 1});
  SetIntsAttr(conv, "strides", {1, 1});
  SetIntAttr(conv, "group", 1);
  SetStringAttr(conv, "auto_pad", "NOTSET");
  SetFloatsAttr(conv, "test_floats", {0.5f, -1.25f});
  AddNode(m, "Relu", {"c"}, {"y"});  // unnamed: gets "Relu_1"
  AddOutput(m, "y", TensorProto::FLOAT, {std::string("N"), 4, 8, 8});

  StatusOr<Graph> g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->opset(), 13);
  EXPECT_EQ(g->name(), "test_graph");
  ASSERT_EQ(g->inputs().size(), 1u);
  const Value& x = g->value(g->inputs()[0]);
  EXPECT_EQ(x.name, "x");
  EXPECT_EQ(x.dtype, DataType::kF32);
  EXPECT_TRUE(x.has_shape);
  EXPECT_EQ(x.shape, (Shape{Dim::Symbol("N"), 3, 8, 8}));
  EXPECT_FALSE(x.constant.has_value());

  const Value& w = ValueNamed(*g, "w");
  ASSERT_TRUE(w.constant.has_value());
  EXPECT_EQ(w.dtype, DataType::kF32);
  EXPECT_EQ(w.shape, (Shape{4, 3, 3, 3}));
  EXPECT_TRUE(BytesEqual(*w.constant, weights));
  const Value& bv = ValueNamed(*g, "b");
  ASSERT_TRUE(bv.constant.has_value());
  EXPECT_EQ(bv.shape, (Shape{4}));
  EXPECT_TRUE(BytesEqual(*bv.constant, bias));
  // Weights are copied into 64-byte aligned storage.
  EXPECT_EQ(reinterpret_cast<uintptr_t>(w.constant->data()) % 64, 0u);

  ASSERT_EQ(g->num_nodes(), 2);
  const Node& c = g->node(0);
  EXPECT_EQ(c.name, "conv0");
  EXPECT_EQ(c.op_type, "Conv");
  EXPECT_EQ(c.inputs, (std::vector<ValueId>{g->FindValue("x"), g->FindValue("w"),
                                            g->FindValue("b")}));
  EXPECT_EQ(c.outputs, std::vector<ValueId>{g->FindValue("c")});
  Attributes expected;
  expected.Set("pads", std::vector<int64_t>{1, 1, 1, 1});
  expected.Set("strides", std::vector<int64_t>{1, 1});
  expected.Set("group", int64_t{1});
  expected.Set("auto_pad", std::string("NOTSET"));
  expected.Set("test_floats", std::vector<float>{0.5f, -1.25f});
  EXPECT_TRUE(c.attrs == expected);

  const Node& relu = g->node(1);
  EXPECT_EQ(relu.name, "Relu_1");
  EXPECT_EQ(relu.op_type, "Relu");
  EXPECT_EQ(relu.inputs, std::vector<ValueId>{g->FindValue("c")});
  EXPECT_TRUE(relu.attrs.map().empty());

  ASSERT_EQ(g->outputs().size(), 1u);
  const Value& y = g->value(g->outputs()[0]);
  EXPECT_EQ(y.name, "y");
  EXPECT_EQ(y.dtype, DataType::kF32);
  EXPECT_EQ(y.shape, (Shape{Dim::Symbol("N"), 4, 8, 8}));
  EXPECT_EQ(y.producer, 1);
  // The intermediate has no value_info: left to shape inference.
  EXPECT_FALSE(ValueNamed(*g, "c").has_shape);
}

TEST(OnnxImporterTest, TypedFieldsOfEveryDtypeAreReadBitwise) {
  onnx::ModelProto m = MakeModel(13);
  AddInput(m, "x", TensorProto::FLOAT, {1});
  auto add = [&](const std::string& name, int32_t type,
                 std::vector<int64_t> dims) {
    TensorProto* t = m.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    for (int64_t d : dims) t->add_dims(d);
    return t;
  };
  // ONNX stores uint8/int8/bool values and float16 bit patterns in int32_data.
  TensorProto* u8 = add("u8", TensorProto::UINT8, {3});
  for (int v : {0, 200, 255}) u8->add_int32_data(v);
  TensorProto* i8 = add("i8", TensorProto::INT8, {3});
  for (int v : {-128, -1, 127}) i8->add_int32_data(v);
  TensorProto* bl = add("bool", TensorProto::BOOL, {2});
  for (int v : {1, 0}) bl->add_int32_data(v);
  TensorProto* f16 = add("f16", TensorProto::FLOAT16, {2, 2});
  const std::vector<uint16_t> f16_bits = {0x3C00, 0xC000, 0x7BFF, 0x0001};
  for (uint16_t v : f16_bits) f16->add_int32_data(v);
  TensorProto* i32 = add("i32", TensorProto::INT32, {2});
  for (int v : {-7, 1 << 30}) i32->add_int32_data(v);
  TensorProto* i64 = add("i64", TensorProto::INT64, {2});
  for (int64_t v : {int64_t{-1}, int64_t{1} << 40}) i64->add_int64_data(v);
  add("empty", TensorProto::FLOAT, {0, 3});
  AddInitializer(m, RawTensor("scalar", TensorProto::INT64, {},
                              std::vector<int64_t>{42}));
  AddInitializer(m, RawTensor("f16raw", TensorProto::FLOAT16, {2},
                              std::vector<uint16_t>{0x3C00, 0xC000}));
  AddNode(m, "Relu", {"x"}, {"y"});
  AddOutput(m, "y", TensorProto::FLOAT, {1});

  StatusOr<Graph> g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  struct Expect {
    const char* name;
    DataType dtype;
    Shape shape;
  };
  for (const Expect& e :
       {Expect{"u8", DataType::kU8, {3}}, Expect{"i8", DataType::kI8, {3}},
        Expect{"bool", DataType::kBool, {2}},
        Expect{"f16", DataType::kF16, {2, 2}},
        Expect{"i32", DataType::kI32, {2}}, Expect{"i64", DataType::kI64, {2}},
        Expect{"empty", DataType::kF32, {0, 3}},
        Expect{"scalar", DataType::kI64, {}},
        Expect{"f16raw", DataType::kF16, {2}}}) {
    const Value& v = ValueNamed(*g, e.name);
    EXPECT_EQ(v.dtype, e.dtype) << e.name;
    EXPECT_EQ(v.shape, e.shape) << e.name;
    EXPECT_TRUE(v.has_shape) << e.name;
    ASSERT_TRUE(v.constant.has_value()) << e.name;
  }
  EXPECT_TRUE(BytesEqual(*ValueNamed(*g, "u8").constant,
                         std::vector<uint8_t>{0, 200, 255}));
  EXPECT_TRUE(BytesEqual(*ValueNamed(*g, "i8").constant,
                         std::vector<int8_t>{-128, -1, 127}));
  EXPECT_TRUE(BytesEqual(*ValueNamed(*g, "bool").constant,
                         std::vector<uint8_t>{1, 0}));
  EXPECT_TRUE(BytesEqual(*ValueNamed(*g, "f16").constant, f16_bits));
  EXPECT_TRUE(BytesEqual(*ValueNamed(*g, "i32").constant,
                         std::vector<int32_t>{-7, 1 << 30}));
  EXPECT_TRUE(BytesEqual(*ValueNamed(*g, "i64").constant,
                         std::vector<int64_t>{-1, int64_t{1} << 40}));
  EXPECT_EQ(ValueNamed(*g, "empty").constant->size(), 0u);
  EXPECT_TRUE(BytesEqual(*ValueNamed(*g, "scalar").constant,
                         std::vector<int64_t>{42}));
  EXPECT_TRUE(BytesEqual(*ValueNamed(*g, "f16raw").constant,
                         std::vector<uint16_t>{0x3C00, 0xC000}));
}

// DOUBLE, BFLOAT16, INT16 and the wider unsigned types, each as an
// initializer from its typed field and from raw_data, and as a graph input.
TEST(OnnxImporterTest, WiderDtypesFromTypedFieldsRawDataAndInputs) {
  onnx::ModelProto m = MakeModel(13);
  auto add = [&](const std::string& name, int32_t type, int64_t n) {
    TensorProto* t = m.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    t->add_dims(n);
    return t;
  };
  const std::vector<double> f64 = {-1.5, 1e300, 0.1};
  TensorProto* d = add("f64", TensorProto::DOUBLE, 3);
  for (double v : f64) d->add_double_data(v);
  // ONNX keeps bfloat16 / int16 / uint16 in int32_data, uint32 in uint64_data.
  const std::vector<uint16_t> bf16 = {0x3F80, 0xC049, 0x7F80};
  TensorProto* b = add("bf16", TensorProto::BFLOAT16, 3);
  for (uint16_t v : bf16) b->add_int32_data(v);
  const std::vector<int16_t> i16 = {-32768, -1, 32767};
  TensorProto* i = add("i16", TensorProto::INT16, 3);
  for (int16_t v : i16) i->add_int32_data(v);
  const std::vector<uint16_t> u16 = {0, 40000, 65535};
  TensorProto* u = add("u16", TensorProto::UINT16, 3);
  for (uint16_t v : u16) u->add_int32_data(v);
  const std::vector<uint32_t> u32 = {0, 4000000000u, 7};
  TensorProto* w = add("u32", TensorProto::UINT32, 3);
  for (uint32_t v : u32) w->add_uint64_data(v);
  const std::vector<uint64_t> u64 = {1, uint64_t{1} << 63, ~uint64_t{0}};
  TensorProto* x = add("u64", TensorProto::UINT64, 3);
  for (uint64_t v : u64) x->add_uint64_data(v);
  AddInitializer(m, RawTensor("f64raw", TensorProto::DOUBLE, {3}, f64));
  AddInitializer(m, RawTensor("bf16raw", TensorProto::BFLOAT16, {3}, bf16));
  AddInitializer(m, RawTensor("i16raw", TensorProto::INT16, {3}, i16));
  AddInitializer(m, RawTensor("u16raw", TensorProto::UINT16, {3}, u16));
  AddInitializer(m, RawTensor("u32raw", TensorProto::UINT32, {3}, u32));
  AddInitializer(m, RawTensor("u64raw", TensorProto::UINT64, {3}, u64));
  const std::vector<std::pair<int32_t, DataType>> inputs = {
      {TensorProto::DOUBLE, DataType::kF64}, {TensorProto::BFLOAT16, DataType::kBF16},
      {TensorProto::INT16, DataType::kI16},  {TensorProto::UINT16, DataType::kU16},
      {TensorProto::UINT32, DataType::kU32}, {TensorProto::UINT64, DataType::kU64}};
  for (size_t k = 0; k < inputs.size(); ++k) {
    const std::string name = "in" + std::to_string(k);
    AddInput(m, name, inputs[k].first, {2});
    AddNode(m, "Identity", {name}, {"out" + std::to_string(k)});
    AddOutput(m, "out" + std::to_string(k), inputs[k].first, {2});
  }

  StatusOr<Graph> g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Value& in = ValueNamed(*g, "in" + std::to_string(k));
    EXPECT_EQ(in.dtype, inputs[k].second) << k;
    EXPECT_FALSE(in.constant.has_value());
    EXPECT_EQ(ValueNamed(*g, "out" + std::to_string(k)).dtype, inputs[k].second) << k;
  }
  for (const char* suffix : {"", "raw"}) {
    const std::string s = suffix;
    EXPECT_EQ(ValueNamed(*g, "f64" + s).dtype, DataType::kF64);
    EXPECT_EQ(ValueNamed(*g, "bf16" + s).dtype, DataType::kBF16);
    EXPECT_EQ(ValueNamed(*g, "i16" + s).dtype, DataType::kI16);
    EXPECT_EQ(ValueNamed(*g, "u16" + s).dtype, DataType::kU16);
    EXPECT_EQ(ValueNamed(*g, "u32" + s).dtype, DataType::kU32);
    EXPECT_EQ(ValueNamed(*g, "u64" + s).dtype, DataType::kU64);
    ASSERT_TRUE(ValueNamed(*g, "u64" + s).constant.has_value()) << s;
    EXPECT_TRUE(BytesEqual(*ValueNamed(*g, "f64" + s).constant, f64)) << s;
    EXPECT_TRUE(BytesEqual(*ValueNamed(*g, "bf16" + s).constant, bf16)) << s;
    EXPECT_TRUE(BytesEqual(*ValueNamed(*g, "i16" + s).constant, i16)) << s;
    EXPECT_TRUE(BytesEqual(*ValueNamed(*g, "u16" + s).constant, u16)) << s;
    EXPECT_TRUE(BytesEqual(*ValueNamed(*g, "u32" + s).constant, u32)) << s;
    EXPECT_TRUE(BytesEqual(*ValueNamed(*g, "u64" + s).constant, u64)) << s;
  }
}

// A typed field of the wrong length names the field and the dtype.
TEST(OnnxImporterTest, WiderDtypeFieldCountMismatchIsAnError) {
  onnx::ModelProto m = MakeModel(13);
  TensorProto* t = m.mutable_graph()->add_initializer();
  t->set_name("u32");
  t->set_data_type(TensorProto::UINT32);
  t->add_dims(3);
  t->add_uint64_data(1);
  AddInput(m, "x", TensorProto::UINT32, {3});
  AddNode(m, "Add", {"x", "u32"}, {"y"});
  AddOutput(m, "y", TensorProto::UINT32, {3});
  StatusOr<Graph> g = Import(m);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("uint64_data holds 1 values, expected 3 (u32)"),
            std::string::npos)
      << g.status().ToString();
}

TEST(OnnxImporterTest, ConstantNodesBecomeConstantValues) {
  onnx::ModelProto m = MakeModel(13);
  AddInput(m, "x", TensorProto::FLOAT, {2, 3});
  const std::vector<float> tensor_values = SeededFloats(6, 3);
  onnx::NodeProto* c0 = AddNode(m, "Constant", {}, {"k_tensor"});
  auto* attr = c0->add_attribute();
  attr->set_name("value");
  attr->set_type(onnx::AttributeProto::TENSOR);
  *attr->mutable_t() = RawTensor("", TensorProto::FLOAT, {2, 3}, tensor_values);
  SetFloatAttr(AddNode(m, "Constant", {}, {"k_float"}), "value_float", 2.5f);
  SetFloatsAttr(AddNode(m, "Constant", {}, {"k_floats"}), "value_floats",
                {1.f, -3.f, 0.25f});
  SetIntAttr(AddNode(m, "Constant", {}, {"k_int"}), "value_int", -9);
  SetIntsAttr(AddNode(m, "Constant", {}, {"k_ints"}), "value_ints", {0, 1, -1});
  AddNode(m, "Add", {"x", "k_tensor"}, {"y"}, "add");
  AddOutput(m, "y", TensorProto::FLOAT, {2, 3});
  AddUntypedOutput(m, "k_int");  // a constant may be a graph output

  StatusOr<Graph> g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ASSERT_EQ(g->num_nodes(), 1);  // Constant nodes are folded away
  EXPECT_EQ(g->node(0).op_type, "Add");
  EXPECT_EQ(g->node(0).inputs[1], g->FindValue("k_tensor"));

  const Value& kt = ValueNamed(*g, "k_tensor");
  EXPECT_EQ(kt.dtype, DataType::kF32);
  EXPECT_EQ(kt.shape, (Shape{2, 3}));
  ASSERT_TRUE(kt.constant);
  EXPECT_TRUE(BytesEqual(*kt.constant, tensor_values));
  const Value& kf = ValueNamed(*g, "k_float");
  EXPECT_EQ(kf.dtype, DataType::kF32);
  EXPECT_EQ(kf.shape, Shape{});
  ASSERT_TRUE(kf.constant);
  EXPECT_TRUE(BytesEqual(*kf.constant, std::vector<float>{2.5f}));
  const Value& kfs = ValueNamed(*g, "k_floats");
  EXPECT_EQ(kfs.shape, Shape{3});
  ASSERT_TRUE(kfs.constant);
  EXPECT_TRUE(BytesEqual(*kfs.constant, std::vector<float>{1.f, -3.f, 0.25f}));
  const Value& ki = ValueNamed(*g, "k_int");
  EXPECT_EQ(ki.dtype, DataType::kI64);
  EXPECT_EQ(ki.shape, Shape{});
  ASSERT_TRUE(ki.constant);
  EXPECT_TRUE(BytesEqual(*ki.constant, std::vector<int64_t>{-9}));
  const Value& kis = ValueNamed(*g, "k_ints");
  EXPECT_EQ(kis.dtype, DataType::kI64);
  EXPECT_EQ(kis.shape, Shape{3});
  ASSERT_TRUE(kis.constant);
  EXPECT_TRUE(BytesEqual(*kis.constant, std::vector<int64_t>{0, 1, -1}));
  ASSERT_EQ(g->outputs().size(), 2u);
  EXPECT_EQ(g->outputs()[1], g->FindValue("k_int"));
}

TEST(OnnxImporterTest, OmittedOptionalInputsAndUnnamedOutputs) {
  onnx::ModelProto m = MakeModel(13);
  AddInput(m, "x", TensorProto::FLOAT, {4});
  AddInitializer(m, RawTensor("hi", TensorProto::FLOAT, {}, std::vector<float>{6}));
  AddNode(m, "Clip", {"x", "", "hi"}, {"c"}, "clip");
  // The middle output name is empty: the model does not want it.
  AddNode(m, "Split", {"c"}, {"s0", "", "s2"}, "split");
  AddOutput(m, "s0", TensorProto::FLOAT, {2});
  AddOutput(m, "s2", TensorProto::FLOAT, {1});

  StatusOr<Graph> g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ASSERT_EQ(g->num_nodes(), 2);
  const Node& clip = g->node(0);
  ASSERT_EQ(clip.inputs.size(), 3u);
  EXPECT_EQ(clip.inputs[0], g->FindValue("x"));
  EXPECT_EQ(clip.inputs[1], kNoValue);
  EXPECT_EQ(clip.inputs[2], g->FindValue("hi"));
  const Node& split = g->node(1);
  ASSERT_EQ(split.outputs.size(), 3u);
  EXPECT_EQ(split.outputs[0], g->FindValue("s0"));
  EXPECT_EQ(split.outputs[2], g->FindValue("s2"));
  ASSERT_NE(split.outputs[1], kNoValue);
  const Value& fresh = g->value(split.outputs[1]);
  EXPECT_FALSE(fresh.name.empty());
  EXPECT_EQ(fresh.producer, 1);
  EXPECT_NE(split.outputs[1], split.outputs[0]);
  EXPECT_NE(split.outputs[1], split.outputs[2]);
}

TEST(OnnxImporterTest, SymbolicAndUnnamedDims) {
  onnx::ModelProto m = MakeModel(13);
  // "unk0" is taken by a dim_param: fresh symbols skip it.
  AddInput(m, "x", TensorProto::FLOAT,
           {std::string("batch"), std::monostate{}, 5, std::monostate{}});
  AddInput(m, "z", TensorProto::FLOAT, {std::string("unk0")});
  AddNode(m, "Relu", {"x"}, {"y"});
  AddOutput(m, "y", TensorProto::FLOAT,
            {std::string("batch"), std::monostate{}, 5, std::monostate{}});
  // A graph input that is also an output keeps its input dims.
  AddOutput(m, "x", TensorProto::FLOAT, {std::monostate{}, 1, 1, 1});

  StatusOr<Graph> g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(ValueNamed(*g, "x").shape,
            (Shape{Dim::Symbol("batch"), Dim::Symbol("unk1"), 5,
                   Dim::Symbol("unk2")}));
  EXPECT_EQ(ValueNamed(*g, "z").shape, (Shape{Dim::Symbol("unk0")}));
  // Every unnamed dimension is its own unknown.
  EXPECT_EQ(ValueNamed(*g, "y").shape,
            (Shape{Dim::Symbol("batch"), Dim::Symbol("unk3"), 5,
                   Dim::Symbol("unk4")}));

  OnnxImportOptions options;
  options.unnamed_dim_prefix = "d";
  StatusOr<Graph> g2 = Import(m, options);
  ASSERT_TRUE(g2.ok()) << g2.status().ToString();
  EXPECT_EQ(ValueNamed(*g2, "x").shape,
            (Shape{Dim::Symbol("batch"), Dim::Symbol("d0"), 5,
                   Dim::Symbol("d1")}));
}

TEST(OnnxImporterTest, InputWithoutShapeHasNoShape) {
  onnx::ModelProto m = MakeModel(13);
  onnx::ValueInfoProto* in = m.mutable_graph()->add_input();
  in->set_name("x");
  in->mutable_type()->mutable_tensor_type()->set_elem_type(TensorProto::INT64);
  AddNode(m, "Identity", {"x"}, {"y"});
  AddUntypedOutput(m, "y");
  StatusOr<Graph> g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(ValueNamed(*g, "x").dtype, DataType::kI64);
  EXPECT_FALSE(ValueNamed(*g, "x").has_shape);
  EXPECT_FALSE(ValueNamed(*g, "y").has_shape);
}

TEST(OnnxImporterTest, InitializerListedAsInputIsAConstant) {
  onnx::ModelProto m = MakeModel(8);  // old exporters list weights as inputs
  AddInput(m, "x", TensorProto::FLOAT, {2});
  AddInput(m, "w", TensorProto::FLOAT, {2});
  AddInitializer(m, RawTensor("w", TensorProto::FLOAT, {2},
                              std::vector<float>{1, 2}));
  AddNode(m, "Mul", {"x", "w"}, {"y"});
  AddOutput(m, "y", TensorProto::FLOAT, {2});
  StatusOr<Graph> g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->opset(), 8);
  ASSERT_EQ(g->inputs().size(), 1u);
  EXPECT_EQ(g->value(g->inputs()[0]).name, "x");
  EXPECT_TRUE(g->IsConstant(g->FindValue("w")));
}

TEST(OnnxImporterTest, NodesOutOfOrderAreSorted) {
  onnx::ModelProto m = MakeModel(17, "ai.onnx");
  AddInput(m, "x", TensorProto::FLOAT, {2});
  AddNode(m, "Sigmoid", {"a"}, {"y"}, "second");
  AddNode(m, "Relu", {"x"}, {"a"}, "first");
  AddOutput(m, "y", TensorProto::FLOAT, {2});
  StatusOr<Graph> g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->opset(), 17);
  ASSERT_EQ(g->num_nodes(), 2);
  EXPECT_EQ(g->node(0).name, "first");
  EXPECT_EQ(g->node(1).name, "second");
  EXPECT_TRUE(g->Validate().ok());
}

TEST(OnnxImporterTest, ValueInfoTypesIntermediates) {
  onnx::ModelProto m = MakeModel(13);
  AddInput(m, "x", TensorProto::FLOAT, {std::string("N"), 2});
  AddNode(m, "Relu", {"x"}, {"a"});
  AddNode(m, "Relu", {"a"}, {"y"});
  onnx::ValueInfoProto* info = m.mutable_graph()->add_value_info();
  info->set_name("a");
  SetTensorType(info, TensorProto::FLOAT, {std::string("N"), 2});
  AddOutput(m, "y", TensorProto::FLOAT, {std::string("N"), 2});
  StatusOr<Graph> g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const Value& a = ValueNamed(*g, "a");
  EXPECT_EQ(a.dtype, DataType::kF32);
  EXPECT_TRUE(a.has_shape);
  EXPECT_EQ(a.shape, (Shape{Dim::Symbol("N"), 2}));
  // Generated names are unique even for repeated op types.
  EXPECT_EQ(g->node(0).name, "Relu_0");
  EXPECT_EQ(g->node(1).name, "Relu_1");
}

TEST(OnnxImporterTest, ImportOnnxFileReadsExternalData) {
  const auto dir = FreshTempDir("ext");
  const std::vector<float> weights = SeededFloats(6, 4);
  std::string blob(16, '\x7f');  // padding before the tensor
  blob.append(reinterpret_cast<const char*>(weights.data()),
              weights.size() * sizeof(float));
  std::filesystem::create_directories(dir / "data");
  WriteFile(dir / "data" / "weights.bin", blob);

  onnx::ModelProto m = MakeModel(13);
  AddInput(m, "x", TensorProto::FLOAT, {2, 3});
  TensorProto* w = m.mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(TensorProto::FLOAT);
  w->add_dims(2);
  w->add_dims(3);
  w->set_data_location(TensorProto::EXTERNAL);
  for (auto [k, v] : {std::pair<const char*, std::string>{"location", "data/weights.bin"},
                      {"offset", "16"},
                      {"length", "24"}}) {
    auto* e = w->add_external_data();
    e->set_key(k);
    e->set_value(v);
  }
  AddNode(m, "Add", {"x", "w"}, {"y"});
  AddOutput(m, "y", TensorProto::FLOAT, {2, 3});
  WriteFile(dir / "model.onnx", Serialize(m));

  StatusOr<Graph> g = ImportOnnxFile((dir / "model.onnx").string());
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const Value& wv = ValueNamed(*g, "w");
  ASSERT_TRUE(wv.constant);
  EXPECT_TRUE(BytesEqual(*wv.constant, weights));

  // The same bytes without a model folder cannot reach external data.
  std::string bytes = Serialize(m);
  StatusOr<Graph> no_dir = ImportOnnxBytes(bytes.data(), bytes.size(), "");
  ASSERT_FALSE(no_dir.ok());
  EXPECT_NE(no_dir.status().message().find("initializer 'w'"),
            std::string::npos)
      << no_dir.status().message();
  std::filesystem::remove_all(dir);
}

TEST(OnnxImporterTest, UnsupportedOpsKeptWhenNotRejecting) {
  onnx::ModelProto m = MakeModel(13);
  AddInput(m, "x", TensorProto::FLOAT, {2});
  AddNode(m, "NoSuchOpInOnnx", {"x"}, {"a"}, "foo");
  onnx::NodeProto* ms = AddNode(m, "FusedThing", {"a"}, {"y"}, "bar");
  ms->set_domain("com.microsoft");
  AddOutput(m, "y", TensorProto::FLOAT, {2});
  OnnxImportOptions options;
  options.reject_unsupported_ops = false;
  StatusOr<Graph> g = Import(m, options);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ASSERT_EQ(g->num_nodes(), 2);
  EXPECT_EQ(g->node(0).op_type, "NoSuchOpInOnnx");
  EXPECT_EQ(g->node(1).op_type, "com.microsoft.FusedThing");
}

// ONNX Runtime's contrib QLinearAdd (QOperator-format models) is an op braid
// runs: it imports under its domain-qualified name and infers like Add; other
// com.microsoft ops are still refused by name and domain.
TEST(OnnxImporterTest, ContribQLinearAddImportsOthersAreRefused) {
  onnx::ModelProto m = MakeModel(13);
  AddInput(m, "a", TensorProto::UINT8, {1, 4, 3, 3});
  AddInput(m, "b", TensorProto::UINT8, {1, 4, 3, 3});
  AddInitializer(m, RawTensor("s", TensorProto::FLOAT, {}, std::vector<float>{0.05f}));
  AddInitializer(m, RawTensor("z", TensorProto::UINT8, {}, std::vector<uint8_t>{128}));
  onnx::NodeProto* add = AddNode(m, "QLinearAdd", {"a", "s", "z", "b", "s", "z", "s", "z"}, {"y"}, "qadd");
  add->set_domain("com.microsoft");
  AddOutput(m, "y", TensorProto::UINT8, {1, 4, 3, 3});
  StatusOr<Graph> g = Import(m, OnnxImportOptions{});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ASSERT_EQ(g->num_nodes(), 1);
  EXPECT_EQ(g->node(0).op_type, "com.microsoft.QLinearAdd");
  ASSERT_TRUE(InferShapes(*g).ok());
  EXPECT_EQ(g->value(g->outputs()[0]).dtype, DataType::kU8);

  add->set_op_type("QLinearSigmoid");
  StatusOr<Graph> refused = Import(m, OnnxImportOptions{});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("QLinearSigmoid domain com.microsoft"), std::string::npos)
      << refused.status().message();
}

// ONNX Runtime's contrib QLinearConcat imports too and infers Concat's
// shape over its tensors (inputs 2, 5, ...); a wrong input count is an
// error naming the node.
TEST(OnnxImporterTest, ContribQLinearConcatImportsAndInfersConcat) {
  onnx::ModelProto m = MakeModel(13);
  AddInput(m, "a", TensorProto::UINT8, {1, 4, 3, 3});
  AddInput(m, "b", TensorProto::UINT8, {1, 6, 3, 3});
  AddInitializer(m, RawTensor("s", TensorProto::FLOAT, {}, std::vector<float>{0.05f}));
  AddInitializer(m, RawTensor("z", TensorProto::UINT8, {}, std::vector<uint8_t>{128}));
  onnx::NodeProto* cat = AddNode(m, "QLinearConcat", {"s", "z", "a", "s", "z", "b", "s", "z"}, {"y"},
                                 "qcat");
  cat->set_domain("com.microsoft");
  onnx::AttributeProto* axis = cat->add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(1);
  AddOutput(m, "y", TensorProto::UINT8, {1, 10, 3, 3});
  StatusOr<Graph> g = Import(m, OnnxImportOptions{});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ASSERT_EQ(g->num_nodes(), 1);
  EXPECT_EQ(g->node(0).op_type, "com.microsoft.QLinearConcat");
  ASSERT_TRUE(InferShapes(*g).ok());
  const Value& y = g->value(g->outputs()[0]);
  EXPECT_EQ(y.dtype, DataType::kU8);
  EXPECT_EQ(ShapeToString(y.shape), "[1,10,3,3]");

  cat->add_input("a");  // 9 inputs: not 2 + 3n
  StatusOr<Graph> odd = Import(m, OnnxImportOptions{});
  ASSERT_TRUE(odd.ok()) << odd.status().ToString();
  const Status s = InferShapes(*odd);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("qcat"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("5, 8, 11"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace braid
