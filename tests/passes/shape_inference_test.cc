// Shape inference per op family, with expectations computed by hand from the
// ONNX operator definitions, plus symbolic batch propagation through the
// Shape->Gather->Unsqueeze->Concat->Reshape chains PyTorch exports.
#include "graph/passes/shape_inference.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cctype>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "graph/op_schema.h"
#include "graph/ops/resize_geometry.h"
#include "graph/passes/passes.h"

namespace braid {
namespace {

const Dim kN = Dim::Symbol("N");

class Builder {
 public:
  explicit Builder(int64_t opset = 17) { g_.set_opset(opset); }

  ValueId Input(const std::string& name, Shape shape,
                DataType dtype = DataType::kF32) {
    return g_.AddInput(name, dtype, std::move(shape));
  }
  ValueId Ints(const std::string& name, std::vector<int64_t> v,
               bool scalar = false) {
    Shape s = scalar ? Shape{} : Shape{Dim(static_cast<int64_t>(v.size()))};
    return g_.AddConstant(name, DataType::kI64, s,
                          TensorData::Copy(v.data(), v.size() * 8));
  }
  ValueId Floats(const std::string& name, Shape shape) {
    std::vector<float> v(static_cast<size_t>(ElementCount(shape)), 0.5f);
    return g_.AddConstant(name, DataType::kF32, std::move(shape),
                          TensorData::Copy(v.data(), v.size() * 4));
  }
  std::vector<ValueId> Op(const std::string& op, const std::string& name,
                          std::vector<ValueId> inputs, Attributes attrs = {},
                          int num_outputs = 1) {
    Node n;
    n.name = name;
    n.op_type = op;
    n.inputs = std::move(inputs);
    n.attrs = std::move(attrs);
    for (int i = 0; i < num_outputs; ++i)
      n.outputs.push_back(g_.AddValue(name + "_out" + std::to_string(i)));
    std::vector<ValueId> outs = n.outputs;
    g_.AddNode(std::move(n));
    return outs;
  }
  ValueId Op1(const std::string& op, const std::string& name,
              std::vector<ValueId> inputs, Attributes attrs = {}) {
    return Op(op, name, std::move(inputs), std::move(attrs))[0];
  }
  Graph& graph() { return g_; }
  const Shape& shape(ValueId v) { return g_.value(v).shape; }
  DataType dtype(ValueId v) { return g_.value(v).dtype; }

