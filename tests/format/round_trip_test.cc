// Round trips through SerializeBraid/LoadBraidBytes and SaveBraidFile/
// LoadBraidFile, and the zero-copy contract of the file loader.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>

#include "graph/braid_format.h"
#include "models/builtin.h"
#include "tests/format/format_test_util.h"

namespace braid::format_test {
namespace {

std::vector<uint8_t> ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The address range of the mapping of `path` in /proc/self/maps, or {0, 0}.
std::pair<uintptr_t, uintptr_t> FindMapping(const std::string& path) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  uintptr_t lo = 0, hi = 0;
  while (std::getline(maps, line)) {
    if (line.size() < path.size() ||
        line.compare(line.size() - path.size(), path.size(), path) != 0)
      continue;
    uintptr_t start = 0, end = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx", &start, &end) != 2) continue;
    if (lo == 0 || start < lo) lo = start;
    hi = std::max(hi, end);
  }
  return {lo, hi};
}

std::string AbsolutePath(const std::string& path) {
  char resolved[PATH_MAX];
  return realpath(path.c_str(), resolved) ? std::string(resolved) : path;
}

TEST(BraidRoundTrip, BytesPreserveEveryField) {
  const Graph g = MakeRichGraph();
  ASSERT_TRUE(g.Validate().ok());
  StatusOr<std::vector<uint8_t>> bytes = SerializeBraid(g);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  EXPECT_TRUE(LooksLikeBraid(bytes->data(), bytes->size()));
  StatusOr<Graph> loaded = LoadBraidBytes(bytes->data(), bytes->size());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ExpectGraphsEqual(g, *loaded);
}

TEST(BraidRoundTrip, FilePreservesEveryFieldAndMatchesBytes) {
  const Graph g = MakeRichGraph();
  const std::string path = TempPath("rich.braid");
  ASSERT_TRUE(SaveBraidFile(g, path).ok());
  StatusOr<Graph> loaded = LoadBraidFile(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ExpectGraphsEqual(g, *loaded);
  StatusOr<std::vector<uint8_t>> bytes = SerializeBraid(g);
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes, ReadFileBytes(path));
  EXPECT_EQ(bytes->size() % kBraidWeightAlignment, 0u);
  std::remove(path.c_str());
}

TEST(BraidRoundTrip, SerializationIsDeterministic) {
  StatusOr<std::vector<uint8_t>> a = SerializeBraid(MakeRichGraph());
  StatusOr<std::vector<uint8_t>> b = SerializeBraid(MakeRichGraph());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
}

TEST(BraidRoundTrip, LoadedFileAgainRoundTripsToTheSameBytes) {
  const Graph g = MakeConvNet(3, 8, 11);
  StatusOr<std::vector<uint8_t>> first = SerializeBraid(g);
  ASSERT_TRUE(first.ok());
  StatusOr<Graph> loaded = LoadBraidBytes(first->data(), first->size());
  ASSERT_TRUE(loaded.ok());
  StatusOr<std::vector<uint8_t>> second = SerializeBraid(*loaded);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*first, *second);
}

