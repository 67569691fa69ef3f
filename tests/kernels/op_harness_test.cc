// The cross-backend op harness over ComputeOpCases(): every implementation
// registered for an op must match the reference kernel; plus checks that the
// harness itself detects mismatches and declines and feeds seeded non-zero
// inputs.
#include <gtest/gtest.h>

#include <cstring>
#include <iostream>
#include <memory>
#include <set>
#include <span>
#include <string>

#include "graph/op_schema.h"
#include "kernels/backend.h"
#include "kernels/reference/registration.h"
#include "tests/kernels/op_harness.h"

namespace braid {
namespace {

const KernelRegistry& ReferenceRegistry() {
  static const KernelRegistry* r = [] {
    auto* reg = new KernelRegistry;
    RegisterReferenceComputeKernels(*reg);
    return reg;
  }();
  return *r;
}

class ComputeOpHarness : public ::testing::TestWithParam<OpCase> {};

TEST_P(ComputeOpHarness, AllImplementationsMatchReference) {
  const CaseReport report = RunOpCase(GetParam(), HarnessRegistry());
  std::cout << "[harness] " << report.ToString() << "\n";
  EXPECT_TRUE(report.ok()) << report.ToString();  // Passing on the reference alone would check nothing fast: a skip, said.
  if (report.ok() && report.matched_on_cpu() == 0)
    GTEST_SKIP() << "no fast CPU implementation ran (all declined or none registered): "
                 << report.ToString();
}

INSTANTIATE_TEST_SUITE_P(Cases, ComputeOpHarness, ::testing::ValuesIn(ComputeOpCases()),
                         [](const ::testing::TestParamInfo<OpCase>& info) { return info.param.name; });

TEST(OpHarness, CaseNamesAreUniqueAndEveryComputeOpIsCovered) {
  std::set<std::string> names, ops;
  for (const OpCase& c : ComputeOpCases()) {
    EXPECT_TRUE(names.insert(c.name).second) << c.name;
    ops.insert(c.op_type);
  }
  for (const char* op : {"Conv", "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool",
                         "Gemm", "MatMul", "BatchNormalization", "LayerNormalization", "Softmax",
                         "ReduceMean", "ReduceSum", "ReduceMax"})
    EXPECT_TRUE(ops.count(op)) << op;
}

// A deliberately wrong implementation and a declining one: the harness must
// report a mismatch for the first and a decline for the second.
class OffByOneGemm final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    inner_ = FindReference(ReferenceRegistry(), "Gemm")->create();
    return inner_->Prepare(args);
  }
  Status Run(const RunArgs& args) override {
    RETURN_IF_ERROR(inner_->Run(args));
    static_cast<float*>(args.dst[0])[1] += 1e-2f;
    return Status::Ok();
  }

 private:
  std::unique_ptr<Kernel> inner_;
};

class DecliningGemm final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    return Unimplemented(args.Where() + ": not for me");
  }
  Status Run(const RunArgs&) override { return Internal("unreachable"); }
};

TEST(OpHarness, ReportsMismatchesAndDeclines) {
  KernelRegistry registry;
  RegisterReferenceComputeKernels(registry);
  registry.Register({"Gemm", DeviceKind::kCpu, "broken", 5, [] { return std::make_unique<OffByOneGemm>(); }});
  registry.Register({"Gemm", DeviceKind::kCpu, "picky", 4, [] { return std::make_unique<DecliningGemm>(); }});
  const OpCase* gemm = nullptr;
  for (const OpCase& c : ComputeOpCases())
    if (c.name == "gemm_nn") gemm = &c;
  ASSERT_NE(gemm, nullptr);
  const CaseReport report = RunOpCase(*gemm, registry);
  ASSERT_TRUE(report.status.ok()) << report.status.ToString();
  ASSERT_EQ(report.impls.size(), 2u);
  EXPECT_EQ(report.impls[0].impl, "broken");
  EXPECT_EQ(report.impls[0].outcome, ImplReport::Outcome::kMismatch);
  EXPECT_NE(report.impls[0].detail.find("output 0[1]"), std::string::npos) << report.ToString();
  EXPECT_EQ(report.impls[1].outcome, ImplReport::Outcome::kDeclined);
  EXPECT_FALSE(report.ok());

  KernelRegistry reference_only;
  RegisterReferenceComputeKernels(reference_only);
  const CaseReport alone = RunOpCase(*gemm, reference_only);
  EXPECT_TRUE(alone.ok()) << alone.ToString();
  EXPECT_NE(alone.ToString().find("reference only"), std::string::npos);
}

