// `braid`: the command line. Every subcommand lives in tools/*_command.cc.
#include <iostream>
#include <string>
#include <vector>

#include "tools/commands.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return braid::cli::RunBraid(args, std::cout, std::cerr);
}
