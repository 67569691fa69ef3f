// The inputs a fuzz target once failed on (tests/fuzz/regressions/<target>/,
// scripts/fuzz.sh), for the GoogleTests that replay them:
//
//   for (const auto& [path, text] : braid::test::FuzzRegressionInputs("fuzz_plan_json")) ...
#ifndef BRAID_TESTS_FUZZ_REGRESSION_INPUTS_H_
#define BRAID_TESTS_FUZZ_REGRESSION_INPUTS_H_

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

namespace braid::test {

// (path, bytes) of every file in the target's regression folder.
inline std::vector<std::pair<std::string, std::string>> FuzzRegressionInputs(
    const std::string& target) {
  std::vector<std::pair<std::string, std::string>> inputs;
  const std::filesystem::path dir =
      std::filesystem::path(BRAID_SOURCE_DIR) / "tests/fuzz/regressions" / target;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(entry.path(), std::ios::binary);
    inputs.emplace_back(entry.path().string(), std::string(std::istreambuf_iterator<char>(in),
                                                           std::istreambuf_iterator<char>()));
  }
  return inputs;
}

}  // namespace braid::test

#endif  // BRAID_TESTS_FUZZ_REGRESSION_INPUTS_H_
