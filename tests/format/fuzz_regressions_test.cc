// Inputs that once crashed a fuzz target (tests/fuzz/regressions/<target>/,
// scripts/fuzz.sh) load here under the suite's AddressSanitizer + UBSan build
// and must give a clean error.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "graph/braid_format.h"

namespace braid {
namespace {

std::vector<char> ReadAll(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

TEST(FuzzRegressions, BraidFileInputsGiveCleanErrors) {
  const std::filesystem::path dir =
      std::filesystem::path(BRAID_SOURCE_DIR) / "tests/fuzz/regressions/fuzz_braid_file";
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::vector<char> bytes = ReadAll(entry.path());
    ASSERT_FALSE(bytes.empty()) << entry.path();
    // An 8-aligned copy, as a mapped file is: the finding was inside the buffer.
    std::vector<uint64_t> aligned((bytes.size() + 7) / 8);
    std::memcpy(aligned.data(), bytes.data(), bytes.size());
    StatusOr<Graph> graph = LoadBraidBytes(aligned.data(), bytes.size());
    EXPECT_FALSE(graph.ok()) << entry.path() << " loaded";
    ++files;
  }
  EXPECT_GE(files, 1);
}

TEST(FuzzRegressions, MisalignedInt64VectorIsDataLoss) {
  const std::vector<char> bytes = ReadAll(std::filesystem::path(BRAID_SOURCE_DIR) /
                                          "tests/fuzz/regressions/fuzz_braid_file/"
                                          "misaligned_int64_vector");
  std::vector<uint64_t> aligned((bytes.size() + 7) / 8);
  std::memcpy(aligned.data(), bytes.data(), bytes.size());
  StatusOr<Graph> graph = LoadBraidBytes(aligned.data(), bytes.size());
  ASSERT_FALSE(graph.ok());
  EXPECT_EQ(graph.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(graph.status().message().find("misaligned"), std::string::npos)
      << graph.status().ToString();
}

}  // namespace
}  // namespace braid
