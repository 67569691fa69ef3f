// Real PyTorch exports (scripts/export_torchvision.py writes them and a
// manifest.json): each must import, survive the default passes and end with
// the output shape PyTorch computed, batch dim symbolic "N".
//
//   BRAID_ZOO_DIR=/tmp/zoo ./braid_onnx_tests --gtest_filter='*Zoo*'
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "graph/annotate.h"
#include "graph/braid_format.h"
#include "graph/onnx_importer.h"
#include "graph/op_schema.h"
#include "graph/passes/passes.h"
#include "gtest/gtest.h"
#include "tests/format/format_test_util.h"

namespace braid {
namespace {

constexpr char kSkipReason[] = "set BRAID_ZOO_DIR; scripts/test.sh exports the zoo";

// Just enough JSON for the manifest (objects, arrays, strings without
// escapes beyond \" and \\, numbers, true/false/null).
struct Json {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  double number = 0;
  std::string text;
  std::vector<Json> items;
  std::map<std::string, Json> members;

  const Json* Get(const std::string& key) const {
    auto it = members.find(key);
    return it == members.end() ? nullptr : &it->second;
  }
};

class JsonParser {
 public:
  explicit JsonParser(const std::string& text) : s_(text) {}

  std::optional<Json> ParseDocument() {
    std::optional<Json> v = ParseValue();
    SkipSpace();
    if (!v || pos_ != s_.size()) return std::nullopt;
    return v;
  }

 private:
  void SkipSpace() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_])))
      ++pos_;
  }
  bool Consume(char c) {
    SkipSpace();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  std::optional<std::string> ParseString() {
    if (!Consume('"')) return std::nullopt;
    std::string out;
    while (pos_ < s_.size() && s_[pos_] != '"') {
      if (s_[pos_] == '\\' && pos_ + 1 < s_.size()) ++pos_;
      out += s_[pos_++];
    }
    if (pos_ >= s_.size()) return std::nullopt;
    ++pos_;
    return out;
  }
  std::optional<Json> ParseValue() {
    SkipSpace();
    if (pos_ >= s_.size()) return std::nullopt;
    Json v;
    const char c = s_[pos_];
    if (c == '{') {
      ++pos_;
      v.kind = Json::Kind::kObject;
      if (Consume('}')) return v;
      do {
        std::optional<std::string> key = ParseString();
        if (!key || !Consume(':')) return std::nullopt;
        std::optional<Json> member = ParseValue();
        if (!member) return std::nullopt;
        v.members[*key] = std::move(*member);
      } while (Consume(','));
      if (!Consume('}')) return std::nullopt;
    } else if (c == '[') {
      ++pos_;
      v.kind = Json::Kind::kArray;
      if (Consume(']')) return v;
      do {
        std::optional<Json> item = ParseValue();
        if (!item) return std::nullopt;
        v.items.push_back(std::move(*item));
      } while (Consume(','));
      if (!Consume(']')) return std::nullopt;
    } else if (c == '"') {
      std::optional<std::string> text = ParseString();
      if (!text) return std::nullopt;
      v.kind = Json::Kind::kString;
      v.text = std::move(*text);
    } else if (s_.compare(pos_, 4, "true") == 0 ||
               s_.compare(pos_, 5, "false") == 0) {
      v.kind = Json::Kind::kBool;
      v.number = s_[pos_] == 't';
      pos_ += s_[pos_] == 't' ? 4 : 5;
    } else if (s_.compare(pos_, 4, "null") == 0) {
      pos_ += 4;
    } else {
      size_t used = 0;
      try {
        v.number = std::stod(s_.substr(pos_, 32), &used);
      } catch (...) {
        return std::nullopt;
      }
      v.kind = Json::Kind::kNumber;
      pos_ += used;
    }
    return v;
  }

  const std::string& s_;
  size_t pos_ = 0;
};

struct ZooEntry {
  std::string file;
  int64_t opset = 0;
  std::vector<int64_t> output_shape;
  std::vector<std::string> ops;
};

void PrintTo(const ZooEntry& e, std::ostream* os) { *os << e.file; }

std::string ZooDir() {
  const char* dir = std::getenv("BRAID_ZOO_DIR");
  return dir ? dir : "";
}

