// Truncated, bit-flipped, random and deliberately hostile .braid bytes must
// give a clean Status (or, for flips inside weight bytes, a valid graph):
// never a crash, an out-of-bounds read (CI runs this under ASan) or a blowup.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <random>
#include <set>

#include "graph/braid_format.h"
#include "tests/format/braid_editor.h"
#include "tests/format/format_test_util.h"

namespace braid::format_test {
namespace {

// ~2.4 MB of weights in 16 conv layers with BatchNormalization parameters.
const Graph& ConvNet() {
  static const Graph* graph = new Graph(MakeConvNet(16, 64, 7));
  return *graph;
}

const std::vector<uint8_t>& ConvNetBytes() {
  static const std::vector<uint8_t>* bytes = [] {
    StatusOr<std::vector<uint8_t>> b = SerializeBraid(ConvNet());
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    return new std::vector<uint8_t>(b.ok() ? *b : std::vector<uint8_t>());
  }();
  return *bytes;
}

uint32_t SizePrefix(const std::vector<uint8_t>& bytes) {
  uint32_t prefix = 0;
  std::memcpy(&prefix, bytes.data(), 4);
  return prefix;
}

uint64_t WeightsOffset(const std::vector<uint8_t>& bytes) {
  BraidEditor editor(bytes);
  return editor.model()->GetField<uint64_t>(slot::kModelWeightsOffset, 0);
}

Status LoadStatus(const std::vector<uint8_t>& bytes) {
  return LoadBraidBytes(bytes.data(), bytes.size()).status();
}

void ExpectError(const Status& s, StatusCode code, const std::string& needle) {
  ASSERT_FALSE(s.ok()) << "expected an error mentioning '" << needle << "'";
  EXPECT_EQ(s.code(), code) << s.ToString();
  EXPECT_NE(s.message().find(needle), std::string::npos) << s.ToString();
  EXPECT_EQ(s.message().rfind("braid bytes: ", 0), 0u) << s.ToString();
}

TEST(BraidCorruption, EveryTruncationIsDataLoss) {
  const std::vector<uint8_t>& full = ConvNetBytes();
  ASSERT_GT(full.size(), 2'000'000u);
  const size_t flatbuffer_size = 4 + SizePrefix(full);
  const size_t weights_offset = WeightsOffset(full);
  ASSERT_GE(weights_offset, flatbuffer_size);
  ASSERT_LT(flatbuffer_size, full.size());

  std::set<size_t> lengths;
  for (size_t n = 0; n <= 16; ++n) lengths.insert(n);
  for (size_t n : {flatbuffer_size - 1, flatbuffer_size, flatbuffer_size + 1,
                   weights_offset - 1, weights_offset, weights_offset + 1,
                   weights_offset + 63, weights_offset + 64, full.size() - 1})
    lengths.insert(n);
  for (size_t i = 1; i < 300; ++i)  // spread through the FlatBuffer
    lengths.insert(16 + (flatbuffer_size - 16) * i / 300);
  for (size_t i = 1; i < 20; ++i)  // and through the weight blob
    lengths.insert(weights_offset + (full.size() - weights_offset) * i / 20);

  for (size_t n : lengths) {
    ASSERT_LT(n, full.size());
    Status s = LoadBraidBytes(full.data(), n).status();
    ASSERT_FALSE(s.ok()) << "truncated to " << n << " bytes loaded";
    EXPECT_EQ(s.code(), StatusCode::kDataLoss)
        << "truncated to " << n << ": " << s.ToString();
  }
}

TEST(BraidCorruption, TruncatedFilesNameTheFile) {
  const std::vector<uint8_t>& full = ConvNetBytes();
  const std::string path = TempPath("truncated.braid");
  for (size_t n : {size_t{0}, size_t{5}, size_t{4 + SizePrefix(full) / 2},
                   full.size() - 1}) {
    {
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      out.write(reinterpret_cast<const char*>(full.data()),
                static_cast<std::streamsize>(n));
    }
    StatusOr<Graph> g = LoadBraidFile(path);
    ASSERT_FALSE(g.ok()) << n;
    EXPECT_EQ(g.status().code(), StatusCode::kDataLoss) << n;
    EXPECT_NE(g.status().message().find("braid file '" + path + "'"),
              std::string::npos)
        << g.status().ToString();
  }
  std::remove(path.c_str());
}

TEST(BraidCorruption, ByteFlipsInTheFlatBufferGiveCleanErrorsOrValidGraphs) {
  std::vector<uint8_t> bytes = ConvNetBytes();
  const size_t weights_offset = WeightsOffset(bytes);
  std::mt19937 rng(20240611);
  int errors = 0, loaded = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int flips = 1 + static_cast<int>(rng() % 3);
    std::vector<std::pair<size_t, uint8_t>> saved;
    for (int f = 0; f < flips; ++f) {
      const size_t pos = rng() % weights_offset;
      saved.emplace_back(pos, bytes[pos]);
      bytes[pos] ^= static_cast<uint8_t>(1 + rng() % 255);
    }
    StatusOr<Graph> g = LoadBraidBytes(bytes.data(), bytes.size());
    if (g.ok()) {
      ++loaded;
      EXPECT_TRUE(g->Validate().ok());
      // Whatever the loader accepts, the writer accepts too.
      EXPECT_TRUE(SerializeBraid(*g).ok()) << "trial " << trial;
    } else {
      ++errors;
      const StatusCode code = g.status().code();
      EXPECT_TRUE(code == StatusCode::kDataLoss ||
                  code == StatusCode::kInvalidArgument ||
                  code == StatusCode::kOutOfRange ||
                  code == StatusCode::kUnimplemented)
          << g.status().ToString();
      EXPECT_GT(g.status().message().size(),
                std::string("braid bytes: ").size());
    }
    for (auto it = saved.rbegin(); it != saved.rend(); ++it)
      bytes[it->first] = it->second;
  }
  EXPECT_GT(errors, 30);  // most flips hit offsets, sizes, ids or names
  EXPECT_EQ(errors + loaded, 300);
  EXPECT_EQ(bytes, ConvNetBytes());
}

TEST(BraidCorruption, ByteFlipsInWeightsLoadWithOnlyThoseBytesChanged) {
  std::vector<uint8_t> bytes = ConvNetBytes();
  const size_t weights_offset = WeightsOffset(bytes);
  std::mt19937 rng(7);
  for (int trial = 0; trial < 40; ++trial) {
    const size_t pos = weights_offset + rng() % (bytes.size() - weights_offset);
    const uint8_t original = bytes[pos];
    bytes[pos] ^= 0x5a;
    StatusOr<Graph> g = LoadBraidBytes(bytes.data(), bytes.size());
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    int changed = 0;
    for (ValueId id = 0; id < g->num_values(); ++id)
      if (g->value(id).constant &&
          !g->value(id).constant->ContentEquals(*ConvNet().value(id).constant))
        ++changed;
    EXPECT_LE(changed, 1);  // padding flips change nothing
    bytes[pos] = original;
  }
}

TEST(BraidCorruption, RandomGarbageIsRejected) {
  std::mt19937 rng(99);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<uint8_t> bytes(rng() % 4096);
    for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
    if (trial % 2 == 1 && bytes.size() >= 16) {
      // A plausible header, so the verifier (not the envelope) must reject.
      const uint32_t prefix = static_cast<uint32_t>(bytes.size() - 4);
      std::memcpy(bytes.data(), &prefix, 4);
      std::memcpy(bytes.data() + 8, "BRAD", 4);
    }
    Status s = LoadStatus(bytes);
    ASSERT_FALSE(s.ok()) << "trial " << trial;
    EXPECT_FALSE(s.message().empty());
  }
}

