#include "tools/cli_common.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ostream>

#include "api/model_loader.h"
#include "scheduler/device_profile.h"

namespace braid::cli {

bool ArgScanner::Flag(std::string_view name) {
  for (auto it = args_.begin(); it != args_.end(); ++it) {
    if (*it == name) {
      args_.erase(it);
      return true;
    }
  }
  return false;
}

StatusOr<std::optional<std::string>> ArgScanner::Value(std::string_view name) {
  const std::string with_eq = std::string(name) + "=";
  for (auto it = args_.begin(); it != args_.end(); ++it) {
    if (it->rfind(with_eq, 0) == 0) {
      std::string v = it->substr(with_eq.size());
      args_.erase(it);
      return std::optional<std::string>(std::move(v));
    }
    if (*it == name) {
      if (std::next(it) == args_.end())
        return InvalidArgument(std::string(name) + " needs a value");
      std::string v = *std::next(it);
      args_.erase(it, std::next(it, 2));
      return std::optional<std::string>(std::move(v));
    }
  }
  return std::optional<std::string>();
}

StatusOr<std::vector<std::string>> ArgScanner::Positionals() const {
  for (const std::string& a : args_)
    if (a.size() > 1 && a[0] == '-' && a != "-")
      return InvalidArgument("unknown option '" + a + "' (see --help)");
  return args_;
}

StatusOr<LoadedModel> LoadModel(const std::string& path,
                                bool reject_unsupported_ops) {
  // One loader for the CLI and the Session (api/model_loader.h).
  LoadGraphOptions options;
  options.reject_unsupported_ops = reject_unsupported_ops;
  ASSIGN_OR_RETURN(LoadedGraph loaded, LoadGraph(path, options));
  LoadedModel m;
  m.graph = std::move(loaded.graph);
  switch (loaded.source) {
    case ModelSource::kOnnx: m.format = ModelFormat::kOnnx; break;
    case ModelSource::kBraid: m.format = ModelFormat::kBraid; break;
    case ModelSource::kBuiltin: m.format = ModelFormat::kBuiltin; break;
  }
  return m;
}

int ReportError(std::ostream& err, std::string_view command,
                const Status& status) {
  err << "braid " << command << ": error: " << status.message() << "\n";
  return kExitBadInput;
}

std::string Format(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof(text), format, value);
  return text;
}

StatusOr<double> ParseDouble(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v))
    return InvalidArgument(flag + " expects a number, got '" + text + "'");
  return v;
}

std::vector<std::string> SplitList(std::string_view list, char separator) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t end = std::min(list.find(separator, start), list.size());
    if (end > start) out.emplace_back(list.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

StatusOr<SparseEnvironment> ReadSparseEnvironment() {
  SparseEnvironment env;
  if (const char* sparse = std::getenv("BRAID_SPARSE")) {
    const std::string_view v(sparse);
    if (v == "0" || v == "off") {
      env.sparse = false;
    } else if (!(v.empty() || v == "1" || v == "on")) {
      return InvalidArgument("BRAID_SPARSE must be 0, off, 1 or on, got '" + std::string(v) + "'");
    }
  }
  if (const char* table = std::getenv("BRAID_SPARSE_CROSSOVER")) {
    env.crossover = table;
    StatusOr<SparseCrossover> parsed = ParseSparseCrossover(env.crossover, SparseCrossover());
    if (!parsed.ok())
      return InvalidArgument("BRAID_SPARSE_CROSSOVER: " + parsed.status().message());
  }
  return env;
}

StatusOr<CpuKernelOptions> CpuKernelOptionsFromEnvironment(CpuKernelOptions base) {
  ASSIGN_OR_RETURN(SparseEnvironment env, ReadSparseEnvironment());
  base.sparse = base.sparse && env.sparse;
  if (!env.crossover.empty()) {
    ASSIGN_OR_RETURN(base.sparse_options.crossover,
                     ParseSparseCrossover(env.crossover, base.sparse_options.crossover));
  }
  return base;
}

std::vector<std::string> ProfileDirsFromEnvironment() {
  const char* env = std::getenv("BRAID_PROFILE_PATH");
  return env == nullptr ? std::vector<std::string>() : SplitList(env, ':');
}

std::string ResolveProfileName(const std::string& name) {
  if (name.empty() || IsDeviceProfilePath(name)) return name;
  const std::string path = FindDeviceProfileFile(name, ProfileDirsFromEnvironment());
  return path.empty() ? name : path;
}

}  // namespace braid::cli
