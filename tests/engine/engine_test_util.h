// Shared pieces of the engine tests: static model graphs at small inputs, a
// registry with the CPU and vgpu kernels, random plans and output checks.
#ifndef BRAID_TESTS_ENGINE_ENGINE_TEST_UTIL_H_
#define BRAID_TESTS_ENGINE_ENGINE_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "api/model_loader.h"
#include "graph/annotate.h"
#include "graph/passes/passes.h"
#include "graph/passes/specialize.h"
#include "kernels/backend_registry.h"
#include "kernels/cpu/cpu_device.h"
#include "kernels/vgpu/vgpu_device.h"
#include "models/architectures.h"
#include "models/graph_builder.h"
#include "runtime/engine.h"
#include "scheduler/plan.h"

namespace braid::test {

// A model from LoadGraphForExecution with its image input resized to
// hw x hw (models end in a global pool, so they accept any size) and the
// batch symbol bound: every shape static.
inline StatusOr<Graph> StaticGraph(Graph g, int64_t batch, int64_t hw) {
  for (ValueId in : g.inputs()) {
    Value& v = g.value(in);
    if (hw > 0 && v.shape.size() == 4) {
      v.shape[2] = Dim(hw);
      v.shape[3] = Dim(hw);
    }
  }
  for (Value& v : g.values())
    if (!v.constant && v.producer != kNoNode) v.has_shape = false;
  RETURN_IF_ERROR(InferShapes(g));
  RETURN_IF_ERROR(SpecializeSymbols(g, {{"N", batch}}));
  return g;
}

inline StatusOr<Graph> StaticModel(const std::string& name, int64_t batch, int64_t hw) {
  ASSIGN_OR_RETURN(Graph g, LoadGraphForExecution("builtin:" + name));
  return StaticGraph(std::move(g), batch, hw);
}

// A small ViT (32x32 image, 8x8 patches, 2 blocks of width 32).
inline StatusOr<Graph> SmallVit(int64_t batch) {
  VitConfig c;
  c.image = 32;
  c.patch = 8;
  c.dim = 32;
  c.heads = 2;
  c.mlp_dim = 64;
  c.depth = 2;
  c.classes = 10;
  Graph g = BuildVit(c, 7);
  RETURN_IF_ERROR(RunDefaultPasses(g));
  return StaticGraph(std::move(g), batch, 0);
}

// relu(x) viewed as [1, 256] (a view: RunsAsView), relu of that, relu(x)^2
// read after the view, and a Flatten of the graph input (not a view: the
// caller's buffer is copied). Outputs c, e, f. Shared with the executor's
// view tests.
inline Graph ViewsGraph() {
  GraphBuilder b("views", 5);
  const ValueId x = b.Input("x", {1, 4, 8, 8});
  const ValueId a = b.Relu(x);
  b.Output(b.Relu(b.Reshape(a, {1, 256})), "c", {1, 256});
  b.Output(b.Mul(a, a), "e", {1, 4, 8, 8});
  b.Output(b.Flatten(x), "f", {1, 256});
  Graph g = std::move(b).Finish();
  EXPECT_TRUE(InferShapes(g).ok());
  EXPECT_TRUE(Annotate(g).ok());
  return g;
}

inline const KernelRegistry& EngineRegistry() {
  static const KernelRegistry* r = [] {
    auto* reg = new KernelRegistry;
    RegisterCpuKernels(*reg);
    RegisterVgpuKernels(*reg);
    return reg;
  }();
  return *r;
}

// Random device per node among cpu/vgpu, random CPU stream 0/1, random
// slices (axis: channels, batch or rows; ratio) on about a third of the
// sliceable nodes.
inline Plan RandomPlan(const Graph& g, uint32_t seed, bool allow_cpu_streams = true) {
  std::mt19937 rng(seed);
  Plan plan = SingleDevicePlan(g, "cpu", "random");
  plan.devices = {"cpu", "vgpu"};
  for (size_t i = 0; i < plan.nodes.size(); ++i) {
    NodePlan& p = plan.nodes[i];
    const Node& node = g.nodes()[i];
    p.device = rng() % 2 ? "vgpu" : "cpu";
    if (allow_cpu_streams && p.device == "cpu" && rng() % 4 == 0) p.stream = 1;
    if (rng() % 3 != 0) continue;
    // Rows first on a third of them (a conv's channels would win otherwise).
    const bool rows_first = rng() % 3 == 0;
    const std::vector<SliceAxis> axes =
        rows_first ? std::vector{SliceAxis::kRows, SliceAxis::kOutputChannels, SliceAxis::kBatch}
                   : std::vector{SliceAxis::kOutputChannels, SliceAxis::kBatch, SliceAxis::kRows};
    for (SliceAxis axis : axes) {
      if (axis == SliceAxis::kBatch && rng() % 2) continue;
      if (!IsSliceable(node, axis) || SliceExtent(g, node, axis) < 2) continue;
      SliceSpec spec;
      spec.axis = axis;
      spec.other_device = p.device == "cpu" ? "vgpu" : "cpu";
      spec.ratio = 0.1 + 0.8 * std::uniform_real_distribution<double>(0, 1)(rng);
      p.slice = spec;
      break;
    }
  }
  return plan;
}

struct Inputs {
  std::vector<std::vector<float>> data;
  std::vector<const void*> pointers;
};

inline Inputs RandomInputs(const Graph& g, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  Inputs in;
  for (ValueId id : g.inputs()) {
    int64_t n = 1;
    for (const Dim& d : g.value(id).shape) n *= d.extent();
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = dist(rng);
    in.data.push_back(std::move(v));
  }
  for (auto& v : in.data) in.pointers.push_back(v.data());
  return in;
}

// Copies of every output after a Run.
template <typename Runner>
std::vector<std::vector<float>> Outputs(const Runner& e) {
  std::vector<std::vector<float>> out;
  for (size_t k = 0; k < e.graph().outputs().size(); ++k) {
    const TensorDesc& d = e.output_desc(k);
    const float* p = static_cast<const float*>(e.output(k));
    out.emplace_back(p, p + d.elements());
  }
  return out;
}

// "" when every element is within abs + rel * |want|.
inline std::string Compare(const std::vector<std::vector<float>>& got,
                           const std::vector<std::vector<float>>& want, double abs, double rel) {
  if (got.size() != want.size()) return "output count differs";
  for (size_t k = 0; k < got.size(); ++k) {
    if (got[k].size() != want[k].size()) return "output " + std::to_string(k) + " size differs";
    for (size_t i = 0; i < got[k].size(); ++i) {
      const double err = std::fabs(double(got[k][i]) - want[k][i]);
      if (!(err <= abs + rel * std::fabs(want[k][i])))
        return "output " + std::to_string(k) + "[" + std::to_string(i) + "] = " +
               std::to_string(got[k][i]) + ", all-CPU " + std::to_string(want[k][i]);
    }
  }
  return "";
}

// The vgpu the engine suite runs on. CTest runs the suite twice: the second
// pass sets BRAID_TEST_VGPU_SEMANTICS=cuda, and every vgpu of the suite then
// has CUDA's semantics (VgpuOptions::cuda_semantics), so the engine is
// checked against a device that behaves as a CUDA stream does.
inline bool SuiteWantsCudaSemantics() {
  const char* mode = std::getenv("BRAID_TEST_VGPU_SEMANTICS");
  return mode != nullptr && std::string(mode) == "cuda";
}
inline std::unique_ptr<VgpuDevice> SuiteVgpu(const VgpuOptions& options) {
  VgpuOptions suite = options;
  suite.cuda_semantics = options.cuda_semantics || SuiteWantsCudaSemantics();
  return CreateVgpuDevice(suite);
}
inline std::unique_ptr<VgpuDevice> SuiteVgpu() {
  VgpuOptions options;
  options.cuda_semantics = SuiteWantsCudaSemantics();
  return CreateVgpuDevice(options);
}

// `vgpu` as the engine gets it from the backend registry: with the vgpu
// backend's timing-shaping hook bound, as OpenBackendDevices binds it.
inline EngineDevice VgpuEngineDevice(VgpuDevice& vgpu) {
  EngineDevice e{&vgpu, false, 1};
  // Find returns a pointer into the registry: keep it alive past the lookup.
  const BackendRegistry backends = BuiltinBackends();
  StatusOr<const Backend*> backend = backends.Find("vgpu");
  if (!backend.ok() || !(*backend)->kernel_time) {
    ADD_FAILURE() << "no vgpu backend with a kernel_time hook";
    return e;
  }
  e.kernel_time = BindKernelTime(**backend, vgpu);
  return e;
}

struct Devices {
  std::unique_ptr<Device> cpu = CreateCpuDevice();
  std::unique_ptr<VgpuDevice> vgpu;
  std::vector<EngineDevice> list;
  Devices() : vgpu(SuiteVgpu()) { Fill(); }
  explicit Devices(const VgpuOptions& options) : vgpu(SuiteVgpu(options)) { Fill(); }
  void Fill() { list = {{cpu.get(), true, 1}, VgpuEngineDevice(*vgpu)}; }
};

// A Relu that fails while *fail is set (else the reference Relu): a step
// failure injected on demand.
class FailOnDemandRelu final : public Kernel {
 public:
  explicit FailOnDemandRelu(const std::atomic<bool>* fail) : fail_(fail) {}
  Status Prepare(const PrepareArgs& args) override {
    KernelRegistry reference;
    RegisterReferenceKernels(reference);
    const auto candidates = reference.Candidates("Relu", DeviceKind::kCpu);
    if (candidates.empty()) return Internal("no reference Relu");
    inner_ = candidates.front()->create();
    return inner_->Prepare(args);
  }
  Status Run(const RunArgs& args) override {
    if (fail_->load()) return Internal("injected failure");
    return inner_->Run(args);
  }

 private:
  const std::atomic<bool>* fail_;
  std::unique_ptr<Kernel> inner_;
};

}  // namespace braid::test

#endif  // BRAID_TESTS_ENGINE_ENGINE_TEST_UTIL_H_