 private:
  Graph g_;
};

Attributes A(std::initializer_list<std::pair<const char*, AttributeValue>> kv) {
  Attributes a;
  for (const auto& [k, v] : kv) a.Set(k, v);
  return a;
}
using Ints = std::vector<int64_t>;

// ---- convolution and pooling ------------------------------------------------

TEST(ShapeInferenceConv, StridePadDilationGroups) {
  Builder b;
  ValueId x = b.Input("x", {kN, 4, 17, 17});
  ValueId w = b.Floats("w", {8, 2, 3, 3});
  ValueId bias = b.Floats("b", {8});
  // Effective kernel (3-1)*2+1 = 5; (17 + 1 + 1 - 5) / 2 + 1 = 8.
  ValueId y = b.Op1("Conv", "conv", {x, w, bias},
                    A({{"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}},
                       {"dilations", Ints{2, 2}}, {"group", int64_t{2}}}));
  ASSERT_TRUE(InferShapes(b.graph()).ok());
  EXPECT_EQ(b.shape(y), (Shape{kN, 8, 8, 8}));
  EXPECT_EQ(b.dtype(y), DataType::kF32);
}

TEST(ShapeInferenceConv, DepthwiseAndAsymmetricPads) {
  Builder b;
  ValueId x = b.Input("x", {1, 32, 112, 112});
  ValueId w = b.Floats("w", {32, 1, 3, 3});
  // (112 + 1 + 1 - 3) / 2 + 1 = 56; width pads 0+2: (112 + 2 - 3) / 1 + 1.
  ValueId y = b.Op1("Conv", "dw", {x, w},
                    A({{"strides", Ints{2, 1}}, {"pads", Ints{1, 0, 1, 2}},
                       {"group", int64_t{32}}}));
  ASSERT_TRUE(InferShapes(b.graph()).ok());
  EXPECT_EQ(b.shape(y), (Shape{1, 32, 56, 112}));
}

TEST(ShapeInferenceConv, AutoPad) {
  Builder b;
  ValueId x = b.Input("x", {1, 3, 15, 15});
  ValueId w = b.Floats("w", {4, 3, 3, 3});
  ValueId same = b.Op1("Conv", "same", {x, w},
                       A({{"strides", Ints{2, 2}}, {"auto_pad", std::string("SAME_UPPER")}}));
  ValueId lower = b.Op1("Conv", "lower", {x, w},
                        A({{"strides", Ints{2, 2}}, {"auto_pad", std::string("SAME_LOWER")}}));
  ValueId valid = b.Op1("Conv", "valid", {x, w},
                        A({{"strides", Ints{2, 2}}, {"auto_pad", std::string("VALID")},
                           {"pads", Ints{5, 5, 5, 5}}}));
  ASSERT_TRUE(InferShapes(b.graph()).ok());
  EXPECT_EQ(b.shape(same), (Shape{1, 4, 8, 8}));   // ceil(15 / 2)
  EXPECT_EQ(b.shape(lower), (Shape{1, 4, 8, 8}));
  EXPECT_EQ(b.shape(valid), (Shape{1, 4, 7, 7}));  // (15 - 3) / 2 + 1
}

TEST(ShapeInferenceConv, ChannelMismatchNamesNode) {
  Builder b;
  ValueId x = b.Input("x", {1, 3, 8, 8});
  ValueId w = b.Floats("w", {8, 4, 3, 3});
  b.Op1("Conv", "conv_bad", {x, w});
  Status s = InferShapes(b.graph());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("conv_bad"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("(Conv)"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("[1,3,8,8]"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("channels"), std::string::npos) << s.message();
}

TEST(ShapeInferenceConv, FusedActivationAttributesIgnored) {
  Builder b;
  ValueId x = b.Input("x", {kN, 3, 8, 8});
  ValueId w = b.Floats("w", {4, 3, 1, 1});
  ValueId y = b.Op1("Conv", "c", {x, w},
                    A({{"activation", std::string("Clip")},
                       {"activation_min", 0.0f}, {"activation_max", 6.0f}}));
  ASSERT_TRUE(InferShapes(b.graph()).ok());
  EXPECT_EQ(b.shape(y), (Shape{kN, 4, 8, 8}));
}

TEST(ShapeInferencePool, CeilModeAndGlobal) {
  Builder b;
  ValueId x = b.Input("x", {kN, 64, 112, 112});
  Attributes pool = A({{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}});
  Attributes ceil_pool = pool;
  ceil_pool.Set("ceil_mode", int64_t{1});
  ValueId floor_out = b.Op1("MaxPool", "floor", {x}, pool);
  ValueId ceil_out = b.Op1("MaxPool", "ceil", {x}, ceil_pool);
  ValueId avg = b.Op1("AveragePool", "avg", {x},
                      A({{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}},
                         {"pads", Ints{1, 1, 1, 1}}}));
  ValueId gap = b.Op1("GlobalAveragePool", "gap", {x});
  ValueId gmp = b.Op1("GlobalMaxPool", "gmp", {x});
  ASSERT_TRUE(InferShapes(b.graph()).ok());
  EXPECT_EQ(b.shape(floor_out), (Shape{kN, 64, 55, 55}));  // 109/2 + 1
  EXPECT_EQ(b.shape(ceil_out), (Shape{kN, 64, 56, 56}));   // ceil(109/2) + 1
  EXPECT_EQ(b.shape(avg), (Shape{kN, 64, 57, 57}));        // 112/2 + 1
  EXPECT_EQ(b.shape(gap), (Shape{kN, 64, 1, 1}));
  EXPECT_EQ(b.shape(gmp), (Shape{kN, 64, 1, 1}));
}

TEST(ShapeInferencePool, CeilModeDropsWindowStartingInPadding) {
  Builder b;
  ValueId x = b.Input("x", {1, 1, 3});
  // Windows would start at -1, 1, 3; the one at 3 starts past the input.
  ValueId y = b.Op1("MaxPool", "p", {x},
                    A({{"kernel_shape", Ints{1}}, {"strides", Ints{2}},
                       {"pads", Ints{1, 1}}, {"ceil_mode", int64_t{1}}}));
  ASSERT_TRUE(InferShapes(b.graph()).ok());
  EXPECT_EQ(b.shape(y), (Shape{1, 1, 2}));
}

// ---- elementwise ------------------------------------------------------------

TEST(ShapeInferenceElementwise, Broadcasting) {
  Builder b;
  ValueId x = b.Input("x", {kN, 3, 1, 5});
  ValueId y = b.Input("y", {4, 1});
  ValueId z = b.Input("z", {kN, 1});
  ValueId w = b.Input("w", {1, 7});
  ValueId xy = b.Op1("Add", "xy", {x, y});
  ValueId zw = b.Op1("Mul", "zw", {z, w});
  ValueId eq = b.Op1("Equal", "eq", {z, w});
  ValueId mx = b.Op1("Max", "mx", {x, y, b.Input("s", {})});
  ASSERT_TRUE(InferShapes(b.graph()).ok());
  EXPECT_EQ(b.shape(xy), (Shape{kN, 3, 4, 5}));
  EXPECT_EQ(b.shape(zw), (Shape{kN, 7}));
  EXPECT_EQ(b.shape(eq), (Shape{kN, 7}));
  EXPECT_EQ(b.dtype(eq), DataType::kBool);
  EXPECT_EQ(b.shape(mx), (Shape{kN, 3, 4, 5}));
}

TEST(ShapeInferenceElementwise, BroadcastMismatchIsError) {
  Builder b;
  b.Op1("Add", "bad_add", {b.Input("a", {2, 3}), b.Input("b", {4, 3})});
  Status s = InferShapes(b.graph());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("bad_add"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("[2,3]"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("[4,3]"), std::string::npos) << s.message();
}

TEST(ShapeInferenceElementwise, DifferentSymbolsDoNotBroadcast) {
  Builder b;
  b.Op1("Sub", "sub", {b.Input("a", {kN, 3}), b.Input("b", {Dim::Symbol("M"), 3})});
  EXPECT_FALSE(InferShapes(b.graph()).ok());
}

TEST(ShapeInferenceElementwise, UnaryCastWhereClipDropout) {
  Builder b;
  ValueId x = b.Input("x", {kN, 5});
  ValueId relu = b.Op1("Relu", "relu", {x});
  ValueId cast = b.Op1("Cast", "cast", {x}, A({{"to", int64_t{7}}}));  // INT64
  ValueId cond = b.Input("c", {5}, DataType::kBool);
  ValueId where = b.Op1("Where", "where", {cond, x, b.Input("y", {1, 1})});
  ValueId clip = b.Op1("Clip", "clip", {x, b.Floats("lo", {}), kNoValue});
  std::vector<ValueId> drop = b.Op("Dropout", "drop", {x}, {}, 2);
  ASSERT_TRUE(InferShapes(b.graph()).ok());
  EXPECT_EQ(b.shape(relu), (Shape{kN, 5}));
  EXPECT_EQ(b.dtype(cast), DataType::kI64);
  EXPECT_EQ(b.shape(where), (Shape{kN, 5}));
  EXPECT_EQ(b.shape(clip), (Shape{kN, 5}));
  EXPECT_EQ(b.dtype(drop[1]), DataType::kBool);
}

// ---- shape manipulation -------------------------------------------------------

TEST(ShapeInferenceShapeOps, ReshapeZeroAndMinusOne) {
  Builder b;
  ValueId x = b.Input("x", {kN, 768, 14, 14});
  ValueId r1 = b.Op1("Reshape", "r1", {x, b.Ints("t1", {0, 768, -1})});
  ValueId s = b.Input("s", {2, 3, 4});
  ValueId r2 = b.Op1("Reshape", "r2", {s, b.Ints("t2", {-1, 4})});
  ValueId r3 = b.Op1("Reshape", "r3", {x, b.Ints("t3", {-1})});
  ValueId z = b.Input("z", {0, 4});
  ValueId r4 = b.Op1("Reshape", "r4", {z, b.Ints("t4", {4, 0})},
                     A({{"allowzero", int64_t{1}}}));
  ASSERT_TRUE(InferShapes(b.graph()).ok());
  EXPECT_EQ(b.shape(r1), (Shape{kN, 768, 196}));
  EXPECT_EQ(b.shape(r2), (Shape{6, 4}));
  EXPECT_EQ(b.shape(r3), (Shape{Dim::Symbol("N*150528")}));
  EXPECT_EQ(b.shape(r4), (Shape{4, 0}));
}

TEST(ShapeInferenceShapeOps, ReshapeErrors) {
  {
    Builder b;
    b.Op1("Reshape", "bad_minus_one", {b.Input("s", {2, 3, 4}), b.Ints("t", {5, -1})});
    Status s = InferShapes(b.graph());
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("bad_minus_one"), std::string::npos);
  }
  {
    Builder b;
    b.Op1("Reshape", "bad_count", {b.Input("s", {2, 3, 4}), b.Ints("t", {5, 5})});
    EXPECT_FALSE(InferShapes(b.graph()).ok());
  }
  {
    Builder b;  // target computed from a graph input: not knowable
    b.Op1("Reshape", "dyn", {b.Input("s", {2, 3}), b.Input("t", {2}, DataType::kI64)});
    Status s = InferShapes(b.graph());
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("load time"), std::string::npos) << s.message();
  }
}

TEST(ShapeInferenceShapeOps, FlattenTransposeSqueezeUnsqueeze) {
  Builder b;
  ValueId x = b.Input("x", {kN, 3, 4, 5});
  ValueId f1 = b.Op1("Flatten", "f1", {x});
  ValueId f2 = b.Op1("Flatten", "f2", {x}, A({{"axis", int64_t{2}}}));
  ValueId f0 = b.Op1("Flatten", "f0", {x}, A({{"axis", int64_t{0}}}));
  ValueId t = b.Op1("Transpose", "t", {x}, A({{"perm", Ints{0, 2, 3, 1}}}));
  ValueId tr = b.Op1("Transpose", "tr", {x});
  ValueId o = b.Input("o", {kN, 1, 4, 1});
  ValueId sq_in = b.Op1("Squeeze", "sq13", {o, b.Ints("ax", {1, -1})});
  ValueId sq_attr = b.Op1("Squeeze", "sq11", {o}, A({{"axes", Ints{3}}}));
  ValueId sq_all = b.Op1("Squeeze", "sqall", {o});
  ValueId us = b.Op1("Unsqueeze", "us13", {x, b.Ints("ax2", {0, -1})});
  ValueId us_attr = b.Op1("Unsqueeze", "us11", {x}, A({{"axes", Ints{2}}}));
  ASSERT_TRUE(InferShapes(b.graph()).ok());
  EXPECT_EQ(b.shape(f1), (Shape{kN, 60}));
  EXPECT_EQ(b.shape(f2), (Shape{Dim::Symbol("N*3"), 20}));
  EXPECT_EQ(b.shape(f0), (Shape{1, Dim::Symbol("N*60")}));
  EXPECT_EQ(b.shape(t), (Shape{kN, 4, 5, 3}));
  EXPECT_EQ(b.shape(tr), (Shape{5, 4, 3, kN}));
  EXPECT_EQ(b.shape(sq_in), (Shape{kN, 4}));
  EXPECT_EQ(b.shape(sq_attr), (Shape{kN, 1, 4}));
  EXPECT_EQ(b.shape(sq_all), (Shape{kN, 4}));
  EXPECT_EQ(b.shape(us), (Shape{1, kN, 3, 4, 5, 1}));
  EXPECT_EQ(b.shape(us_attr), (Shape{kN, 3, 1, 4, 5}));
}

TEST(ShapeInferenceShapeOps, ConcatExpandPadShapeConstantOfShape) {
  Builder b(15);
  ValueId x = b.Input("x", {kN, 3, 4, 4});
  ValueId y = b.Input("y", {kN, 5, 4, 4});
  ValueId cat = b.Op1("Concat", "cat", {x, y}, A({{"axis", int64_t{1}}}));
  ValueId cat0 = b.Op1("Concat", "cat0", {x, x}, A({{"axis", int64_t{0}}}));
  ValueId ex = b.Op1("Expand", "ex", {b.Input("e", {3, 1}), b.Ints("es", {2, 1, 6})});
  ValueId pad = b.Op1("Pad", "pad", {x, b.Ints("p", {0, 0, 1, 2, 0, 0, 3, 0})});
  ValueId sh = b.Op1("Shape", "sh", {x}, A({{"start", int64_t{1}}, {"end", int64_t{-1}}}));
  ValueId cos = b.Op1("ConstantOfShape", "cos", {b.Ints("cs", {2, 3})});
  ASSERT_TRUE(InferShapes(b.graph()).ok());
  EXPECT_EQ(b.shape(cat), (Shape{kN, 8, 4, 4}));
  EXPECT_EQ(b.shape(cat0), (Shape{Dim::Symbol("N*2"), 3, 4, 4}));
  EXPECT_EQ(b.shape(ex), (Shape{2, 3, 6}));
  EXPECT_EQ(b.shape(pad), (Shape{kN, 3, 8, 6}));
  EXPECT_EQ(b.shape(sh), (Shape{2}));
  EXPECT_EQ(b.dtype(sh), DataType::kI64);
  EXPECT_EQ(b.shape(cos), (Shape{2, 3}));
  EXPECT_EQ(b.dtype(cos), DataType::kF32);
}

TEST(ShapeInferenceShapeOps, ConcatRankMismatchIsError) {
  Builder b;
  b.Op1("Concat", "cat", {b.Input("a", {2, 3}), b.Input("c", {2, 3, 1})},
        A({{"axis", int64_t{0}}}));
  EXPECT_FALSE(InferShapes(b.graph()).ok());
}

// ---- indexing -------------------------------------------------------------------

TEST(ShapeInferenceIndexing, SliceNegativeStepsAndClamping) {
  Builder b;
  ValueId x = b.Input("x", {10, 20, 30});
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  ValueId s1 = b.Op1("Slice", "s1",
                     {x, b.Ints("st", {-3, 0}), b.Ints("en", {kMax, -1}),
                      b.Ints("ax", {0, 2}), b.Ints("sp", {1, 2})});
  ValueId s2 = b.Op1("Slice", "s2",
                     {x, b.Ints("st2", {-1}), b.Ints("en2", {kMin}),
                      b.Ints("ax2", {1}), b.Ints("sp2", {-1})});
  ValueId s3 = b.Op1("Slice", "s3",
                     {x, b.Ints("st3", {100}), b.Ints("en3", {200}), b.Ints("ax3", {-1})});
  ValueId s4 = b.Op1("Slice", "s4",
                     {x, b.Ints("st4", {8}), b.Ints("en4", {1}),
                      b.Ints("ax4", {0}), b.Ints("sp4", {-3})});
  ASSERT_TRUE(InferShapes(b.graph()).ok());
  EXPECT_EQ(b.shape(s1), (Shape{3, 20, 15}));  // rows 7..9; cols 0,2,..,28
  EXPECT_EQ(b.shape(s2), (Shape{10, 20, 30}));  // full reverse
  EXPECT_EQ(b.shape(s3), (Shape{10, 20, 0}));   // clamped to empty
  EXPECT_EQ(b.shape(s4), (Shape{3, 20, 30}));  // rows 8, 5, 2
}

TEST(ShapeInferenceIndexing, SliceOpset9Attributes) {
  Builder b(9);
  ValueId x = b.Input("x", {kN, 20});
  ValueId s = b.Op1("Slice", "s", {x},
                    A({{"starts", Ints{2}}, {"ends", Ints{-2}}, {"axes", Ints{1}}}));
  ASSERT_TRUE(InferShapes(b.graph()).ok());
  EXPECT_EQ(b.shape(s), (Shape{kN, 16}));
}

TEST(ShapeInferenceIndexing, GatherAnyAxis) {
  Builder b;
  ValueId x = b.Input("x", {5, 6, 7});
  ValueId i2 = b.graph().AddConstant("i2", DataType::kI64, {2, 3},
                                      TensorData::Copy(std::vector<int64_t>{0, 1, 2, 3, 4, -1}.data(), 48));
  ValueId g1 = b.Op1("Gather", "g1", {x, i2}, A({{"axis", int64_t{1}}}));
  ValueId g0 = b.Op1("Gather", "g0", {x, b.Ints("s", {4}, true)});
  ValueId gl = b.Op1("Gather", "gl", {x, b.Ints("l", {6, 0})}, A({{"axis", int64_t{-1}}}));
  ASSERT_TRUE(InferShapes(b.graph()).ok());
  EXPECT_EQ(b.shape(g1), (Shape{5, 2, 3, 7}));
  EXPECT_EQ(b.shape(g0), (Shape{6, 7}));
  EXPECT_EQ(b.shape(gl), (Shape{5, 6, 2}));

  Builder bad;
  bad.Op1("Gather", "gbad", {bad.Input("x", {5, 6}), bad.Ints("i", {5}, true)});
  EXPECT_FALSE(InferShapes(bad.graph()).ok());
}

TEST(ShapeInferenceIndexing, ElementAndNDGathersAndScatters) {
  Builder b;
  ValueId x = b.Input("x", {kN, 4, 5});
  ValueId idx = b.Input("idx", {kN, 4, 2}, DataType::kI64);
  ValueId ge = b.Op1("GatherElements", "ge", {x, idx}, A({{"axis", int64_t{-1}}}));
  ValueId se = b.Op1("ScatterElements", "se", {x, idx, b.Input("u", {kN, 4, 2})},
                     A({{"axis", int64_t{2}}, {"reduction", std::string("add")}}));
  ValueId pairs = b.Input("pairs", {kN, 3, 1}, DataType::kI64);
  ValueId nd = b.Op1("GatherND", "nd", {x, pairs}, A({{"batch_dims", int64_t{1}}}));
  ASSERT_TRUE(InferShapes(b.graph()).ok());
  EXPECT_EQ(b.shape(ge), (Shape{kN, 4, 2}));
  EXPECT_EQ(b.shape(se), (Shape{kN, 4, 5}));
  EXPECT_EQ(b.shape(nd), (Shape{kN, 3, 5}));

  auto error = [](const std::string& op, std::vector<Shape> shapes, Attributes attrs) {
    Builder bad;
    std::vector<ValueId> in;
    for (size_t i = 0; i < shapes.size(); ++i)
      in.push_back(bad.Input("in" + std::to_string(i), shapes[i],
                             i == 1 ? DataType::kI64 : DataType::kF32));
    bad.Op1(op, "bad", in, std::move(attrs));
    return InferShapes(bad.graph()).ToString();
  };
  EXPECT_NE(error("GatherElements", {{3, 4}, {3, 4}}, A({{"axis", int64_t{2}}}))
                .find("axis 2 is out of range for rank 2"),
            std::string::npos);
  EXPECT_NE(error("GatherElements", {{3, 4}, {2, 5}}, {}).find("exceed data [3,4] on axis 1"),
            std::string::npos);
  EXPECT_NE(error("ScatterElements", {{3, 4}, {2, 4}, {2, 3}}, {})
                .find("updates [2,3] must have the shape of indices [2,4]"),
            std::string::npos);
  EXPECT_NE(error("ScatterElements", {{3}, {2}, {2}}, A({{"reduction", std::string("avg")}}))
                .find("unknown reduction 'avg'"),
            std::string::npos);
  EXPECT_NE(error("GatherND", {{3, 4}, {3, 3}}, {}).find("indices' last dimension 3 must be in [1, 2]"),
            std::string::npos);
  EXPECT_NE(error("GatherND", {{3, 4}, {3, 1}}, A({{"batch_dims", int64_t{2}}})).find("batch_dims 2"),
            std::string::npos);
}

TEST(ShapeInferenceIndexing, OneHotDepthFromAConstant) {
  Builder b;
  ValueId indices = b.Input("i", {kN, 3}, DataType::kI64);
  ValueId values = b.Floats("v", {2});
  ValueId last = b.Op1("OneHot", "last", {indices, b.Ints("d", {7}, true), values});
  ValueId middle =
      b.Op1("OneHot", "middle", {indices, b.Ints("d2", {4}), values}, A({{"axis", int64_t{1}}}));
  ASSERT_TRUE(InferShapes(b.graph()).ok());
  EXPECT_EQ(b.shape(last), (Shape{kN, 3, 7}));
  EXPECT_EQ(b.shape(middle), (Shape{kN, 4, 3}));
  EXPECT_EQ(b.dtype(last), DataType::kF32);

  Builder computed;
  computed.Op1("OneHot", "oh", {computed.Input("i", {3}, DataType::kI64),
                                computed.Input("depth", {}, DataType::kF32), computed.Floats("v", {2})});
  const Status s = InferShapes(computed.graph());
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented) << s.ToString();
  EXPECT_NE(s.ToString().find("depth must be known at load time"), std::string::npos) << s.ToString();
}

TEST(ShapeInferenceShapeOps, DepthToSpaceAndBack) {
  Builder b;
  ValueId x = b.Input("x", {kN, 8, 3, 5});
  ValueId up = b.Op1("DepthToSpace", "up", {x}, A({{"blocksize", int64_t{2}}, {"mode", std::string("CRD")}}));
  ValueId down = b.Op1("SpaceToDepth", "down", {b.Input("y", {kN, 3, 4, 6})}, A({{"blocksize", int64_t{2}}}));
  ASSERT_TRUE(InferShapes(b.graph()).ok());
  EXPECT_EQ(b.shape(up), (Shape{kN, 2, 6, 10}));
  EXPECT_EQ(b.shape(down), (Shape{kN, 12, 2, 3}));

  Builder bad;
  bad.Op1("DepthToSpace", "d2s", {bad.Input("x", {1, 6, 2, 2})}, A({{"blocksize", int64_t{2}}}));
  EXPECT_NE(InferShapes(bad.graph()).ToString().find("channels 6 are not a multiple of blocksize^2 4"),
            std::string::npos);
  Builder mode;
  mode.Op1("DepthToSpace", "d2s", {mode.Input("x", {1, 8, 2, 2})},
           A({{"blocksize", int64_t{2}}, {"mode", std::string("RCD")}}));
  EXPECT_NE(InferShapes(mode.graph()).ToString().find("mode 'RCD' must be DCR or CRD"), std::string::npos);
}

TEST(ShapeInferenceElementwise, ComparisonsAndLogicalOpsGiveBoolAndFoldValues) {
  Builder b;
  ValueId x = b.Input("x", {kN, 1, 4});
  ValueId gt = b.Op1("Greater", "gt", {x, b.Input("y", {3, 1})});
  ValueId both = b.Op1("And", "and", {gt, b.Op1("LessOrEqual", "le", {x, b.Floats("c", {4})})});
  // Values: Greater([3, 5], 4) = [0, 1]; Xor with [1, 1] = [1, 0].
  ValueId g = b.Op1("Greater", "g", {b.Ints("a", {3, 5}), b.Ints("four", {4}, true)});
  ValueId xr = b.Op1("Xor", "xor", {g, b.Op1("Equal", "eq", {b.Ints("p", {1, 2}), b.Ints("q", {1, 2})})});
  ValueId prelu = b.Op1("PRelu", "prelu", {x, b.Floats("slope", {4})});
  ValueId mean = b.Op1("Mean", "mean", {x, b.Input("m", {2, 1}), b.Floats("m2", {1})});
  SymbolicValues values;
  const Status s = InferShapes(b.graph(), &values);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(b.shape(both), (Shape{kN, 3, 4}));
  EXPECT_EQ(b.dtype(both), DataType::kBool);
  EXPECT_EQ(values.at(g), (DimValues{0, 1}));
  EXPECT_EQ(values.at(xr), (DimValues{1, 0}));
  EXPECT_EQ(b.shape(prelu), (Shape{kN, 1, 4}));
  EXPECT_EQ(b.shape(mean), (Shape{kN, 2, 4}));

  Builder not_bool;
  not_bool.Op1("Or", "or", {not_bool.Input("a", {2}), not_bool.Input("b", {2})});
  EXPECT_NE(InferShapes(not_bool.graph()).ToString().find("input 0 must be bool, is f32"),
            std::string::npos);
  Builder slope;
  slope.Op1("PRelu", "p", {slope.Input("x", {2, 3}), slope.Input("s", {2, 1, 3})});
  EXPECT_NE(InferShapes(slope.graph()).ToString().find("slope [2,1,3] does not broadcast to X [2,3]"),
            std::string::npos);
  Builder shift;
  shift.Op1("BitShift", "s", {shift.Input("x", {2}, DataType::kU8), shift.Input("y", {2}, DataType::kU8)},
            A({{"direction", std::string("UP")}}));
  EXPECT_NE(InferShapes(shift.graph()).ToString().find("direction 'UP' must be"), std::string::npos);
}

TEST(ShapeInferenceIndexing, Split) {
  Builder b(13);
  ValueId x = b.Input("x", {kN, 10});
  std::vector<ValueId> parts =
      b.Op("Split", "sp", {x, b.Ints("split", {3, 7})}, A({{"axis", int64_t{1}}}), 2);
  ValueId y = b.Input("y", {4, 6});
  std::vector<ValueId> even = b.Op("Split", "even", {y}, {}, 2);
  Builder b11(11);
  std::vector<ValueId> attr = b11.Op("Split", "attr", {b11.Input("x", {2, 9})},
                                     A({{"axis", int64_t{-1}}, {"split", Ints{2, 3, 4}}}), 3);
  ASSERT_TRUE(InferShapes(b.graph()).ok());
  ASSERT_TRUE(InferShapes(b11.graph()).ok());
  EXPECT_EQ(b.shape(parts[0]), (Shape{kN, 3}));
  EXPECT_EQ(b.shape(parts[1]), (Shape{kN, 7}));
  EXPECT_EQ(b.shape(even[0]), (Shape{2, 6}));
  EXPECT_EQ(b.shape(even[1]), (Shape{2, 6}));
  EXPECT_EQ(b11.shape(attr[2]), (Shape{2, 4}));

  Builder bad(13);
  bad.Op("Split", "uneven", {bad.Input("x", {5})}, {}, 2);
  EXPECT_FALSE(InferShapes(bad.graph()).ok());
  Builder bad_sum(13);
  bad_sum.Op("Split", "sum", {bad_sum.Input("x", {5}), bad_sum.Ints("s", {1, 2})}, {}, 2);
  EXPECT_FALSE(InferShapes(bad_sum.graph()).ok());
}

// ---- matrix products -------------------------------------------------------------

TEST(ShapeInferenceMatMul, VectorsAndBatchedBroadcast) {
  Builder b;
  ValueId v3 = b.Input("v3", {3});
  ValueId m34 = b.Input("m34", {3, 4});
  ValueId t234 = b.Input("t234", {2, 3, 4});
  ValueId v4 = b.Input("v4", {4});
  ValueId vm = b.Op1("MatMul", "vm", {v3, m34});
  ValueId tv = b.Op1("MatMul", "tv", {t234, v4});
  ValueId vv = b.Op1("MatMul", "vv", {v3, v3});
  ValueId bb = b.Op1("MatMul", "bb", {b.Input("a", {kN, 1, 5, 6}), b.Input("c", {3, 6, 7})});
  ASSERT_TRUE(InferShapes(b.graph()).ok());
  EXPECT_EQ(b.shape(vm), (Shape{4}));
  EXPECT_EQ(b.shape(tv), (Shape{2, 3}));
  EXPECT_EQ(b.shape(vv), (Shape{}));
  EXPECT_EQ(b.shape(bb), (Shape{kN, 3, 5, 7}));
}

TEST(ShapeInferenceMatMul, InnerMismatchIsError) {
  Builder b;
  b.Op1("MatMul", "mm_bad", {b.Input("a", {2, 3}), b.Input("c", {4, 5})});
  Status s = InferShapes(b.graph());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("mm_bad"), std::string::npos);
  EXPECT_NE(s.message().find("inner"), std::string::npos);
}

TEST(ShapeInferenceMatMul, GemmTransposes) {
  Builder b;
  ValueId a = b.Input("a", {kN, 512});
  ValueId y = b.Op1("Gemm", "fc", {a, b.Floats("w", {1000, 512}), b.Floats("c", {1000})},
                    A({{"transB", int64_t{1}}, {"activation", std::string("Relu")}}));
  ValueId at = b.Input("at", {7, 3});
  ValueId z = b.Op1("Gemm", "ta", {at, b.Floats("w2", {7, 2})}, A({{"transA", int64_t{1}}}));
  ASSERT_TRUE(InferShapes(b.graph()).ok());
  EXPECT_EQ(b.shape(y), (Shape{kN, 1000}));
  EXPECT_EQ(b.shape(z), (Shape{3, 2}));

  Builder bad;
  bad.Op1("Gemm", "g", {bad.Input("a", {2, 3}), bad.Floats("w", {4, 3})});
  EXPECT_FALSE(InferShapes(bad.graph()).ok());
}

// ---- reductions and normalization -------------------------------------------------

TEST(ShapeInferenceReduce, AxesKeepdimsNoop) {
  Builder b(13);
  ValueId x = b.Input("x", {kN, 8, 4, 4});
  ValueId mean = b.Op1("ReduceMean", "m", {x}, A({{"axes", Ints{2, 3}}}));
  ValueId mean0 = b.Op1("ReduceMean", "m0", {x},
                        A({{"axes", Ints{-1}}, {"keepdims", int64_t{0}}}));
  ValueId sum_in = b.Op1("ReduceSum", "s13", {x, b.Ints("ax", {1})},
                         A({{"keepdims", int64_t{0}}}));
  ValueId sum_all = b.Op1("ReduceSum", "sall", {x});
  ValueId noop = b.Op1("ReduceSum", "noop", {x, b.Ints("empty", {})},
                       A({{"noop_with_empty_axes", int64_t{1}}}));
  ValueId mx = b.Op1("ReduceMax", "mx", {x}, A({{"axes", Ints{1}}}));
  ASSERT_TRUE(InferShapes(b.graph()).ok());
  EXPECT_EQ(b.shape(mean), (Shape{kN, 8, 1, 1}));
  EXPECT_EQ(b.shape(mean0), (Shape{kN, 8, 4}));
  EXPECT_EQ(b.shape(sum_in), (Shape{kN, 4, 4}));
  EXPECT_EQ(b.shape(sum_all), (Shape{1, 1, 1, 1}));
  EXPECT_EQ(b.shape(noop), (Shape{kN, 8, 4, 4}));
  EXPECT_EQ(b.shape(mx), (Shape{kN, 1, 4, 4}));
}

TEST(ShapeInferenceNormalization, LayerNormalizationOutputs) {
  Builder b;
  ValueId x = b.Input("x", {kN, 197, 768});
  std::vector<ValueId> outs = b.Op("LayerNormalization", "ln",
                                   {x, b.Floats("g", {768}), b.Floats("bb", {768})},
                                   A({{"axis", int64_t{-1}}, {"epsilon", 1e-6f}}), 3);
  ASSERT_TRUE(InferShapes(b.graph()).ok());
  EXPECT_EQ(b.shape(outs[0]), (Shape{kN, 197, 768}));
  EXPECT_EQ(b.shape(outs[1]), (Shape{kN, 197, 1}));
  EXPECT_EQ(b.shape(outs[2]), (Shape{kN, 197, 1}));
  EXPECT_EQ(b.dtype(outs[1]), DataType::kF32);

  Builder bad;
  bad.Op1("LayerNormalization", "ln_bad",
          {bad.Input("x", {2, 5, 6}), bad.Floats("g", {5})});
  EXPECT_FALSE(InferShapes(bad.graph()).ok());
}

TEST(ShapeInferenceNormalization, BatchNormalization) {
  Builder b;
  ValueId x = b.Input("x", {kN, 16, 7, 7});
  ValueId y = b.Op1("BatchNormalization", "bn",
                    {x, b.Floats("s", {16}), b.Floats("b", {16}), b.Floats("m", {16}),
                     b.Floats("v", {16})});
  ASSERT_TRUE(InferShapes(b.graph()).ok());
  EXPECT_EQ(b.shape(y), (Shape{kN, 16, 7, 7}));

  Builder bad;
  bad.Op1("BatchNormalization", "bn",
          {bad.Input("x", {1, 16, 7, 7}), bad.Floats("s", {8}), bad.Floats("b", {16}),
           bad.Floats("m", {16}), bad.Floats("v", {16})});
  EXPECT_FALSE(InferShapes(bad.graph()).ok());
}

TEST(ShapeInferenceNormalization, SoftmaxAxisPerOpset) {
  // Opset 11: default axis 1 (coerce to 2-D); axis == rank is still valid.
  Builder b11(11);
  ValueId x11 = b11.Input("x", {2, 3, 4});
  ValueId d11 = b11.Op1("Softmax", "d", {x11});
  ValueId r11 = b11.Op1("Softmax", "r", {x11}, A({{"axis", int64_t{3}}}));
  ASSERT_TRUE(InferShapes(b11.graph()).ok());
  EXPECT_EQ(b11.shape(d11), (Shape{2, 3, 4}));
  EXPECT_EQ(b11.shape(r11), (Shape{2, 3, 4}));
  // Opset 13: the axis must name a dimension.
  Builder b13(13);
  ValueId d13 = b13.Op1("Softmax", "d", {b13.Input("x", {2, 3, 4})});
  ASSERT_TRUE(InferShapes(b13.graph()).ok());
  EXPECT_EQ(b13.shape(d13), (Shape{2, 3, 4}));
  Builder bad(13);
  bad.Op1("Softmax", "sm", {bad.Input("x", {2, 3, 4})}, A({{"axis", int64_t{3}}}));
  EXPECT_FALSE(InferShapes(bad.graph()).ok());
}

// ---- symbolic batch propagation ---------------------------------------------------

TEST(ShapeInferenceSymbolic, PyTorchReshapeChainKeepsBatch) {
  Builder b;
  ValueId x = b.Input("x", {kN, 3, 4, 4});
  ValueId shape = b.Op1("Shape", "shape", {x});
  ValueId batch = b.Op1("Gather", "gather", {shape, b.Ints("zero", {0}, true)});
  ValueId un = b.Op1("Unsqueeze", "unsqueeze", {batch, b.Ints("axes", {0})});
  ValueId target = b.Op1("Concat", "concat", {un, b.Ints("rest", {-1})},
                         A({{"axis", int64_t{0}}}));
  ValueId flat = b.Op1("Reshape", "reshape", {x, target});
  // Channel-shuffle style: [N, 3*4, 4] via Mul/Div by constants.
  ValueId times = b.Op1("Mul", "times", {batch, b.Ints("twelve", {12}, true)});
  ValueId cast = b.Op1("Cast", "cast", {times}, A({{"to", int64_t{7}}}));
  ValueId t2 = b.Op1("Concat", "concat2",
                     {b.Op1("Unsqueeze", "u2", {cast, b.Ints("axes2", {0})}),
                      b.Ints("four", {4})},
                     A({{"axis", int64_t{0}}}));
  ValueId split_batch = b.Op1("Reshape", "reshape2", {x, t2});
  ValueId back = b.Op1("Div", "div", {times, b.Ints("twelve2", {12}, true)});
  ValueId t3 = b.Op1("Concat", "concat3",
                     {b.Op1("Unsqueeze", "u3", {back, b.Ints("axes3", {0})}),
                      b.Ints("minus", {-1})},
                     A({{"axis", int64_t{0}}}));
  ValueId restored = b.Op1("Reshape", "reshape3", {split_batch, t3});
  ASSERT_TRUE(InferShapes(b.graph()).ok());
  EXPECT_EQ(b.shape(flat), (Shape{kN, 48}));
  EXPECT_EQ(b.shape(split_batch), (Shape{Dim::Symbol("N*12"), 4}));
  EXPECT_EQ(b.shape(restored), (Shape{kN, 48}));
}

TEST(ShapeInferenceSymbolic, ClassTokenExpandChain) {
  // vit_b_16: Expand(class_token, Where(Equal(t, -1 * ones), ones, t)) with
  // t = [N, -1, -1].
  Builder b;
  ValueId x = b.Input("x", {kN, 196, 8});
  ValueId shape = b.Op1("Shape", "shape", {x});
  ValueId batch = b.Op1("Gather", "gather", {shape, b.Ints("zero", {0}, true)});
  ValueId un = b.Op1("Unsqueeze", "unsqueeze", {batch, b.Ints("axes", {0})});
  ValueId t = b.Op1("Concat", "concat", {un, b.Ints("m1", {-1}), b.Ints("m2", {-1})},
                    A({{"axis", int64_t{0}}}));
  ValueId t_flat = b.Op1("Reshape", "reshape", {t, b.Ints("flat", {-1})});
  ValueId t_shape = b.Op1("Shape", "shape2", {t_flat});
  TensorAttr one;
  one.dtype = DataType::kI64;
  one.dims = {1};
  int64_t one_value = 1;
  one.data = TensorData::Copy(&one_value, 8);
  ValueId ones = b.Op1("ConstantOfShape", "cos", {t_shape}, A({{"value", one}}));
  ValueId minus = b.Op1("Mul", "mul", {ones, b.Ints("neg", {-1}, true)});
  ValueId eq = b.Op1("Equal", "equal", {t_flat, minus});
  ValueId where = b.Op1("Where", "where", {eq, ones, t_flat});
  ValueId token = b.Floats("class_token", {1, 1, 8});
  ValueId expanded = b.Op1("Expand", "expand", {token, where});
  ValueId cat = b.Op1("Concat", "cat", {expanded, x}, A({{"axis", int64_t{1}}}));
  ASSERT_TRUE(InferShapes(b.graph()).ok());
  EXPECT_EQ(b.shape(ones), (Shape{3}));
  EXPECT_EQ(b.dtype(ones), DataType::kI64);
  EXPECT_EQ(b.shape(expanded), (Shape{kN, 1, 8}));
  EXPECT_EQ(b.shape(cat), (Shape{kN, 197, 8}));
}

TEST(ShapeInferenceSymbolic, ValuesExposedToCallers) {
  Builder b;
  ValueId x = b.Input("x", {kN, 3});
  ValueId shape = b.Op1("Shape", "shape", {x});
  ValueId sliced = b.Op1("Slice", "slice",
                         {shape, b.Ints("s", {1}), b.Ints("e", {2})});
  SymbolicValues values;
  ASSERT_TRUE(InferShapes(b.graph(), &values).ok());
  EXPECT_EQ(values.at(shape), (DimValues{kN, 3}));
  EXPECT_EQ(values.at(sliced), (DimValues{3}));
}

TEST(ShapeInferenceSymbolic, SwinWindowPaddingChain) {
  // torchvision's swin pads H and W up to a multiple of the window (7):
  // pads = Reshape(Transpose(Slice(Reshape(Concat(C: 0, 0, W: 0, (7 - W % 7) % 7,
  // H: 0, (7 - H % 7) % 7, N: 0, 0), [-1, 2]), step -1), [1, 0]), [-1]), then
  // Pad(x, pads). Values flow through Mod and through 2-D Reshape, Slice and
  // Transpose; Range and Not fold from constants.
  Builder b;
  ValueId x = b.Input("x", {kN, 54, 52, 8});
  ValueId shape = b.Op1("Shape", "shape", {x});
  auto padding = [&](int64_t axis, const std::string& tag) {
    ValueId extent = b.Op1("Gather", "g" + tag, {shape, b.Ints("i" + tag, {axis}, true)});
    ValueId m = b.Op1("Mod", "mod" + tag, {extent, b.Ints("w" + tag, {7}, true)});
    ValueId rest = b.Op1("Sub", "sub" + tag, {b.Ints("w2" + tag, {7}, true), m});
    ValueId again = b.Op1("Mod", "mod2" + tag, {rest, b.Ints("w3" + tag, {7}, true)});
    return b.Op1("Unsqueeze", "u" + tag, {again, b.Ints("a" + tag, {0})});
  };
  ValueId flat = b.Op1("Concat", "cat",
                       {b.Ints("c0", {0, 0, 0}), padding(2, "w"), b.Ints("c1", {0}), padding(1, "h"),
                        b.Ints("c2", {0, 0})},
                       A({{"axis", int64_t{0}}}));
  ValueId pairs = b.Op1("Reshape", "pairs", {flat, b.Ints("shape2", {-1, 2})});
  ValueId flipped = b.Op1("Slice", "flip",
                          {pairs, b.Ints("s", {-1}), b.Ints("e", {-100}), b.Ints("ax", {0}),
                           b.Ints("st", {-1})});
  ValueId columns = b.Op1("Transpose", "tr", {flipped}, A({{"perm", Ints{1, 0}}}));
  ValueId pads = b.Op1("Reshape", "pads", {columns, b.Ints("shape1", {-1})});
  ValueId padded = b.Op1("Pad", "pad", {x, pads});
  ValueId range = b.Op1("Range", "range", {b.Ints("r0", {0}, true), b.Ints("r1", {7}, true),
                                           b.Ints("r2", {3}, true)});
  SymbolicValues values;
  const Status inferred = InferShapes(b.graph(), &values);
  ASSERT_TRUE(inferred.ok()) << inferred.ToString();
  // [0,0, 0,(7-52%7)%7=4, 0,(7-54%7)%7=2, 0,0,0,0] -> rows flipped -> begins then ends.
  EXPECT_EQ(values.at(pads), (DimValues{0, 0, 0, 0, 0, 2, 4, 0}));
  EXPECT_EQ(b.shape(padded), (Shape{kN, 56, 56, 8}));
  EXPECT_EQ(values.at(range), (DimValues{0, 3, 6}));
  EXPECT_EQ(b.shape(range), (Shape{3}));
}

TEST(ShapeInferenceNewOps, ArgReduceTopKTriluEyeLikeSizeCastLikeAndLosses) {
  Builder b(14);
  ValueId x = b.Input("x", {kN, 3, 4});
  ValueId arg = b.Op1("ArgMax", "argmax", {x}, A({{"axis", int64_t{-1}}}));
  ValueId arg_flat = b.Op1("ArgMin", "argmin", {x}, A({{"axis", int64_t{1}}, {"keepdims", int64_t{0}}}));
  std::vector<ValueId> top = b.Op("TopK", "topk", {x, b.Ints("k", {2})}, A({{"axis", int64_t{1}}}), 2);
  ValueId tri = b.Op1("Trilu", "trilu", {x, b.Input("k_runtime", {}, DataType::kI64)});
  ValueId eye = b.Op1("EyeLike", "eye", {b.Input("m", {3, 5})}, A({{"dtype", int64_t{7}}}));
  ValueId size = b.Op1("Size", "size", {x});
  ValueId like = b.Op1("CastLike", "like", {x, b.Input("t", {1}, DataType::kI32)});
  ValueId scores = b.Input("scores", {kN, 5, 2, 3});
  ValueId labels = b.Input("labels", {kN, 2, 3}, DataType::kI64);
  ValueId nll_none = b.Op1("NegativeLogLikelihoodLoss", "nll", {scores, labels},
                           A({{"reduction", std::string("none")}}));
  std::vector<ValueId> sce = b.Op("SoftmaxCrossEntropyLoss", "sce", {scores, labels, b.Floats("w", {5})}, {}, 2);
  ValueId log_sm = b.Op1("LogSoftmax", "logsm", {x}, A({{"axis", int64_t{1}}}));
  // ONNX's LayerNormalization body for axis -2: ConstantOfShape(Neg([-2])) is [1, 1].
  ValueId ones = b.Op1("ConstantOfShape", "ones", {b.Op1("Neg", "neg", {b.Ints("axis1d", {-2})})});
  SymbolicValues values;
  const Status inferred = InferShapes(b.graph(), &values);
  ASSERT_TRUE(inferred.ok()) << inferred.ToString();
  EXPECT_EQ(b.shape(arg), (Shape{kN, 3, 1}));
  EXPECT_EQ(b.dtype(arg), DataType::kI64);
  EXPECT_EQ(b.shape(arg_flat), (Shape{kN, 4}));
  EXPECT_EQ(b.shape(top[0]), (Shape{kN, 2, 4}));
  EXPECT_EQ(b.dtype(top[1]), DataType::kI64);
  EXPECT_EQ(b.shape(tri), (Shape{kN, 3, 4}));
  EXPECT_EQ(b.shape(eye), (Shape{3, 5}));
  EXPECT_EQ(b.dtype(eye), DataType::kI64);  // ONNX dtype 7
  EXPECT_EQ(b.shape(size), Shape{});
  EXPECT_EQ(values.at(size), (DimValues{Dim::Symbol("N*12")}));
  EXPECT_EQ(b.dtype(like), DataType::kI32);
  EXPECT_EQ(b.shape(nll_none), (Shape{kN, 2, 3}));
  EXPECT_EQ(b.shape(sce[0]), Shape{});  // reduction defaults to mean
  EXPECT_EQ(b.shape(sce[1]), (Shape{kN, 5, 2, 3}));
  EXPECT_EQ(b.shape(log_sm), (Shape{kN, 3, 4}));
  EXPECT_EQ(b.shape(ones), (Shape{2}));

  // Bad attributes and inputs are errors that name the attribute or input and the value.
  auto error_of = [](const std::string& op, std::vector<Shape> shapes, Attributes attrs,
                     std::vector<DataType> dtypes = {}) {
    Builder e(14);
    std::vector<ValueId> inputs;
    for (size_t i = 0; i < shapes.size(); ++i)
      inputs.push_back(e.Input("in" + std::to_string(i), shapes[i],
                               i < dtypes.size() ? dtypes[i] : DataType::kF32));
    e.Op(op, "bad", inputs, std::move(attrs), op == "TopK" ? 2 : 1);
    return InferShapes(e.graph()).ToString();
  };
  EXPECT_NE(error_of("ArgMax", {{2, 3}}, A({{"axis", int64_t{2}}})).find("axis 2 is out of range"),
            std::string::npos);
  EXPECT_NE(error_of("ArgMin", {{2, 3}}, A({{"select_last_index", int64_t{2}}}))
                .find("select_last_index must be 0 or 1, is 2"),
            std::string::npos);
  EXPECT_NE(error_of("Trilu", {{4}}, {}).find("rank >= 2"), std::string::npos);
  EXPECT_NE(error_of("TopK", {{4, 5}, {1}}, {}, {DataType::kF32, DataType::kI64})
                .find("K must be known at load time"),
            std::string::npos);
  EXPECT_NE(error_of("NegativeLogLikelihoodLoss", {{2, 3}, {2}}, A({{"reduction", std::string("avg")}}),
                     {DataType::kF32, DataType::kI64})
                .find("reduction 'avg'"),
            std::string::npos);
  EXPECT_NE(error_of("SoftmaxCrossEntropyLoss", {{2, 3, 4}, {2, 5}}, {}, {DataType::kF32, DataType::kI64})
                .find("does not match scores"),
            std::string::npos);
  EXPECT_NE(error_of("EyeLike", {{2, 3, 4}}, {}).find("must be 2-D"), std::string::npos);
  Builder big_k(14);
  big_k.Op("TopK", "topk", {big_k.Input("x", {2, 3}), big_k.Ints("k", {4})}, {}, 2);
  EXPECT_NE(InferShapes(big_k.graph()).ToString().find("K 4 is outside [0, 3]"), std::string::npos);
}

TEST(ShapeInferenceSymbolic, DimProductArithmetic) {
  EXPECT_EQ(MultiplyDims(kN, Dim(197)), Dim::Symbol("N*197"));
  EXPECT_EQ(MultiplyDims(Dim::Symbol("N*197"), Dim(1)), Dim::Symbol("N*197"));
  EXPECT_EQ(MultiplyDims(Dim(3), Dim(4)), Dim(12));
  std::optional<DimProduct> q = DivideProducts(ToProduct(Dim::Symbol("N*12")), ToProduct(Dim(4)));
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(FromProduct(*q), Dim::Symbol("N*3"));
  EXPECT_FALSE(DivideProducts(ToProduct(Dim::Symbol("N*12")), ToProduct(Dim(5))).has_value());
  EXPECT_FALSE(DivideProducts(ToProduct(Dim(12)), ToProduct(kN)).has_value());
}

// ---- recurrent -----------------------------------------------------------------------

TEST(ShapeInferenceRecurrent, OutputsFollowLayoutDirectionAndHidden) {
  const Dim kN = Dim::Symbol("N");
  {  // LSTM, bidirectional, layout 0: Y [seq, 2, N, 5], Y_h and Y_c [2, N, 5].
    Builder b;
    auto outs = b.Op("LSTM", "lstm",
                     {b.Input("x", {7, kN, 3}), b.Floats("w", {2, 20, 3}), b.Floats("r", {2, 20, 5})},
                     A({{"direction", std::string("bidirectional")}, {"hidden_size", int64_t{5}}}), 3);
    ASSERT_TRUE(InferShapes(b.graph()).ok());
    EXPECT_EQ(b.shape(outs[0]), (Shape{7, 2, kN, 5}));
    EXPECT_EQ(b.shape(outs[1]), (Shape{2, kN, 5}));
    EXPECT_EQ(b.shape(outs[2]), (Shape{2, kN, 5}));
  }
  {  // GRU, layout 1, hidden from R: Y [N, seq, 1, 4], Y_h [N, 1, 4].
    Builder b;
    auto outs = b.Op("GRU", "gru",
                     {b.Input("x", {kN, 6, 3}), b.Floats("w", {1, 12, 3}), b.Floats("r", {1, 12, 4})},
                     A({{"layout", int64_t{1}}}), 2);
    ASSERT_TRUE(InferShapes(b.graph()).ok());
    EXPECT_EQ(b.shape(outs[0]), (Shape{kN, 6, 1, 4}));
    EXPECT_EQ(b.shape(outs[1]), (Shape{kN, 1, 4}));
  }
}

TEST(ShapeInferenceRecurrent, BadAttributesNameNodeAttributeAndValue) {
  auto error = [](const std::string& op, int64_t gates, Attributes attrs, Shape w_shape = {}) {
    Builder b;
    if (w_shape.empty()) w_shape = {1, 2 * gates, 3};
    b.Op1(op, "cell", {b.Input("x", {4, 1, 3}), b.Floats("w", w_shape), b.Floats("r", {1, 2 * gates, 2})},
          std::move(attrs));
    Status s = InferShapes(b.graph());
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find("cell"), std::string::npos) << s.message();
    return s.message();
  };
  EXPECT_NE(error("RNN", 1, A({{"direction", std::string("sideways")}})).find("direction 'sideways'"),
            std::string::npos);
  EXPECT_NE(error("LSTM", 4, A({{"layout", int64_t{2}}})).find("layout 2"), std::string::npos);
  EXPECT_NE(error("GRU", 3, A({{"activations", std::vector<std::string>{"Sigmoid", "Swish"}}}))
                .find("unknown function 'Swish'"),
            std::string::npos);
  EXPECT_NE(error("RNN", 1, A({{"activations", std::vector<std::string>{"Tanh", "Tanh"}}}))
                .find("activations lists 2"),
            std::string::npos);
  EXPECT_NE(error("RNN", 1, A({{"linear_before_reset", int64_t{1}}})).find("GRU only"),
            std::string::npos);
  // W's rows must be gates * hidden_size: 8 rows is LSTM hidden 2, not hidden 3.
  EXPECT_NE(error("LSTM", 4, A({{"hidden_size", int64_t{3}}})).find("W [1,8,3] must be [1,12,3]"),
            std::string::npos);
}

