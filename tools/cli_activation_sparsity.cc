#include "tools/cli_activation_sparsity.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ostream>

#include "graph/passes/passes.h"
#include "tools/npy.h"

namespace braid::cli {

namespace {

// A whole number in [1, max] for `flag`.
StatusOr<int> ParseCount(const std::string& text, const std::string& flag, long max) {
  char* end = nullptr;
  const long n = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || end != text.c_str() + text.size() || n < 1 || n > max)
    return InvalidArgument(flag + " needs a number of samples in [1, " + std::to_string(max) +
                           "], got '" + text + "'");
  return static_cast<int>(n);
}

// Every NAME=FILE.npy given with `flag`.
StatusOr<std::vector<std::pair<std::string, std::string>>> ParseNpyInputs(ArgScanner& scan,
                                                                         const std::string& flag) {
  std::vector<std::pair<std::string, std::string>> inputs;
  while (true) {
    ASSIGN_OR_RETURN(std::optional<std::string> in, scan.Value(flag));
    if (!in) break;
    const size_t eq = in->find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == in->size())
      return InvalidArgument(flag + " expects NAME=FILE.npy, got '" + *in + "'");
    inputs.emplace_back(in->substr(0, eq), in->substr(eq + 1));
  }
  return inputs;
}

constexpr long kMaxSamples = 10000;

}  // namespace

StatusOr<std::optional<ActivationSparsityFlags>> ParseActivationSparsityFlags(ArgScanner& scan) {
  ActivationSparsityFlags flags;
  ASSIGN_OR_RETURN(std::optional<std::string> samples, scan.Value("--activation-sparsity"));
  ASSIGN_OR_RETURN(flags.inputs, ParseNpyInputs(scan, "--activation-sparsity-input"));
  if (!samples) {
    if (!flags.inputs.empty())
      return InvalidArgument("--activation-sparsity-input needs --activation-sparsity N");
    return std::optional<ActivationSparsityFlags>();
  }
  ASSIGN_OR_RETURN(flags.samples, ParseCount(*samples, "--activation-sparsity", kMaxSamples));
  return std::optional<ActivationSparsityFlags>(std::move(flags));
}

Status AddNpyInputs(const std::vector<std::pair<std::string, std::string>>& inputs,
                    const std::string& flag, std::vector<npy::Array>& arrays,
                    ActivationSparsityOptions& options) {
  arrays.reserve(arrays.size() + inputs.size());  // the tensors borrow the arrays' bytes
  for (const auto& [name, file] : inputs) {
    StatusOr<npy::Array> a = npy::ReadFile(file);
    if (!a.ok()) return a.status().WithPrefix(flag + " " + name);
    arrays.push_back(std::move(*a));
    npy::Array& array = arrays.back();
    options.inputs[name].push_back(Tensor::Borrow(array.dtype, array.dims, array.data.data()));
  }
  return Status::Ok();
}

void ShowRuns(ActivationSparsityOptions& options, std::ostream& err, bool quiet) {
  if (!quiet)
    options.on_run = [&err](int done, int total) {
      err << done << "/" << total << (done == total ? " " : ", ") << std::flush;
    };
}

StatusOr<std::optional<Int8Flags>> ParseInt8Flags(ArgScanner& scan) {
  ASSIGN_OR_RETURN(std::optional<std::string> precision, scan.Value("--precision"));
  ASSIGN_OR_RETURN(std::optional<std::string> samples, scan.Value("--calibration-samples"));
  Int8Flags flags;
  ASSIGN_OR_RETURN(flags.inputs, ParseNpyInputs(scan, "--calibration-input"));
  const bool int8 = precision && *precision == "int8";
  if (precision && !int8 && *precision != "fp32")
    return InvalidArgument("--precision " + *precision +
                           ": braid converts to fp32 or int8 (fp16 / bf16 are not implemented)");
  if (!int8) {
    if (samples || !flags.inputs.empty())
      return InvalidArgument("--calibration-samples / --calibration-input need --precision int8");
    return std::optional<Int8Flags>();
  }
  if (samples) {
    ASSIGN_OR_RETURN(flags.samples, ParseCount(*samples, "--calibration-samples", kMaxSamples));
  }
  return std::optional<Int8Flags>(std::move(flags));
}

StatusOr<std::string> QuantizeForCli(const Int8Flags& flags, Graph& graph, std::ostream& err,
                                     bool quiet) {
  ActivationSparsityOptions options;
  options.samples = flags.samples;
  std::vector<npy::Array> arrays;  // must outlive the borrowing tensors
  RETURN_IF_ERROR(AddNpyInputs(flags.inputs, "--calibration-input", arrays, options));
  ShowRuns(options, err, quiet);
  ASSIGN_OR_RETURN(const ActivationRangeReport ranges, MeasureActivationRanges(graph, options));
  ASSIGN_OR_RETURN(const StaticQuantizationReport report, QuantizeStatic(graph, ranges.ranges));
  RETURN_IF_ERROR(RunDefaultPasses(graph));
  int int8_ops = 0, lookups = 0;
  for (const Node& n : graph.nodes()) {
    int8_ops += n.op_type == "QLinearConv" || n.op_type == "QLinearMatMul" ||
                n.op_type.starts_with("com.microsoft.QLinear") ||
                (n.op_type == "MaxPool" && !n.inputs.empty() &&
                 graph.value(n.inputs[0]).dtype != DataType::kF32);
    lookups += n.op_type == "braid.TableLookup";
  }
  std::string inputs;
  for (const std::string& name : ranges.random_inputs) inputs += (inputs.empty() ? "" : ", ") + name;
  std::string text = "int8: calibrated on " + std::to_string(ranges.runs) +
                     (ranges.runs == 1 ? " run" : " runs") +
                     (inputs.empty() ? " of the given inputs"
                                     : " of random N(0,1) values for " + inputs +
                                           " (ranges from random data fit real data badly)") +
                     "; " + std::to_string(report.quantized.size()) + " nodes quantized (" +
                     std::to_string(report.tensors) + " activations), " +
                     std::to_string(int8_ops) + " int8 ops and " + std::to_string(lookups) +
                     " activation table lookups after folding; " +
                     std::to_string(report.kept_float.size()) + " kept f32\n";
  for (const auto& [node, why] : report.kept_float) text += "  kept f32: " + node + ": " + why + "\n";
  return text;
}

StatusOr<ActivationSparsityReport> MeasureActivationSparsityForCli(
    const ActivationSparsityFlags& flags, Graph& graph, std::ostream& err, bool quiet) {
  ActivationSparsityOptions options;
  options.samples = flags.samples;
  std::vector<npy::Array> arrays;  // must outlive the borrowing tensors
  RETURN_IF_ERROR(AddNpyInputs(flags.inputs, "--activation-sparsity-input", arrays, options));
  ShowRuns(options, err, quiet);
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
