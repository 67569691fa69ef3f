#include <ostream>
#include <string>
#include <vector>

#include "tools/commands.h"

namespace braid::cli {

std::span<const Command> Commands() {
  static const Command kCommands[] = {
      {"convert", "convert an ONNX or built-in model into a .braid file",
       RunConvert},
      {"inspect", "per-node table (or JSON) of shapes, FLOPs, bytes, "
                  "intensity and sparsity",
       RunInspect},
      {"run", "run a model on the CPU: latency, peak memory, placements, "
              "outputs (.npy in and out)",
       RunRun},
      {"onnx-test", "run ONNX backend test cases (model.onnx + test_data_set_*) "
                    "and compare outputs",
       RunOnnxTest},
      {"plan", "placement table and SIMULATED latency/energy of a policy on a "
               "device profile",
       RunPlan},
      {"profile", "per-op measured times next to the cost model's predictions; "
                  "trace, SVG, CSV, energy",
       RunProfile},
      {"calibrate", "measure this host and write a device profile", RunCalibrate},
      {"train", "train the SparOA policy (threshold predictor + SAC) on SIMULATED latency",
       RunTrain},
      {"slim", "run a slimmable model segment by segment at chosen widths: "
               "per-segment channels, weights, latency",
       RunSlim},
      {"devices", "list the devices braid can use (cpu, cuda, or why not) and, "
                  "with --ops, which ops each runs",
       RunDevices},
  };
  return kCommands;
}

namespace {
void PrintTopHelp(std::ostream& out) {
  out << "braid " << BRAID_VERSION
      << ": operator-level CPU/GPU inference runtime for edge devices\n\n"
         "Usage: braid COMMAND [ARGS...]\n"
         "       braid COMMAND --help\n\n"
         "Commands:\n";
  for (const Command& c : Commands()) {
    std::string pad(c.name.size() < 10 ? 10 - c.name.size() : 1, ' ');
    out << "  " << c.name << pad << c.summary << "\n";
  }
  out << "\nA MODEL is a .onnx file, a .braid file, or builtin:NAME "
         "(braid convert --help lists the built-in models).\n"
         "Exit status: 0 success, 1 failure while working, 2 bad arguments "
         "or bad model.\n";
}
}  // namespace

int RunBraid(Args args, std::ostream& out, std::ostream& err) {
  if (args.empty()) {
    PrintTopHelp(err);
    return kExitBadInput;
  }
  const std::string& first = args[0];
  if (first == "--help" || first == "-h" || first == "help") {
    if (first == "help" && args.size() > 1) {
      const std::vector<std::string> help = {"--help"};
      for (const Command& c : Commands())
        if (c.name == args[1]) return c.run(help, out, err);
    }
    PrintTopHelp(out);
    return kExitOk;
  }
  if (first == "--version") {
    out << "braid " << BRAID_VERSION << "\n";
    return kExitOk;
  }
  for (const Command& c : Commands())
    if (c.name == first) return c.run(args.subspan(1), out, err);
  err << "braid: unknown command '" << first << "'\n\n";
  PrintTopHelp(err);
  return kExitBadInput;
}

}  // namespace braid::cli