TEST(BraidRoundTrip, FileConstantsAliasTheMappingWithoutCopy) {
  const Graph g = MakeConvNet(4, 16, 3);
  const std::string path = TempPath("convnet.braid");
  ASSERT_TRUE(SaveBraidFile(g, path).ok());
  const size_t file_size = ReadFileBytes(path).size();
  StatusOr<Graph> loaded = LoadBraidFile(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ExpectGraphsEqual(g, *loaded);

  const auto [lo, hi] = FindMapping(AbsolutePath(path));
  ASSERT_NE(lo, 0u) << "no mapping of " << path << " in /proc/self/maps";
  EXPECT_GE(hi - lo, file_size);
  int constants = 0;
  for (const Value& v : loaded->values()) {
    if (!v.constant || v.constant->size() == 0) continue;
    ++constants;
    const auto address = reinterpret_cast<uintptr_t>(v.constant->data());
    EXPECT_EQ(address % kBraidWeightAlignment, 0u) << v.name;
    EXPECT_GE(address, lo) << v.name;
    EXPECT_LE(address + v.constant->size(), hi) << v.name;
  }
  EXPECT_EQ(constants, 4 * 6 + 1);
  std::remove(path.c_str());
}

TEST(BraidRoundTrip, ConstantsOutliveTheGraphThatLoadedThem) {
  const Graph g = MakeConvNet(2, 8, 5);
  const std::string path = TempPath("outlive.braid");
  ASSERT_TRUE(SaveBraidFile(g, path).ok());
  const ValueId w = g.FindValue("layer1.weight");
  ASSERT_NE(w, kNoValue);
  const std::string absolute = AbsolutePath(path);
  TensorData kept;
  {
    StatusOr<Graph> loaded = LoadBraidFile(path);
    ASSERT_TRUE(loaded.ok());
    Graph moved = *std::move(loaded);
    kept = *moved.value(w).constant;
    Graph moved_again = std::move(moved);
    EXPECT_TRUE(moved_again.value(w).constant->SameStorage(kept));
  }  // every Graph is gone; `kept` alone holds the mapping
  EXPECT_NE(FindMapping(absolute).first, 0u);
  std::remove(path.c_str());  // unlinking does not invalidate a mapping
  EXPECT_TRUE(kept.ContentEquals(*g.value(w).constant));
  kept = TensorData();
  EXPECT_EQ(FindMapping(absolute + " (deleted)").first, 0u);
}

TEST(BraidRoundTrip, MappingIsReleasedWithTheLastTensor) {
  const std::string path = TempPath("release.braid");
  ASSERT_TRUE(SaveBraidFile(MakeConvNet(1, 8, 1), path).ok());
  const std::string absolute = AbsolutePath(path);
  {
    StatusOr<Graph> loaded = LoadBraidFile(path);
    ASSERT_TRUE(loaded.ok());
    EXPECT_NE(FindMapping(absolute).first, 0u);
  }
  EXPECT_EQ(FindMapping(absolute).first, 0u);
  std::remove(path.c_str());
}

TEST(BraidRoundTrip, BytesLoaderCopiesOutOfTheCallerBuffer) {
  const Graph g = MakeConvNet(2, 8, 9);
  StatusOr<std::vector<uint8_t>> bytes = SerializeBraid(g);
  ASSERT_TRUE(bytes.ok());
  auto buffer = std::make_unique<std::vector<uint8_t>>(*bytes);
  StatusOr<Graph> loaded = LoadBraidBytes(buffer->data(), buffer->size());
  ASSERT_TRUE(loaded.ok());
  const auto lo = reinterpret_cast<uintptr_t>(buffer->data());
  const auto hi = lo + buffer->size();
  for (const Value& v : loaded->values()) {
    if (!v.constant || v.constant->size() == 0) continue;
    const auto address = reinterpret_cast<uintptr_t>(v.constant->data());
    EXPECT_TRUE(address < lo || address >= hi) << v.name;
  }
  buffer.reset();  // the loaded graph must not depend on the caller's bytes
  ExpectGraphsEqual(g, *loaded);
}

TEST(BraidRoundTrip, MisalignedCallerBufferLoads) {
  const Graph g = MakeRichGraph();
  StatusOr<std::vector<uint8_t>> bytes = SerializeBraid(g);
  ASSERT_TRUE(bytes.ok());
  std::vector<uint8_t> shifted(bytes->size() + 3);
  std::copy(bytes->begin(), bytes->end(), shifted.begin() + 3);
  StatusOr<Graph> loaded = LoadBraidBytes(shifted.data() + 3, bytes->size());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ExpectGraphsEqual(g, *loaded);
}

TEST(BraidRoundTrip, SharedConstantStorageIsStoredOnce) {
  Graph g;
  ValueId x = g.AddInput("x", DataType::kF32, {4});
  TensorData shared = RandomFloats(1000, 1);
  ValueId a = g.AddConstant("a", DataType::kF32, {1000}, shared);
  ValueId b = g.AddConstant("b", DataType::kF32, {10, 100}, shared);
  ValueId y = g.AddValue("y");
  Node n;
  n.name = "n";
  n.op_type = "Custom";
  n.inputs = {x, a, b};
  n.outputs = {y};
  g.AddNode(std::move(n));
  g.outputs() = {y};
  StatusOr<std::vector<uint8_t>> bytes = SerializeBraid(g);
  ASSERT_TRUE(bytes.ok());
  EXPECT_LT(bytes->size(), 4000u + 2048u);  // one copy of the 4000 bytes

  const std::string path = TempPath("shared.braid");
  ASSERT_TRUE(SaveBraidFile(g, path).ok());
  StatusOr<Graph> loaded = LoadBraidFile(path);
  ASSERT_TRUE(loaded.ok());
  ExpectGraphsEqual(g, *loaded);
  EXPECT_TRUE(
      loaded->value(a).constant->SameStorage(*loaded->value(b).constant));
  std::remove(path.c_str());
}

// The dtypes appended after bool (f64, bf16, i16, u16, u32, u64) as inputs,
// constants and tensor attributes keep their numbering and bytes.
TEST(BraidRoundTrip, WiderDtypesKeepTheirNumberingAndBytes) {
  Graph g;
  g.set_opset(17);
  const std::vector<std::pair<DataType, uint8_t>> dtypes = {
      {DataType::kF64, 8},  {DataType::kBF16, 9}, {DataType::kI16, 10},
      {DataType::kU16, 11}, {DataType::kU32, 12}, {DataType::kU64, 13}};
  Node n;
  n.name = "wide";
  n.op_type = "FancyOp";
  uint32_t seed = 10;
  for (const auto& [dtype, code] : dtypes) {
    EXPECT_EQ(static_cast<uint8_t>(dtype), code) << DataTypeName(dtype);
    const std::string name = DataTypeName(dtype);
    n.inputs.push_back(g.AddInput("in_" + name, dtype, {Dim::Symbol("N"), 2}));
    n.inputs.push_back(g.AddConstant("c_" + name, dtype, {3},
                                     PatternBytes(3 * DataTypeSize(dtype), seed++)));
    n.attrs.Set("t_" + name,
                TensorAttr{dtype, {2}, PatternBytes(2 * DataTypeSize(dtype), seed++)});
  }
  ValueId out = g.AddValue("out");
  g.value(out).dtype = DataType::kU64;
  n.outputs = {out};
  g.AddNode(std::move(n));
  g.outputs() = {out};
  ASSERT_TRUE(g.Validate().ok());
  StatusOr<std::vector<uint8_t>> bytes = SerializeBraid(g);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  StatusOr<Graph> loaded = LoadBraidBytes(bytes->data(), bytes->size());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ExpectGraphsEqual(g, *loaded);
  EXPECT_EQ(loaded->value(loaded->FindValue("c_f64")).dtype, DataType::kF64);
  EXPECT_EQ(loaded->value(loaded->FindValue("in_u64")).dtype, DataType::kU64);
}

TEST(BraidRoundTrip, EmptyGraph) {
  Graph g;
  StatusOr<std::vector<uint8_t>> bytes = SerializeBraid(g);
  ASSERT_TRUE(bytes.ok());
  StatusOr<Graph> loaded = LoadBraidBytes(bytes->data(), bytes->size());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ExpectGraphsEqual(g, *loaded);
}

TEST(BraidLooksLike, TellsBraidFromOtherBytes) {
  StatusOr<std::vector<uint8_t>> bytes = SerializeBraid(MakeRichGraph());
  ASSERT_TRUE(bytes.ok());
  EXPECT_TRUE(LooksLikeBraid(bytes->data(), bytes->size()));
  EXPECT_FALSE(LooksLikeBraid(bytes->data(), 11));
  EXPECT_FALSE(LooksLikeBraid(nullptr, 100));
  // An ONNX ModelProto starts with field 1 (ir_version) as a varint.
  const uint8_t onnx[] = {0x08, 0x07, 0x12, 0x07, 'p',  'y', 't', 'o',
                          'r',  'c',  'h',  0x1a, 0x03, '1', '.', '0'};
  EXPECT_FALSE(LooksLikeBraid(onnx, sizeof(onnx)));
}

TEST(BraidSave, RejectsConstantWhoseBytesDisagreeWithItsShape) {
  Graph g;
  g.AddConstant("w", DataType::kF32, {2, 3}, PatternBytes(20, 1));
  StatusOr<std::vector<uint8_t>> bytes = SerializeBraid(g);
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bytes.status().message().find("value 'w'"), std::string::npos)
      << bytes.status().message();
  EXPECT_NE(bytes.status().message().find("20 bytes"), std::string::npos);
}

