#include "tools/cli_activation_sparsity.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ostream>

#include "tools/npy.h"

namespace braid::cli {

StatusOr<std::optional<ActivationSparsityFlags>> ParseActivationSparsityFlags(ArgScanner& scan) {
  ActivationSparsityFlags flags;
  ASSIGN_OR_RETURN(std::optional<std::string> samples, scan.Value("--activation-sparsity"));
  while (true) {
    ASSIGN_OR_RETURN(std::optional<std::string> in, scan.Value("--activation-sparsity-input"));
    if (!in) break;
    const size_t eq = in->find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == in->size())
      return InvalidArgument("--activation-sparsity-input expects NAME=FILE.npy, got '" + *in +
                             "'");
    flags.inputs.emplace_back(in->substr(0, eq), in->substr(eq + 1));
  }
  if (!samples) {
    if (!flags.inputs.empty())
      return InvalidArgument("--activation-sparsity-input needs --activation-sparsity N");
    return std::optional<ActivationSparsityFlags>();
  }
  constexpr long kMaxSamples = 10000;
  char* end = nullptr;
  const long n = std::strtol(samples->c_str(), &end, 10);
  if (samples->empty() || end != samples->c_str() + samples->size() || n < 1 || n > kMaxSamples)
    return InvalidArgument("--activation-sparsity needs a number of samples in [1, " +
                           std::to_string(kMaxSamples) + "], got '" + *samples + "'");
  flags.samples = static_cast<int>(n);
  return std::optional<ActivationSparsityFlags>(std::move(flags));
}

StatusOr<ActivationSparsityReport> MeasureActivationSparsityForCli(
    const ActivationSparsityFlags& flags, Graph& graph, std::ostream& err, bool quiet) {
  ActivationSparsityOptions options;
  options.samples = flags.samples;
  // The arrays must outlive the borrowing tensors: keep them here.
  std::vector<npy::Array> arrays;
  arrays.reserve(flags.inputs.size());
  for (const auto& [name, file] : flags.inputs) {
    StatusOr<npy::Array> a = npy::ReadFile(file);
    if (!a.ok()) return a.status().WithPrefix("--activation-sparsity-input " + name);
    arrays.push_back(std::move(*a));
    npy::Array& array = arrays.back();
    options.inputs[name].push_back(Tensor::Borrow(array.dtype, array.dims, array.data.data()));
  }
  if (!quiet)
    options.on_run = [&err](int done, int total) {
      err << done << "/" << total << (done == total ? " " : ", ") << std::flush;
    };
  return MeasureActivationSparsity(graph, options);
}

std::string ActivationSparsitySummary(const ActivationSparsityReport& report) {
  std::vector<double> compute;
  for (const NodeActivationSparsity& n : report.nodes)
    if (n.op_type == "Conv" || n.op_type == "Gemm" || n.op_type == "MatMul")
      compute.push_back(n.sparsity);
  std::string inputs;
  for (const std::string& name : report.random_inputs)
    inputs += (inputs.empty() ? "" : ", ") + name;
  std::string text = "activation sparsity: " + std::to_string(report.runs) +
                     (report.runs == 1 ? " run" : " runs") +
                     (inputs.empty() ? " on the given inputs"
                                     : " on random N(0,1) values for " + inputs +
                                           " (random inputs only approximate real data)") +
                     "; " + std::to_string(report.nodes.size()) + " nodes got a value, " +
                     std::to_string(report.unmeasured_nodes) +
                     " have no activation input";
  char line[160];
  if (compute.empty()) {
    text += "; no Conv/Gemm/MatMul nodes\n";
  } else {
    std::sort(compute.begin(), compute.end());
    const size_t mid = compute.size() / 2;
    const double median =
        compute.size() % 2 ? compute[mid] : (compute[mid - 1] + compute[mid]) / 2;
    std::snprintf(line, sizeof(line),
                  "; Conv/Gemm/MatMul inputs (%zu nodes): median %.1f%%, max %.1f%% zeros\n",
                  compute.size(), median * 100.0, compute.back() * 100.0);
    text += line;
  }
  return text;
}

}  // namespace braid::cli