// Manifest entries, or an error message.
std::vector<ZooEntry> ReadManifest(const std::string& dir, std::string* error) {
  std::ifstream in(dir + "/manifest.json");
  if (!in) {
    *error = "cannot open " + dir + "/manifest.json";
    return {};
  }
  const std::string text((std::istreambuf_iterator<char>(in)),
                         std::istreambuf_iterator<char>());
  std::optional<Json> doc = JsonParser(text).ParseDocument();
  if (!doc || doc->kind != Json::Kind::kObject) {
    *error = dir + "/manifest.json is not a JSON object";
    return {};
  }
  std::vector<ZooEntry> entries;
  for (const auto& [file, info] : doc->members) {
    ZooEntry e;
    e.file = file;
    if (const Json* opset = info.Get("opset"))
      e.opset = static_cast<int64_t>(opset->number);
    if (const Json* shape = info.Get("output_shape"))
      for (const Json& d : shape->items)
        e.output_shape.push_back(static_cast<int64_t>(d.number));
    if (const Json* ops = info.Get("ops"))
      for (const Json& op : ops->items) e.ops.push_back(op.text);
    if (e.output_shape.empty()) {
      *error = file + ": manifest entry has no output_shape";
      return {};
    }
    entries.push_back(std::move(e));
  }
  return entries;
}

std::vector<ZooEntry> ZooEntries() {
  if (ZooDir().empty()) return {};
  std::string error;
  return ReadManifest(ZooDir(), &error);  // errors reported by Manifest test
}

TEST(OnnxZooTest, Manifest) {
  if (ZooDir().empty()) GTEST_SKIP() << kSkipReason;
  std::string error;
  std::vector<ZooEntry> entries = ReadManifest(ZooDir(), &error);
  ASSERT_TRUE(error.empty()) << error;
  ASSERT_FALSE(entries.empty()) << "empty manifest in " << ZooDir();
  std::map<std::string, std::vector<std::string>> rejected;  // op -> files
  for (const ZooEntry& e : entries)
    for (const std::string& op : e.ops)
      if (op != "Constant" && !IsSupportedOp(op)) rejected[op].push_back(e.file);
  std::cout << "zoo: " << entries.size() << " exports; ops braid rejects:";
  for (const auto& [op, files] : rejected)
    std::cout << " " << op << " (" << files.size() << " files)";
  std::cout << (rejected.empty() ? " none" : "") << "\n";
}

class OnnxZooModelTest : public ::testing::TestWithParam<ZooEntry> {};

TEST_P(OnnxZooModelTest, ImportsAndKeepsOutputShape) {
  const ZooEntry& e = GetParam();
  const std::string path = ZooDir() + "/" + e.file;
  const auto start = std::chrono::steady_clock::now();
  StatusOr<Graph> graph = ImportOnnxFile(path);
  const double import_ms = std::chrono::duration<double, std::milli>(
                               std::chrono::steady_clock::now() - start)
                               .count();
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  EXPECT_EQ(graph->opset(), e.opset);
  ASSERT_EQ(graph->inputs().size(), 1u);
  ASSERT_TRUE(graph->value(graph->inputs()[0]).has_shape);
  EXPECT_EQ(graph->value(graph->inputs()[0]).shape[0], Dim::Symbol("N"));
  Status passes = RunDefaultPasses(*graph);
  ASSERT_TRUE(passes.ok()) << passes.ToString();
  std::cout << e.file << ": import " << import_ms << " ms, "
            << graph->num_nodes() << " nodes after passes\n";

  ASSERT_EQ(graph->outputs().size(), 1u);
  const Value& out = graph->value(graph->outputs()[0]);
  Shape expected(e.output_shape.begin(), e.output_shape.end());
  expected[0] = Dim::Symbol("N");  // exported with dynamic batch "N"
  EXPECT_TRUE(out.has_shape);
  EXPECT_EQ(ShapeToString(out.shape), ShapeToString(expected));
  EXPECT_EQ(out.dtype, DataType::kF32);

  // ONNX -> .braid -> load gives the same graph, annotations and weights
  // (bitwise), with the weights mapped rather than copied.
  ASSERT_TRUE(Annotate(*graph).ok());
  const std::filesystem::path braid_path =
      std::filesystem::temp_directory_path() /
      (std::to_string(::getpid()) + "_" + e.file + ".braid");
  ASSERT_TRUE(SaveBraidFile(*graph, braid_path.string()).ok());
  StatusOr<Graph> loaded = LoadBraidFile(braid_path.string());
  std::filesystem::remove(braid_path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  format_test::ExpectGraphsEqual(*graph, *loaded);
}

std::string ZooName(const ::testing::TestParamInfo<ZooEntry>& info) {
  std::string name = info.param.file;
  if (name.size() > 5 && name.ends_with(".onnx")) name.resize(name.size() - 5);
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Zoo, OnnxZooModelTest,
                         ::testing::ValuesIn(ZooEntries()), ZooName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(OnnxZooModelTest);

}  // namespace
}  // namespace braid
