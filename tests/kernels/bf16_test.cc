// Precision bf16 (docs/ir.md "precision"): the oneDNN Conv / MatMul / Gemm
// kernels compute in bfloat16 when a node asks for it (checked against the
// reference kernels, which round their operands the same way, and shown to
// differ from f32 by bf16's rounding), and PrepareFirstAccepting never hands
// such a node to a kernel that computes in f32 only.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_device.h"
#include "tests/kernels/op_harness.h"

namespace braid {
namespace {

using Attr = std::pair<std::string, AttributeValue>;

OpInput Input(std::vector<int64_t> dims, bool constant) {
  OpInput in{DataType::kF32, std::move(dims)};
  in.constant = constant;
  return in;
}

// The case's output 0 from the implementation `impl` ("reference", "onednn")
// on the host, or the decline / error.
StatusOr<std::vector<float>> RunImpl(const OpCase& c, const std::string& impl) {
  const KernelRegistry& registry = HarnessRegistry();
  const KernelEntry* entry = nullptr;
  for (const KernelEntry* e : registry.Candidates(c.op_type, DeviceKind::kCpu))
    if (e->impl == impl) entry = e;
  if (entry == nullptr) return NotFound("no " + impl + " kernel for " + c.op_type);
  ASSIGN_OR_RETURN(std::unique_ptr<OpCaseInstance> instance, OpCaseInstance::Build(c, 7));
  std::unique_ptr<Device> cpu = CreateCpuDevice();
  ASSIGN_OR_RETURN(std::unique_ptr<PreparedImpl> prepared,
                   PreparedImpl::Prepare(*instance, *entry, *cpu));
  RETURN_IF_ERROR(prepared->Run());
  const auto* out = static_cast<const float*>(prepared->output(0));
  return std::vector<float>(out, out + instance->output_descs()[0].elements());
}

// max |got - want| / (1 + max |want|)
double RelativeError(const std::vector<float>& got, const std::vector<float>& want) {
  double err = 0, scale = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    err = std::max(err, static_cast<double>(std::fabs(got[i] - want[i])));
    scale = std::max(scale, static_cast<double>(std::fabs(want[i])));
  }
  return err / (1 + scale);
}

OpCase WithPrecision(OpCase c, const std::string& precision) {
  c.attributes.emplace_back("precision", precision);
  c.name += "_" + precision;
  return c;
}

// Each op with enough products per output (K = 576 / 256) that bf16's
// rounding (2^-9 relative per operand) shows far above the f32 tolerance.
std::vector<OpCase> Cases() {
  std::vector<OpCase> cases;
  cases.push_back(OpCase{"conv", "Conv", 17,
                         {Attr{"pads", std::vector<int64_t>{1, 1, 1, 1}}},
                         {Input({1, 64, 9, 9}, false), Input({32, 64, 3, 3}, true),
                          Input({32}, true)}});
  cases.push_back(OpCase{"matmul", "MatMul", 17, {},
                         {Input({2, 8, 256}, false), Input({2, 256, 16}, false)}});
  cases.push_back(OpCase{"gemm", "Gemm", 17, {Attr{"transB", int64_t{1}}},
                         {Input({4, 256}, false), Input({24, 256}, true), Input({24}, true)}});
  return cases;
}

TEST(Bf16, OnednnMatchesTheBf16ReferenceAndNotF32) {
  for (const OpCase& f32_case : Cases()) {
    SCOPED_TRACE(f32_case.name);
    const OpCase bf16_case = WithPrecision(f32_case, "bf16");
    StatusOr<std::vector<float>> fast = RunImpl(bf16_case, "onednn");
    // Declining is right only where oneDNN has no bf16 kernel (CpuBf16Support).
    if (!fast.ok() && fast.status().code() == StatusCode::kUnimplemented &&
        CpuBf16Support() == Bf16Support::kReference)
      GTEST_SKIP() << "oneDNN has no bf16 kernels on this CPU: " << fast.status().ToString();
    ASSERT_TRUE(fast.ok()) << fast.status().ToString();
    StatusOr<std::vector<float>> reference = RunImpl(bf16_case, "reference");
    StatusOr<std::vector<float>> f32 = RunImpl(f32_case, "reference");
    ASSERT_TRUE(reference.ok()) << reference.status().ToString();
    ASSERT_TRUE(f32.ok()) << f32.status().ToString();
    // Same rounded operands, other summation order: f32's tolerance.
    EXPECT_LE(RelativeError(*fast, *reference), 1e-4);
    // bf16's rounding itself: far above it (~1e-3 here).
    EXPECT_GT(RelativeError(*fast, *f32), 1e-3);
    EXPECT_GT(RelativeError(*reference, *f32), 1e-3);
  }
}

// A Conv kernel that would take anything: it must never see a bf16 node.
class TakesAnything final : public Kernel {
 public:
  explicit TakesAnything(int* prepared) : prepared_(prepared) {}
  Status Prepare(const PrepareArgs&) override {
    ++*prepared_;
    return Status::Ok();
  }
  Status Run(const RunArgs&) override { return Status::Ok(); }

