// Runs a Graph through a Session on braid's reference kernels (or a given
// registry) with f32 inputs and returns its f32 outputs: the before / after
// comparison of graph rewrites (rewrite_equivalence_test.cc, fold_qdq_test.cc).
//
//   std::vector<std::vector<float>> y = test::RunOnReference(graph, {x});
#ifndef BRAID_TESTS_RUNTIME_REFERENCE_SESSION_TEST_UTIL_H_
#define BRAID_TESTS_RUNTIME_REFERENCE_SESSION_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <memory>
#include <utility>
#include <vector>

#include "graph/ir.h"
#include "kernels/cpu/cpu_device.h"
#include "runtime/session_internal.h"

namespace braid::test {

// Runs `graph` (passes already applied, or none) on `registry`'s kernels
// (the reference kernels when null), one thread; symbolic dims at 1.
inline std::vector<std::vector<float>> RunOnReference(
    Graph graph, const std::vector<std::vector<float>>& inputs,
    std::shared_ptr<KernelRegistry> registry = nullptr) {
  if (registry == nullptr) {
    registry = std::make_shared<KernelRegistry>();
    RegisterReferenceKernels(*registry);
  }
  SessionOptions options;
  options.num_threads = 1;
  StatusOr<std::unique_ptr<Session>> session =
      CreateSession(std::move(graph), options, std::move(registry), CreateCpuDevice());
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  if (!session.ok()) return {};
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorInfo& info = (*session)->inputs().at(i);
    std::vector<int64_t> dims(info.dims.begin(), info.dims.end());
    for (int64_t& d : dims) d = d < 0 ? 1 : d;  // a symbolic batch runs at 1
    Status s = (*session)->SetInput(
        info.name, Tensor::Borrow(DataType::kF32, dims, const_cast<float*>(inputs[i].data())));
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  Status s = (*session)->Run();
  EXPECT_TRUE(s.ok()) << s.ToString();
  std::vector<std::vector<float>> outputs;
  for (const TensorInfo& info : (*session)->outputs()) {
    StatusOr<Tensor> out = (*session)->GetOutput(info.name);
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    if (out.ok()) outputs.emplace_back(out->data<float>(), out->data<float>() + out->elements());
  }
  return outputs;
}

}  // namespace braid::test

#endif  // BRAID_TESTS_RUNTIME_REFERENCE_SESSION_TEST_UTIL_H_
