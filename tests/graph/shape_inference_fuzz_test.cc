// Random-input robustness of shape inference, constant folding and
// annotation over every supported op: random ranks, extents (zero, symbolic,
// huge), dtypes, constant shape inputs with hostile values, and attributes of
// random value and sometimes the wrong kind. Each case must end in OK or a
// clean error (never a crash, sanitizer report or overflow), and an OK result
// must have non-negative static extents. Run under ASan/UBSan in CI.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "graph/annotate.h"
#include "graph/op_schema.h"
#include "graph/passes/passes.h"

namespace braid {
namespace {

constexpr int64_t kBig = int64_t{1} << 40;
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

class CaseMaker {
 public:
  explicit CaseMaker(uint32_t seed) : rng_(seed) {}

  Graph Make(const std::string& op) {
    Graph g;
    static const int64_t kOpsets[] = {7, 11, 13, 17, 18, 21};
    g.set_opset(kOpsets[Pick(std::size(kOpsets))]);
    Node node;
    node.name = "n";
    node.op_type = op;
    // Mostly 1 to 3 inputs, the arity of most ops.
    const int num_inputs =
        Coin(4) ? static_cast<int>(Pick(6)) : 1 + static_cast<int>(Pick(3));
    for (int i = 0; i < num_inputs; ++i)
      node.inputs.push_back(MakeInput(g, "in" + std::to_string(i)));
    const int num_outputs = 1 + static_cast<int>(Pick(3));
    for (int i = 0; i < num_outputs; ++i)
      node.outputs.push_back(g.AddValue("out" + std::to_string(i)));
    node.attrs = MakeAttributes();
    for (ValueId out : node.outputs) g.outputs().push_back(out);
    g.AddNode(std::move(node));
    return g;
  }

 private:
  uint64_t Pick(uint64_t n) { return rng_() % n; }
  bool Coin(int one_in) { return Pick(static_cast<uint64_t>(one_in)) == 0; }

  int64_t Extent() {
    static const int64_t kExtents[] = {0, 1, 1, 2, 3, 4, 5, 7, 8, 16, kBig};
    return kExtents[Pick(std::size(kExtents))];
  }
  int64_t HostileInt() {
    static const int64_t kValues[] = {-1,   0,    1,    2,    3,   -2,   4,
                                      -3,   7,    kBig, -kBig, kMax, kMin,
                                      kMax - 1, kMin + 1, 1LL << 62, -(1LL << 62)};
    return kValues[Pick(std::size(kValues))];
  }
  std::vector<int64_t> HostileInts() {
    std::vector<int64_t> v(Pick(6));
    for (int64_t& x : v) x = HostileInt();
    return v;
  }

  Shape RandomShape() {
    Shape s;
    const size_t rank = Pick(6);
    for (size_t i = 0; i < rank; ++i) {
      if (Coin(5))
        s.push_back(Dim::Symbol(Coin(2) ? "N" : "M"));
      else
        s.emplace_back(Extent());
    }
    return s;
  }

  DataType RandomDtype() {
    // Mostly f32, so that binary ops often see matching dtypes.
    static const DataType kTypes[] = {DataType::kF32, DataType::kF32,
                                      DataType::kF32, DataType::kF32,
                                      DataType::kF32, DataType::kI64,
                                      DataType::kI32, DataType::kBool,
                                      DataType::kF16, DataType::kU8};
    return kTypes[Pick(std::size(kTypes))];
  }

  ValueId MakeInput(Graph& g, const std::string& name) {
    switch (Pick(8)) {
      case 0:
        return kNoValue;
      case 1:
      case 2: {  // small integer constant with hostile values
        std::vector<int64_t> v = HostileInts();
        const bool scalar = v.size() == 1 && Coin(2);
        Shape s = scalar ? Shape{} : Shape{Dim(static_cast<int64_t>(v.size()))};
        if (Coin(3)) {
          std::vector<int32_t> narrow(v.begin(), v.end());
          return g.AddConstant(name, DataType::kI32, s,
                               TensorData::Copy(narrow.data(), narrow.size() * 4));
        }
        return g.AddConstant(name, DataType::kI64, s,
                             TensorData::Copy(v.data(), v.size() * 8));
      }
      case 3: {  // small f32 constant
        Shape s;
        const size_t rank = Pick(5);
        int64_t count = 1;
        for (size_t i = 0; i < rank; ++i) {
          const int64_t d = static_cast<int64_t>(Pick(4));
          s.emplace_back(d);
          count *= d;
        }
        std::vector<float> v(static_cast<size_t>(count));
        for (float& x : v) x = static_cast<float>(Pick(7)) - 3.0f;
        return g.AddConstant(name, DataType::kF32, s,
                             TensorData::Copy(v.data(), v.size() * 4));
      }
      case 4: {  // Shape of an input: symbolic values
        ValueId x = g.AddInput(name + "_src", DataType::kF32, RandomShape());
        ValueId y = g.AddValue(name);
        Node shape;
        shape.name = name + "_shape";
        shape.op_type = "Shape";
        shape.inputs = {x};
        shape.outputs = {y};
        g.AddNode(std::move(shape));
        return y;
      }
      default:
        return g.AddInput(name, RandomDtype(), RandomShape());
    }
  }

