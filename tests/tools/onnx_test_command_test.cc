// `braid onnx-test`: real libonnx-testdata cases, and cases built here whose
// every byte the test controls (a corrupted expectation, unsupported ops,
// dtypes and opsets, an input that is also an initializer).
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "braid/braid.h"
#include "tests/onnx/onnx_builders.h"
#include "tests/scoped_temp_dir.h"
#include "tests/tools/cli_test_util.h"
#include "tools/commands.h"

namespace braid::cli {
namespace {

namespace fs = std::filesystem;
using braid::testing::AddInitializer;
using braid::testing::AddInput;
using braid::testing::AddNode;
using braid::testing::AddOutput;
using braid::testing::MakeModel;
using braid::testing::RawTensor;
using braid::testing::Serialize;

using Result = CliResult;

Result OnnxTest(std::vector<std::string> args) { return RunCliCommand("onnx-test", std::move(args)); }

fs::path NodeCase(const std::string& name) {
  return fs::path(BRAID_ONNX_TESTDATA_DIR) / "node" / name;
}

std::string LastLine(const std::string& text) {
  std::string s = text;
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s.substr(s.rfind('\n') == std::string::npos ? 0 : s.rfind('\n') + 1);
}

void WriteBytes(const fs::path& path, const std::string& bytes) {
  braid::testing::WriteFile(path, bytes);
}

std::string ReadBytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// A case folder: model.onnx + test_data_set_0/{input,output}_N.pb.
void WriteCase(const fs::path& dir, const onnx::ModelProto& model,
               const std::vector<onnx::TensorProto>& inputs,
               const std::vector<onnx::TensorProto>& outputs) {
  fs::create_directories(dir / "test_data_set_0");
  WriteBytes(dir / "model.onnx", Serialize(model));
  for (size_t i = 0; i < inputs.size(); ++i)
    WriteBytes(dir / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb"),
               inputs[i].SerializeAsString());
  for (size_t i = 0; i < outputs.size(); ++i)
    WriteBytes(dir / "test_data_set_0" / ("output_" + std::to_string(i) + ".pb"),
               outputs[i].SerializeAsString());
}

// y = Relu(x) on [2,3] with the given (braid-unknown or real) op type.
onnx::ModelProto UnaryModel(const std::string& op, int64_t opset = 13,
                            int32_t dtype = onnx::TensorProto::FLOAT) {
  onnx::ModelProto m = MakeModel(opset);
  AddInput(m, "x", dtype, {int64_t{2}, int64_t{3}});
  AddOutput(m, "y", dtype, {int64_t{2}, int64_t{3}});
  AddNode(m, op, {"x"}, {"y"}, "the_node");
  return m;
}

const std::vector<float> kX = {-1.5f, 0.25f, 2.0f, -0.5f, 3.5f, -4.0f};

TEST(OnnxTestCommandTest, RealCasesPass) {
  const Result r = OnnxTest({NodeCase("test_relu").string(),
                             NodeCase("test_conv_with_strides_padding").string(),
                             NodeCase("test_sigmoid").string(),
                             // 'shape' is a graph input: bound from the data set.
                             NodeCase("test_reshape_negative_dim").string()});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("PASS test_reshape_negative_dim\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("PASS test_relu\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("PASS test_conv_with_strides_padding\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("PASS test_sigmoid\n"), std::string::npos) << r.out;
  EXPECT_EQ(LastLine(r.out), "4 passed, 0 failed, 0 skipped");
}

TEST(OnnxTestCommandTest, CorruptedExpectationFailsWithWorstElement) {
  const braid::testing::ScopedTempDir scratch("braid_onnx_test_corrupt");
  const fs::path& root = scratch.path();
  const fs::path dir = root / "test_relu_corrupted";
  fs::create_directories(dir / "test_data_set_0");
  fs::copy_file(NodeCase("test_relu") / "model.onnx", dir / "model.onnx");
  fs::copy_file(NodeCase("test_relu") / "test_data_set_0" / "input_0.pb",
                dir / "test_data_set_0" / "input_0.pb");
  onnx::TensorProto expected;
  ASSERT_TRUE(expected.ParseFromString(
      ReadBytes(NodeCase("test_relu") / "test_data_set_0" / "output_0.pb")));
  ASSERT_EQ(expected.data_type(), onnx::TensorProto::FLOAT);
  ASSERT_TRUE(expected.has_raw_data());
  ASSERT_EQ(expected.dims_size(), 3);  // [3,4,5]
  std::string raw = expected.raw_data();
  // The last zero of Relu's output (a negative input) becomes 0.5: an error
  // of exactly 0.5 at a known element.
  size_t flat = 60;
  for (size_t i = 0; i < 60; ++i) {
    float e;
    std::memcpy(&e, raw.data() + i * 4, 4);
    if (e == 0.0f) flat = i;
  }
  ASSERT_LT(flat, 60u);
  const float v = 0.0f, corrupted = 0.5f;
  std::memcpy(raw.data() + flat * 4, &corrupted, 4);
  expected.set_raw_data(raw);
  const std::string where = std::string("[")
                                .append(std::to_string(flat / 20))
                                .append(",")
                                .append(std::to_string(flat / 5 % 4))
                                .append(",")
                                .append(std::to_string(flat % 5))
                                .append("]");
  WriteBytes(dir / "test_data_set_0" / "output_0.pb", expected.SerializeAsString());

  Result r = OnnxTest({dir.string()});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("FAIL test_relu_corrupted: output 'y' (test_data_set_0): "
                       "max abs error 0.5; worst element " + where +
                       ": got 0, expected 0.5 (error 0.5)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("1 of 60 elements"), std::string::npos) << r.out;
  EXPECT_EQ(LastLine(r.out), "0 passed, 1 failed, 0 skipped");

  // The error is within a loose enough tolerance.
  r = OnnxTest({dir.string(), "--atol", "0.6"});
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(LastLine(r.out), "1 passed, 0 failed, 0 skipped");
  // rtol scales |expected| (= v + 0.5, Relu output v >= 0): just below and
  // just above the rtol that admits an error of 0.5.
  const double needed = 0.5 / (static_cast<double>(v) + 0.5);
  r = OnnxTest({dir.string(), "--atol=0", "--rtol", std::to_string(needed * 0.99)});
  EXPECT_EQ(r.status, 1) << r.out;
  r = OnnxTest({dir.string(), "--atol=0", "--rtol", std::to_string(needed * 1.01)});
  EXPECT_EQ(r.status, 0) << r.out;
}

TEST(OnnxTestCommandTest, UnsupportedCasesAreSkippedWithTheReason) {
  const braid::testing::ScopedTempDir scratch("braid_onnx_test_skip");
  const fs::path& root = scratch.path();
  const onnx::TensorProto x = RawTensor<float>("x", onnx::TensorProto::FLOAT, {2, 3}, kX);
  WriteCase(root / "case_unknown_op", UnaryModel("BraidNoSuchOp"), {x}, {x});
  onnx::ModelProto custom = UnaryModel("Relu");
  custom.mutable_graph()->mutable_node(0)->set_domain("com.example");
  WriteCase(root / "case_custom_domain", custom, {x}, {x});
  WriteCase(root / "case_opset_5", UnaryModel("Relu", 5), {x}, {x});
  WriteCase(root / "case_opset_99", UnaryModel("Relu", 99), {x}, {x});
  std::vector<float> xc;  // complex64: (re, im) pairs
  for (float v : kX) xc.insert(xc.end(), {v, 0.0f});
  const onnx::TensorProto x64 = RawTensor<float>("x", onnx::TensorProto::COMPLEX64, {2, 3}, xc);
  WriteCase(root / "case_complex", UnaryModel("Relu", 13, onnx::TensorProto::COMPLEX64), {x64},
            {x64});

  const Result r = OnnxTest({root.string()});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("SKIP case_unknown_op: op 'BraidNoSuchOp' not supported\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("SKIP case_custom_domain: op 'com.example.Relu' not supported\n"),
            std::string::npos)
      << r.out;
  // Opsets 1-6 are read op by op: Relu's meaning changed in opset 6.
  EXPECT_NE(r.out.find("SKIP case_opset_5: unsupported: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("braid reads Relu as defined from opset 6; the model's opset 5"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("SKIP case_opset_99: opset 99"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("SKIP case_complex: dtype COMPLEX64 (input 'x')\n"), std::string::npos)
      << r.out;
  EXPECT_EQ(LastLine(r.out), "0 passed, 0 failed, 5 skipped");
  // One line per case plus the summary, in folder order.
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 6);
  EXPECT_LT(r.out.find("case_custom_domain"), r.out.find("case_unknown_op"));
}

// ONNX's older test data: bf16 tensors stored as UINT16, f32 -> bf16 by
// truncation (one bf16 ulp from braid's round to nearest even: passes, two
// ulps fail), and an input declared [3,2] given [2,3] (re-declared).
TEST(OnnxTestCommandTest, OlderBfloat16DataAndMisdeclaredInputShapes) {
  const braid::testing::ScopedTempDir scratch("braid_onnx_test_bf16");
  const fs::path& root = scratch.path();
  // 1 + 2^-8 + 2^-9 rounds up to 0x3F81, truncates to 0x3F80.
  const std::vector<float> x = {1.0f + 3.0f / 512, 2.0f, -0.5f, 3.0f, 1.5f, -4.0f};
  std::vector<uint16_t> truncated;
  for (float v : x) {
    uint32_t bits = 0;
    std::memcpy(&bits, &v, 4);
    truncated.push_back(static_cast<uint16_t>(bits >> 16));
  }
  onnx::ModelProto cast = MakeModel(13);
  AddInput(cast, "x", onnx::TensorProto::FLOAT, {int64_t{2}, int64_t{3}});
  AddOutput(cast, "y", onnx::TensorProto::BFLOAT16, {int64_t{2}, int64_t{3}});
  braid::testing::SetIntAttr(AddNode(cast, "Cast", {"x"}, {"y"}, "cast"), "to",
                             onnx::TensorProto::BFLOAT16);
  const onnx::TensorProto in = RawTensor<float>("x", onnx::TensorProto::FLOAT, {2, 3}, x);
  WriteCase(root / "case_a_truncated", cast, {in},
            {RawTensor<uint16_t>("y", onnx::TensorProto::UINT16, {2, 3}, truncated)});
  std::vector<uint16_t> two_ulps = truncated;
  two_ulps[0] = static_cast<uint16_t>(two_ulps[0] - 2);
  WriteCase(root / "case_b_two_ulps", cast, {in},
            {RawTensor<uint16_t>("y", onnx::TensorProto::UINT16, {2, 3}, two_ulps)});
  onnx::ModelProto relu = MakeModel(13);
  AddInput(relu, "x", onnx::TensorProto::FLOAT, {int64_t{3}, int64_t{2}});
  AddOutput(relu, "y", onnx::TensorProto::FLOAT, {std::string("a"), std::string("b")});
  AddNode(relu, "Relu", {"x"}, {"y"}, "relu");
  std::vector<float> relu_y;
  for (float v : x) relu_y.push_back(v > 0 ? v : 0.0f);
  WriteCase(root / "case_c_misdeclared", relu, {in},
            {RawTensor<float>("y", onnx::TensorProto::FLOAT, {2, 3}, relu_y)});

  const Result r = OnnxTest({root.string()});
  EXPECT_NE(r.out.find("PASS case_a_truncated\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("FAIL case_b_two_ulps: output 'y'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("PASS case_c_misdeclared\n"), std::string::npos) << r.out;
  EXPECT_EQ(LastLine(r.out), "2 passed, 1 failed, 0 skipped") << r.out;
}

// An input that is also an initializer (IR < 4 style): only the other input
// has an input_N.pb; the expected output is computed here.
TEST(OnnxTestCommandTest, InitializerInputsAreNotFed) {
  const braid::testing::ScopedTempDir scratch("braid_onnx_test_init");
  const fs::path& root = scratch.path();
  onnx::ModelProto m = MakeModel(13);
  m.set_ir_version(3);
  AddInput(m, "bias", onnx::TensorProto::FLOAT, {int64_t{2}, int64_t{3}});
  AddInput(m, "x", onnx::TensorProto::FLOAT, {int64_t{2}, int64_t{3}});
  AddOutput(m, "y", onnx::TensorProto::FLOAT, {int64_t{2}, int64_t{3}});
  const std::vector<float> bias = {0.5f, -1.0f, 2.0f, 4.0f, -3.0f, 1.5f};
  AddInitializer(m, RawTensor<float>("bias", onnx::TensorProto::FLOAT, {2, 3}, bias));
  AddNode(m, "Add", {"x", "bias"}, {"y"}, "add");
  std::vector<float> sum(6);
  for (size_t i = 0; i < 6; ++i) sum[i] = kX[i] + bias[i];
  WriteCase(root / "case_add_initializer", m,
            {RawTensor<float>("", onnx::TensorProto::FLOAT, {2, 3}, kX)},
            {RawTensor<float>("", onnx::TensorProto::FLOAT, {2, 3}, sum)});
  Result r = OnnxTest({root.string(), "--verbose"});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("PASS case_add_initializer (max abs error 0, 1 data set)"),
            std::string::npos)
      << r.out;

  // A wrong shape in the expectation is a FAIL naming both shapes.
  WriteCase(root / "case_add_initializer", m,
            {RawTensor<float>("", onnx::TensorProto::FLOAT, {2, 3}, kX)},
            {RawTensor<float>("", onnx::TensorProto::FLOAT, {3, 2}, sum)});
  r = OnnxTest({root.string()});
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("shape [2,3], expected [3,2]"), std::string::npos) << r.out;
}

// braid is an inference runtime: training configurations are reported as
// unsupported when the model is opened, and onnx-test SKIPs them (as it does
// any Unimplemented from opening or kernel planning) while every other
// error and every wrong number stays a FAIL.
onnx::ModelProto DropoutModel(bool with_training_initializer, bool training) {
  onnx::ModelProto m = MakeModel(13);
  AddInput(m, "x", onnx::TensorProto::FLOAT, {int64_t{2}, int64_t{3}});
  if (!with_training_initializer) AddInput(m, "t", onnx::TensorProto::BOOL, {});
  AddOutput(m, "y", onnx::TensorProto::FLOAT, {int64_t{2}, int64_t{3}});
  AddInitializer(m, RawTensor<float>("r", onnx::TensorProto::FLOAT, {}, {0.5f}));
  if (with_training_initializer)
    AddInitializer(m, RawTensor<uint8_t>("t", onnx::TensorProto::BOOL, {},
                                         {static_cast<uint8_t>(training ? 1 : 0)}));
  AddNode(m, "Dropout", {"x", "r", "t"}, {"y"}, "drop");
  return m;
}

TEST(OnnxTestCommandTest, TrainingModeAndUnsupportedKernelsSkipOtherErrorsFail) {
  const braid::testing::ScopedTempDir scratch("braid_onnx_test_training");
  const fs::path& root = scratch.path();
  const onnx::TensorProto x = RawTensor<float>("x", onnx::TensorProto::FLOAT, {2, 3}, kX);

  onnx::ModelProto bn = MakeModel(15);
  AddInput(bn, "x", onnx::TensorProto::FLOAT, {int64_t{2}, int64_t{3}});
  AddOutput(bn, "y", onnx::TensorProto::FLOAT, {int64_t{2}, int64_t{3}});
  for (const char* p : {"s", "b", "mean", "var"})
    AddInitializer(bn, RawTensor<float>(p, onnx::TensorProto::FLOAT, {3}, {1.0f, 0.5f, 2.0f}));
  braid::testing::SetIntAttr(
      AddNode(bn, "BatchNormalization", {"x", "s", "b", "mean", "var"}, {"y"}, "bn"),
      "training_mode", 1);
  WriteCase(root / "case_bn_training", bn, {x}, {x});
  WriteCase(root / "case_dropout_constant_true", DropoutModel(true, true), {x}, {x});
  const onnx::TensorProto t = RawTensor<uint8_t>("t", onnx::TensorProto::BOOL, {}, {0});
  WriteCase(root / "case_dropout_computed", DropoutModel(false, false), {x, t}, {x});
  // Constant false: Dropout is the identity and the case runs.
  WriteCase(root / "case_dropout_false", DropoutModel(true, false), {x},
            {RawTensor<float>("y", onnx::TensorProto::FLOAT, {2, 3}, kX)});
  // ... and a wrong expectation there is still a FAIL.
  std::vector<float> wrong = kX;
  wrong[4] += 0.25f;
  WriteCase(root / "case_dropout_false_wrong", DropoutModel(true, false), {x},
            {RawTensor<float>("y", onnx::TensorProto::FLOAT, {2, 3}, wrong)});
  // No CPU kernel takes f16 Add: Unimplemented while planning, a SKIP.
  onnx::ModelProto add16 = MakeModel(13);
  AddInput(add16, "a", onnx::TensorProto::FLOAT16, {int64_t{2}});
  AddInput(add16, "b", onnx::TensorProto::FLOAT16, {int64_t{2}});
  AddOutput(add16, "y", onnx::TensorProto::FLOAT16, {int64_t{2}});
  AddNode(add16, "Add", {"a", "b"}, {"y"}, "add16");
  const std::vector<uint16_t> one_two = {0x3C00, 0x4000};
  const onnx::TensorProto a16 =
      RawTensor<uint16_t>("a", onnx::TensorProto::FLOAT16, {2}, one_two);
  const onnx::TensorProto b16 =
      RawTensor<uint16_t>("b", onnx::TensorProto::FLOAT16, {2}, one_two);
  WriteCase(root / "case_add_f16", add16, {a16, b16},
            {RawTensor<uint16_t>("y", onnx::TensorProto::FLOAT16, {2}, {0x4000, 0x4400})});
  // Shapes that do not broadcast: InvalidArgument at open, a FAIL.
  onnx::ModelProto bad = MakeModel(13);
  AddInput(bad, "a", onnx::TensorProto::FLOAT, {int64_t{2}, int64_t{3}});
  AddInput(bad, "b", onnx::TensorProto::FLOAT, {int64_t{4}});
  AddOutput(bad, "y", onnx::TensorProto::FLOAT, {int64_t{2}, int64_t{3}});
  AddNode(bad, "Add", {"a", "b"}, {"y"}, "bad_add");
  WriteCase(root / "case_add_bad_shapes", bad,
            {RawTensor<float>("a", onnx::TensorProto::FLOAT, {2, 3}, kX),
             RawTensor<float>("b", onnx::TensorProto::FLOAT, {4}, {1, 2, 3, 4})},
            {x});

  const Result r = OnnxTest({root.string()});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("SKIP case_bn_training: unsupported: node 'bn' (BatchNormalization)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(": training_mode=1 is not supported (inference runtime)\nSKIP "
                       "case_dropout_computed: unsupported: node 'drop' (Dropout)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("a computed training_mode is not supported (inference runtime"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("SKIP case_dropout_constant_true: unsupported: node 'drop' (Dropout)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("PASS case_dropout_false\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("FAIL case_dropout_false_wrong: output 'y' (test_data_set_0): "
                       "max abs error 0.25"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("SKIP case_add_f16: unsupported: planning "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("node 'add16' (Add): no cpu kernel accepts it"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("FAIL case_add_bad_shapes: open: "), std::string::npos) << r.out;
  EXPECT_EQ(LastLine(r.out), "1 passed, 2 failed, 4 skipped");

  // The decision is the runtime's, not onnx-test's: opening reports it.
  StatusOr<std::unique_ptr<Session>> opened =
      Session::Open((root / "case_bn_training" / "model.onnx").string(), SessionOptions{});
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(opened.status().message().find(
                "node 'bn' (BatchNormalization) with inputs [2,3], [3], [3], [3], [3]: "
                "training_mode=1 is not supported (inference runtime)"),
            std::string::npos)
      << opened.status().message();
}

TEST(OnnxTestCommandTest, RealTrainingCasesAreSkipped) {
  const Result r = OnnxTest({NodeCase("test_batchnorm_example_training_mode").string(),
                             NodeCase("test_training_dropout_mask").string()});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 3) << r.out;
  EXPECT_NE(r.out.find("SKIP test_batchnorm_example_training_mode: unsupported: node "
                       "'BatchNormalization_0' (BatchNormalization)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("SKIP test_training_dropout_mask: unsupported: node 'Dropout_0' "
                       "(Dropout)"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(LastLine(r.out), "0 passed, 0 failed, 2 skipped");
}

TEST(OnnxTestCommandTest, BadArguments) {
  EXPECT_EQ(OnnxTest({}).status, 2);
  Result r = OnnxTest({"/nonexistent/onnx/cases"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("no ONNX test case"), std::string::npos) << r.err;
  EXPECT_EQ(OnnxTest({NodeCase("test_relu").string(), "--rtol", "abc"}).status, 2);
  EXPECT_EQ(OnnxTest({NodeCase("test_relu").string(), "--frobnicate"}).status, 2);
  r = OnnxTest({"--help"});
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("Usage: braid onnx-test"), std::string::npos);
}

}  // namespace
}  // namespace braid::cli
