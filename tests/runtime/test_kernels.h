// Small f32 kernels and graphs for the Session tests, independent of the CPU
// kernels: same-shape Add, Relu, and variants that decline, fail, or block
// until released (for the concurrency test).
#ifndef BRAID_TESTS_RUNTIME_TEST_KERNELS_H_
#define BRAID_TESTS_RUNTIME_TEST_KERNELS_H_

#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "graph/ir.h"
#include "kernels/backend.h"
#include "kernels/cpu/cpu_device.h"

namespace braid::test {

class AddKernel : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    if (args.inputs.size() != 2 || args.inputs[0] != args.inputs[1] ||
        args.inputs[0].dtype != DataType::kF32)
      return Unimplemented(args.Where() + ": test Add takes two equal f32 shapes");
    n_ = static_cast<size_t>(args.inputs[0].elements());
    return Status::Ok();
  }
  Status Run(const RunArgs& args) override {
    const float* a = static_cast<const float*>(args.src[0]);
    const float* b = static_cast<const float*>(args.src[1]);
    float* y = static_cast<float*>(args.dst[0]);
    for (size_t i = 0; i < n_; ++i) y[i] = a[i] + b[i];
    return Status::Ok();
  }

 private:
  size_t n_ = 0;
};

class ReluKernel : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    if (args.inputs[0].dtype != DataType::kF32)
      return Unimplemented(args.Where() + ": test Relu takes f32");
    n_ = static_cast<size_t>(args.inputs[0].elements());
    return Status::Ok();
  }
  Status Run(const RunArgs& args) override {
    const float* x = static_cast<const float*>(args.src[0]);
    float* y = static_cast<float*>(args.dst[0]);
    for (size_t i = 0; i < n_; ++i) y[i] = x[i] > 0 || x[i] != x[i] ? x[i] : 0.0f;
    return Status::Ok();
  }

 protected:
  size_t n_ = 0;
};

class DecliningKernel : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    return Unimplemented(args.Where() + ": fast path needs 16 elements");
  }
  Status Run(const RunArgs&) override { return Internal("never prepared"); }
};

class FailingReluKernel : public ReluKernel {
 public:
  Status Run(const RunArgs&) override { return Internal("test kernel failure"); }
};

// Relu that signals `entered` and then waits until `release` is set.
struct Gate {
  std::atomic<bool> entered{false};
  std::atomic<bool> release{false};
};
class BlockingReluKernel : public ReluKernel {
 public:
  explicit BlockingReluKernel(Gate* gate) : gate_(gate) {}
  Status Run(const RunArgs& args) override {
    gate_->entered.store(true);
    while (!gate_->release.load()) std::this_thread::yield();
    return ReluKernel::Run(args);
  }

 private:
  Gate* gate_;
};

template <typename K>
KernelEntry Entry(const std::string& op, const std::string& impl, int priority) {
  return KernelEntry{op, DeviceKind::kCpu, impl, priority,
                     [] { return std::unique_ptr<Kernel>(std::make_unique<K>()); }};
}

inline std::shared_ptr<KernelRegistry> TestRegistry() {
  auto registry = std::make_shared<KernelRegistry>();
  registry->Register(Entry<AddKernel>("Add", "test", 0));
  registry->Register(Entry<ReluKernel>("Relu", "test", 0));
  return registry;
}

// A CPU device whose allocations fail, as when memory runs out.
class ExhaustedDevice : public Device {
 public:
  ExhaustedDevice() : cpu_(CreateCpuDevice()) {}
  const DeviceInfo& info() const override { return cpu_->info(); }
  StatusOr<std::unique_ptr<Buffer>> Allocate(size_t bytes, MemoryKind) override {
    return ResourceExhausted("test device: out of memory allocating " +
                             std::to_string(bytes) + " bytes");
  }
  StatusOr<std::unique_ptr<Stream>> CreateStream() override { return cpu_->CreateStream(); }

 private:
  std::unique_ptr<Device> cpu_;
};

// x[N,4], y[N,4] -> sum = Add(x, y) -> out = Relu(sum). Outputs: out, then
// (with_aliases) x itself and the constant c[2].
inline Graph AddReluGraph(bool with_aliases = false) {
  Graph g;
  g.name() = "add_relu";
  const Dim n = Dim::Symbol("N");
  ValueId x = g.AddInput("x", DataType::kF32, {n, 4});
  ValueId y = g.AddInput("y", DataType::kF32, {n, 4});
  ValueId sum = g.AddValue("sum");
  ValueId out = g.AddValue("out");
  Node add;
  add.name = "add";
  add.op_type = "Add";
  add.inputs = {x, y};
  add.outputs = {sum};
  g.AddNode(std::move(add));
  Node relu;
  relu.name = "relu";
  relu.op_type = "Relu";
  relu.inputs = {sum};
  relu.outputs = {out};
  g.AddNode(std::move(relu));
  g.outputs().push_back(out);
  if (with_aliases) {
    const float c[2] = {1.5f, -2.5f};
    ValueId cv = g.AddConstant("c", DataType::kF32, {2}, TensorData::Copy(c, sizeof(c)));
    g.outputs().push_back(x);
    g.outputs().push_back(cv);
  }
  return g;
}

}  // namespace braid::test

#endif  // BRAID_TESTS_RUNTIME_TEST_KERNELS_H_