  std::string RandomString() {
    static const char* const kStrings[] = {"NOTSET", "VALID", "SAME_UPPER",
                                           "SAME_LOWER", "constant",
                                           "reflect", "edge", "bogus"};
    return kStrings[Pick(std::size(kStrings))];
  }

  TensorAttr RandomTensor() {
    TensorAttr t;
    t.dtype = Coin(2) ? DataType::kI64 : DataType::kF32;
    const int64_t n = static_cast<int64_t>(Pick(3));
    if (Coin(2)) t.dims = {n};
    else if (n != 1) t.dims = {n, 1};
    const int64_t count = t.dims.empty() ? 1 : n;
    std::vector<int64_t> v(static_cast<size_t>(count), HostileInt());
    t.data = t.dtype == DataType::kI64
                 ? TensorData::Copy(v.data(), v.size() * 8)
                 : TensorData::Allocate(static_cast<size_t>(count) * 4);
    return t;
  }

  AttributeValue RandomAttribute(const std::string& name) {
    // Now and then the wrong kind (must be a clean error).
    if (Coin(12)) {
      switch (Pick(5)) {
        case 0: return HostileInt();
        case 1: return HostileInts();
        case 2: return static_cast<float>(HostileInt());
        case 3: return RandomString();
        default: return RandomTensor();
      }
    }
    static const char* const kIntsNames[] = {
        "strides", "pads", "dilations", "kernel_shape", "axes", "perm",
        "split", "starts", "ends", "shape", "value_ints"};
    for (const char* n : kIntsNames) {
      if (name != n) continue;
      std::vector<int64_t> v(Pick(6));
      for (int64_t& x : v) x = Coin(3) ? HostileInt() : static_cast<int64_t>(Pick(4));
      return v;
    }
    if (name == "auto_pad" || name == "mode") return RandomString();
    if (name == "value") return RandomTensor();
    if (name == "value_floats") return std::vector<float>(Pick(4), 1.5f);
    if (name == "epsilon" || name == "alpha" || name == "beta" ||
        name == "value_float")
      return 0.5f;
    return Coin(3) ? HostileInt() : static_cast<int64_t>(Pick(3)) - 1;
  }

  Attributes MakeAttributes() {
    static const char* const kNames[] = {
        "strides", "pads", "dilations", "kernel_shape", "group", "axis",
        "axes", "perm", "split", "starts", "ends", "to", "keepdims",
        "transA", "transB", "auto_pad", "ceil_mode", "allowzero", "start",
        "end", "value", "mode", "noop_with_empty_axes", "value_int",
        "value_ints", "value_float", "value_floats", "shape", "epsilon",
        "alpha", "beta"};
    Attributes a;
    for (const char* name : kNames)
      if (Coin(8)) a.Set(name, RandomAttribute(name));
    return a;
  }

  std::mt19937 rng_;
};

void CheckExtentsNonNegative(const Graph& g, const std::string& op,
                             uint32_t seed) {
  for (const Value& v : g.values()) {
    if (!v.has_shape) continue;
    for (const Dim& d : v.shape) {
      if (!d.is_static()) continue;
      ASSERT_GE(d.extent(), 0) << op << " seed " << seed << ": value '"
                               << v.name << "' has shape "
                               << ShapeToString(v.shape);
    }
  }
}

TEST(ShapeInferenceFuzz, EveryOpGivesOkOrCleanError) {
  constexpr int kCasesPerOp = 400;
  int ok = 0, errors = 0;
  for (const std::string& op : SupportedOpTypes()) {
    for (int i = 0; i < kCasesPerOp; ++i) {
      const uint32_t seed = static_cast<uint32_t>(i) * 7919u +
                            static_cast<uint32_t>(std::hash<std::string>()(op));
      CaseMaker maker(seed);
      Graph g = maker.Make(op);
      Status s = InferShapes(g);
      if (!s.ok()) {
        ++errors;
        EXPECT_FALSE(s.message().empty());
        EXPECT_EQ(s.message().find('\n'), std::string::npos) << s.message();
        continue;
      }
      ++ok;
      CheckExtentsNonNegative(g, op, seed);
      Graph folded = g;
      Status fold = FoldConstants(folded);
      (void)fold;  // OK or a clean error; a crash fails the test
      EXPECT_TRUE(Annotate(g).ok()) << op << " seed " << seed;
    }
  }
  // The generator must reach both outcomes, or it tests nothing.
  RecordProperty("ok", ok);
  RecordProperty("errors", errors);
  EXPECT_GT(ok, 800);
  EXPECT_GT(errors, 5000);
}

}  // namespace
}  // namespace braid