TEST(ShapeInferenceMisc, DetMaxUnpoolRoiAlignReverseSequence) {
  const Dim kN = Dim::Symbol("N");
  Builder b(16);
  const ValueId det = b.Op1("Det", "det", {b.Input("m", {kN, 3, 3})});
  const ValueId unpooled = b.Op1("MaxUnpool", "unpool",
                                 {b.Input("x", {kN, 2, 3, 4}), b.Input("i", {kN, 2, 3, 4}, DataType::kI64)},
                                 A({{"kernel_shape", Ints{2, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{0, 1, 1, 0}}}));
  const ValueId wide = b.Op1("MaxUnpool", "unpool_shape",
                             {b.Input("x2", {1, 1, 2, 2}), b.Input("i2", {1, 1, 2, 2}, DataType::kI64),
                              b.Ints("shape", {1, 1, 5, 5})},
                             A({{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}}));
  const ValueId roi = b.Op1("RoiAlign", "roi",
                            {b.Input("f", {kN, 8, 14, 14}), b.Input("boxes", {Dim::Symbol("R"), 4}),
                             b.Input("bi", {Dim::Symbol("R")}, DataType::kI64)},
                            A({{"output_height", int64_t{7}}, {"output_width", int64_t{5}}}));
  const ValueId rev = b.Op1("ReverseSequence", "rev",
                            {b.Input("s", {6, kN, 3}), b.Input("lens", {kN}, DataType::kI64)});
  ASSERT_TRUE(InferShapes(b.graph()).ok());
  EXPECT_EQ(b.shape(det), (Shape{kN}));
  // (3 - 1) * 2 + 2 - 0 - 1 = 5 and (4 - 1) * 2 + 3 - 1 - 0 = 8.
  EXPECT_EQ(b.shape(unpooled), (Shape{kN, 2, 5, 8}));
  EXPECT_EQ(b.shape(wide), (Shape{1, 1, 5, 5}));
  EXPECT_EQ(b.shape(roi), (Shape{Dim::Symbol("R"), 8, 7, 5}));
  EXPECT_EQ(b.shape(rev), (Shape{6, kN, 3}));
}

TEST(ShapeInferenceMisc, DetMaxUnpoolRoiAlignReverseSequenceErrors) {
  auto message = [](Builder& b) {
    Status s = InferShapes(b.graph());
    EXPECT_FALSE(s.ok());
    return s.message();
  };
  {
    Builder b;
    b.Op1("Det", "det", {b.Input("m", {2, 3, 4})});
    EXPECT_NE(message(b).find("square"), std::string::npos);
  }
  {
    Builder b;
    b.Op1("RoiAlign", "roi", {b.Input("f", {1, 2, 4, 4}), b.Input("r", {3, 4}), b.Input("i", {3}, DataType::kI64)},
          A({{"coordinate_transformation_mode", std::string("corners")}}));
    const std::string m = message(b);
    EXPECT_NE(m.find("roi"), std::string::npos);
    EXPECT_NE(m.find("coordinate_transformation_mode 'corners'"), std::string::npos) << m;
  }
  {
    Builder b;
    b.Op1("MaxUnpool", "unpool", {b.Input("x", {1, 1, 2, 2}), b.Input("i", {1, 1, 2, 2}, DataType::kI64),
                                  b.Ints("shape", {1, 1, 3, 3})},
          A({{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}}));
    EXPECT_NE(message(b).find("output_shape [1,1,3,3] is smaller"), std::string::npos);
  }
  {
    Builder b;
    b.Op1("ReverseSequence", "rev", {b.Input("s", {4, 2}), b.Input("lens", {2}, DataType::kI64)},
          A({{"time_axis", int64_t{1}}}));
    EXPECT_NE(message(b).find("time_axis 1 and batch_axis 1"), std::string::npos);
  }
}

// ---- registry and errors ------------------------------------------------------------

// The ops docs/ops.md lists in its table (the "| family (file) | ops | ..."
// one; each op optionally followed by "(11+)" and the like).
std::vector<std::string> OpsListedInDocs() {
  std::ifstream in(std::string(BRAID_SOURCE_DIR) + "/docs/ops.md");
  std::vector<std::string> ops;
  std::string line;
  bool in_table = false;
  while (std::getline(in, line)) {
    if (line.starts_with("| family (file) | ops |")) {
      in_table = true;
      continue;
    }
    if (!in_table || line.starts_with("|---")) continue;
    if (!line.starts_with("| ")) break;
    const size_t a = line.find(" | ");
    const size_t b = a == std::string::npos ? a : line.find(" | ", a + 3);
    if (b == std::string::npos) continue;
    std::string cell = line.substr(a + 3, b - a - 3), name;
    int depth = 0;  // inside "( ... )"
    for (char c : cell + ",") {
      if (c == '(') ++depth;
      if (c == ')') --depth;
      if (depth == 0 && c == ',') {
        if (!name.empty()) ops.push_back(name);
        name.clear();
      } else if (depth == 0 && (std::isalnum(static_cast<unsigned char>(c)) || c == '.')) {
        // '.': a contrib domain's op, "com.microsoft.QLinearAdd"
        name += c;
      }
    }
  }
  std::sort(ops.begin(), ops.end());
  return ops;
}

// The schema table is the one list of ops: docs/ops.md names exactly its ops,
// and every entry has a shape function and a sane first opset.
TEST(OpRegistry, TableMatchesDocsAndEveryEntryIsComplete) {
  const std::vector<std::string> ops = SupportedOpTypes();
  EXPECT_TRUE(std::is_sorted(ops.begin(), ops.end()));
  EXPECT_EQ(std::adjacent_find(ops.begin(), ops.end()), ops.end()) << "an op listed twice";
  EXPECT_EQ(OpsListedInDocs(), ops) << "docs/ops.md and graph/op_schema.cc list different ops";
  for (const std::string& op : ops) {
    const OpSchema* schema = FindOpSchema(op);
    ASSERT_NE(schema, nullptr) << op;
    EXPECT_NE(schema->infer, nullptr) << op;
    EXPECT_GE(schema->since_opset, 1) << op;
    EXPECT_LE(schema->since_opset, 21) << op;
    EXPECT_GE(schema->elementwise_flops, 0) << op;
    // A view moves no bytes and computes nothing.
    if (schema->traits & kOpView) {
      EXPECT_EQ(schema->elementwise_flops, 0) << op;
      EXPECT_EQ(schema->family, OpFamily::kDataMovement) << op;
    }
  }
  EXPECT_FALSE(IsSupportedOp("Loop"));
  EXPECT_EQ(FindOpSchema("LayerNormalization")->since_opset, 17);
  EXPECT_EQ(FamilyOf("Loop"), OpFamily::kOther);
  EXPECT_FALSE(HasOpTrait("Loop", kOpView));
  EXPECT_TRUE(IsViewOp("Reshape"));
  EXPECT_FALSE(IsViewOp("Transpose"));
}

// The quantized ops: shapes and output types, and a QDQ model's bad
// parameters as errors naming the node (issue 28 "Bad input").
TEST(ShapeInference, QuantizedProducts) {
  auto scale = [](Builder& b, const std::string& name, Shape shape, float v) {
    std::vector<float> values(static_cast<size_t>(ElementCount(shape)), v);
    return b.graph().AddConstant(name, DataType::kF32, std::move(shape),
                                 TensorData::Copy(values.data(), values.size() * 4));
  };
  auto u8 = [](Builder& b, const std::string& name, Shape shape) {
    std::vector<uint8_t> values(static_cast<size_t>(ElementCount(shape)), 3);
    return b.graph().AddConstant(name, DataType::kU8, std::move(shape),
                                 TensorData::Copy(values.data(), values.size()));
  };
  {
    Builder b;
    const ValueId x = b.Input("x", {Dim(1), Dim(3), Dim(8), Dim(8)}, DataType::kU8);
    const ValueId w = u8(b, "w", {Dim(4), Dim(3), Dim(3), Dim(3)});
    const ValueId y = b.Op1("QLinearConv", "qconv",
                            {x, scale(b, "xs", {}, 0.1f), u8(b, "xz", {}), w, scale(b, "ws", {Dim(4)}, 0.01f),
                             u8(b, "wz", {Dim(4)}), scale(b, "ys", {}, 0.2f), u8(b, "yz", {})},
                            A({{"pads", Ints{1, 1, 1, 1}}}));
    const ValueId z = b.Op1("ConvInteger", "iconv", {x, w}, A({{"strides", Ints{2, 2}}}));
    ASSERT_TRUE(InferShapes(b.graph()).ok());
    EXPECT_EQ(b.dtype(y), DataType::kU8);
    EXPECT_EQ(ShapeToString(b.shape(y)), "[1,4,8,8]");
    EXPECT_EQ(b.dtype(z), DataType::kI32);
    EXPECT_EQ(ShapeToString(b.shape(z)), "[1,4,3,3]");
  }
  {
    Builder b;
    const ValueId a = b.Input("a", {Dim(2), Dim(5), Dim(7)}, DataType::kU8);
    const ValueId m = b.Op1("MatMulInteger", "imm", {a, u8(b, "b", {Dim(7), Dim(6)})});
    ASSERT_TRUE(InferShapes(b.graph()).ok());
    EXPECT_EQ(b.dtype(m), DataType::kI32);
    EXPECT_EQ(ShapeToString(b.shape(m)), "[2,5,6]");
  }
  {
    Builder b;
    const std::vector<ValueId> out =
        b.Op("DynamicQuantizeLinear", "dq", {b.Input("x", {Dim(3), Dim(4)})}, {}, 3);
    ASSERT_TRUE(InferShapes(b.graph()).ok());
    EXPECT_EQ(b.dtype(out[0]), DataType::kU8);
    EXPECT_EQ(b.dtype(out[1]), DataType::kF32);
    EXPECT_TRUE(b.shape(out[1]).empty());
    EXPECT_EQ(b.dtype(out[2]), DataType::kU8);
  }
  // Bad input: a zero scale on DequantizeLinear, a negative one on
  // QLinearMatMul, 3 weight scales for 4 output channels.
  {
    Builder b;
    b.Op1("DequantizeLinear", "dq_w", {u8(b, "w", {Dim(4)}), scale(b, "s", {}, 0.0f)});
    Status s = InferShapes(b.graph());
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("dq_w"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("not a finite positive scale"), std::string::npos) << s.message();
  }
  {
    Builder b;
    const ValueId a = b.Input("a", {Dim(2), Dim(7)}, DataType::kU8);
    b.Op1("QLinearMatMul", "qmm",
          {a, scale(b, "as", {}, 0.1f), u8(b, "az", {}), u8(b, "b", {Dim(7), Dim(6)}),
           scale(b, "bs", {}, -0.1f), u8(b, "bz", {}), scale(b, "ys", {}, 0.1f), u8(b, "yz", {})});
    Status s = InferShapes(b.graph());
    EXPECT_NE(s.message().find("qmm"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("b_scale"), std::string::npos) << s.message();
  }
  {
    Builder b;
    const ValueId x = b.Input("x", {Dim(1), Dim(3), Dim(8), Dim(8)}, DataType::kU8);
    b.Op1("QLinearConv", "qconv",
          {x, scale(b, "xs", {}, 0.1f), u8(b, "xz", {}), u8(b, "w", {Dim(4), Dim(3), Dim(3), Dim(3)}),
           scale(b, "ws", {Dim(3)}, 0.01f), u8(b, "wz", {Dim(4)}), scale(b, "ys", {}, 0.2f), u8(b, "yz", {})});
    Status s = InferShapes(b.graph());
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("qconv"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("w_scale"), std::string::npos) << s.message();
  }
}

TEST(ShapeInferenceErrors, UnknownOpNamesNode) {
  Builder b;
  b.Op1("FancyOp", "mystery", {b.Input("x", {1})});
  Status s = InferShapes(b.graph());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_NE(s.message().find("mystery"), std::string::npos);
  EXPECT_NE(s.message().find("FancyOp"), std::string::npos);
}

// ---- hostile attribute and shape values (review regressions) -----------------

TEST(ShapeInferenceHostile, SliceOfEmptyAxisWithNegativeStepIsEmpty) {
  // Clamping to [0, dim-1] on an empty axis used to select one element.
  Builder b;
  ValueId x = b.Input("x", {0, 3});
  ValueId y = b.Op1("Slice", "s",
                    {x, b.Ints("st", {-1}), b.Ints("en", {-10}),
                     b.Ints("ax", {0}), b.Ints("sp", {-1})});
  ASSERT_TRUE(InferShapes(b.graph()).ok());
  EXPECT_EQ(b.shape(y), (Shape{0, 3}));
}

TEST(ShapeInferenceHostile, SliceWithHugeStepTakesOneElement) {
  Builder b;
  ValueId x = b.Input("x", {5});
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  ValueId up = b.Op1("Slice", "up",
                     {x, b.Ints("s0", {1}), b.Ints("e0", {kMax}),
                      b.Ints("a0", {0}), b.Ints("p0", {kMax})});
  ValueId down = b.Op1("Slice", "down",
                       {x, b.Ints("s1", {kMax}), b.Ints("e1", {kMin}),
                        b.Ints("a1", {0}), b.Ints("p1", {kMin})});
  ASSERT_TRUE(InferShapes(b.graph()).ok());
  EXPECT_EQ(b.shape(up), (Shape{1}));
  EXPECT_EQ(b.shape(down), (Shape{1}));
}

TEST(ShapeInferenceHostile, IntegerValueOverflowIsNotTracked) {
  // INT64_MIN / -1 trapped (SIGFPE) while propagating values; overflowing
  // sums and products were undefined behaviour.
  Builder b;
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  ValueId lo = b.Ints("lo", {kMin});
  ValueId neg = b.Ints("neg", {-1});
  ValueId quotient = b.Op1("Div", "div", {lo, neg});
  ValueId sum = b.Op1("Add", "add", {lo, neg});
  ValueId product = b.Op1("Mul", "mul", {lo, neg});
  SymbolicValues values;
  ASSERT_TRUE(InferShapes(b.graph(), &values).ok());
  EXPECT_EQ(b.shape(quotient), (Shape{1}));
  EXPECT_EQ(values.count(quotient), 0u);
  EXPECT_EQ(values.count(sum), 0u);
  EXPECT_EQ(values.count(product), 0u);
}

TEST(ShapeInferenceHostile, HugeShapesAreCleanErrors) {
  const int64_t kBig = int64_t{1} << 40;
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  {
    Builder b;  // product overflows int64
    b.Op1("Reshape", "big_reshape", {b.Input("x", {0}), b.Ints("t", {kBig, kBig, -1})});
    Status s = InferShapes(b.graph());
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("big_reshape"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("2^48"), std::string::npos) << s.message();
  }
  {
    Builder b;
    b.Op1("ConstantOfShape", "cos", {b.Ints("t", {kBig, kBig})});
    EXPECT_FALSE(InferShapes(b.graph()).ok());
  }
  {
    Builder b;  // (kernel - 1) * dilation overflows
    b.Op1("Conv", "dilated", {b.Input("x", {1, 1, 8}), b.Floats("w", {1, 1, 3})},
          A({{"dilations", Ints{kMax}}}));
    Status s = InferShapes(b.graph());
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("dilated"), std::string::npos) << s.message();
  }
  {
    Builder b;  // in + pads overflows
    b.Op1("MaxPool", "padded", {b.Input("x", {1, 1, 8})},
          A({{"kernel_shape", Ints{1}}, {"pads", Ints{kMax, kMax}}}));
    EXPECT_FALSE(InferShapes(b.graph()).ok());
  }
  {
    Builder b;  // SAME padding with a huge stride
    ValueId y = b.Op1("MaxPool", "same", {b.Input("x", {1, 1, 8})},
                      A({{"kernel_shape", Ints{1}}, {"strides", Ints{kMax}},
                         {"auto_pad", std::string("SAME_UPPER")}}));
    ASSERT_TRUE(InferShapes(b.graph()).ok());
    EXPECT_EQ(b.shape(y), (Shape{1, 1, 1}));
  }
  {
    Builder b;  // pads sum overflows
    b.Op1("Pad", "pad", {b.Input("x", {4}), b.Ints("p", {kMax, kMax})});
    EXPECT_FALSE(InferShapes(b.graph()).ok());
  }
  {
    Builder b;  // split sum overflows
    b.Op("Split", "split", {b.Input("x", {4}), b.Ints("p", {kMax, kMax})}, {}, 2);
    EXPECT_FALSE(InferShapes(b.graph()).ok());
  }
  {
    Builder b;  // an input beyond the bound is rejected before any node runs
    b.Op1("Relu", "r", {b.Input("x", {kBig, kBig})});
    Status s = InferShapes(b.graph());
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("'x'"), std::string::npos) << s.message();
  }
  {
    Builder b;  // a constant whose bytes do not match its shape
    ValueId c = b.graph().AddConstant("c", DataType::kI64, {Dim(4)},
                                      TensorData::Allocate(8));
    b.Op1("Relu", "r", {c});
    EXPECT_FALSE(InferShapes(b.graph()).ok());
  }
}

