// Shared pieces of the `braid` subcommands: argument scanning, model loading
// (builtin:NAME, .onnx or .braid by content), error printing, JSON output.
#ifndef BRAID_TOOLS_CLI_COMMON_H_
#define BRAID_TOOLS_CLI_COMMON_H_

#include <iosfwd>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "graph/ir.h"
#include "graph/json.h"
#include "kernels/cpu/cpu_device.h"

namespace braid::cli {

// Exit statuses of every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;   // the work itself failed (I/O, internal)
inline constexpr int kExitBadInput = 2;  // bad arguments or a bad model file

using Args = std::span<const std::string>;

// A subcommand: parses its own arguments, writes results to `out` and
// diagnostics to `err`, returns an exit status.
struct Command {
  std::string_view name;
  std::string_view summary;  // one line for `braid --help`
  int (*run)(Args args, std::ostream& out, std::ostream& err);
};
std::span<const Command> Commands();

// Flag scanner over one subcommand's arguments. Flags may be given as
// "--name value" or "--name=value"; everything else is positional.
class ArgScanner {
 public:
  explicit ArgScanner(Args args) : args_(args.begin(), args.end()) {}
  bool Flag(std::string_view name);  // consumes a boolean flag
  // Consumes "--name V" / "--name=V"; error when the value is missing.
  StatusOr<std::optional<std::string>> Value(std::string_view name);
  // What is left; error on an unknown "--flag".
  StatusOr<std::vector<std::string>> Positionals() const;

 private:
  std::vector<std::string> args_;
};

enum class ModelFormat { kOnnx, kBraid, kBuiltin };
struct LoadedModel {
  Graph graph;
  ModelFormat format = ModelFormat::kOnnx;
};
// `path` is "builtin:NAME", a .braid file (recognised by its identifier) or an
// ONNX file. ONNX and built-in graphs come back as imported (no passes run).
StatusOr<LoadedModel> LoadModel(const std::string& path,
                                bool reject_unsupported_ops = true);

// "braid <command>: error: <message>" on `err`; returns kExitBadInput.
int ReportError(std::ostream& err, std::string_view command,
                const Status& status);

// `value` printed with a printf `format` that takes one double ("%.2f").
std::string Format(const char* format, double value);

// A finite number, or InvalidArgument naming `flag` and `text`.
StatusOr<double> ParseDouble(const std::string& flag, const std::string& text);

// "a,b,,c" -> {"a", "b", "c"} (empty items dropped).
std::vector<std::string> SplitList(std::string_view list, char separator = ',');

// The environment's say over the weight-sparse CPU kernels (docs/sparse.md):
// BRAID_SPARSE=0|off|1|on and BRAID_SPARSE_CROSSOVER=conv1x1=F,... The CLI
// is the only reader; the libraries take options (CpuKernelOptions,
// SessionOptions::sparse_kernels / sparse_crossover). A malformed value is
// InvalidArgument naming the variable.
struct SparseEnvironment {
  bool sparse = true;
  std::string crossover;  // as given; "" = none
};
StatusOr<SparseEnvironment> ReadSparseEnvironment();
// `base` with the environment's overrides applied.
StatusOr<CpuKernelOptions> CpuKernelOptionsFromEnvironment(CpuKernelOptions base = {});

// $BRAID_PROFILE_PATH's directories (colon-separated), searched before the
// library's own (scheduler/device_profile.h) for a profile given by name.
std::vector<std::string> ProfileDirsFromEnvironment();
// NAME -> DIR/NAME.json from the first $BRAID_PROFILE_PATH directory that has
// it; anything else (a path, a name found nowhere there) unchanged.
std::string ResolveProfileName(const std::string& name);

// JSON text helpers live in graph/json.h; the CLI uses them unqualified.
using ::braid::JsonNumber;
using ::braid::JsonString;

}  // namespace braid::cli

#endif  // BRAID_TOOLS_CLI_COMMON_H_
