// A temporary folder that is removed (with everything in it) when the object
// goes out of scope, so test runs leave nothing behind in /tmp.
//
//   braid::testing::ScopedTempDir dir("braid_cli_test");
//   WriteSomething(dir.path() / "model.braid");
#ifndef BRAID_TESTS_SCOPED_TEMP_DIR_H_
#define BRAID_TESTS_SCOPED_TEMP_DIR_H_

#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace braid::testing {

class ScopedTempDir {
 public:
  // Creates <temp>/<prefix>_<pid>, emptied first.
  explicit ScopedTempDir(const std::string& prefix)
      : path_(std::filesystem::temp_directory_path() /
              (prefix + "_" + std::to_string(::getpid()))) {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
    std::filesystem::create_directories(path_);
  }
  ~ScopedTempDir() {
    std::error_code ignored;  // best effort: a test may have removed it
    std::filesystem::remove_all(path_, ignored);
  }
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace braid::testing

#endif  // BRAID_TESTS_SCOPED_TEMP_DIR_H_
