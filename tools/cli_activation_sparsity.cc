#include "tools/cli_activation_sparsity.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <ostream>
#include <string_view>

#include "graph/passes/passes.h"
#include "kernels/cpu/cpu_device.h"
#include "tools/npy.h"
#include "tools/profile_report.h"

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

StatusOr<std::optional<PrecisionFlags>> ParsePrecisionFlags(ArgScanner& scan) {
  ASSIGN_OR_RETURN(std::optional<std::string> precision, scan.Value("--precision"));
  ASSIGN_OR_RETURN(std::optional<std::string> samples, scan.Value("--calibration-samples"));
  ASSIGN_OR_RETURN(std::optional<std::string> min_cosine, scan.Value("--min-cosine"));
  ASSIGN_OR_RETURN(std::optional<std::string> report, scan.Value("--sensitivity-report"));
  ASSIGN_OR_RETURN(std::optional<std::string> method, scan.Value("--calibration-method"));
  PrecisionFlags flags;
  ASSIGN_OR_RETURN(flags.inputs, ParseNpyInputs(scan, "--calibration-input"));
  const bool int8 = precision && *precision == "int8";
  flags.bf16 = precision && *precision == "bf16";
  if (precision && !int8 && !flags.bf16 && *precision != "fp32")
    return InvalidArgument("--precision " + *precision +
                           ": braid converts to fp32, bf16 or int8 (fp16 is not implemented)");
  if (!int8 && !flags.bf16) {
    if (samples || !flags.inputs.empty() || min_cosine || report || method)
      return InvalidArgument("--calibration-samples / --calibration-input / --calibration-method / "
                             "--min-cosine / --sensitivity-report need --precision int8 or bf16");
    return std::optional<PrecisionFlags>();
  }
  if (flags.bf16 && (report || method))
    return InvalidArgument("--calibration-method / --sensitivity-report need --precision int8 "
                           "(bf16 keeps no ranges and measures no layer)");
  if (samples) {
    ASSIGN_OR_RETURN(flags.samples, ParseCount(*samples, "--calibration-samples", kMaxSamples));
  }
  if (min_cosine) {
    ASSIGN_OR_RETURN(flags.min_cosine, ParseDouble("--min-cosine", *min_cosine));
    if (flags.min_cosine < 0 || flags.min_cosine > 1)
      return InvalidArgument("--min-cosine expects a cosine similarity in [0, 1] (0: no accuracy "
                             "check), got " + *min_cosine);
  }
  if (report) flags.sensitivity_report = *report;
  if (method && *method != "minmax") {
    constexpr std::string_view kPercentile = "percentile", kWithValue = "percentile:";
    if (*method == kPercentile) {
      flags.percentile = 99.99;
    } else if (method->starts_with(kWithValue)) {
      const std::string value = method->substr(kWithValue.size());
      ASSIGN_OR_RETURN(flags.percentile, ParseDouble("--calibration-method percentile:P", value));
      if (!(flags.percentile > 50 && flags.percentile < 100))
        return InvalidArgument("--calibration-method percentile:P expects P in (50, 100), got " +
                               value);
    } else {
      return InvalidArgument("--calibration-method expects minmax or percentile[:P], got '" +
                             *method + "'");
    }
  }
  return std::optional<PrecisionFlags>(std::move(flags));
}

namespace {

// One quantization of the calibrated graph: the int8 graph after the
// passes, and its outputs' cosine to f32 on the calibration inputs.
struct Int8Trial {
  Graph graph;
  StaticQuantizationReport report;
  double cosine = 1;
};

std::string SensitivityCsv(const std::vector<LayerQuantizationError>& layers, size_t kept) {
  std::string csv = "node,op_type,output_cosine_alone,sqnr_db,cosine,precision\n";
  for (size_t i = 0; i < layers.size(); ++i) {
    const LayerQuantizationError& l = layers[i];
    csv += l.node + "," + l.op_type + "," + Format("%.6f", l.output_cosine) + "," +
           Format("%.2f", l.sqnr_db) + "," + Format("%.6f", l.cosine) + "," +
           (i < kept ? "f32" : "int8") + "\n";
  }
  return csv;
}

}  // namespace

