// ONNX backend node test cases (Debian's libonnx-testdata): every case whose
// ops braid claims (IsSupportedOp) must import, and shape inference must give
// each graph output the dtype and shape of the reference output_N.pb.
//
// One ctest entry per claimed case; OnnxConformanceSummary.Counts prints how
// many cases exist, how many braid claims and which claimed ones fail.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "graph/onnx_importer.h"
#include "graph/onnx_tensor.h"
#include "graph/op_schema.h"
#include "graph/passes/passes.h"
#include "gtest/gtest.h"

namespace braid {
namespace {

namespace fs = std::filesystem;

// Inputs of at most this many i64 elements are fed as constants (see
// FeedSmallIntInputs).
constexpr int64_t kMaxFedElements = 64;

fs::path NodeCasesDir() { return fs::path(BRAID_ONNX_TESTDATA_DIR) / "node"; }



enum class Claim {
  kClaimed,
  kUnsupportedOpset,
  kUnsupportedOp,
  kUnsupportedType,
  kUnreadable
};

// Whether braid claims the case: the default-domain opset is one the
// importer accepts (some cases are stamped opset 1..6), every node is a
// default-domain op braid supports (Constant is folded by the importer), and
// every tensor type at the graph boundary is one braid has (cases on STRING
// tensors exercise dtypes, not ops).
Claim ClaimCase(const fs::path& dir) {
  onnx::ModelProto model;
  if (!onnx_import::ParseProtoFile(dir / "model.onnx", &model)) return Claim::kUnreadable;
  for (const onnx::OperatorSetIdProto& entry : model.opset_import())
    if ((entry.domain().empty() || entry.domain() == "ai.onnx") &&
        (entry.version() < kMinOnnxOpset || entry.version() > kMaxOnnxOpset))
      return Claim::kUnsupportedOpset;
  for (const onnx::NodeProto& node : model.graph().node()) {
    const bool default_domain =
        node.domain().empty() || node.domain() == "ai.onnx";
    if (!default_domain ||
        (node.op_type() != "Constant" && !IsSupportedOp(node.op_type())))
      return Claim::kUnsupportedOp;
  }
  auto typed = [](const onnx::ValueInfoProto& info) {
    return info.type().has_tensor_type() &&
           onnx_import::MapDataType(info.type().tensor_type().elem_type()).has_value();
  };
  for (const auto& info : model.graph().input())
    if (!typed(info)) return Claim::kUnsupportedType;
  for (const auto& info : model.graph().output())
    if (!typed(info)) return Claim::kUnsupportedType;
  for (const auto& t : model.graph().initializer())
    if (!onnx_import::MapDataType(t.data_type())) return Claim::kUnsupportedType;
  return Claim::kClaimed;
}

struct Discovery {
  std::vector<std::string> all;      // case folder names, sorted
  std::vector<std::string> claimed;  // subset braid claims
  int unsupported_opset = 0;
  int unsupported_op = 0;
  int unsupported_type = 0;
  int unreadable = 0;
};

const Discovery& Discover() {
  static const Discovery discovery = [] {
    Discovery d;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(NodeCasesDir(), ec))
      if (entry.is_directory() && fs::exists(entry.path() / "model.onnx"))
        d.all.push_back(entry.path().filename().string());
    std::sort(d.all.begin(), d.all.end());
    for (const std::string& name : d.all) {
      switch (ClaimCase(NodeCasesDir() / name)) {
        case Claim::kClaimed: d.claimed.push_back(name); break;
        case Claim::kUnsupportedOpset: ++d.unsupported_opset; break;
        case Claim::kUnsupportedOp: ++d.unsupported_op; break;
        case Claim::kUnsupportedType: ++d.unsupported_type; break;
        case Claim::kUnreadable: ++d.unreadable; break;
      }
    }
    return d;
  }();
  return discovery;
}

std::optional<TensorData> Int64TensorData(const onnx::TensorProto& t) {
  if (t.data_type() != onnx::TensorProto::INT64) return std::nullopt;
  if (t.has_raw_data())
    return TensorData::Copy(t.raw_data().data(), t.raw_data().size());
  return TensorData::Copy(t.int64_data().data(),
                          static_cast<size_t>(t.int64_data_size()) *
                              sizeof(int64_t));
}

// Some outputs depend on input VALUES (Reshape's shape, Expand's shape,
// ConstantOfShape, Slice's starts/ends, ...) and cannot be inferred from
// types alone. ORT's test runner has the input data at hand; likewise we
// turn each small i64 graph input into a constant holding its
// test_data_set_0/input_N.pb value before shape inference. Float inputs
// stay graph inputs, so data-independent shapes are still inferred.
std::string FeedSmallIntInputs(const fs::path& dir, Graph& graph) {
  const std::vector<ValueId> inputs = graph.inputs();
  std::vector<ValueId> kept;
  for (size_t i = 0; i < inputs.size(); ++i) {
    onnx::TensorProto tensor;
    const fs::path pb = dir / "test_data_set_0" /
                        ("input_" + std::to_string(i) + ".pb");
    Value& value = graph.value(inputs[i]);
    if (!onnx_import::ParseProtoFile(pb, &tensor)) {
      kept.push_back(inputs[i]);
      continue;
    }
    if (!tensor.name().empty() && tensor.name() != value.name)
      return "input_" + std::to_string(i) + ".pb is '" + tensor.name() +
             "', graph input is '" + value.name + "'";
    int64_t count = 1;
    for (int64_t d : tensor.dims()) count *= d;
    std::optional<TensorData> data = Int64TensorData(tensor);
    if (!data || count > kMaxFedElements ||
        data->size() != static_cast<size_t>(count) * sizeof(int64_t)) {
      kept.push_back(inputs[i]);
      continue;
    }
    value.constant = std::move(*data);
    value.dtype = DataType::kI64;
    value.shape = Shape(tensor.dims().begin(), tensor.dims().end());
    value.has_shape = true;
  }
  graph.inputs() = kept;
  return "";
}

constexpr char kUnsupportedPrefix[] = "unsupported: ";
bool IsUnsupported(const std::string& failure) {
  return failure.rfind(kUnsupportedPrefix, 0) == 0;
}

// Imports, infers and compares one case; "" on success, else why not
// (starting with kUnsupportedPrefix when shape inference declines the case).
std::string RunCase(const std::string& name) {
  const fs::path dir = NodeCasesDir() / name;
  StatusOr<Graph> imported = ImportOnnxFile((dir / "model.onnx").string());
  if (!imported.ok()) return "import: " + imported.status().ToString();
  Graph& graph = *imported;
  if (std::string fed = FeedSmallIntInputs(dir, graph); !fed.empty())
    return fed;
  // Forget what the file declares for computed values, so the comparison
  // measures braid's inference rather than the file's annotations.
  std::vector<bool> is_input(static_cast<size_t>(graph.num_values()), false);
  for (ValueId id : graph.inputs()) is_input[static_cast<size_t>(id)] = true;
  for (ValueId id = 0; id < graph.num_values(); ++id) {
    Value& v = graph.value(id);
    if (v.constant || is_input[static_cast<size_t>(id)]) continue;
    v.dtype = DataType::kUndefined;
    v.shape.clear();
    v.has_shape = false;
  }
  if (Status s = InferShapes(graph); !s.ok()) {
    // A configuration braid declines by design (training_mode=1: inference
    // runtime) is Unimplemented; the test skips it with the reason.
    if (s.code() == StatusCode::kUnimplemented) return kUnsupportedPrefix + s.ToString();
    return "InferShapes: " + s.ToString();
  }
  std::string problems;
  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    onnx::TensorProto expected;
    const fs::path pb = dir / "test_data_set_0" /
                        ("output_" + std::to_string(i) + ".pb");
    if (!onnx_import::ParseProtoFile(pb, &expected)) return "cannot read " + pb.string();
    const Value& v = graph.value(graph.outputs()[i]);
    const Shape want(expected.dims().begin(), expected.dims().end());
    std::optional<DataType> want_type = onnx_import::MapDataType(expected.data_type());
    // ONNX's older test data stores BFLOAT16 outputs as UINT16 (same bits).
    if (want_type == DataType::kU16 && v.dtype == DataType::kBF16) want_type = DataType::kBF16;
    // Rows only the data tells (NonMaxSuppression): inference gives an upper bound.
    bool shape_ok = v.has_shape && v.shape == want;
    if (v.has_shape && !want.empty() && v.shape.size() == want.size() &&
        HasDataDependentRows(graph, graph.outputs()[i]))
      shape_ok = v.shape[0].is_static() && v.shape[0].extent() >= want[0].extent() &&
                 std::equal(v.shape.begin() + 1, v.shape.end(), want.begin() + 1);
    if (!shape_ok || !want_type || v.dtype != *want_type) {
      problems += (problems.empty() ? "" : "; ") + std::string("output '") +
                  v.name + "': got " + DataTypeName(v.dtype) +
                  (v.has_shape ? ShapeToString(v.shape) : "[no shape]") +
                  ", reference " +
                  (want_type ? DataTypeName(*want_type) : "?") +
                  ShapeToString(want);
    }
  }
  return problems;
}