// braid's CPU ReduceLogSum sums in the reference's order, in double: float
// lanes would round 2^24 + 1 back to 2^24 and give log 0 or log 1 for this
// row, not log 2 (the CUDA kernels sum in float: a CPU-only case).
TEST(ReduceCpu, LogSumKeepsTheReferencesOrder) {
  OpInput x{DataType::kF32, {1, 4}};
  const float values[] = {16777216.0f, 1.0f, 1.0f, -16777216.0f};
  for (int64_t i = 0; i < 4; ++i) x.specials.emplace_back(i, values[i]);
  OpCase c{"reducelogsum_cancellation", "ReduceLogSum", 13, {{"axes", std::vector<int64_t>{1}}},
           {x}};
  c.abs_tolerance = c.rel_tolerance = 0;
  const CaseReport report = RunOpCase(c, HarnessRegistry());
  EXPECT_TRUE(report.ok()) << report.ToString();
  EXPECT_GE(report.matched_on_cpu(), 1) << report.ToString();
}

// Every fast implementation the CPU backend registers must match the
// reference in at least one case: a kernel that every case declines (or that
// no case reaches) is tested by nothing, yet a model would run it.
// Derived from the op table (graph/op_schema.cc): every op braid reads has a
// reference kernel (what every other kernel is checked against and what
// runs when they decline) and at least one harness case. Constant is the
// exception: the importer and FoldConstants turn it into a constant value,
// so no kernel ever runs it.
TEST(OpHarnessCoverage, EveryOpOfTheTableHasAReferenceKernelAndACase) {
  const KernelRegistry& registry = HarnessRegistry();
  std::set<std::string> with_case;
  for (std::span<const OpCase> cases : {ComputeOpCases(), DataOpCases()})
    for (const OpCase& c : cases) with_case.insert(c.op_type);
  std::string no_reference, no_case;
  for (const std::string& op : SupportedOpTypes()) {
    if (op == "Constant") continue;
    if (FindReference(registry, op) == nullptr) no_reference += " " + op;
    if (!with_case.count(op)) no_case += " " + op;
  }
  EXPECT_EQ(no_reference, "") << "ops of the table without a reference kernel";
  EXPECT_EQ(no_case, "") << "ops of the table without a harness case";
}

TEST(OpHarnessCoverage, EveryRegisteredCpuImplementationMatchesInSomeCase) {
  const KernelRegistry& registry = HarnessRegistry();
  std::set<std::pair<std::string, std::string>> matched;  // (op, impl) on the CPU
  for (std::span<const OpCase> cases : {ComputeOpCases(), DataOpCases()}) {
    for (const OpCase& c : cases) {
      const CaseReport report = RunOpCase(c, registry);
      for (const ImplReport& r : report.impls)
        if (r.outcome == ImplReport::Outcome::kMatched && r.device == "cpu")
          matched.insert({c.op_type, r.impl});
    }
  }
  std::string untested;
  for (const std::string& op : registry.OpTypes(DeviceKind::kCpu))
    for (const KernelEntry* e : registry.Candidates(op, DeviceKind::kCpu))
      if (e->impl != "reference" && !matched.count({op, e->impl}))
        untested += (untested.empty() ? "" : ", ") + op + " (" + e->impl + ")";
  EXPECT_TRUE(untested.empty()) << "registered on the CPU but matched in no harness case: "
                                << untested;
}

TEST(OpHarness, InputsAreSeededAndNonZero) {
  for (const OpCase& c : ComputeOpCases()) {
    auto a = OpCaseInstance::Build(c);
    auto b = OpCaseInstance::Build(c);
    ASSERT_TRUE(a.ok() && b.ok()) << c.name;
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      const TensorDesc& d = (*a)->input_descs()[i];
      if (!d.present() || d.dtype != DataType::kF32 || c.inputs[i].zero_fraction > 0) continue;
      const float* va = static_cast<const float*>((*a)->input_pointers()[i]);
      const float* vb = static_cast<const float*>((*b)->input_pointers()[i]);
      for (int64_t k = 0; k < d.elements(); ++k) {
        ASSERT_NE(va[k], 0.0f) << c.name << " input " << i;
        // Bitwise: the NaN / Inf cases' NaNs are seeded too.
        ASSERT_EQ(std::memcmp(&va[k], &vb[k], sizeof(float)), 0) << c.name << " input " << i;
      }
      for (const auto& [index, value] : c.inputs[i].specials) {
        const float got = va[index];
        ASSERT_TRUE(std::memcmp(&got, &value, sizeof(float)) == 0) << c.name << " special " << index;
      }
    }
  }
}

}  // namespace
}  // namespace braid
