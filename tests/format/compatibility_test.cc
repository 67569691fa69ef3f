// Files written by older braid builds must keep loading: tests/data holds a
// file per format version, written once, checked against a graph built here.
//
// Write a fixture only when deliberately adding a new version (never
// overwrite an old one):
//   braid_format_tests --gtest_also_run_disabled_tests
//       --gtest_filter='*DISABLED_WriteV3Fixture'
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include "graph/braid_format.h"
#include "tests/format/braid_editor.h"
#include "tests/format/format_test_util.h"

namespace braid::format_test {
namespace {

const std::string kV1Fixture =
    std::string(BRAID_SOURCE_DIR) + "/tests/data/braid_v1_small.braid";
const std::string kV2Fixture =
    std::string(BRAID_SOURCE_DIR) + "/tests/data/braid_v2_small.braid";
const std::string kV3Fixture =
    std::string(BRAID_SOURCE_DIR) + "/tests/data/braid_v3_small.braid";

// The graph stored in braid_v1_small.braid. Literal values only: this must
// never change once the fixture is committed.
Graph MakeV1FixtureGraph() {
  Graph g;
  g.name() = "braid_v1_small";
  g.set_opset(13);
  ValueId x = g.AddInput("x", DataType::kF32, {Dim::Symbol("N"), 4});
  ValueId w =
      g.AddConstant("fc.weight", DataType::kF32, {3, 4},
                    MakeTensor<float>({0.5f, -1.25f, 2.0f, 0.0f, 3.5f, -0.125f,
                                       1.0f, 7.0f, -2.5f, 0.75f, 6.0f, -4.0f}));
  ValueId b = g.AddConstant("fc.bias", DataType::kF16, {3},
                            MakeTensor<uint16_t>({0x3c00, 0xc000, 0x3800}));
  ValueId shape =
      g.AddConstant("shape", DataType::kI64, {2}, MakeTensor<int64_t>({-1, 3}));
  ValueId flags = g.AddConstant("flags", DataType::kBool, {5},
                                MakeTensor<uint8_t>({1, 0, 0, 1, 1}));
  ValueId gemm_out = g.AddValue("gemm_out");
  g.value(gemm_out).dtype = DataType::kF32;
  g.value(gemm_out).has_shape = true;
  g.value(gemm_out).shape = {Dim::Symbol("N"), 3};
  ValueId y = g.AddValue("y");
  ValueId c = g.AddValue("c");

  Node gemm;
  gemm.name = "fc";
  gemm.op_type = "Gemm";
  gemm.inputs = {x, w, b};
  gemm.outputs = {gemm_out};
  gemm.attrs.Set("alpha", 1.0f);
  gemm.attrs.Set("transB", int64_t{1});
  gemm.annotation = {.flops = 24,
                     .bytes = 78,
                     .intensity = 24.0 / 78.0,
                     .params = 15,
                     .weight_sparsity = 1.0 / 12.0,
                     .activation_sparsity = 0.25};
  gemm.device_pin = "cpu";
  g.AddNode(std::move(gemm));

  Node reshape;
  reshape.name = "reshape";
  reshape.op_type = "Reshape";
  reshape.inputs = {gemm_out, shape, kNoValue, flags};
  reshape.outputs = {y};
  reshape.attrs.Set("mode", std::string("rows"));
  reshape.attrs.Set("perm", std::vector<int64_t>{1, 0});
  reshape.attrs.Set("scales", std::vector<float>{0.5f, 2.0f});
  reshape.attrs.Set("names", std::vector<std::string>{"a", "bc"});
  g.AddNode(std::move(reshape));

  Node constant;
  constant.name = "const";
  constant.op_type = "Constant";
  constant.outputs = {c};
  constant.attrs.Set(
      "value",
      TensorAttr{DataType::kI32, {2, 2}, MakeTensor<int32_t>({1, -2, 3, -4})});
  g.AddNode(std::move(constant));

  g.outputs() = {y, c};
  return g;
}

// Version 2 added Model.metadata: the version-1 graph with two entries.
Graph MakeV2FixtureGraph() {
  Graph g = MakeV1FixtureGraph();
  g.name() = "braid_v2_small";
  g.metadata()["braid.slim.segments"] = "gemm_out";
  g.metadata()["note"] = "key/value metadata, \xc3\xa9 UTF-8";
  return g;
}

// Version 3 added the dtypes f64, bf16, i16, u16, u32 and u64: the
// version-2 graph with a constant, an input and a tensor attribute of each.
Graph MakeV3FixtureGraph() {
  Graph g = MakeV2FixtureGraph();
  g.name() = "braid_v3_small";
  Node wide;
  wide.name = "wide";
  wide.op_type = "WideTypes";
  wide.inputs = {
      g.AddConstant("c_f64", DataType::kF64, {2}, MakeTensor<double>({-1.5, 1e300})),
      g.AddConstant("c_bf16", DataType::kBF16, {2}, MakeTensor<uint16_t>({0x3f80, 0xc049})),
      g.AddConstant("c_i16", DataType::kI16, {2}, MakeTensor<int16_t>({-32768, 7})),
      g.AddConstant("c_u16", DataType::kU16, {2}, MakeTensor<uint16_t>({65535, 3})),
      g.AddConstant("c_u32", DataType::kU32, {2}, MakeTensor<uint32_t>({4000000000u, 1})),
      g.AddConstant("c_u64", DataType::kU64, {1}, MakeTensor<uint64_t>({~uint64_t{0}})),
      g.AddInput("x_f64", DataType::kF64, {Dim::Symbol("N"), 2})};
  wide.attrs.Set("t_u64", TensorAttr{DataType::kU64, {1}, MakeTensor<uint64_t>({uint64_t{1} << 63})});
  wide.attrs.Set("t_bf16", TensorAttr{DataType::kBF16, {1}, MakeTensor<uint16_t>({0x4000})});
  ValueId out = g.AddValue("wide_out");
  g.value(out).dtype = DataType::kF64;
  wide.outputs = {out};
  g.AddNode(std::move(wide));
  g.outputs().push_back(out);
  return g;
}

std::vector<uint8_t> ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(BraidCompatibility, V1FixtureLoadsAsTheExpectedGraph) {
  const Graph expected = MakeV1FixtureGraph();
  ASSERT_TRUE(expected.Validate().ok());
  StatusOr<Graph> from_file = LoadBraidFile(kV1Fixture);
  ASSERT_TRUE(from_file.ok()) << from_file.status().ToString();
  ExpectGraphsEqual(expected, *from_file);

  const std::vector<uint8_t> bytes = ReadFileBytes(kV1Fixture);
  StatusOr<Graph> from_bytes = LoadBraidBytes(bytes.data(), bytes.size());
  ASSERT_TRUE(from_bytes.ok()) << from_bytes.status().ToString();
  ExpectGraphsEqual(expected, *from_bytes);
}

TEST(BraidCompatibility, V2FixtureLoadsAsTheExpectedGraph) {
  const Graph expected = MakeV2FixtureGraph();
  StatusOr<Graph> from_file = LoadBraidFile(kV2Fixture);
  ASSERT_TRUE(from_file.ok()) << from_file.status().ToString();
  ExpectGraphsEqual(expected, *from_file);
  BraidEditor e(ReadFileBytes(kV2Fixture));
  EXPECT_EQ(e.model()->GetField<uint32_t>(slot::kModelFormatVersion, 0), 2u);
  EXPECT_NE(e.model()->GetPointer<const flatbuffers::Table*>(slot::kModelMetadata), nullptr);
}

TEST(BraidCompatibility, V3FixtureLoadsAsTheExpectedGraph) {
  const Graph expected = MakeV3FixtureGraph();
  ASSERT_TRUE(expected.Validate().ok());
  StatusOr<Graph> from_file = LoadBraidFile(kV3Fixture);
  ASSERT_TRUE(from_file.ok()) << from_file.status().ToString();
  ExpectGraphsEqual(expected, *from_file);
  BraidEditor e(ReadFileBytes(kV3Fixture));
  EXPECT_EQ(e.model()->GetField<uint32_t>(slot::kModelFormatVersion, 0), 3u);
}

// A file claiming version 2 cannot hold a dtype that came with version 3.
TEST(BraidCompatibility, WiderDtypeInAVersionTwoFileIsRejected) {
  BraidEditor e(ReadFileBytes(kV3Fixture));
  ASSERT_TRUE(e.model()->SetField<uint32_t>(slot::kModelFormatVersion, 2));
  StatusOr<Graph> g = LoadBraidBytes(e.bytes().data(), e.bytes().size());
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("in a format version 2 file"), std::string::npos)
      << g.status().ToString();
}

TEST(BraidCompatibility, V1FixtureHasNoMetadata) {
  StatusOr<Graph> v1 = LoadBraidFile(kV1Fixture);
  ASSERT_TRUE(v1.ok()) << v1.status().ToString();
  EXPECT_TRUE(v1->metadata().empty());
}

TEST(BraidCompatibility, V1FixtureIsVersionOneWithTheDocumentedLayout) {
  const std::vector<uint8_t> bytes = ReadFileBytes(kV1Fixture);
  ASSERT_GT(bytes.size(), 64u);
  ASSERT_LT(bytes.size(), 8192u);
  EXPECT_TRUE(LooksLikeBraid(bytes.data(), bytes.size()));
  BraidEditor e(bytes);
  EXPECT_EQ(e.model()->GetField<uint32_t>(slot::kModelFormatVersion, 0), 1u);
  const auto weights_offset =
      e.model()->GetField<uint64_t>(slot::kModelWeightsOffset, 0);
  const auto weights_size =
      e.model()->GetField<uint64_t>(slot::kModelWeightsSize, 0);
  uint32_t prefix = 0;
  std::memcpy(&prefix, bytes.data(), 4);
  EXPECT_EQ(weights_offset % kBraidWeightAlignment, 0u);
  EXPECT_GE(weights_offset, 4u + prefix);
  EXPECT_EQ(weights_offset + weights_size, bytes.size());
  // fc.weight is the first constant, so its bytes open the blob.
  float first = 0;
  std::memcpy(&first, bytes.data() + weights_offset, 4);
  EXPECT_EQ(first, 0.5f);
}

TEST(BraidCompatibility, CurrentWriterReadsBackTheFixtureGraph) {
  // The fixture graph still serializes and loads with today's code, so the
  // fixture and the code describe the same thing.
  for (const Graph& graph :
       {MakeV1FixtureGraph(), MakeV2FixtureGraph(), MakeV3FixtureGraph()}) {
    StatusOr<std::vector<uint8_t>> bytes = SerializeBraid(graph);
    ASSERT_TRUE(bytes.ok());
    StatusOr<Graph> loaded = LoadBraidBytes(bytes->data(), bytes->size());
    ASSERT_TRUE(loaded.ok());
    ExpectGraphsEqual(graph, *loaded);
  }
}

// The writer uses the lowest version that holds the graph, so an older braid
// reads every file that needs nothing newer (each fixture graph comes back
// with its own version).
TEST(BraidCompatibility, WriterUsesTheLowestVersionThatHoldsTheGraph) {
  const std::pair<Graph, uint32_t> cases[] = {
      {MakeV1FixtureGraph(), 1}, {MakeV2FixtureGraph(), 2}, {MakeV3FixtureGraph(), 3}};
  for (const auto& [graph, version] : cases) {
    EXPECT_EQ(BraidFormatVersionFor(graph), version);
    StatusOr<std::vector<uint8_t>> bytes = SerializeBraid(graph);
    ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
    BraidEditor e(*bytes);
    EXPECT_EQ(e.model()->GetField<uint32_t>(slot::kModelFormatVersion, 0), version);
  }
  // A newer dtype only in a tensor attribute needs version 3 too.
  Graph g = MakeV1FixtureGraph();
  TensorAttr t;
  t.dtype = DataType::kF64;
  t.dims = {1};
  t.data = TensorData::Copy(std::vector<uint8_t>(8, 0).data(), 8);
  g.nodes().front().attrs.Set("value", t);
  EXPECT_EQ(BraidFormatVersionFor(g), 3u);
}

TEST(BraidCompatibility, DISABLED_WriteV3Fixture) {
  ASSERT_EQ(kBraidFormatVersion, 3u)
      << "write a braid_v<N>_small.braid fixture for the new version instead "
         "of overwriting v3";
  ASSERT_TRUE(SaveBraidFile(MakeV3FixtureGraph(), kV3Fixture).ok());
}

}  // namespace
}  // namespace braid::format_test