// ---- hostile files
// -----------------------------------------------------------

class BraidHostile : public testing::Test {
 protected:
  BraidEditor Edit() { return BraidEditor(ConvNetBytes()); }
  static ValueId Id(const std::string& name) {
    ValueId id = ConvNet().FindValue(name);
    EXPECT_NE(id, kNoValue) << name;
    return id;
  }
};

TEST_F(BraidHostile, HugeSizePrefix) {
  for (uint32_t prefix : {0xFFFFFFF0u, 0x7FFFFFFFu, 0x10000000u}) {
    BraidEditor e = Edit();
    std::memcpy(e.data(), &prefix, 4);
    ExpectError(LoadStatus(e.bytes()), StatusCode::kDataLoss, "size prefix");
  }
}

TEST_F(BraidHostile, SizePrefixShorterThanTheFlatBuffer) {
  BraidEditor e = Edit();
  const uint32_t prefix = SizePrefix(e.bytes()) / 2;
  std::memcpy(e.data(), &prefix, 4);
  ExpectError(LoadStatus(e.bytes()), StatusCode::kDataLoss, "verification");
}

TEST_F(BraidHostile, WrongIdentifier) {
  BraidEditor e = Edit();
  std::memcpy(e.data() + 8, "ONNX", 4);
  ExpectError(LoadStatus(e.bytes()), StatusCode::kInvalidArgument,
              "not a .braid file");
}