TEST(BraidSave, RejectsSymbolicConstantAndBadTensorAttribute) {
  Graph g;
  g.AddConstant("w", DataType::kF32, {Dim::Symbol("N")}, PatternBytes(4, 1));
  EXPECT_FALSE(SerializeBraid(g).ok());

  Graph h;
  ValueId y = h.AddValue("y");
  Node n;
  n.name = "const0";
  n.op_type = "Constant";
  n.outputs = {y};
  n.attrs.Set("value", TensorAttr{DataType::kI64, {3}, PatternBytes(16, 1)});
  h.AddNode(std::move(n));
  StatusOr<std::vector<uint8_t>> bytes = SerializeBraid(h);
  ASSERT_FALSE(bytes.ok());
  EXPECT_NE(bytes.status().message().find("node 'const0' (Constant)"),
            std::string::npos)
      << bytes.status().message();
  EXPECT_NE(bytes.status().message().find("attribute 'value'"),
            std::string::npos);
}

TEST(BraidSave, RejectsNonFiniteAnnotation) {
  Graph g = MakeConvNet(1, 4, 1);
  g.node(0).annotation.intensity = std::numeric_limits<double>::infinity();
  StatusOr<std::vector<uint8_t>> bytes = SerializeBraid(g);
  ASSERT_FALSE(bytes.ok());
  EXPECT_NE(bytes.status().message().find("intensity"), std::string::npos);
  EXPECT_NE(bytes.status().message().find("layer0/Conv"), std::string::npos);
}