 private:
  int* prepared_;
};

TEST(Bf16, KernelsWithoutBf16AreDeclinedWithTheReason) {
  int prepared = 0;
  KernelRegistry registry;
  RegisterReferenceKernels(registry);
  registry.Register(KernelEntry{"Conv", DeviceKind::kCpu, "f32-only", 50,
                                [&prepared] { return std::make_unique<TakesAnything>(&prepared); }});
  ASSERT_TRUE(registry.Candidates("Conv", DeviceKind::kCpu).front()->impl == "f32-only");
  const OpCase bf16_case = WithPrecision(Cases()[0], "bf16");
  StatusOr<std::unique_ptr<OpCaseInstance>> instance = OpCaseInstance::Build(bf16_case);
  ASSERT_TRUE(instance.ok()) << instance.status().ToString();
  std::unique_ptr<Device> cpu = CreateCpuDevice();
  StatusOr<PreparedKernel> chosen =
      PrepareFirstAccepting(registry, DeviceKind::kCpu, (*instance)->MakePrepareArgs(cpu.get()));
  ASSERT_TRUE(chosen.ok()) << chosen.status().ToString();
  EXPECT_EQ(chosen->entry->impl, "reference");
  EXPECT_EQ(prepared, 0);
  ASSERT_EQ(chosen->declined.size(), 1u);
  EXPECT_EQ(chosen->declined[0].impl, "f32-only");
  EXPECT_NE(chosen->declined[0].reason.find("no bf16 arithmetic"), std::string::npos)
      << chosen->declined[0].reason;
  EXPECT_TRUE(chosen->fell_back());

  // The same node in f32 goes to the f32 kernel.
  StatusOr<std::unique_ptr<OpCaseInstance>> f32 = OpCaseInstance::Build(Cases()[0]);
  ASSERT_TRUE(f32.ok()) << f32.status().ToString();
  chosen = PrepareFirstAccepting(registry, DeviceKind::kCpu, (*f32)->MakePrepareArgs(cpu.get()));
  ASSERT_TRUE(chosen.ok()) << chosen.status().ToString();
  EXPECT_EQ(chosen->entry->impl, "f32-only");
  EXPECT_EQ(prepared, 1);
}

TEST(Bf16, BadPrecisionValuesAreClearErrors) {
  std::unique_ptr<Device> cpu = CreateCpuDevice();
  // An unknown precision names the node, the attribute and the value.
  const OpCase fp8 = WithPrecision(Cases()[0], "fp8");
  StatusOr<std::unique_ptr<OpCaseInstance>> instance = OpCaseInstance::Build(fp8);
  ASSERT_TRUE(instance.ok()) << instance.status().ToString();
  StatusOr<PreparedKernel> chosen = PrepareFirstAccepting(
      HarnessRegistry(), DeviceKind::kCpu, (*instance)->MakePrepareArgs(cpu.get()));
  ASSERT_FALSE(chosen.ok());
  EXPECT_EQ(chosen.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(chosen.status().message().find("'precision' is 'fp8'"), std::string::npos)
      << chosen.status().ToString();
  EXPECT_NE(chosen.status().message().find((*instance)->node().name), std::string::npos);

  // bf16 on an f64 MatMul: the inputs are not f32.
  Node node;
  node.name = "mm";
  node.op_type = "MatMul";
  node.attrs.Set("precision", std::string("bf16"));
  PrepareArgs args;
  args.node = &node;
  args.inputs = {TensorDesc{DataType::kF64, {3, 4}}, TensorDesc{DataType::kF64, {4, 2}}};
  args.outputs = {TensorDesc{DataType::kF64, {3, 2}}};
  args.constants = {nullptr, nullptr};
  args.device = cpu.get();
  chosen = PrepareFirstAccepting(HarnessRegistry(), DeviceKind::kCpu, args);
  ASSERT_FALSE(chosen.ok());
  EXPECT_EQ(chosen.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(chosen.status().message().find("applies to f32 inputs, not f64"), std::string::npos)
      << chosen.status().ToString();
}

}  // namespace
}  // namespace braid
