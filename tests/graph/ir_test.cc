#include "graph/ir.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

namespace braid {
namespace {

// x -> Relu -> a -> Neg(a) -> b, with a constant c unused.
Graph ChainGraph() {
  Graph g;
  ValueId x = g.AddInput("x", DataType::kF32, {Dim::Symbol("N"), 4});
  ValueId a = g.AddValue("a");
  ValueId b = g.AddValue("b");
  float w[2] = {1.f, 2.f};
  g.AddConstant("c", DataType::kF32, {2}, TensorData::Copy(w, sizeof(w)));
  Node relu;
  relu.name = "relu";
  relu.op_type = "Relu";
  relu.inputs = {x};
  relu.outputs = {a};
  g.AddNode(relu);
  Node neg;
  neg.name = "neg";
  neg.op_type = "Neg";
  neg.inputs = {a};
  neg.outputs = {b};
  g.AddNode(neg);
  g.outputs().push_back(b);
  return g;
}

TEST(DimTest, StaticAndSymbolic) {
  Dim s = Dim::Symbol("N");
  EXPECT_FALSE(s.is_static());
  EXPECT_EQ(s.ToString(), "N");
  Dim d = 7;
  EXPECT_TRUE(d.is_static());
  EXPECT_EQ(d.extent(), 7);
  Shape shape = {Dim::Symbol("N"), 3, 5};
  EXPECT_EQ(ShapeToString(shape), "[N,3,5]");
  EXPECT_EQ(ElementCount(shape), 15);
  EXPECT_EQ(ElementCount(shape, 4), 60);
  EXPECT_FALSE(IsStatic(shape));
  EXPECT_FALSE(StaticExtents(shape).ok());
  EXPECT_EQ(*StaticExtents({2, 3}), (std::vector<int64_t>{2, 3}));
}

TEST(DataTypeTest, SizesAndNames) {
  EXPECT_EQ(DataTypeSize(DataType::kF32), 4u);
  EXPECT_EQ(DataTypeSize(DataType::kF16), 2u);
  EXPECT_EQ(DataTypeSize(DataType::kI64), 8u);
  EXPECT_EQ(DataTypeSize(DataType::kBool), 1u);
  EXPECT_STREQ(DataTypeName(DataType::kU8), "u8");
}

TEST(TensorDataTest, CopyIsAlignedAndIndependent) {
  std::vector<int32_t> src = {5, -1, 7};
  TensorData t = TensorData::Copy(src.data(), src.size() * 4);
  src[0] = 0;
  ASSERT_EQ(t.as<int32_t>().size(), 3u);
  EXPECT_EQ(t.as<int32_t>()[0], 5);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data()) % 64, 0u);
  TensorData u = TensorData::Copy(t.data(), t.size());
  EXPECT_TRUE(u.ContentEquals(t));
  EXPECT_FALSE(u.SameStorage(t));
}

TEST(TensorDataTest, WrapKeepsOwnerAlive) {
  std::weak_ptr<std::vector<std::byte>> weak;
  TensorData t;
  {
    auto owner = std::make_shared<std::vector<std::byte>>(16, std::byte{9});
    weak = owner;
    t = TensorData::Wrap(owner, owner->data() + 4, 8);
  }
  EXPECT_FALSE(weak.expired());
  EXPECT_EQ(t.size(), 8u);
  EXPECT_EQ(t.data()[0], std::byte{9});
  t = TensorData();
  EXPECT_TRUE(weak.expired());
}

TEST(AttributesTest, TypedGettersAndEquality) {
  Attributes a;
  a.Set("k", int64_t{3});
  a.Set("f", 0.5f);
  a.Set("s", std::string("SAME_UPPER"));
  a.Set("ks", std::vector<int64_t>{1, 2});
  EXPECT_EQ(a.GetInt("k", 0), 3);
  EXPECT_EQ(a.GetInt("missing", 9), 9);
  EXPECT_EQ(a.GetInt("f", 9), 9);  // wrong kind reads as absent
  EXPECT_FLOAT_EQ(a.GetFloat("f", 0), 0.5f);
  EXPECT_EQ(a.GetString("s", ""), "SAME_UPPER");
  EXPECT_EQ(a.GetInts("ks"), (std::vector<int64_t>{1, 2}));
  Attributes b = a;
  EXPECT_TRUE(a == b);
  b.Set("k", int64_t{4});
  EXPECT_FALSE(a == b);
}

TEST(GraphTest, ProducersConsumersAndValidate) {
  Graph g = ChainGraph();
  ASSERT_TRUE(g.Validate().ok()) << g.Validate().ToString();
  ValueId a = g.FindValue("a");
  ASSERT_NE(a, kNoValue);
  EXPECT_EQ(g.value(a).producer, 0);
  auto consumers = g.ComputeConsumers();
  ASSERT_EQ(consumers[a].size(), 1u);
  EXPECT_EQ(consumers[a][0], 1);
  EXPECT_TRUE(g.IsGraphOutput(g.FindValue("b")));
  EXPECT_TRUE(g.IsConstant(g.FindValue("c")));
}

TEST(GraphTest, RemoveNodesRenumbersAndDropsUnusedValues) {
  Graph g = ChainGraph();
  // Bypass neg: b becomes produced by relu directly.
  ValueId a = g.FindValue("a");
  ValueId b = g.FindValue("b");
  g.node(0).outputs = {b};
  g.RemoveNodes({false, true});
  EXPECT_EQ(g.num_nodes(), 1);
  EXPECT_EQ(g.FindValue("a"), kNoValue);  // unreferenced now
  EXPECT_EQ(g.FindValue("c"), kNoValue);
  (void)a;
  ASSERT_TRUE(g.Validate().ok()) << g.Validate().ToString();
  ValueId nb = g.FindValue("b");
  EXPECT_EQ(g.value(nb).producer, 0);
  EXPECT_EQ(g.outputs()[0], nb);
}