TEST(BraidSave, RejectsWhatTheLoaderWouldReject) {
  Graph unnamed = MakeConvNet(1, 4, 1);
  unnamed.node(0).attrs.Set("", int64_t{1});
  StatusOr<std::vector<uint8_t>> bytes = SerializeBraid(unnamed);
  ASSERT_FALSE(bytes.ok());
  EXPECT_NE(bytes.status().message().find("unnamed attribute"),
            std::string::npos);

  Graph negative = MakeConvNet(1, 4, 1);
  negative.node(0).annotation.params = -1;
  EXPECT_FALSE(SerializeBraid(negative).ok());

  Graph bad_dtype = MakeConvNet(1, 4, 1);
  bad_dtype.value(0).dtype = static_cast<DataType>(42);
  bytes = SerializeBraid(bad_dtype);
  ASSERT_FALSE(bytes.ok());
  EXPECT_NE(bytes.status().message().find("unknown dtype 42"),
            std::string::npos)
      << bytes.status().message();

  Graph bad_dim = MakeConvNet(1, 4, 1);
  bad_dim.value(0).shape[2] = Dim(-1);
  bytes = SerializeBraid(bad_dim);
  ASSERT_FALSE(bytes.ok());
  EXPECT_NE(bytes.status().message().find("value 'input' (#0)"),
            std::string::npos)
      << bytes.status().message();
}

TEST(BraidSave, RejectsInvalidGraphAndLeavesNoFile) {
  Graph g = MakeConvNet(1, 4, 1);
  std::swap(g.nodes()[0], g.nodes()[1]);  // reads before it is produced
  const std::string path = TempPath("invalid.braid");
  Status s = SaveBraidFile(g, path);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(path), std::string::npos) << s.message();
  EXPECT_TRUE(ReadFileBytes(path).empty());
  EXPECT_TRUE(ReadFileBytes(path + ".partial").empty());
}

TEST(BraidSave, ReportsUnwritablePath) {
  Status s = SaveBraidFile(MakeRichGraph(), "/nonexistent-dir/x/m.braid");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("/nonexistent-dir/x/m.braid"), std::string::npos);
}

TEST(BraidLoadFile, ReportsMissingFileAndDirectory) {
  StatusOr<Graph> missing = LoadBraidFile("/nonexistent-dir/m.braid");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("/nonexistent-dir/m.braid"),
            std::string::npos);
  StatusOr<Graph> directory = LoadBraidFile(testing::TempDir());
  ASSERT_FALSE(directory.ok());
  EXPECT_EQ(directory.status().code(), StatusCode::kInvalidArgument);
}

// ---- built-in models
// ---------------------------------------------------------

class BuiltinRoundTrip : public testing::TestWithParam<std::string> {};

TEST_P(BuiltinRoundTrip, FileRoundTripIsBitwise) {
  StatusOr<Graph> g = BuildBuiltinModel(GetParam());
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const std::string path = TempPath(GetParam() + ".braid");
  Status saved = SaveBraidFile(*g, path);
  ASSERT_TRUE(saved.ok()) << saved.ToString();
  StatusOr<Graph> from_file = LoadBraidFile(path);
  ASSERT_TRUE(from_file.ok()) << from_file.status().ToString();
  ExpectGraphsEqual(*g, *from_file);
  StatusOr<std::vector<uint8_t>> bytes = SerializeBraid(*g);
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes, ReadFileBytes(path));
  StatusOr<Graph> from_bytes = LoadBraidBytes(bytes->data(), bytes->size());
  ASSERT_TRUE(from_bytes.ok()) << from_bytes.status().ToString();
  ExpectGraphsEqual(*g, *from_bytes);
  std::remove(path.c_str());
}

INSTANTIATE_TEST_SUITE_P(Models, BuiltinRoundTrip,
                         testing::Values("resnet18", "mobilenet_v2"));

}  // namespace
}  // namespace braid::format_test
