// Whole models through the CUDA kernels without a GPU: a Session on
// {"cpu", "cuda_emu"} (tests/cuda/emulated_backend.h) with the gpu-only
// policy puts every node that has a CUDA kernel on the emulated device, so
// each node is planned exactly as on a GPU (a decline falls back to the CPU,
// reported) and computed by the CUDA kernels' device math (cuDNN's forward
// Conv by the CPU's kernels). The outputs are compared with a CPU-only
// session. Which nodes stay on the CPU, and why, is printed and checked.
//
// Built-in models run in CI. BRAID_CUDA_EMU_MODELS="a.onnx b.onnx ..." runs
// more (e.g. the zoo's exports): one report line per model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "api/model_loader.h"
#include "api/session_open.h"
#include "tests/cuda/emulated_backend.h"

namespace braid::cuda_test {
namespace {

const BackendRegistry& Backends() {
  static const BackendRegistry* backends = [] {
    auto* b = new BackendRegistry(BuiltinBackends());
    const Status added = b->Add(CudaEmulatedBackend());
    if (!added.ok()) std::cerr << added.ToString() << "\n";
    return b;
  }();
  return *backends;
}

struct ModelRun {
  Status status;
  std::vector<std::vector<float>> outputs;  // f32 outputs, in order
  std::vector<NodePlacement> placements;
};

// One run of `model` on `devices` with random inputs (seeded; f32 uniform
// in [-1, 1), integers in [0, 4)), symbolic dims 1.
ModelRun RunModel(const std::string& model, std::vector<std::string> devices,
                  const std::string& policy) {
  ModelRun result;
  SessionOptions options;
  options.num_threads = 1;
  options.devices = std::move(devices);
  options.policy = policy;
  StatusOr<std::unique_ptr<Session>> session =
      OpenSessionWithBackends(Backends(), options, [&] { return LoadGraphForExecution(model); });
  if (!session.ok()) {
    result.status = session.status();
    return result;
  }
  std::mt19937 rng(27);
  std::uniform_real_distribution<float> real(-1.0f, 1.0f);
  std::vector<Tensor> inputs;
  for (const TensorInfo& in : (*session)->inputs()) {
    std::vector<int64_t> dims = in.dims;
    for (int64_t& d : dims) d = d < 0 ? 1 : d;
    Tensor t = Tensor::Allocate(in.dtype, dims);
    for (int64_t i = 0; i < t.elements(); ++i) {
      switch (in.dtype) {
        case DataType::kF32: t.data<float>()[i] = real(rng); break;
        case DataType::kI64: t.data<int64_t>()[i] = static_cast<int64_t>(rng() % 4); break;
        case DataType::kI32: t.data<int32_t>()[i] = static_cast<int32_t>(rng() % 4); break;
        default:
          result.status = Unimplemented("input " + in.ToString() + ": no random values");
          return result;
      }
    }
    inputs.push_back(std::move(t));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    result.status = (*session)->SetInput((*session)->inputs()[i].name, inputs[i]);
    if (!result.status.ok()) return result;
  }
  result.status = (*session)->Run();
  if (!result.status.ok()) return result;
  for (const TensorInfo& out : (*session)->outputs()) {
    StatusOr<Tensor> y = (*session)->GetOutput(out.name);
    if (!y.ok()) {
      result.status = y.status();
      return result;
    }
    if (y->dtype() != DataType::kF32) continue;
    result.outputs.emplace_back(y->data<float>(), y->data<float>() + y->elements());
  }
  result.placements = (*session)->placements();
  return result;
}

struct Comparison {
  std::string error;  // "" when every output matches
  double worst = 0;   // max |emulated - cpu| / max |cpu|
  int on_device = 0, on_cpu = 0, fallbacks = 0;
  std::map<std::string, int> cpu_ops;  // op type -> nodes left on the CPU
  std::vector<std::string> reasons;    // fallbacks with their reasons
};

// Runs `model` both ways; tolerance: 1e-4 of the output's largest |value|
// (the CUDA kernels sum in float, in another order than oneDNN).
Comparison Compare(const std::string& model) {
  Comparison c;
  const ModelRun cpu = RunModel(model, {"cpu"}, "cpu-only");
  const ModelRun emu = RunModel(model, {"cpu", "cuda_emu"}, "gpu-only");
  if (!cpu.status.ok()) c.error = "cpu: " + cpu.status.ToString();
  else if (!emu.status.ok()) c.error = "cuda_emu: " + emu.status.ToString();
  else if (cpu.outputs.size() != emu.outputs.size() || cpu.outputs.empty())
    c.error = "outputs differ in number (or none is f32)";
  if (!c.error.empty()) return c;
  for (size_t o = 0; o < cpu.outputs.size(); ++o) {
    const std::vector<float>& want = cpu.outputs[o];
    const std::vector<float>& got = emu.outputs[o];
    double scale = 0;
    for (float v : want)
      if (std::isfinite(v)) scale = std::max(scale, static_cast<double>(std::fabs(v)));
    const double tolerance = 1e-4 * std::max(scale, 1e-6);
    double diff = 0;
    int64_t bad = 0;
    for (size_t i = 0; i < want.size() && i < got.size(); ++i) {
      // NaN where the CPU has NaN, the same infinity where it has one.
      if (std::isnan(want[i]) || std::isinf(want[i])) {
        bad += !(std::isnan(want[i]) ? std::isnan(got[i]) : got[i] == want[i]);
        continue;
      }
      const double d = std::fabs(static_cast<double>(got[i]) - want[i]);
      if (!(d <= tolerance)) ++bad;  // NaN fails too
      if (d > diff || std::isnan(d)) diff = d;
    }
    if (got.size() != want.size() || bad > 0)
      c.error = "output " + std::to_string(o) + " differs at " + std::to_string(bad) +
                " elements: max |diff| " + std::to_string(diff) + " of max |value| " +
                std::to_string(scale);
    c.worst = std::max(c.worst, scale > 0 ? diff / scale : diff);
  }
  for (const NodePlacement& p : emu.placements) {
    if (p.device == "cuda_emu") {
      ++c.on_device;
    } else {
      ++c.on_cpu;
      ++c.cpu_ops[p.op_type];
    }
    if (p.fallback) {
      ++c.fallbacks;
      c.reasons.push_back(p.node + " (" + p.op_type + "): " + p.reason);
    }
  }
  return c;
}

std::string Report(const std::string& model, const Comparison& c) {
  std::ostringstream out;
  out << "[cuda_emu] " << model << ": ";
  if (!c.error.empty() && c.on_device == 0) {
    out << "FAIL " << c.error;
    return out.str();
  }
  out << (c.error.empty() ? "match" : "MISMATCH " + c.error) << " (worst " << c.worst << "), "
      << c.on_device << " nodes on cuda_emu, " << c.on_cpu << " on the cpu";
  for (const auto& [op, n] : c.cpu_ops) out << " " << op << " x" << n;
  out << ", " << c.fallbacks << " fallbacks";
  for (const std::string& r : c.reasons) out << "\n    " << r;
  return out.str();
}

class EmulatedBuiltinModel : public ::testing::TestWithParam<std::string> {};

// The built-in models run entirely on the CUDA kernels: no node declines,
// only the graph's views and nothing else stay off the device, and the
// outputs match the CPU's.
TEST_P(EmulatedBuiltinModel, RunsOnTheCudaKernelsAndMatchesTheCpu) {
  const std::string model = "builtin:" + GetParam();
  const Comparison c = Compare(model);
  std::cout << Report(model, c) << "\n";
  ASSERT_EQ(c.error, "");
  EXPECT_EQ(c.fallbacks, 0);
  EXPECT_EQ(c.on_cpu, 0);
  EXPECT_GT(c.on_device, 5);
}

INSTANTIATE_TEST_SUITE_P(Models, EmulatedBuiltinModel,
                         ::testing::Values("tiny_cnn", "mobilenet_v2", "squeezenet1_1",
                                           "vit_tiny", "slim_resnet"),
                         [](const auto& info) { return info.param; });

// A decline on the emulated device is a fallback onto the CPU, reported
// with the CUDA plan's reason: the path a GPU session takes.
TEST(EmulatedModels, ModelsFromTheEnvironment) {
  const char* list = std::getenv("BRAID_CUDA_EMU_MODELS");
  if (list == nullptr || *list == '\0')
    GTEST_SKIP() << "BRAID_CUDA_EMU_MODELS is not set (a space-separated list of models)";
  std::istringstream models(list);
  std::string model;
  int failed = 0, total = 0;
  while (models >> model) {
    const Comparison c = Compare(model);
    std::cout << Report(model, c) << std::endl;
    ++total;
    failed += !c.error.empty();
  }
  std::cout << "[cuda_emu] " << total - failed << " of " << total << " models match\n";
  EXPECT_EQ(failed, 0);
}

}  // namespace
}  // namespace braid::cuda_test