std::string SanitizeName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

class OnnxConformanceTest : public ::testing::TestWithParam<std::string> {};

TEST_P(OnnxConformanceTest, ImportsAndInfersReferenceOutputShapes) {
  const std::string failure = RunCase(GetParam());
  if (IsUnsupported(failure)) GTEST_SKIP() << GetParam() << ": " << failure;
  EXPECT_TRUE(failure.empty()) << GetParam() << ": " << failure;
}

INSTANTIATE_TEST_SUITE_P(Node, OnnxConformanceTest,
                         ::testing::ValuesIn(Discover().claimed), SanitizeName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(OnnxConformanceTest);

TEST(OnnxConformanceSummary, Counts) {
  const Discovery& d = Discover();
  if (d.all.empty())
    GTEST_SKIP() << "no cases under " << NodeCasesDir()
                 << " (install libonnx-testdata)";
  std::vector<std::string> failing, declined;
  for (const std::string& name : d.claimed) {
    const std::string failure = RunCase(name);
    if (IsUnsupported(failure)) {
      declined.push_back(name);
    } else if (!failure.empty()) {
      failing.push_back(name);
    }
  }
  std::cout << "ONNX node cases: " << d.all.size() << " total, "
            << d.claimed.size() << " claimed by braid, "
            << d.claimed.size() - failing.size() - declined.size() << " passing, "
            << declined.size() << " declined by shape inference (unsupported); not claimed: "
            << d.unsupported_opset << " for opsets outside " << kMinOnnxOpset
            << ".." << kMaxOnnxOpset << ", " << d.unsupported_op << " for ops, " << d.unsupported_type
            << " for tensor types, " << d.unreadable << " unreadable\n";
  std::cout << "claimed but failing (" << failing.size() << "):";
  for (const std::string& name : failing) std::cout << " " << name;
  std::cout << "\ndeclined (" << declined.size() << "):";
  for (const std::string& name : declined) std::cout << " " << name;
  std::cout << "\n";
  RecordProperty("cases", static_cast<int>(d.all.size()));
  RecordProperty("claimed", static_cast<int>(d.claimed.size()));
  RecordProperty("failing", static_cast<int>(failing.size()));
  EXPECT_EQ(d.unreadable, 0);
  // braid claims at least the basic ops; none claimed means IsSupportedOp
  // or discovery is broken.
  EXPECT_FALSE(d.claimed.empty());
}

}  // namespace
}  // namespace braid