StatusOr<std::string> QuantizeForCli(const PrecisionFlags& flags, Graph& graph, std::ostream& err,
                                     bool quiet) {
  ActivationSparsityOptions options;
  options.samples = flags.samples;
  std::vector<npy::Array> arrays;  // must outlive the borrowing tensors
  RETURN_IF_ERROR(AddNpyInputs(flags.inputs, "--calibration-input", arrays, options));
  ShowRuns(options, err, quiet);
  ASSIGN_OR_RETURN(const ActivationRangeReport ranges,
                   MeasureActivationRanges(graph, options, flags.percentile));
  options.on_run = nullptr;  // the checks below print a word each
  auto note = [&](const std::string& text) {
    if (!quiet) err << text << std::flush;
  };
  std::optional<ReferenceOutputs> f32;
  if (flags.min_cosine > 0 || !flags.sensitivity_report.empty()) {
    ASSIGN_OR_RETURN(f32, ReferenceOutputs::Capture(graph, options));
    if (f32->outputs() == 0) {
      if (!flags.sensitivity_report.empty())
        return FailedPrecondition("--sensitivity-report: the model has no f32 output to compare");
      f32.reset();  // the summary says the check did not run
    }
  }
  const bool measure_error = f32.has_value();
  auto quantize = [&](const std::map<std::string, std::string>& keep) -> StatusOr<Int8Trial> {
    Int8Trial trial{graph, {}, 1.0};
    StaticQuantizationOptions quantization;
    quantization.keep_float = keep;
    ASSIGN_OR_RETURN(trial.report, QuantizeStatic(trial.graph, ranges.ranges, quantization));
    RETURN_IF_ERROR(RunDefaultPasses(trial.graph));
    if (f32) {
      ASSIGN_OR_RETURN(trial.cosine, f32->Cosine(trial.graph));
      note("cosine " + Format("%.6f", trial.cosine) +
           (keep.empty() ? "" : " with " + std::to_string(keep.size()) + " f32") + ", ");
    }
    return trial;
  };
  ASSIGN_OR_RETURN(Int8Trial chosen, quantize({}));
  const double all_int8_cosine = chosen.cosine;

  // The layers that hurt the outputs most stay f32, as few as meet the
  // target: doubling, then bisection (the cosine is close to monotone in how
  // many of the worst are kept).
  std::vector<LayerQuantizationError> layers;
  size_t kept = 0;
  // NaN (outputs not finite) counts as below the target; 0 is no target.
  const bool below_target =
      measure_error && flags.min_cosine > 0 && !(chosen.cosine >= flags.min_cosine);
  if (!flags.sensitivity_report.empty() || below_target) {
    note("per-layer sensitivity ");
    // One model run per layer and sample: on the first few samples only,
    // which rank the layers well enough; each choice below is checked on all.
    constexpr int kSensitivityRuns = 2;
    ActivationSparsityOptions few = options;
    few.samples = std::min(few.samples, kSensitivityRuns);
    for (auto& [name, tensors] : few.inputs)
      if (tensors.size() > kSensitivityRuns) tensors.resize(kSensitivityRuns);
    ASSIGN_OR_RETURN(const ReferenceOutputs f32_few, ReferenceOutputs::Capture(graph, few));
    int shown = 0;
    ASSIGN_OR_RETURN(layers, MeasureQuantizationSensitivity(
                                 graph, ranges.ranges, few, f32_few, [&](int done, int total) {
                                   if (done * 10 / total > shown || done == total) {
                                     shown = done * 10 / total;
                                     note(std::to_string(done) + "/" + std::to_string(total) +
                                          (done == total ? ", " : " "));
                                   }
                                 }));
  }
  bool target_met = !below_target;
  if (below_target && !layers.empty()) {
    auto keep_worst = [&](size_t k) {
      std::map<std::string, std::string> keep;
      for (size_t i = 0; i < k; ++i)
        keep[layers[i].node] = "one of the " + std::to_string(k) +
                               " layers that move the outputs most in int8 (alone: cosine " +
                               Format("%.6f", layers[i].output_cosine) +
                               "), kept f32 for --min-cosine " + Format("%.9g", flags.min_cosine);
      return quantize(keep);
    };
    size_t failed = 0, met = 0;
    std::optional<Int8Trial> best;
    for (size_t k = 1;; k = std::min(2 * k, layers.size())) {
      ASSIGN_OR_RETURN(Int8Trial trial, keep_worst(k));
      if (trial.cosine >= flags.min_cosine || k == layers.size()) {
        // Not met with every layer f32 (what is left int8 is not a layer's):
        // take all, no bisection.
        failed = trial.cosine >= flags.min_cosine ? failed : k - 1;
        met = k;
        best = std::move(trial);
        break;
      }
      failed = k;
    }
    while (met - failed > 1) {
      const size_t mid = failed + (met - failed) / 2;
      ASSIGN_OR_RETURN(Int8Trial trial, keep_worst(mid));
      if (trial.cosine >= flags.min_cosine) {
        met = mid;
        best = std::move(trial);
      } else {
        failed = mid;
      }
    }
    kept = met;
    chosen = std::move(*best);
    target_met = chosen.cosine >= flags.min_cosine;
  }
  if (!flags.sensitivity_report.empty())
    RETURN_IF_ERROR(WriteTextFile(flags.sensitivity_report, SensitivityCsv(layers, kept))
                        .WithPrefix("--sensitivity-report"));
  graph = std::move(chosen.graph);
  const StaticQuantizationReport& report = chosen.report;

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
  std::string text = "int8: calibrated (" +
                     (flags.percentile < 100 ? "percentile " + Format("%.9g", flags.percentile)
                                             : std::string("min-max")) +
                     ") on " + std::to_string(ranges.runs) + (ranges.runs == 1 ? " run" : " runs") +
                     (inputs.empty() ? " of the given inputs"
                                     : " of random N(0,1) values for " + inputs +
                                           " (ranges from random data fit real data badly)") +
                     "; " + std::to_string(report.quantized.size()) + " nodes quantized (" +
                     std::to_string(report.tensors) + " activations), " +
                     std::to_string(int8_ops) + " int8 ops and " + std::to_string(lookups) +
                     " activation table lookups after folding; " +
                     std::to_string(report.kept_float.size()) + " kept f32\n";
  if (measure_error) {
    text += "int8 accuracy on the calibration inputs: output cosine to f32 " +
            Format("%.6f", all_int8_cosine) + " with every layer int8";
    if (kept > 0)
      text += ", " + Format("%.6f", chosen.cosine) + " with the " + std::to_string(kept) +
              " most sensitive of " + std::to_string(layers.size()) + " layers kept f32";
    text += " (--min-cosine " + Format("%.9g", flags.min_cosine) + ")\n";
    if (!target_met)
      text += "warning: --min-cosine " + Format("%.9g", flags.min_cosine) +
              " is not reached even with every quantizable layer f32 (what stays int8 or "
              "differs is not a layer's: table lookups, the passes' fusions); the model is "
              "written as above\n";
  } else if (flags.min_cosine > 0) {
    text += "int8 accuracy: not checked (the model has no f32 output to compare)\n";
  }
  for (const auto& [node, why] : report.kept_float) text += "  kept f32: " + node + ": " + why + "\n";
  return text;
}

