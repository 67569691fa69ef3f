// Runs the `braid` command line in-process and keeps what it printed.
//
//   braid::cli::CliResult r = braid::cli::RunCli({"run", "builtin:tiny_cnn", "--json"});
//   EXPECT_EQ(r.status, 0) << r.err;
#ifndef BRAID_TESTS_TOOLS_CLI_TEST_UTIL_H_
#define BRAID_TESTS_TOOLS_CLI_TEST_UTIL_H_

#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tools/commands.h"

namespace braid::cli {

struct CliResult {
  int status;
  std::string out;
  std::string err;
};

// `args` as after `braid` on a shell line: the command first.
inline CliResult RunCli(std::vector<std::string> args) {
  std::ostringstream out, err;
  const int status = RunBraid(args, out, err);
  return {status, out.str(), err.str()};
}

// The same with `command` put in front of `args`.
inline CliResult RunCliCommand(std::string command, std::vector<std::string> args) {
  args.insert(args.begin(), std::move(command));
  return RunCli(std::move(args));
}

// A file's whole text ("" when it cannot be read).
inline std::string ReadTextFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace braid::cli

#endif  // BRAID_TESTS_TOOLS_CLI_TEST_UTIL_H_
