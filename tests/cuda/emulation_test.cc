// The CUDA backend's per-element work (kernels/device_math/*.h) and planning
// (plans.h) run on the CPU over the emulated grid, compared with
// kernels/reference for every op case with an emulated CUDA path. The cuBLAS
// calls are replayed column-major, so the row-major transpose trick is
// checked too. Only the launches themselves (and cuDNN) need a GPU.
#include <gtest/gtest.h>

#include <iostream>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "kernels/cuda/cuda_backend.h"
#include "tests/cuda/emulate.h"

namespace braid::cuda_test {
namespace {

void CheckCase(const OpCase& c) {
  StatusOr<std::unique_ptr<OpCaseInstance>> inst = OpCaseInstance::Build(c);
  ASSERT_TRUE(inst.ok()) << inst.status().ToString();
  StatusOr<std::vector<std::vector<std::byte>>> got = EmulateCuda(**inst);
  if (!got.ok() && got.status().code() == StatusCode::kUnimplemented)
    GTEST_SKIP() << c.name << ": not emulated (" << got.status().message() << ")";
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  StatusOr<std::vector<std::vector<std::byte>>> want = ReferenceOutputs(**inst);
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  EXPECT_EQ(CompareOutputs(**inst, *got, *want), "") << c.name;
}

class ComputeCasesEmulated : public ::testing::TestWithParam<OpCase> {};
TEST_P(ComputeCasesEmulated, MatchesReference) { CheckCase(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Cases, ComputeCasesEmulated, ::testing::ValuesIn(ComputeOpCases()),
                         [](const auto& info) { return info.param.name; });

class DataCasesEmulated : public ::testing::TestWithParam<OpCase> {};
TEST_P(DataCasesEmulated, MatchesReference) { CheckCase(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Cases, DataCasesEmulated, ::testing::ValuesIn(CudaDataOpCases()),
                         [](const auto& info) { return info.param.name; });

// Gather's run-time indices on the device: negative ones from the end, one
// outside the axis a row of zeros (a kernel cannot stop; the CPU reports it).
TEST(CudaGather, RuntimeIndicesCountFromTheEndAndZeroRowsOutOfRange) {
  dm::GatherArgs a;
  a.elements = 8;
  a.element_size = 4;
  a.axis_dim = 3;
  a.num_indices = 4;
  a.row = 2;
  const float x[6] = {1, 2, 3, 4, 5, 6};
  const int64_t wide[4] = {-1, 3, 0, -4};
  const int32_t narrow[4] = {-1, 3, 0, -4};
  const std::vector<float> want = {5, 6, 0, 0, 1, 2, 0, 0};
  for (int size : {8, 4}) {
    std::vector<float> y(8, -1.0f);
    const void* indices = size == 8 ? static_cast<const void*>(wide) : narrow;
    for (int64_t i = 0; i < a.elements; ++i)
      dm::GatherRuntimeElement(a, i, x, indices, size, y.data());
    EXPECT_EQ(y, want) << "index size " << size;
  }
}

class HarnessDataCasesEmulated : public ::testing::TestWithParam<OpCase> {};
TEST_P(HarnessDataCasesEmulated, MatchesReference) { CheckCase(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Cases, HarnessDataCasesEmulated, ::testing::ValuesIn(DataOpCases()),
                         [](const auto& info) { return info.param.name; });

// What the variadic and CumSum plans leave to the CPU declines as
// Unimplemented (a visible fallback), not as an error: more inputs than the
// variadic kernel takes, a computed CumSum axis, a fused activation on Mean,
// an Einsum past its bounds, a 5-D GridSample, a NonMaxSuppression past its
// serial walks.
TEST(CudaPlans, DeclineWhatTheKernelsDoNotCover) {
  auto plan = [](const OpCase& c) -> Status {
    StatusOr<std::unique_ptr<OpCaseInstance>> inst = OpCaseInstance::Build(c);
    if (!inst.ok()) return inst.status();
    const PrepareArgs args = (*inst)->MakePrepareArgs(nullptr);
    if (c.op_type == "CumSum") return cuda::PlanCumSum(args).status();
    if (c.op_type == "ScatterElements") return cuda::PlanScatterElements(args).status();
    if (c.op_type == "ScatterND") return cuda::PlanScatterND(args).status();
    if (c.op_type == "TopK") return cuda::PlanTopK(args).status();
    if (c.op_type == "ArgMax") return cuda::PlanArgReduce(args).status();
    if (c.op_type == "Einsum") return cuda::PlanEinsum(args).status();
    if (c.op_type == "GridSample") return cuda::PlanGridSample(args).status();
    if (c.op_type == "NonMaxSuppression") return cuda::PlanNonMaxSuppression(args).status();
    return cuda::PlanVariadic(args).status();
  };
  OpCase nine{"sum_nine", "Sum"};
  nine.inputs.assign(9, OpInput{DataType::kF32, {2, 3}});
  EXPECT_EQ(plan(nine).code(), StatusCode::kUnimplemented) << plan(nine).ToString();
  nine.inputs.resize(8);
  EXPECT_TRUE(plan(nine).ok()) << plan(nine).ToString();
  OpInput axis{DataType::kI64, {}};
  axis.values = {1};  // not constant: read at Run by the reference only
  const OpCase cumsum{"cumsum_computed_axis", "CumSum", 17, {},
                      {OpInput{DataType::kF32, {2, 3}}, axis}};
  EXPECT_EQ(plan(cumsum).code(), StatusCode::kUnimplemented) << plan(cumsum).ToString();
  const OpCase mean{"mean_relu", "Mean", 17, {{"activation", std::string("Relu")}},
                    {OpInput{DataType::kF32, {2, 3}}, OpInput{DataType::kF32, {3}}}};
  EXPECT_EQ(plan(mean).code(), StatusCode::kUnimplemented) << plan(mean).ToString();
  // ScatterElements reduces f32 only; a constant index out of range is a bad node.
  OpInput indices{DataType::kI64, {1, 2}};
  indices.values = {0, 1};
  OpCase scatter{"scatter_add_i32", "ScatterElements", 18, {{"reduction", std::string("add")}},
                 {OpInput{DataType::kI32, {2, 2}}, indices, OpInput{DataType::kI32, {1, 2}}}};
  EXPECT_EQ(plan(scatter).code(), StatusCode::kUnimplemented) << plan(scatter).ToString();
  scatter.attributes.clear();
  EXPECT_TRUE(plan(scatter).ok()) << plan(scatter).ToString();
  scatter.inputs[1].constant = true;
  scatter.inputs[1].values = {0, 2};
  EXPECT_EQ(plan(scatter).code(), StatusCode::kInvalidArgument) << plan(scatter).ToString();
  indices.dims = {2, 1};  // ScatterND: the same rules
  const OpInput i64_3x2{DataType::kI64, {3, 2}}, i64_2x2{DataType::kI64, {2, 2}};
  const OpCase scatter_nd{"scatter_nd_mul_i64", "ScatterND", 18,
                          {{"reduction", std::string("mul")}}, {i64_3x2, indices, i64_2x2}};
  EXPECT_EQ(plan(scatter_nd).code(), StatusCode::kUnimplemented) << plan(scatter_nd).ToString();
  // A thread's serial walk is bounded by cuda::kMaxSerialSteps (65536): TopK
  // walks its slice K times, ArgMax once.
  OpInput k{DataType::kI64, {1}};
  k.constant = true;
  k.values = {2};
  OpCase topk{"topk_long_slice", "TopK", 17, {}, {OpInput{DataType::kF32, {1, 40000}}, k}};
  topk.num_outputs = 2;
  EXPECT_EQ(plan(topk).code(), StatusCode::kUnimplemented) << plan(topk).ToString();
  topk.inputs[0].dims = {4, 30000};
  EXPECT_TRUE(plan(topk).ok()) << plan(topk).ToString();
  OpCase argmax{"argmax_long_axis", "ArgMax", 17, {{"axis", int64_t{1}}},
                {OpInput{DataType::kF32, {1, 65537}}}};
  EXPECT_EQ(plan(argmax).code(), StatusCode::kUnimplemented) << plan(argmax).ToString();
  argmax.inputs[0].dims = {1, 65536};
  EXPECT_TRUE(plan(argmax).ok()) << plan(argmax).ToString();
  // Einsum: a thread sums at most kMaxSerialSteps products (the summed
  // labels' extents multiplied); f32 only (f64 runs on the CPU reference);
  // up to 4 operands and 16 labels.
  auto einsum = [](const std::string& equation, std::vector<OpInput> inputs) {
    return OpCase{"einsum", "Einsum", 17, {{"equation", equation}}, std::move(inputs)};
  };
  const OpCase long_sum = einsum("ij,jk->ik", {OpInput{DataType::kF32, {1, 257}},
                                               OpInput{DataType::kF32, {257, 2}}});
  EXPECT_TRUE(plan(long_sum).ok()) << plan(long_sum).ToString();
  const OpCase too_long = einsum("ijk->i", {OpInput{DataType::kF32, {2, 257, 256}}});
  EXPECT_EQ(plan(too_long).code(), StatusCode::kUnimplemented) << plan(too_long).ToString();
  const OpCase at_bound = einsum("ijk->i", {OpInput{DataType::kF32, {2, 256, 256}}});
  EXPECT_TRUE(plan(at_bound).ok()) << plan(at_bound).ToString();
  const OpCase f64 = einsum("ij,jk->ik", {OpInput{DataType::kF64, {2, 3}},
                                          OpInput{DataType::kF64, {3, 2}}});
  EXPECT_EQ(plan(f64).code(), StatusCode::kUnimplemented) << plan(f64).ToString();
  const OpInput v{DataType::kF32, {3}};
  EXPECT_EQ(plan(einsum("i,i,i,i,i->i", {v, v, v, v, v})).code(), StatusCode::kUnimplemented);
  EXPECT_TRUE(plan(einsum("i,i,i,i->i", {v, v, v, v})).ok());
  const OpInput ones17{DataType::kF32, std::vector<int64_t>(17, 1)};
  EXPECT_EQ(plan(einsum("abcdefghijklmnopq->a", {ones17})).code(), StatusCode::kUnimplemented);
  const OpInput ones16{DataType::kF32, std::vector<int64_t>(16, 1)};
  EXPECT_TRUE(plan(einsum("abcdefghijklmnop->a", {ones16})).ok());
  // A bad equation stays an error, as on the CPU.
  EXPECT_EQ(plan(einsum("ij,jk->iz", {OpInput{DataType::kF32, {2, 3}},
                                      OpInput{DataType::kF32, {3, 2}}})).code(),
            StatusCode::kInvalidArgument);
  // GridSample: 4-D only, as the reference (a 5-D volume declines).
  const OpCase volume{"gridsample_5d", "GridSample", 20, {},
                      {OpInput{DataType::kF32, {1, 2, 3, 4, 5}},
                       OpInput{DataType::kF32, {1, 2, 3, 4, 3}}}};
  EXPECT_EQ(plan(volume).code(), StatusCode::kUnimplemented) << plan(volume).ToString();
  // NonMaxSuppression: a class's select thread walks N candidates against up
  // to min(max, N) kept boxes (N when the maximum is computed), a rank thread
  // N scores.
  auto nms = [](int64_t boxes, int64_t max, bool constant) {
    OpInput m{DataType::kI64, {1}};
    m.values = {max};
    m.constant = constant;
    return OpCase{"nms", "NonMaxSuppression", 17, {},
                  {OpInput{DataType::kF32, {1, boxes, 4}}, OpInput{DataType::kF32, {1, 2, boxes}},
                   m}};
  };
  EXPECT_TRUE(plan(nms(256, 5, false)).ok()) << plan(nms(256, 5, false)).ToString();
  EXPECT_EQ(plan(nms(257, 5, false)).code(), StatusCode::kUnimplemented);
  // YOLO-sized N = 8400: a constant maximum up to 7 (8400 x 7 <= 65536) runs.
  EXPECT_TRUE(plan(nms(8400, 7, true)).ok()) << plan(nms(8400, 7, true)).ToString();
  EXPECT_EQ(plan(nms(8400, 8, true)).code(), StatusCode::kUnimplemented);
  EXPECT_EQ(plan(nms(8400, 100, true)).code(), StatusCode::kUnimplemented);
  // The rank walk alone: N past the bound with nothing to keep.
  EXPECT_TRUE(plan(nms(65536, 0, true)).ok()) << plan(nms(65536, 0, true)).ToString();
  EXPECT_EQ(plan(nms(65537, 0, true)).code(), StatusCode::kUnimplemented);
  // iou_threshold: a constant in [0, 1] runs, one outside is the reference's
  // error, a computed one declines (the reference checks it when it runs).
  auto with_iou = [&](float iou, bool constant) {
    OpCase c = nms(16, 4, true);
    OpInput t{DataType::kF32, {1}, constant};
    t.low = t.high = 0.5;
    t.specials = {{0, iou}};
    c.inputs.push_back(t);
    return c;
  };
  EXPECT_TRUE(plan(with_iou(0.5f, true)).ok()) << plan(with_iou(0.5f, true)).ToString();
  EXPECT_EQ(plan(with_iou(1.5f, true)).code(), StatusCode::kInvalidArgument);
  EXPECT_NE(plan(with_iou(1.5f, true)).ToString().find("iou_threshold is 1.5"), std::string::npos);
  EXPECT_EQ(plan(with_iou(0.5f, false)).code(), StatusCode::kUnimplemented);
}

// Every op type with a hand-written CUDA kernel has at least one op case
// (compute, data or CUDA data) that it plans, emulates and matches the
// reference on: registering an op without a checked case fails here.
TEST(CudaEmulationCoverage, EveryHandWrittenOpHasAMatchingCase) {
  KernelRegistry cuda;
  RegisterCudaKernels(cuda);
  std::set<std::string> ops;
  for (const std::string& op : cuda.OpTypes(DeviceKind::kCuda))
    for (const KernelEntry* e : cuda.Candidates(op, DeviceKind::kCuda))
      if (e->impl == "cuda") ops.insert(op);
  std::set<std::string> matched;
  for (std::span<const OpCase> cases : {ComputeOpCases(), DataOpCases(), CudaDataOpCases()})
    for (const OpCase& c : cases) {
      if (!ops.count(c.op_type) || matched.count(c.op_type)) continue;
      auto inst = OpCaseInstance::Build(c);
      ASSERT_TRUE(inst.ok()) << c.name;
      auto got = EmulateCuda(**inst);
      if (!got.ok()) continue;
      auto want = ReferenceOutputs(**inst);
      ASSERT_TRUE(want.ok()) << c.name;
      if (CompareOutputs(**inst, *got, *want).empty()) matched.insert(c.op_type);
    }
  for (const std::string& op : ops) EXPECT_TRUE(matched.count(op)) << op << ": no case checks it";
  EXPECT_GT(ops.size(), 80u);  // the registry lookup found the kernels
}

// Every compute case of an op with a CUDA kernel other than cuDNN's has an
// emulated path (ops without one fall back to the CPU, reported; the CUDA
// registry says which, so no list is kept here); a case that the CUDA plans
// decline is listed so coverage gaps stay visible.
TEST(CudaEmulationCoverage, EveryNonConvComputeCaseIsEmulated) {
  KernelRegistry cuda;
  RegisterCudaKernels(cuda);
  // Conv (cuDNN's forward convolution) is the one op without an emulated
  // path; ConvTranspose's backward data is replayed.
  auto emulated = [&cuda](const std::string& op) {
    return op != "Conv" && !cuda.Candidates(op, DeviceKind::kCuda).empty();
  };
  std::set<std::string> declined;
  int checked = 0;
  for (const OpCase& c : ComputeOpCases()) {
    if (!emulated(c.op_type)) continue;
    ++checked;
    auto inst = OpCaseInstance::Build(c);
    ASSERT_TRUE(inst.ok());
    auto got = EmulateCuda(**inst);
    // bf16 cases: declined on purpose (the CUDA kernels compute in f32 only).
    if ((*inst)->node().attrs.Has("precision")) {
      ASSERT_FALSE(got.ok()) << c.name;
      EXPECT_NE(got.status().message().find("no bf16 arithmetic"), std::string::npos);
      continue;
    }
    if (!got.ok()) declined.insert(c.name + ": " + got.status().message());
  }
  for (const std::string& d : declined) std::cout << "[cuda_emulation] declined " << d << "\n";
  // Declines are allowed only where the plan says Unimplemented on purpose
  // (integer MaxPool / Reduce*: the CUDA kernels are f32; reductions over
  // axes that are not one run); they fall back to the CPU visibly.
  EXPECT_LE(declined.size(), 8u);
  EXPECT_GT(checked, 50);  // the registry lookup found the CUDA kernels (94 cases today)
}

}  // namespace
}  // namespace braid::cuda_test
