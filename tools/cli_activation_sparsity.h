// `braid convert --activation-sparsity N [--activation-sparsity-input NAME=FILE.npy]...`:
// flag parsing, .npy loading and the summary line (runtime/activation_sparsity.h
// does the measuring).
//
//   StatusOr<std::optional<ActivationSparsityFlags>> flags = ParseActivationSparsityFlags(scan);
//   if (flags.ok() && *flags)
//     RETURN_IF_ERROR(MeasureForConvert(**flags, graph, out, err, quiet));
#ifndef BRAID_TOOLS_CLI_ACTIVATION_SPARSITY_H_
#define BRAID_TOOLS_CLI_ACTIVATION_SPARSITY_H_

#include <iosfwd>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/activation_sparsity.h"
#include "tools/cli_common.h"
#include "tools/npy.h"

namespace braid::cli {

struct ActivationSparsityFlags {
  int samples = 0;
  std::vector<std::pair<std::string, std::string>> inputs;  // NAME, FILE.npy
};

// Consumes --activation-sparsity N and every --activation-sparsity-input;
// nullopt when neither is given. N must be a whole number in [1, 10000];
// --activation-sparsity-input needs --activation-sparsity.
StatusOr<std::optional<ActivationSparsityFlags>> ParseActivationSparsityFlags(ArgScanner& scan);

// Reads the .npy files (NAME, FILE pairs) into `arrays` and adds tensors
// borrowing them to options.inputs; errors name `flag` and NAME.
Status AddNpyInputs(const std::vector<std::pair<std::string, std::string>>& inputs,
                    const std::string& flag, std::vector<npy::Array>& arrays,
                    ActivationSparsityOptions& options);
// Progress "1/8, 2/8, ..." on err unless quiet.
void ShowRuns(ActivationSparsityOptions& options, std::ostream& err, bool quiet);

// Reads the .npy files, measures, annotates `graph` and returns the report.
StatusOr<ActivationSparsityReport> MeasureActivationSparsityForCli(
    const ActivationSparsityFlags& flags, Graph& graph, std::ostream& err, bool quiet);

// "activation sparsity: 8 runs on random N(0,1) inputs (input) ...": what was
// measured, over how many nodes, median/max over Conv/Gemm/MatMul inputs.
std::string ActivationSparsitySummary(const ActivationSparsityReport& report);

// `braid convert --precision int8|bf16 [--calibration-samples N]
// [--calibration-input NAME=FILE.npy]... [--calibration-method M]
// [--min-cosine C] [--sensitivity-report FILE.csv]` (bf16: the samples and
// --min-cosine only, for its accuracy check).
struct PrecisionFlags {
  bool bf16 = false;  // else int8
  int samples = 8;
  std::vector<std::pair<std::string, std::string>> inputs;  // NAME, FILE.npy
  // The outputs' cosine similarity to f32 on the calibration inputs below
  // this: int8 keeps the layers that move the outputs most when quantized
  // alone f32, as few as meet it; bf16 warns (0: no check).
  double min_cosine = 0.99;
  // --calibration-method minmax (100) or percentile[:P] (P, default 99.99).
  double percentile = 100;
  std::string sensitivity_report;  // per-layer CSV to write; "" = none
};
// nullopt for --precision fp32 or none; an error for another precision, or
// calibration flags without --precision int8 / bf16 (or that bf16 does not use).
StatusOr<std::optional<PrecisionFlags>> ParsePrecisionFlags(ArgScanner& scan);

// On a graph after the default passes: every f32 Conv / MatMul / Gemm
// computes in bf16 (MarkComputePrecision); unless min_cosine is 0, the model
// runs in f32 and in bf16 on the calibration inputs and the summary gives the
// outputs' cosine (a warning below min_cosine), and whether this CPU has
// bf16 instructions.
StatusOr<std::string> Bf16ForCli(const PrecisionFlags& flags, Graph& graph, std::ostream& err,
                                 bool quiet);

// On a graph after the default passes with fuse_activations off: measures
// the activation ranges, quantizes (QuantizeStatic), runs the default passes
// again (FoldQdq makes the int8 ops). When the outputs then fall below
// min_cosine, measures each layer's sensitivity (MeasureQuantizationSensitivity)
// and quantizes again with the fewest most sensitive layers kept f32 that
// meet it. Returns the summary for stdout: what was quantized, what stayed
// f32 and why, on which data, the output cosine.
StatusOr<std::string> QuantizeForCli(const PrecisionFlags& flags, Graph& graph, std::ostream& err,
                                     bool quiet);

}  // namespace braid::cli

#endif  // BRAID_TOOLS_CLI_ACTIVATION_SPARSITY_H_
