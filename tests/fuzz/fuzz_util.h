// What every fuzz target shares: a finding is a crash, a sanitizer report or a
// broken invariant, which ends the run with a message libFuzzer records.
//
//   extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
//     braid::StatusOr<braid::Graph> g = braid::LoadBraidBytes(data, size);
//     if (g.ok()) braid::fuzz::Require(g->Validate(), "a loaded graph validates");
//     return 0;
//   }
#ifndef BRAID_TESTS_FUZZ_FUZZ_UTIL_H_
#define BRAID_TESTS_FUZZ_FUZZ_UTIL_H_

#include <cstdio>
#include <cstdlib>

#include "graph/status.h"

namespace braid::fuzz {

inline void Require(bool condition, const char* invariant) {
  if (condition) return;
  std::fprintf(stderr, "fuzz invariant broken: %s\n", invariant);
  std::abort();
}

inline void Require(const Status& status, const char* invariant) {
  if (status.ok()) return;
  std::fprintf(stderr, "fuzz invariant broken: %s: %s\n", invariant, status.ToString().c_str());
  std::abort();
}

}  // namespace braid::fuzz

#endif  // BRAID_TESTS_FUZZ_FUZZ_UTIL_H_
