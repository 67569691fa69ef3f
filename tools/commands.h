// The `braid` subcommands, each in its own <name>_command.cc.
#ifndef BRAID_TOOLS_COMMANDS_H_
#define BRAID_TOOLS_COMMANDS_H_

#include <iosfwd>

#include "tools/cli_common.h"

namespace braid::cli {

int RunConvert(Args args, std::ostream& out, std::ostream& err);
int RunInspect(Args args, std::ostream& out, std::ostream& err);
int RunRun(Args args, std::ostream& out, std::ostream& err);
int RunOnnxTest(Args args, std::ostream& out, std::ostream& err);
int RunDevices(Args args, std::ostream& out, std::ostream& err);
int RunPlan(Args args, std::ostream& out, std::ostream& err);
int RunProfile(Args args, std::ostream& out, std::ostream& err);
int RunCalibrate(Args args, std::ostream& out, std::ostream& err);
int RunTrain(Args args, std::ostream& out, std::ostream& err);
int RunSlim(Args args, std::ostream& out, std::ostream& err);

// Top level: `braid [--help|--version] COMMAND ARGS...`.
int RunBraid(Args args, std::ostream& out, std::ostream& err);

}  // namespace braid::cli

#endif  // BRAID_TOOLS_COMMANDS_H_
