// braid's CPU data kernels on bad run-time values, where the op harness
// (which compares only successful runs) cannot look: the same error as the
// reference kernel, word for word.
//   Gather / GatherElements / GatherND / ScatterElements / ScatterND
//   (kernels/cpu/gather_scatter_cpu.cc): an out-of-range index is the
//   InvalidArgument naming the node and the FIRST bad index in index order,
//   even when both threads meet one.
//   NonMaxSuppression (kernels/cpu/non_max_suppression_cpu.cc): an
//   iou_threshold outside [0, 1].
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_device.h"
#include "tests/kernels/op_harness.h"

namespace braid {
namespace {

using Ints = std::vector<int64_t>;

// Index input with explicit values: `count` copies of `fill` with the
// (position, value) pairs written over them.
OpInput Indices(DataType dtype, Ints dims, int64_t fill,
                std::vector<std::pair<int64_t, int64_t>> bad, bool constant = false) {
  OpInput in{dtype, dims};
  in.values.assign(static_cast<size_t>(TensorDesc{dtype, dims}.elements()), fill);
  for (const auto& [position, value] : bad) in.values[static_cast<size_t>(position)] = value;
  in.constant = constant;
  return in;
}

OpInput F32(Ints dims) { return OpInput{DataType::kF32, std::move(dims)}; }

// Prepare then Run of implementation `impl` with two threads; the first error.
Status RunImpl(const OpCase& c, const std::string& impl) {
  StatusOr<std::unique_ptr<OpCaseInstance>> instance = OpCaseInstance::Build(c);
  if (!instance.ok()) return instance.status();
  static const std::unique_ptr<Device> cpu = CreateCpuDevice();
  for (const KernelEntry* e : HarnessRegistry().Candidates(c.op_type, DeviceKind::kCpu)) {
    if (e->impl != impl) continue;
    StatusOr<std::unique_ptr<PreparedImpl>> prepared =
        PreparedImpl::Prepare(**instance, *e, *cpu, /*num_threads=*/2);
    if (!prepared.ok()) return prepared.status();
    return (*prepared)->Run();
  }
  return NotFound("no " + impl + " " + c.op_type);
}

void ExpectSameError(const OpCase& c, const std::string& expected) {
  const Status reference = RunImpl(c, "reference");
  const Status cpu = RunImpl(c, "cpu");
  EXPECT_EQ(reference.code(), StatusCode::kInvalidArgument) << c.name << ": " << reference.ToString();
  EXPECT_EQ(cpu.code(), StatusCode::kInvalidArgument) << c.name << ": " << cpu.ToString();
  EXPECT_EQ(cpu.ToString(), reference.ToString()) << c.name;
  EXPECT_NE(cpu.ToString().find(expected), std::string::npos) << c.name << ": " << cpu.ToString();
}

OpCase Case(std::string name, std::string op, std::vector<OpInput> inputs,
            std::vector<std::pair<std::string, AttributeValue>> attrs = {}, int64_t opset = 17) {
  return OpCase{std::move(name), std::move(op), opset, std::move(attrs), std::move(inputs)};
}

TEST(GatherScatterCpu, OutOfRangeIndexIsTheReferencesError) {
  // Bad indices in both threads' halves: the first in index order is named.
  ExpectSameError(Case("gather_runtime", "Gather",
                       {F32({300, 200}), Indices(DataType::kI32, {150}, 3, {{20, -201}, {140, 200}})},
                       {{"axis", int64_t{1}}}),
                  "index -201 is out of range");
  ExpectSameError(Case("gather_constant", "Gather",
                       {F32({5, 4}), Indices(DataType::kI64, {3}, 1, {{1, 5}}, /*constant=*/true)}),
                  "index 5 is out of range");
  ExpectSameError(Case("gather_elements", "GatherElements",
                       {F32({200, 300}),
                        Indices(DataType::kI64, {200, 200}, 1, {{100, -301}, {30000, 300}})},
                       {{"axis", int64_t{1}}}),
                  "index -301 is out of range for axis 1");
  ExpectSameError(Case("gather_nd", "GatherND",
                       {F32({200, 200}),
                        Indices(DataType::kI64, {200, 200, 2}, 1, {{1001, 200}, {70001, -201}})}),
                  "index 200 is out of range for extent 200");
  ExpectSameError(Case("scatter_nd", "ScatterND",
                       {F32({64, 1024}), Indices(DataType::kI64, {40, 1}, 2, {{7, 64}, {30, -65}}),
                        F32({40, 1024})}),
                  "index 64 is out of range for axis 0");
  ExpectSameError(Case("scatter_elements_axis1", "ScatterElements",
                       {F32({256, 256}),
                        Indices(DataType::kI64, {256, 200}, 3, {{50, 256}, {40000, -257}}),
                        F32({256, 200})},
                       {{"axis", int64_t{1}}}),
                  "index 256 is out of range for axis 1");
  ExpectSameError(Case("scatter_elements_axis0_add", "ScatterElements",
                       {F32({256, 256}),
                        Indices(DataType::kI32, {200, 256}, 3, {{255, 300}, {10, -257}}),
                        F32({200, 256})},
                       {{"reduction", std::string("add")}}, 16),
                  "index -257 is out of range for axis 0");
  // An empty slice ([2, 0] data): nothing is written, yet the index is checked.
  ExpectSameError(Case("scatter_nd_empty_slice", "ScatterND",
                       {F32({2, 0}), Indices(DataType::kI64, {1, 1}, 5, {}), F32({1, 0})}),
                  "index 5 is out of range for axis 0");
}

TEST(NonMaxSuppressionCpu, IouThresholdOutsideZeroOneIsTheReferencesError) {
  OpInput max{DataType::kI64, {1}};
  max.values = {4};
  OpInput iou = F32({1});
  iou.values = {2};
  ExpectSameError(Case("nms_iou_above_one", "NonMaxSuppression",
                       {F32({1, 6, 4}), F32({1, 2, 6}), max, iou}),
                  "iou_threshold is 2");
}

}  // namespace
}  // namespace braid
