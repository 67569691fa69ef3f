// "echo": a test-only backend that proves a backend is one folder plus one
// registration line (docs/architecture.md, "A new backend"). A host-memory
// device of its own kind whose kernels are the reference kernels of a few
// ops, re-registered for it.
//
//   braid::BackendRegistry backends = braid::BuiltinBackends();
//   ASSERT_TRUE(backends.Add(braid::testing::EchoBackend()).ok());
//   // devices {"cpu", "echo"}: Session (api/session_open.h,
//   // OpenSessionWithBackends) and the op harness (MakeHarness) take it.
#ifndef BRAID_TESTS_BACKENDS_ECHO_ECHO_BACKEND_H_
#define BRAID_TESTS_BACKENDS_ECHO_ECHO_BACKEND_H_

#include <string>
#include <vector>

#include "kernels/backend_registry.h"

namespace braid::testing {

// The op types echo has kernels for.
const std::vector<std::string>& EchoOpTypes();

Backend EchoBackend();

}  // namespace braid::testing

#endif  // BRAID_TESTS_BACKENDS_ECHO_ECHO_BACKEND_H_
