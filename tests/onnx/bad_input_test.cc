// The importer on malformed, hostile or unsupported models: each must give a
// clean error that names the file and the culprit, never a crash (CI runs
// this under AddressSanitizer).
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>

#include "graph/onnx_importer.h"
#include "gtest/gtest.h"
#include "tests/onnx/onnx_builders.h"

namespace braid {
namespace {

using namespace braid::testing;  // NOLINT: test helpers
using onnx::TensorProto;

constexpr char kSource[] = "bad.onnx";

StatusOr<Graph> Import(const std::string& bytes, const std::string& base_dir = "",
                       OnnxImportOptions options = {}) {
  options.source_name = kSource;
  return ImportOnnxBytes(bytes.data(), bytes.size(), base_dir, options);
}

// A small but complete model: conv weights (raw_data), bias (float_data),
// attributes, a Constant node and two ops.
onnx::ModelProto ConvModel() {
  onnx::ModelProto m = MakeModel(13);
  AddInput(m, "x", TensorProto::FLOAT, {std::string("N"), 2, 5, 5});
  std::vector<float> w(3 * 2 * 3 * 3);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.1f * static_cast<float>(i) - 1;
  AddInitializer(m, RawTensor("w", TensorProto::FLOAT, {3, 2, 3, 3}, w));
  TensorProto* b = m.mutable_graph()->add_initializer();
  b->set_name("b");
  b->set_data_type(TensorProto::FLOAT);
  b->add_dims(3);
  for (float v : {0.5f, -0.5f, 1.5f}) b->add_float_data(v);
  onnx::NodeProto* conv = AddNode(m, "Conv", {"x", "w", "b"}, {"c"}, "conv");
  SetIntsAttr(conv, "pads", {1, 1, 1, 1});
  SetIntsAttr(conv, "kernel_shape", {3, 3});
  SetFloatAttr(AddNode(m, "Constant", {}, {"k"}), "value_float", 2.0f);
  AddNode(m, "Mul", {"c", "k"}, {"y"}, "scale");
  AddOutput(m, "y", TensorProto::FLOAT, {std::string("N"), 3, 5, 5});
  return m;
}

void ExpectError(const StatusOr<Graph>& g, StatusCode code,
                 std::initializer_list<std::string> fragments) {
  ASSERT_FALSE(g.ok()) << "import unexpectedly succeeded";
  EXPECT_EQ(g.status().code(), code) << g.status().ToString();
  EXPECT_EQ(g.status().message().rfind(std::string(kSource) + ": ", 0), 0u)
      << "message must start with the file: " << g.status().message();
  for (const std::string& f : fragments)
    EXPECT_NE(g.status().message().find(f), std::string::npos)
        << "missing '" << f << "' in: " << g.status().message();
}

TEST(OnnxBadInputTest, ReferenceModelImports) {
  StatusOr<Graph> g = Import(Serialize(ConvModel()));
  ASSERT_TRUE(g.ok()) << g.status().ToString();
}

TEST(OnnxBadInputTest, EveryTruncationFailsCleanlyOrImports) {
  const std::string full = Serialize(ConvModel());
  int failed = 0;
  for (size_t len = 0; len < full.size(); ++len) {
    StatusOr<Graph> g = Import(full.substr(0, len));
    if (g.ok()) continue;  // a cut at a field boundary can still be valid
    ++failed;
    EXPECT_EQ(g.status().message().rfind(std::string(kSource) + ": ", 0), 0u)
        << len << ": " << g.status().message();
  }
  // Nearly every prefix is broken somehow (graph cut short, missing output).
  EXPECT_GT(failed, static_cast<int>(full.size()) * 9 / 10);
}

TEST(OnnxBadInputTest, TruncatedRealModelFile) {
  const std::string model_path = std::string(BRAID_ONNX_TESTDATA_DIR) +
                                 "/node/test_conv_with_strides_padding/model.onnx";
  if (!std::filesystem::exists(model_path))
    GTEST_SKIP() << "missing " << model_path << " (install libonnx-testdata)";
  std::ifstream in(model_path, std::ios::binary);
  const std::string full((std::istreambuf_iterator<char>(in)),
                         std::istreambuf_iterator<char>());
  ASSERT_TRUE(ImportOnnxBytes(full.data(), full.size(), "").ok());
  const auto dir = FreshTempDir("trunc");
  const std::string path = (dir / "cut.onnx").string();
  int parse_failures = 0;
  for (size_t len = 1; len < full.size(); ++len) {
    WriteFile(path, full.substr(0, len));
    StatusOr<Graph> g = ImportOnnxFile(path);
    if (g.ok()) continue;
    EXPECT_EQ(g.status().message().rfind(path + ": ", 0), 0u)
        << g.status().message();
    if (g.status().message() ==
        path + ": not a valid ONNX model (protobuf parse failed)")
      ++parse_failures;
  }
  EXPECT_GT(parse_failures, 0);
  std::filesystem::remove_all(dir);
}

// A file is read through a 1 MiB window: weights that span many windows
// import as from the same bytes in memory.
TEST(OnnxBadInputTest, FileLargerThanTheReadWindowImportsAsItsBytes) {
  onnx::ModelProto m = MakeModel(13);
  AddInput(m, "x", TensorProto::FLOAT, {1, 700});
  std::vector<float> w(700 * 1000);  // 2.8 MB
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  for (float& v : w) v = value(rng);
  AddInitializer(m, RawTensor("w", TensorProto::FLOAT, {700, 1000}, w));
  AddNode(m, "MatMul", {"x", "w"}, {"y"}, "mm");
  AddOutput(m, "y", TensorProto::FLOAT, {1, 1000});
  const std::string bytes = Serialize(m);
  const auto dir = FreshTempDir("window");
  const std::string path = (dir / "big.onnx").string();
  WriteFile(path, bytes);
  StatusOr<Graph> from_file = ImportOnnxFile(path);
  StatusOr<Graph> from_bytes = Import(bytes);
  ASSERT_TRUE(from_file.ok()) << from_file.status().ToString();
  ASSERT_TRUE(from_bytes.ok()) << from_bytes.status().ToString();
  int constants = 0;
  for (ValueId v = 0; v < from_file->num_values(); ++v) {
    if (!from_file->value(v).constant) continue;
    ++constants;
    const TensorData& got = *from_file->value(v).constant;
    ASSERT_EQ(got.size(), w.size() * sizeof(float));
    EXPECT_EQ(0, std::memcmp(got.data(), w.data(), got.size()));
  }
  EXPECT_EQ(constants, 1);
  EXPECT_EQ(from_bytes->num_values(), from_file->num_values());
  // A directory is no model file.
  StatusOr<Graph> dir_import = ImportOnnxFile(dir.string());
  ASSERT_FALSE(dir_import.ok());
  EXPECT_NE(dir_import.status().message().find("not a regular file"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(OnnxBadInputTest, RandomByteFlipsNeverCrash) {
  const std::string full = Serialize(ConvModel());
  std::mt19937 rng(1234);
  std::uniform_int_distribution<size_t> pos(0, full.size() - 1);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<int> flips(1, 4);
  int ok = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string bytes = full;
    for (int f = flips(rng); f > 0; --f)
      bytes[pos(rng)] = static_cast<char>(byte(rng));
    StatusOr<Graph> g = Import(bytes);
    if (g.ok()) {
      ++ok;
      EXPECT_TRUE(g->Validate().ok());
    } else {
      EXPECT_EQ(g.status().message().rfind(std::string(kSource) + ": ", 0), 0u)
          << g.status().message();
    }
  }
  // Flips inside weight bytes leave a valid model, so some must succeed.
  EXPECT_GT(ok, 0);
}

TEST(OnnxBadInputTest, NewerOpsetIsRejectedByNumber) {
  onnx::ModelProto m = ConvModel();
  m.mutable_opset_import(0)->set_version(22);
  ExpectError(Import(Serialize(m)), StatusCode::kUnimplemented,
              {"opset 22", "1 to 21"});
  for (int64_t opset : {18, 19, 20, 21}) {  // what current PyTorch exporters write
    m.mutable_opset_import(0)->set_version(opset);
    StatusOr<Graph> g = Import(Serialize(m));
    ASSERT_TRUE(g.ok()) << "opset " << opset << ": " << g.status().ToString();
    EXPECT_EQ(g->opset(), opset);
  }
  // Before opset 7 a model loads only where each op already had the meaning
  // braid reads: Conv has not changed since opset 1, Mul gained numpy
  // broadcasting (and lost `broadcast` / `axis`) in opset 7.
  m.mutable_opset_import(0)->set_version(6);
  ExpectError(Import(Serialize(m)), StatusCode::kUnimplemented,
              {"node 'scale' (op Mul)", "defined from opset 7",
               "model's opset 6"});
  onnx::ModelProto conv_only = ConvModel();
  conv_only.mutable_graph()->mutable_node()->RemoveLast();  // Mul
  conv_only.mutable_graph()->mutable_node()->RemoveLast();  // Constant
  conv_only.mutable_graph()->mutable_output(0)->set_name("c");
  conv_only.mutable_opset_import(0)->set_version(1);
  StatusOr<Graph> legacy = Import(Serialize(conv_only));
  ASSERT_TRUE(legacy.ok()) << legacy.status().ToString();
  EXPECT_EQ(legacy->opset(), 1);
  m.mutable_opset_import(0)->set_version(0);
  ExpectError(Import(Serialize(m)), StatusCode::kUnimplemented, {"opset 0"});
  m.clear_opset_import();
  ExpectError(Import(Serialize(m)), StatusCode::kInvalidArgument,
              {"opset_import"});
}

TEST(OnnxBadInputTest, AllUnsupportedNodesInOneError) {
  onnx::ModelProto m = MakeModel(13);
  AddInput(m, "x", TensorProto::FLOAT, {2});
  AddNode(m, "FooOp", {"x"}, {"a"}, "x1");
  AddNode(m, "Relu", {"a"}, {"b"}, "fine");
  onnx::NodeProto* bar = AddNode(m, "BarOp", {"b"}, {"c"}, "y1");
  bar->set_domain("com.ms");
  AddNode(m, "BazOp", {"c"}, {"d"});  // unnamed: index 3
  AddOutput(m, "d", TensorProto::FLOAT, {2});
  StatusOr<Graph> g = Import(Serialize(m));
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(g.status().message(),
            std::string(kSource) +
                ": 3 unsupported nodes: node 'x1' (op FooOp), node 'y1' (op "
                "BarOp domain com.ms), node 'BazOp_3' (op BazOp)");
}

TEST(OnnxBadInputTest, WrongDataSizeNamesTheTensor) {
  onnx::ModelProto m = ConvModel();
  m.mutable_graph()->mutable_initializer(0)->mutable_raw_data()->resize(10);
  ExpectError(Import(Serialize(m)), StatusCode::kInvalidArgument,
              {"initializer 'w'", "10 bytes", "expected 216"});

  onnx::ModelProto typed = ConvModel();
  typed.mutable_graph()->mutable_initializer(1)->add_float_data(3.0f);
  ExpectError(Import(Serialize(typed)), StatusCode::kInvalidArgument,
              {"initializer 'b'", "float_data holds 4 values, expected 3"});

  onnx::ModelProto negative = ConvModel();
  negative.mutable_graph()->mutable_initializer(1)->set_dims(0, -3);
  ExpectError(Import(Serialize(negative)), StatusCode::kInvalidArgument,
              {"initializer 'b'", "negative"});

  onnx::ModelProto huge = ConvModel();
  auto* w = huge.mutable_graph()->mutable_initializer(0);
  for (int i = 0; i < 4; ++i) w->set_dims(i, int64_t{1} << 40);
  ExpectError(Import(Serialize(huge)), StatusCode::kInvalidArgument,
              {"initializer 'w'", "overflows"});
}

TEST(OnnxBadInputTest, HugeInputShapeNamesTheInput) {
  // Extents whose product overflows int64 used to reach shape inference and
  // the annotation unchecked.
  onnx::ModelProto m = ConvModel();
  auto* dims = m.mutable_graph()->mutable_input(0)->mutable_type()
                   ->mutable_tensor_type()->mutable_shape();
  dims->mutable_dim(2)->set_dim_value(int64_t{1} << 40);
  dims->mutable_dim(3)->set_dim_value(int64_t{1} << 40);
  ExpectError(Import(Serialize(m)), StatusCode::kInvalidArgument,
              {"graph input 'x'", "2^48"});
}

TEST(OnnxBadInputTest, UnsupportedDtypeNamesTheTensor) {
  onnx::ModelProto m = ConvModel();
  AddInitializer(m, RawTensor("cplx", TensorProto::COMPLEX64, {1},
                              std::vector<float>{1.0f, 0.5f}));
  ExpectError(Import(Serialize(m)), StatusCode::kUnimplemented,
              {"initializer 'cplx'", "COMPLEX64"});

  onnx::ModelProto in = ConvModel();
  AddInput(in, "strings", TensorProto::STRING, {1});
  ExpectError(Import(Serialize(in)), StatusCode::kUnimplemented,
              {"graph input 'strings'", "STRING"});
}

TEST(OnnxBadInputTest, GraphAttributeNamesTheNode) {
  onnx::ModelProto m = ConvModel();
  auto* attr = m.mutable_graph()->mutable_node(0)->add_attribute();
  attr->set_name("body");
  attr->set_type(onnx::AttributeProto::GRAPH);
  attr->mutable_g()->set_name("sub");
  ExpectError(Import(Serialize(m)), StatusCode::kUnimplemented,
              {"node 'conv' (op Conv)", "attribute 'body'", "GRAPH"});

  onnx::ModelProto sparse = ConvModel();
  auto* sp = sparse.mutable_graph()->mutable_node(0)->add_attribute();
  sp->set_name("s");
  sp->set_type(onnx::AttributeProto::SPARSE_TENSOR);
  ExpectError(Import(Serialize(sparse)), StatusCode::kUnimplemented,
              {"node 'conv' (op Conv)", "SPARSE_TENSOR"});
}

TEST(OnnxBadInputTest, DanglingAndDuplicateValuesNameTheNode) {
  onnx::ModelProto m = ConvModel();
  m.mutable_graph()->mutable_node(2)->set_input(1, "nowhere");
  ExpectError(Import(Serialize(m)), StatusCode::kInvalidArgument,
              {"node 'scale' (op Mul)", "'nowhere'"});

  onnx::ModelProto dup = ConvModel();
  dup.mutable_graph()->mutable_node(2)->set_output(0, "c");
  ExpectError(Import(Serialize(dup)), StatusCode::kInvalidArgument,
              {"node 'scale' (op Mul)", "'c'", "more than once"});

  onnx::ModelProto missing_out = ConvModel();
  missing_out.mutable_graph()->mutable_output(0)->set_name("absent");
  ExpectError(Import(Serialize(missing_out)), StatusCode::kInvalidArgument,
              {"graph output 'absent'"});

  onnx::ModelProto cycle = MakeModel(13);
  AddInput(cycle, "x", TensorProto::FLOAT, {2});
  AddNode(cycle, "Add", {"x", "b"}, {"a"}, "n1");
  AddNode(cycle, "Relu", {"a"}, {"b"}, "n2");
  AddOutput(cycle, "b", TensorProto::FLOAT, {2});
  ExpectError(Import(Serialize(cycle)), StatusCode::kInvalidArgument,
              {"cycle"});
}

TEST(OnnxBadInputTest, MissingFileNamesIt) {
  StatusOr<Graph> g = ImportOnnxFile("/nonexistent/dir/model.onnx");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(g.status().message().rfind("/nonexistent/dir/model.onnx: ", 0), 0u)
      << g.status().message();
}

// External data: a model in `dir` whose initializer "w" (2x3 f32) lives at
// `location` with the given offset/length keys ("" = key absent).
onnx::ModelProto ExternalModel(const std::string& location,
                               const std::string& offset = "",
                               const std::string& length = "") {
  onnx::ModelProto m = MakeModel(13);
  AddInput(m, "x", TensorProto::FLOAT, {2, 3});
  TensorProto* w = m.mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(TensorProto::FLOAT);
  w->add_dims(2);
  w->add_dims(3);
  w->set_data_location(TensorProto::EXTERNAL);
  auto add = [&](const char* key, const std::string& value) {
    if (value.empty()) return;
    auto* e = w->add_external_data();
    e->set_key(key);
    e->set_value(value);
  };
  add("location", location);
  add("offset", offset);
  add("length", length);
  AddNode(m, "Add", {"x", "w"}, {"y"});
  AddOutput(m, "y", TensorProto::FLOAT, {2, 3});
  return m;
}

class OnnxExternalDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = FreshTempDir("root");
    model_dir_ = root_ / "model";
    std::filesystem::create_directories(model_dir_);
    // 24 bytes = exactly one 2x3 f32 tensor.
    WriteFile(model_dir_ / "w.bin", std::string(24, '\x01'));
    WriteFile(root_ / "outside.bin", std::string(24, '\x02'));
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  StatusOr<Graph> Load(const onnx::ModelProto& m) {
    return Import(Serialize(m), model_dir_.string());
  }

  std::filesystem::path root_;
  std::filesystem::path model_dir_;
};

TEST_F(OnnxExternalDataTest, FileInsideTheFolderLoads) {
  StatusOr<Graph> g = Load(ExternalModel("w.bin"));
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const Value& w = g->value(g->FindValue("w"));
  ASSERT_TRUE(w.constant);
  EXPECT_TRUE(w.constant->ContentEquals(
      TensorData::Copy(std::string(24, '\x01').data(), 24)));
}

TEST_F(OnnxExternalDataTest, EscapingPathsAreRejected) {
  ExpectError(Load(ExternalModel("../outside.bin")),
              StatusCode::kInvalidArgument,
              {"initializer 'w'", "'../outside.bin'", ".."});
  ExpectError(Load(ExternalModel("sub/../../outside.bin")),
              StatusCode::kInvalidArgument, {"initializer 'w'", ".."});
  const std::string absolute = (root_ / "outside.bin").string();
  ExpectError(Load(ExternalModel(absolute)), StatusCode::kInvalidArgument,
              {"initializer 'w'", absolute, "absolute"});
}

TEST_F(OnnxExternalDataTest, SymlinkPointingOutsideIsRejected) {
  std::filesystem::create_symlink(root_ / "outside.bin", model_dir_ / "link.bin");
  ExpectError(Load(ExternalModel("link.bin")), StatusCode::kInvalidArgument,
              {"initializer 'w'", "'link.bin'", "outside the model's folder"});
  std::filesystem::create_directory_symlink(root_, model_dir_ / "up");
  ExpectError(Load(ExternalModel("up/outside.bin")),
              StatusCode::kInvalidArgument,
              {"initializer 'w'", "outside the model's folder"});
}

TEST_F(OnnxExternalDataTest, OffsetAndLengthAreCheckedAgainstTheFile) {
  ExpectError(Load(ExternalModel("w.bin", "25")), StatusCode::kOutOfRange,
              {"initializer 'w'", "'w.bin'", "offset 25", "24 bytes"});
  ExpectError(Load(ExternalModel("w.bin", "8", "24")), StatusCode::kOutOfRange,
              {"initializer 'w'", "past the end"});
  ExpectError(Load(ExternalModel("w.bin", "0", "16")),
              StatusCode::kInvalidArgument, {"initializer 'w'", "expected 24"});
  ExpectError(Load(ExternalModel("w.bin", "-1")), StatusCode::kInvalidArgument,
              {"initializer 'w'", "offset '-1'"});
  ExpectError(Load(ExternalModel("missing.bin")), StatusCode::kNotFound,
              {"initializer 'w'", "'missing.bin'"});
}

}  // namespace
}  // namespace braid
