// Helpers for the CPU-backend tests: build one node, prepare a chosen
// implementation (by its registry impl name) and run it on seeded random
// non-zero inputs, then compare two implementations.
#ifndef BRAID_TESTS_KERNELS_ONEDNN_TEST_UTIL_H_
#define BRAID_TESTS_KERNELS_ONEDNN_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kernels/backend.h"
#include "kernels/cpu/cpu_device.h"

namespace braid::testing_cpu {

struct Input {
  TensorDesc desc;
  bool constant = false;
  std::vector<std::byte> bytes;  // filled by MakeCase when empty
};

struct OpCase {
  Node node;
  int64_t opset = 17;
  std::vector<Input> inputs;
  std::vector<TensorDesc> outputs;
};

inline TensorDesc F32(std::vector<int64_t> dims) {
  return TensorDesc{DataType::kF32, std::move(dims)};
}

// Random values in +-[0.1, 1] (never zero); `positive` keeps them > 0.
inline std::vector<std::byte> RandomF32(int64_t count, uint32_t seed,
                                        bool positive = false) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> magnitude(0.1f, 1.0f);
  std::vector<std::byte> bytes(static_cast<size_t>(count) * sizeof(float));
  float* v = reinterpret_cast<float*>(bytes.data());
  for (int64_t i = 0; i < count; ++i) {
    const float m = magnitude(rng);
    v[i] = (positive || (rng() & 1u)) ? m : -m;
  }
  return bytes;
}

inline OpCase MakeCase(const std::string& op, std::vector<Input> inputs,
                       std::vector<TensorDesc> outputs, uint32_t seed = 1,
                       bool positive = false) {
  OpCase c;
  c.node.name = "test_" + op;
  c.node.op_type = op;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Input& in = inputs[i];
    if (in.bytes.empty() && in.desc.dtype == DataType::kF32)
      in.bytes = RandomF32(in.desc.elements(), seed * 97u + static_cast<uint32_t>(i),
                           positive);
  }
  c.inputs = std::move(inputs);
  c.outputs = std::move(outputs);
  return c;
}

inline Input In(TensorDesc desc, bool constant = false) {
  return Input{std::move(desc), constant, {}};
}

// A prepared kernel plus the buffers to run it.
struct Prepared {
  std::unique_ptr<Kernel> kernel;
  std::vector<TensorData> constants;  // keep constant bytes alive
  std::vector<std::vector<std::byte>> outputs;
  std::vector<const void*> src;
  std::vector<void*> dst;
  void* workspace = nullptr;
  ~Prepared() { std::free(workspace); }
};

inline const KernelRegistry& CpuRegistry() {
  static const KernelRegistry* registry = [] {
    auto* r = new KernelRegistry;
    RegisterCpuKernels(*r);
    return r;
  }();
  return *registry;
}

inline PrepareArgs ArgsFor(const OpCase& c, std::vector<TensorData>& constants,
                           int num_threads) {
  PrepareArgs args;
  args.node = &c.node;
  args.opset = c.opset;
  args.num_threads = num_threads;
  constants.clear();
  constants.reserve(c.inputs.size());
  for (const Input& in : c.inputs) {
    args.inputs.push_back(in.desc);
    constants.push_back(TensorData::Copy(in.bytes.data(), in.bytes.size()));
  }
  for (size_t i = 0; i < c.inputs.size(); ++i)
    args.constants.push_back(c.inputs[i].constant ? &constants[i] : nullptr);
  args.outputs = c.outputs;
  return args;
}

// Prepares implementation `impl` ("onednn", "cpu", "reference").
inline Status PrepareImpl(const OpCase& c, const std::string& impl,
                          Prepared& out, int num_threads = 2) {
  const KernelEntry* entry = nullptr;
  for (const KernelEntry* e :
       CpuRegistry().Candidates(c.node.op_type, DeviceKind::kCpu))
    if (e->impl == impl) entry = e;
  if (entry == nullptr)
    return NotFound("no " + impl + " kernel for " + c.node.op_type);
  out.kernel = entry->create();
  PrepareArgs args = ArgsFor(c, out.constants, num_threads);
  RETURN_IF_ERROR(out.kernel->Prepare(args));
  const size_t ws = out.kernel->workspace_bytes();
  if (ws > 0) out.workspace = std::aligned_alloc(64, (ws + 63) / 64 * 64);
  for (const Input& in : c.inputs)
    out.src.push_back(in.desc.present() ? in.bytes.data() : nullptr);
  for (const TensorDesc& d : c.outputs) {
    out.outputs.emplace_back(d.bytes());
    out.dst.push_back(out.outputs.back().data());
  }
  return Status::Ok();
}

inline Status RunPrepared(Prepared& p) {
  RunArgs run;
  run.src = p.src;
  run.dst = p.dst;
  run.workspace = p.workspace;
  return p.kernel->Run(run);
}

// Runs `impl` and returns its outputs.
inline StatusOr<std::vector<std::vector<std::byte>>> RunImpl(
    const OpCase& c, const std::string& impl, int num_threads = 2) {
  Prepared p;
  RETURN_IF_ERROR(PrepareImpl(c, impl, p, num_threads));
  RETURN_IF_ERROR(RunPrepared(p));
  return std::move(p.outputs);
}

struct Tolerance {
  float abs = 1e-5f;
  float rel = 1e-5f;  // of the largest |reference| output element
};

// Runs `impl` and the reference kernel and compares every f32 output
// element: |impl - ref| <= abs + rel * max|ref| (other dtypes: exact).
inline void ExpectMatchesReference(const OpCase& c, Tolerance tol,
                                   const std::string& impl = "onednn") {
  SCOPED_TRACE(c.node.op_type + " " + impl);
  auto got = RunImpl(c, impl);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  auto want = RunImpl(c, "reference", 1);
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  for (size_t o = 0; o < c.outputs.size(); ++o) {
    const auto& g = (*got)[o];
    const auto& w = (*want)[o];
    ASSERT_EQ(g.size(), w.size());
    if (c.outputs[o].dtype != DataType::kF32) {
      EXPECT_EQ(0, std::memcmp(g.data(), w.data(), g.size())) << "output " << o;
      continue;
    }
    const float* gv = reinterpret_cast<const float*>(g.data());
    const float* wv = reinterpret_cast<const float*>(w.data());
    const size_t n = g.size() / sizeof(float);
    float magnitude = 0;
    for (size_t i = 0; i < n; ++i) magnitude = std::max(magnitude, std::fabs(wv[i]));
    ASSERT_GT(magnitude, 0.0f) << "reference output is all zero";
    const float bound = tol.abs + tol.rel * magnitude;
    int failures = 0;
    for (size_t i = 0; i < n && failures < 5; ++i) {
      if (!(std::fabs(gv[i] - wv[i]) <= bound)) {
        ADD_FAILURE() << "output " << o << " element " << i << ": " << gv[i]
                      << " vs reference " << wv[i] << " (bound " << bound << ")";
        ++failures;
      }
    }
  }
}

}  // namespace braid::testing_cpu

#endif  // BRAID_TESTS_KERNELS_ONEDNN_TEST_UTIL_H_