TEST(GraphTest, TopologicalSortRepairsOrderAndFindsCycles) {
  Graph g = ChainGraph();
  std::swap(g.nodes()[0], g.nodes()[1]);
  EXPECT_FALSE(g.Validate().ok());
  ASSERT_TRUE(g.TopologicalSort().ok());
  EXPECT_EQ(g.node(0).name, "relu");
  EXPECT_TRUE(g.Validate().ok());

  // Make relu read neg's output: a cycle.
  g.node(0).inputs = {g.FindValue("b")};
  Status s = g.TopologicalSort();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cycle"), std::string::npos);
}

TEST(GraphTest, TopologicalSortKeepsAnAlreadySortedDepthFirstOrder) {
  // x feeds two branches, each two ops long, listed depth first (as an
  // exporter writes them): b1, b1b, b2, b2b. A breadth-first sort would run
  // b1, b2, b1b, b2b and make each second op read its input back from memory.
  Graph g;
  const ValueId x = g.AddInput("x", DataType::kF32, {4});
  auto add = [&](const std::string& name, ValueId in) {
    Node n;
    n.name = name;
    n.op_type = "Relu";
    n.inputs = {in};
    n.outputs = {g.AddValue(name + "_out")};
    g.AddNode(n);
    return n.outputs[0];
  };
  const ValueId b1 = add("b1", x);
  g.outputs().push_back(add("b1b", b1));
  const ValueId b2 = add("b2", x);
  g.outputs().push_back(add("b2b", b2));
  ASSERT_TRUE(g.Validate().ok());
  ASSERT_TRUE(g.TopologicalSort().ok());
  std::vector<std::string> order;
  for (const Node& n : g.nodes()) order.push_back(n.name);
  EXPECT_EQ(order, (std::vector<std::string>{"b1", "b1b", "b2", "b2b"}));

  // Out of order: the earliest-listed ready node goes first, so the fix
  // moves only what must move (b1 before its reader b1b).
  std::swap(g.nodes()[0], g.nodes()[1]);  // b1b, b1, b2, b2b
  ASSERT_TRUE(g.TopologicalSort().ok());
  order.clear();
  for (const Node& n : g.nodes()) order.push_back(n.name);
  EXPECT_EQ(order, (std::vector<std::string>{"b1", "b1b", "b2", "b2b"}));
  EXPECT_TRUE(g.Validate().ok());
}

TEST(GraphTest, ValidateRejectsDoubleDefinitionAndDuplicateNames) {
  Graph g = ChainGraph();
  g.node(1).outputs = {g.FindValue("a")};
  EXPECT_FALSE(g.Validate().ok());
  Graph h = ChainGraph();
  h.value(h.FindValue("c")).name = "a";
  Status s = h.Validate();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("used twice"), std::string::npos);
}

TEST(StatusTest, MacrosPropagate) {
  auto fails = []() -> Status { return InvalidArgument("bad"); };
  auto outer = [&]() -> Status {
    RETURN_IF_ERROR(fails());
    return Status::Ok();
  };
  EXPECT_EQ(outer().code(), StatusCode::kInvalidArgument);
  auto make = [](bool ok) -> StatusOr<int> {
    if (!ok) return NotFound("x");
    return 4;
  };
  auto use = [&](bool ok) -> StatusOr<int> {
    ASSIGN_OR_RETURN(int v, make(ok));
    return v + 1;
  };
  EXPECT_EQ(*use(true), 5);
  EXPECT_EQ(use(false).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(InvalidArgument("m").WithPrefix("f.onnx").message(), "f.onnx: m");
}

TEST(ShapeBoundsTest, CheckedBytesAndSaturatingCount) {
  const int64_t kBig = int64_t{1} << 40;
  const std::vector<int64_t> ok = {2, 3, 4};
  ASSERT_TRUE(CheckedTensorBytes(DataType::kF32, ok).ok());
  EXPECT_EQ(*CheckedTensorBytes(DataType::kF32, ok), 96u);
  EXPECT_FALSE(CheckedTensorBytes(DataType::kUndefined, ok).ok());
  const std::vector<int64_t> negative = {2, -3};
  EXPECT_NE(CheckedTensorBytes(DataType::kI8, negative).status().message().find("negative"),
            std::string::npos);
  // A zero extent does not excuse huge others: strides over them overflow.
  const std::vector<int64_t> hidden = {0, kBig, kBig};
  EXPECT_FALSE(CheckedTensorBytes(DataType::kI8, hidden).ok());
  const std::vector<int64_t> at_limit = {kMaxTensorElements};
  EXPECT_TRUE(CheckedTensorBytes(DataType::kI8, at_limit).ok());
  const std::vector<int64_t> over = {kMaxTensorElements, 2};
  EXPECT_FALSE(CheckedTensorBytes(DataType::kI8, over).ok());

  EXPECT_TRUE(CheckShapeBounds({Dim::Symbol("N"), kBig, 4}).ok());
  EXPECT_FALSE(CheckShapeBounds({Dim::Symbol("N"), kBig, kBig}).ok());
  EXPECT_EQ(ElementCount({kBig, kBig, kBig}), std::numeric_limits<int64_t>::max());
}

}  // namespace
}  // namespace braid
