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

namespace braid::cli {

struct ActivationSparsityFlags {
  int samples = 0;
  std::vector<std::pair<std::string, std::string>> inputs;  // NAME, FILE.npy
};

// Consumes --activation-sparsity N and every --activation-sparsity-input;
// nullopt when neither is given. N must be a whole number in [1, 10000];
// --activation-sparsity-input needs --activation-sparsity.
StatusOr<std::optional<ActivationSparsityFlags>> ParseActivationSparsityFlags(ArgScanner& scan);

// Reads the .npy files, measures, annotates `graph` and returns the report.
StatusOr<ActivationSparsityReport> MeasureActivationSparsityForCli(
    const ActivationSparsityFlags& flags, Graph& graph, std::ostream& err, bool quiet);

// "activation sparsity: 8 runs on random N(0,1) inputs (input) ...": what was
// measured, over how many nodes, median/max over Conv/Gemm/MatMul inputs.
std::string ActivationSparsitySummary(const ActivationSparsityReport& report);

}  // namespace braid::cli

#endif  // BRAID_TOOLS_CLI_ACTIVATION_SPARSITY_H_