StatusOr<std::string> Bf16ForCli(const PrecisionFlags& flags, Graph& graph, std::ostream& err,
                                 bool quiet) {
  const Bf16Support support = CpuBf16Support();
  // On the reference kernels one check run could take minutes: not run.
  const bool check = flags.min_cosine > 0 && support != Bf16Support::kReference;
  std::optional<ReferenceOutputs> f32;
  ActivationSparsityOptions options;
  options.samples = flags.samples;
  std::vector<npy::Array> arrays;  // must outlive the borrowing tensors
  RETURN_IF_ERROR(AddNpyInputs(flags.inputs, "--calibration-input", arrays, options));
  if (check) {
    ShowRuns(options, err, quiet);
    ASSIGN_OR_RETURN(f32, ReferenceOutputs::Capture(graph, options));
    if (f32->outputs() == 0) f32.reset();  // the summary says the check did not run
  }
  Graph bf16 = graph;
  ASSIGN_OR_RETURN(const ComputePrecisionReport report, MarkComputePrecision(bf16, "bf16"));
  double cosine = 1;
  if (f32) {
    ASSIGN_OR_RETURN(cosine, f32->Cosine(bf16));
  }
  graph = std::move(bf16);
  std::string text = "bf16: " + std::to_string(report.marked.size()) +
                     " Conv / MatMul / Gemm nodes compute in bf16 (inputs and weights rounded "
                     "to bfloat16, f32 sums and outputs; the file keeps f32 weights); " +
                     std::to_string(report.kept.size()) + " kept f32\n";
  switch (support) {
    case Bf16Support::kNative:
      text += "bf16: this CPU has bf16 dot-product instructions (oneDNN runs them)\n";
      break;
    case Bf16Support::kEmulated:
      text += "warning: this CPU has no bf16 instructions (AVX512_BF16 / AMX): oneDNN emulates "
              "them, slower than f32 here (the file runs natively on a CPU that has them)\n";
      break;
    case Bf16Support::kReference:
      text += "warning: oneDNN has no bf16 kernels for this CPU: here the bf16 nodes run on "
              "braid's reference kernels, hundreds of times slower than f32 (the file runs "
              "natively on a CPU with AVX512_BF16 / AMX)\n";
      break;
  }
  if (f32) {
    text += "bf16 accuracy on " +
            (options.inputs.empty() ? std::to_string(options.samples) + " random N(0,1) samples"
                                    : std::string("the calibration inputs")) +
            ": output cosine to f32 " + Format("%.6f", cosine) + " (--min-cosine " +
            Format("%.9g", flags.min_cosine) + ")\n";
    if (!(cosine >= flags.min_cosine))
      text += "warning: the bf16 outputs fall below --min-cosine " +
              Format("%.9g", flags.min_cosine) + "; the model is written as above\n";
  } else if (flags.min_cosine > 0) {
    text += check ? "bf16 accuracy: not checked (the model has no f32 output to compare)\n"
                  : "bf16 accuracy: not checked (it would run on the reference kernels)\n";
  }
  for (const auto& [node, why] : report.kept) text += "  kept f32: " + node + ": " + why + "\n";
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