TEST_F(BraidHostile, TensorRefPastTheBlob) {
  BraidEditor e = Edit();
  const ValueId w = Id("layer3.weight");
  const uint64_t blob =
      e.model()->GetField<uint64_t>(slot::kModelWeightsSize, 0);
  const auto [offset, size] =
      BraidEditor::GetTensorRef(e.value(w), slot::kValueConstant);
  ASSERT_EQ(size, ConvNet().value(w).constant->size());
  ASSERT_EQ(offset % kBraidWeightAlignment, 0u);
  BraidEditor::SetTensorRef(e.value(w), slot::kValueConstant,
                            blob - kBraidWeightAlignment, size);
  ExpectError(LoadStatus(e.bytes()), StatusCode::kDataLoss,
              "value 'layer3.weight'");
  BraidEditor::SetTensorRef(e.value(w), slot::kValueConstant,
                            blob + kBraidWeightAlignment, size);
  ExpectError(LoadStatus(e.bytes()), StatusCode::kDataLoss,
              "outside the " + std::to_string(blob) + "-byte weight blob");
}

TEST_F(BraidHostile, TensorRefOffsetsThatOverflowWhenAdded) {
  BraidEditor e = Edit();
  const ValueId w = Id("layer0.weight");
  const uint64_t size = ConvNet().value(w).constant->size();
  const uint64_t huge = std::numeric_limits<uint64_t>::max() - 63;  // aligned
  BraidEditor::SetTensorRef(e.value(w), slot::kValueConstant, huge, size);
  ExpectError(LoadStatus(e.bytes()), StatusCode::kDataLoss,
              "value 'layer0.weight'");
  BraidEditor::SetTensorRef(e.value(w), slot::kValueConstant, 64,
                            std::numeric_limits<uint64_t>::max() - 32);
  ExpectError(LoadStatus(e.bytes()), StatusCode::kDataLoss, "outside");
}

TEST_F(BraidHostile, WeightBlobOffsetsThatOverflowWhenAdded) {
  BraidEditor e = Edit();
  ASSERT_TRUE(e.model()->SetField<uint64_t>(
      slot::kModelWeightsOffset, std::numeric_limits<uint64_t>::max() - 63));
  ExpectError(LoadStatus(e.bytes()), StatusCode::kDataLoss, "weight blob");
  BraidEditor f = Edit();
  ASSERT_TRUE(f.model()->SetField<uint64_t>(
      slot::kModelWeightsSize, std::numeric_limits<uint64_t>::max() - 10));
  ExpectError(LoadStatus(f.bytes()), StatusCode::kDataLoss,
              "past the end of the file");
  BraidEditor g = Edit();
  ASSERT_TRUE(g.model()->SetField<uint64_t>(slot::kModelWeightsOffset, 64));
  ExpectError(LoadStatus(g.bytes()), StatusCode::kDataLoss,
              "overlaps the FlatBuffer");
}

TEST_F(BraidHostile, MisalignedTensorRef) {
  BraidEditor e = Edit();
  const ValueId w = Id("layer2.bias");
  const auto [offset, size] =
      BraidEditor::GetTensorRef(e.value(w), slot::kValueConstant);
  BraidEditor::SetTensorRef(e.value(w), slot::kValueConstant, offset + 4, size);
  ExpectError(LoadStatus(e.bytes()), StatusCode::kDataLoss, "aligned");
}