TEST(ShapeInferenceHostile, DimProductsSaturateInsteadOfOverflowing) {
  const Dim huge = Dim::Symbol("N*99999999999999999");
  const DimProduct p =
      MultiplyProducts(ToProduct(huge), ToProduct(Dim(int64_t{1} << 40)));
  EXPECT_EQ(p.coefficient, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(p.symbols, std::vector<std::string>{"N"});
}

TEST(ShapeInferenceHostile, AttributeOfTheWrongKindIsAnError) {
  // The typed getters fall back to the default on a kind mismatch: strides
  // given as an int silently became 1 before this check.
  Builder b;
  b.Op1("MaxPool", "pool", {b.Input("x", {1, 1, 8, 8})},
        A({{"kernel_shape", Ints{2, 2}}, {"strides", int64_t{2}}}));
  Status s = InferShapes(b.graph());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(),
            "node 'pool' (MaxPool): attribute 'strides' must be ints, is an int");
}

}  // namespace
}  // namespace braid

namespace braid {
namespace {

// ---- Resize and ConvTranspose geometry (review regressions) ------------------

TEST(ResizeGeometry, AspectPoliciesRoundHalvesUpAndScalesFloor) {
  ResizeAttributes a;
  a.axes = {2, 3};
  a.aspect = ResizeAspect::kNotLarger;
  const std::vector<int64_t> in = {1, 1, 4, 5};
  const std::vector<int64_t> sizes = {2, 100};
  StatusOr<ResizeGeometry> g = ComputeResizeGeometry(in, a, {}, sizes, {});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  // scale 0.5 on both axes; 5 * 0.5 = 2.5 rounds up (ONNX's round_int).
  EXPECT_EQ(g->out_dims, (std::vector<int64_t>{1, 1, 2, 3}));
  ResizeAttributes plain;
  const std::vector<float> scales = {1, 1, 0.6f, 1.5f};
  g = ComputeResizeGeometry(in, plain, scales, {}, {});
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->out_dims, (std::vector<int64_t>{1, 1, 2, 7}));  // floor(2.4), floor(7.5)
  const std::vector<float> bad_count = {1, 1, 2};
  EXPECT_FALSE(ComputeResizeGeometry(in, plain, bad_count, {}, {}).ok());
  const std::vector<float> zero = {1, 1, 0, 2};
  EXPECT_FALSE(ComputeResizeGeometry(in, plain, zero, {}, {}).ok());
  ResizeAttributes crop;
  crop.coordinates = ResizeCoordinates::kTfCropAndResize;
  const std::vector<float> roi = {0, 0, 0, 0, 1, 1, INFINITY, 1};
  const std::vector<int64_t> sizes4 = {1, 1, 3, 3};
  EXPECT_FALSE(ComputeResizeGeometry(in, crop, {}, sizes4, roi).ok());
}

TEST(ResizeShapes, SymbolicBatchKeptOrFixedBySizes) {
  // PyTorch's sizes: Concat(Shape(x)[:2], [h, w]) keeps N; a constant size
  // on a symbolic axis fixes it.
  Builder b;
  ValueId x = b.Input("x", {kN, 3, 8, 8});
  ValueId shape = b.Op1("Shape", "shape", {x});
  ValueId head = b.Op1("Slice", "head", {shape, b.Ints("s0", {0}), b.Ints("s1", {2})});
  ValueId sizes = b.Op1("Concat", "sizes", {head, b.Ints("hw", {16, 4})}, A({{"axis", int64_t{0}}}));
  ValueId kept = b.Op1("Resize", "kept", {x, kNoValue, kNoValue, sizes}, A({{"mode", std::string("linear")}}));
  ValueId fixed = b.Op1("Resize", "fixed", {x, kNoValue, kNoValue, b.Ints("sz", {1, 3, 4, 4})});
  ASSERT_TRUE(InferShapes(b.graph()).ok());
  EXPECT_EQ(ShapeToString(b.shape(kept)), "[N,3,16,4]");
  EXPECT_EQ(ShapeToString(b.shape(fixed)), "[1,3,4,4]");
}

TEST(ConvTransposeShapes, SameWithAWideStrideAndBadPads) {
  Builder b;
  ValueId x = b.Input("x", {1, 2, 5, 5});
  ValueId w = b.Floats("w", {2, 3, 1, 1});
  // k=1, s=2: SAME wants 10 from a full output of 9: a negative pad.
  ValueId same = b.Op1("ConvTranspose", "same", {x, w},
                       A({{"strides", Ints{2, 2}}, {"auto_pad", std::string("SAME_UPPER")}}));
  ASSERT_TRUE(InferShapes(b.graph()).ok());
  EXPECT_EQ(ShapeToString(b.shape(same)), "[1,3,10,10]");
  Builder bad;
  ValueId bx = bad.Input("x", {1, 2, 5, 5});
  bad.Op1("ConvTranspose", "neg", {bx, bad.Floats("w", {2, 3, 3, 3})},
          A({{"pads", Ints{-1, 0, 0, 0}}}));
  Status s = InferShapes(bad.graph());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("pads"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace braid