TEST_F(BraidHostile, ConstantSizeDisagreesWithShape) {
  BraidEditor e = Edit();
  const ValueId w = Id("layer2.bias");
  const auto [offset, size] =
      BraidEditor::GetTensorRef(e.value(w), slot::kValueConstant);
  BraidEditor::SetTensorRef(e.value(w), slot::kValueConstant, offset, size - 4);
  ExpectError(LoadStatus(e.bytes()), StatusCode::kInvalidArgument,
              "value 'layer2.bias'");
}

TEST_F(BraidHostile, NegativeAndOutOfRangeIds) {
  BraidEditor e = Edit();
  e.node_inputs(3)->Mutate(0, -5);
  ExpectError(LoadStatus(e.bytes()), StatusCode::kInvalidArgument,
              "node 'layer1/Conv' (Conv, #3): input #0 has value id -5");
  BraidEditor f = Edit();
  f.node_outputs(2)->Mutate(0, 1 << 30);
  ExpectError(LoadStatus(f.bytes()), StatusCode::kInvalidArgument,
              "node 'layer0/Relu' (Relu, #2): output #0");
  BraidEditor g = Edit();
  g.graph_outputs()->Mutate(0, -1);  // -1 is "omitted" only for node inputs
  ExpectError(LoadStatus(g.bytes()), StatusCode::kInvalidArgument,
              "graph output #0 has value id -1");
}

TEST_F(BraidHostile, OutOfRangeDtype) {
  BraidEditor e = Edit();
  ASSERT_TRUE(
      e.value(Id("layer1.bias"))->SetField<uint8_t>(slot::kValueDtype, 200));
  ExpectError(LoadStatus(e.bytes()), StatusCode::kInvalidArgument,
              "value 'layer1.bias' (#" + std::to_string(Id("layer1.bias")) +
                  "): unknown dtype 200");
}

TEST_F(BraidHostile, NegativeDimensionWithoutSymbol) {
  BraidEditor e = Edit();
  const ValueId w = Id("layer1.weight");
  ASSERT_TRUE(e.dim(w, 0)->SetField<int64_t>(slot::kDimExtent, -3));
  ExpectError(LoadStatus(e.bytes()), StatusCode::kInvalidArgument,
              "value 'layer1.weight' (#" + std::to_string(w) +
                  "): dimension 0 has extent -3");
}

TEST_F(BraidHostile, HugeExtentsOfANonConstantValue) {
  // Only constants had their extents checked; a graph input of
  // [.., 2^40, 2^40] overflowed int64 in shape inference and annotation.
  BraidEditor e = Edit();
  const ValueId x = ConvNet().inputs()[0];
  const Shape shape = ConvNet().value(x).shape;
  ASSERT_GE(shape.size(), 4u);
  ASSERT_TRUE(e.dim(x, 2)->SetField<int64_t>(slot::kDimExtent, int64_t{1} << 40));
  ASSERT_TRUE(e.dim(x, 3)->SetField<int64_t>(slot::kDimExtent, int64_t{1} << 40));
  ExpectError(LoadStatus(e.bytes()), StatusCode::kInvalidArgument, "2^48");
}

TEST_F(BraidHostile, ForwardReferenceAndCycle) {
  // layer0/Conv reads layer0.relu, which a later node produces: a cycle.
  BraidEditor e = Edit();
  e.node_inputs(0)->Mutate(0, Id("layer0.relu"));
  ExpectError(LoadStatus(e.bytes()), StatusCode::kInvalidArgument,
              "'layer0.relu' is read before it is produced");
}

TEST_F(BraidHostile, ValueProducedTwice) {
  BraidEditor e = Edit();
  e.node_outputs(5)->Mutate(0, Id("layer0.relu"));
  ExpectError(LoadStatus(e.bytes()), StatusCode::kInvalidArgument,
              "defined more than once");
}

TEST_F(BraidHostile, UnknownAttributeKind) {
  BraidEditor e = Edit();
  ASSERT_TRUE(
      e.attribute(0, 0)->SetField<uint8_t>(slot::kAttributeValueType, 99));
  ExpectError(LoadStatus(e.bytes()), StatusCode::kInvalidArgument,
              "unknown attribute kind 99");
}

TEST_F(BraidHostile, NonFiniteAnnotation) {
  BraidEditor e = Edit();
  flatbuffers::Table* annotation =
      e.node(3)->GetPointer<flatbuffers::Table*>(slot::kNodeAnnotation);
  ASSERT_NE(annotation, nullptr);
  ASSERT_TRUE(annotation->SetField<double>(
      slot::kAnnotationFlops, std::numeric_limits<double>::quiet_NaN()));
  ExpectError(LoadStatus(e.bytes()), StatusCode::kInvalidArgument,
              "node 'layer1/Conv' (Conv, #3): annotation flops is not finite");
}

TEST_F(BraidHostile, TrailingBytesAfterTheBlob) {
  BraidEditor e = Edit();
  e.bytes().resize(e.size() + 64, 0);
  ExpectError(LoadStatus(e.bytes()), StatusCode::kDataLoss, "64 unexpected");
}

TEST_F(BraidHostile, NewerFormatVersionIsRejectedClearly) {
  BraidEditor e = Edit();
  ASSERT_TRUE(e.model()->SetField<uint32_t>(slot::kModelFormatVersion,
                                            kBraidFormatVersion + 1));
  const std::string expected =
      "file is format version " + std::to_string(kBraidFormatVersion + 1) +
      ", this braid reads up to " + std::to_string(kBraidFormatVersion);
  ExpectError(LoadStatus(e.bytes()), StatusCode::kUnimplemented, expected);

  const std::string path = TempPath("newer.braid");
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(e.data()),
              static_cast<std::streamsize>(e.size()));
  }
  StatusOr<Graph> g = LoadBraidFile(path);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().message(),
            "braid file '" + path + "': " + expected +
                "; upgrade braid or re-convert the model");
  std::remove(path.c_str());
}

TEST_F(BraidHostile, MissingFormatVersion) {
  BraidEditor e = Edit();
  ASSERT_TRUE(e.model()->SetField<uint32_t>(slot::kModelFormatVersion, 0));
  ExpectError(LoadStatus(e.bytes()), StatusCode::kDataLoss, "format version");
}

// Many nodes pointing at one long input vector: the FlatBuffer verifies, but
// materializing it would take far more memory than the file holds.
TEST(BraidHostileExpansion, SharedVectorsAreRejected) {
  Graph g;
  ValueId x = g.AddInput("x", DataType::kF32, {4});
  constexpr int kWide = 20000;
  constexpr int kNodes = 2000;
  ValueId sum = g.AddValue("sum");
  Node wide;
  wide.name = "wide";
  wide.op_type = "Sum";
  wide.inputs.assign(kWide, x);
  wide.outputs = {sum};
  g.AddNode(std::move(wide));
  for (int i = 0; i < kNodes; ++i) {
    Node relu;
    const std::string index = std::to_string(i);
    relu.name = std::string("relu").append(index);
    relu.op_type = "Relu";
    relu.inputs = {x};
    relu.outputs = {g.AddValue(std::string("r").append(index))};
    g.AddNode(std::move(relu));
  }
  g.outputs() = {sum};
  StatusOr<std::vector<uint8_t>> bytes = SerializeBraid(g);
  ASSERT_TRUE(bytes.ok());
  ASSERT_TRUE(LoadBraidBytes(bytes->data(), bytes->size()).ok());

  BraidEditor e(*bytes);
  const auto* target = e.node_inputs(0);
  for (int i = 1; i <= kNodes; ++i)
    ASSERT_TRUE(BraidEditor::Redirect(e.node(i), slot::kNodeInputs, target))
        << i;
  // Each node now claims 20000 inputs: 2000 * 80 KB of ids from a file of
  // a few hundred KB.
  ExpectError(LoadStatus(e.bytes()), StatusCode::kDataLoss,
              "referenced more often than its size allows");
}

}  // namespace
}  // namespace braid::format_test
