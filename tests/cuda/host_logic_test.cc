// Host-side logic of the CUDA backend that needs no GPU: the error
// translation choke point, the arena's offset allocator, launch
// configuration, cuBLAS call planning, MatMul batching, cuDNN descriptor
// planning, the algorithm-cache key and the conv epilogue choice.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "kernels/cuda/cuda_status.h"
#include "kernels/cuda/launch_config.h"
#include "kernels/cuda/offset_allocator.h"
#include "kernels/cuda/plans.h"
#include "tests/cuda/emulate.h"

namespace braid::cuda {
namespace {

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(CudaStatus, RuntimeErrorsCarryNameDescriptionCallAndLocation) {
  const Status s = CudaCheck(cudaErrorMemoryAllocation, "cudaMalloc(&p, n)", "/a/b/dev.cc", 42);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE(Contains(s.message(), "cuda: cudaErrorMemoryAllocation")) << s.message();
  EXPECT_TRUE(Contains(s.message(), std::string("(") +
                                        cudaGetErrorString(cudaErrorMemoryAllocation) + ")"));
  EXPECT_TRUE(Contains(s.message(), "in cudaMalloc(&p, n) at dev.cc:42")) << s.message();
  EXPECT_TRUE(CudaCheck(cudaSuccess, "x", "f", 1).ok());
}

TEST(CudaStatus, Classification) {
  EXPECT_EQ(ClassifyCudaError(cudaErrorInsufficientDriver), StatusCode::kUnavailable);
  EXPECT_EQ(ClassifyCudaError(cudaErrorNoDevice), StatusCode::kUnavailable);
  EXPECT_EQ(ClassifyCudaError(cudaErrorInvalidValue), StatusCode::kInvalidArgument);
  EXPECT_EQ(ClassifyCudaError(cudaErrorIllegalAddress), StatusCode::kInternal);
  EXPECT_EQ(ClassifyCudnnStatus(CUDNN_STATUS_BAD_PARAM), StatusCode::kInvalidArgument);
  EXPECT_EQ(ClassifyCudnnStatus(CUDNN_STATUS_NOT_SUPPORTED), StatusCode::kUnimplemented);
  EXPECT_EQ(ClassifyCudnnStatus(CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED),
            StatusCode::kResourceExhausted);
  EXPECT_EQ(ClassifyCudnnStatus(CUDNN_STATUS_EXECUTION_FAILED), StatusCode::kInternal);
  EXPECT_EQ(ClassifyCublasStatus(CUBLAS_STATUS_ALLOC_FAILED), StatusCode::kResourceExhausted);
  EXPECT_EQ(ClassifyCublasStatus(CUBLAS_STATUS_NOT_SUPPORTED), StatusCode::kUnimplemented);
  EXPECT_EQ(ClassifyCublasStatus(CUBLAS_STATUS_EXECUTION_FAILED), StatusCode::kInternal);
}

TEST(CudaStatus, CudnnAndCublasMessages) {
  const Status d = CudaCheck(CUDNN_STATUS_BAD_PARAM, "cudnnSetStream(h, s)", "conv.cc", 7);
  EXPECT_EQ(d.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(d.message(), "cudnn: CUDNN_STATUS_BAD_PARAM")) << d.message();
  EXPECT_TRUE(Contains(d.message(), "in cudnnSetStream(h, s) at conv.cc:7")) << d.message();
  const Status b = CudaCheck(CUBLAS_STATUS_INVALID_VALUE, "cublasSgemm(...)", "gemm.cc", 9);
  EXPECT_EQ(b.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(b.message(), "cublas: CUBLAS_STATUS_INVALID_VALUE (")) << b.message();
  EXPECT_TRUE(Contains(b.message(), "at gemm.cc:9"));
}

TEST(CudaStatus, MacroReturnsTheTranslatedError) {
  auto f = []() -> Status {
    CUDA_RETURN_IF_ERROR(cudaErrorInvalidValue);
    return Status::Ok();
  };
  const Status s = f();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "in cudaErrorInvalidValue at host_logic_test.cc:"));
}

TEST(CudaStatus, UnavailableReasonIsTheRuntimeText) {
  EXPECT_EQ(CudaUnavailableReason(cudaErrorInsufficientDriver),
            "cuda: unavailable: CUDA driver version is insufficient for CUDA runtime version");
}

TEST(OffsetAllocator, BestFitAlignmentAndCoalescing) {
  OffsetAllocator a(4096, 256);
  auto x = a.Allocate(1000);  // 1024
  auto y = a.Allocate(1);     // 256
  auto z = a.Allocate(256);
  ASSERT_TRUE(x && y && z);
  EXPECT_EQ(*x, 0u);
  EXPECT_EQ(*y, 1024u);
  EXPECT_EQ(*z, 1280u);
  EXPECT_EQ(a.used(), 1536u);
  EXPECT_FALSE(a.Allocate(4096));
  EXPECT_TRUE(a.Free(*y));
  EXPECT_FALSE(a.Free(*y));  // double free is refused
  EXPECT_EQ(*a.Allocate(200), 1024u);  // best fit: the 256-byte hole
  EXPECT_TRUE(a.Free(1024));
  EXPECT_TRUE(a.Free(*x));
  EXPECT_TRUE(a.Free(*z));
  EXPECT_EQ(a.used(), 0u);
  EXPECT_EQ(a.free_blocks(), 1u);
  EXPECT_EQ(a.largest_free(), 4096u);
  EXPECT_FALSE(a.Allocate(SIZE_MAX));
}

TEST(OffsetAllocator, RandomAllocFreeKeepsBlocksDisjoint) {
  OffsetAllocator a(1 << 20, 256);
  std::mt19937 rng(7);
  std::map<size_t, size_t> live;
  for (int step = 0; step < 2000; ++step) {
    if (live.empty() || rng() % 3 != 0) {
      const size_t bytes = 1 + rng() % 20000;
      if (auto at = a.Allocate(bytes)) {
        EXPECT_EQ(*at % 256, 0u);
        auto next = live.lower_bound(*at);
        if (next != live.end()) {
          EXPECT_LE(*at + bytes, next->first);
        }
        if (next != live.begin()) {
          EXPECT_LE(std::prev(next)->first + std::prev(next)->second, *at);
        }
        live[*at] = bytes;
      }
    } else {
      auto it = live.begin();
      std::advance(it, rng() % live.size());
      EXPECT_TRUE(a.Free(it->first));
      live.erase(it);
    }
  }
  for (const auto& [at, bytes] : live) EXPECT_TRUE(a.Free(at));
  EXPECT_EQ(a.free_blocks(), 1u);
}

TEST(LaunchConfig, GridStrideCoversEveryIndexOnce) {
  for (int64_t n : {0, 1, 255, 256, 257, 100000, 5000000}) {
    const LaunchConfig c = GridStrideLaunch(n);
    EXPECT_GE(c.blocks, 1u);
    EXPECT_LE(c.blocks, kMaxBlocks);
    EXPECT_EQ(c.threads, kThreadsPerBlock);
    if (n <= 100000) {
      std::vector<int> seen(static_cast<size_t>(n), 0);
      EmulateGridStride(c, n, [&](int64_t i) { ++seen[static_cast<size_t>(i)]; });
      for (int s : seen) ASSERT_EQ(s, 1);
    }
  }
  EXPECT_EQ(GridStrideLaunch(257).blocks, 2u);
  EXPECT_EQ(GridStrideLaunch(int64_t{1} << 40).blocks, kMaxBlocks);
}

TEST(LaunchConfig, RowLaunchIsAPowerOfTwoBlockPerRow) {
  EXPECT_EQ(RowLaunch(10, 1).threads, 32u);
  EXPECT_EQ(RowLaunch(10, 100).threads, 128u);
  EXPECT_EQ(RowLaunch(10, 100000).threads, 256u);
  EXPECT_EQ(RowLaunch(10, 100).blocks, 10u);
  EXPECT_EQ(RowLaunch(0, 100).blocks, 1u);
}

// The transpose trick against a plain row-major product, all four transposes.
TEST(RowMajorGemm, ColumnMajorReplayMatchesRowMajorProduct) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-1, 1);
  const int64_t m = 5, n = 7, k = 3;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      std::vector<float> a(m * k), b(k * n), want(m * n), got(m * n);
      for (float& v : a) v = dist(rng);
      for (float& v : b) v = dist(rng);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          float s = 0;
          for (int64_t p = 0; p < k; ++p)
            s += (ta ? a[p * m + i] : a[i * k + p]) * (tb ? b[j * k + p] : b[p * n + j]);
          want[i * n + j] = 2 * s;
        }
      StatusOr<CublasGemmCall> call = RowMajorGemm(m, n, k, ta, tb);
      ASSERT_TRUE(call.ok());
      EXPECT_EQ(call->m, n);
      EXPECT_EQ(call->n, m);
      EXPECT_EQ(call->ldc, n);
      cuda_test::ColumnMajorSgemm(*call, 2.0f, b.data(), a.data(), got.data());
      for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5) << ta << tb;
    }
  EXPECT_EQ(RowMajorGemm(int64_t{1} << 32, 2, 2, false, false).status().code(),
            StatusCode::kUnimplemented);
}

MatMulParams BatchedParams(int64_t batch, int64_t m, int64_t n, int64_t k,
                           std::vector<int64_t> a_off, std::vector<int64_t> b_off) {
  MatMulParams p;
  p.dtype = DataType::kF32;
  p.m = m, p.n = n, p.k = k, p.batch = batch;
  p.batch_dims = {batch};
  p.a_batch_dims = {batch};
  p.b_batch_dims = {batch};
  p.a_offsets = std::move(a_off);
  p.b_offsets = std::move(b_off);
  return p;
}

TEST(MatMulBatches, PlanKinds) {
  // Independent batches: strided batched.
  auto strided = PlanMatMulBatches(BatchedParams(3, 2, 4, 5, {0, 10, 20}, {0, 20, 40}));
  ASSERT_TRUE(strided.ok());
  EXPECT_EQ(strided->kind, MatMulBatchPlan::Kind::kStridedBatched);
  EXPECT_EQ(strided->stride_a, 10);
  EXPECT_EQ(strided->stride_b, 20);
  EXPECT_EQ(strided->stride_c, 8);
  // Shared B, contiguous A: one GEMM with batch * M rows.
  MatMulParams shared = BatchedParams(3, 2, 4, 5, {0, 10, 20}, {0, 0, 0});
  shared.b_batch_dims = {1};
  auto single = PlanMatMulBatches(shared);
  ASSERT_TRUE(single.ok());
  EXPECT_EQ(single->kind, MatMulBatchPlan::Kind::kSingle);
  EXPECT_EQ(single->gemm.n, 6);  // column-major n = rows of A
  // Irregular offsets (two broadcast batch axes): one GEMM per batch.
  auto loop = PlanMatMulBatches(BatchedParams(4, 2, 2, 2, {0, 4, 0, 4}, {0, 0, 4, 4}));
  ASSERT_TRUE(loop.ok());
  EXPECT_EQ(loop->kind, MatMulBatchPlan::Kind::kLoop);
}

ConvParams Conv2d() {
  ConvParams p;
  p.dtype = DataType::kF32;
  p.spatial_rank = 2;
  p.batch = 2, p.in_channels = 4, p.out_channels = 8, p.groups = 2;
  p.in_channels_per_group = 2, p.out_channels_per_group = 4;
  p.in_spatial = {11, 9};
  p.out_spatial = {6, 5};
  p.kernel = {3, 3};
  p.strides = {2, 2};
  p.dilations = {1, 1};
  p.pads_begin = {1, 1};
  p.pads_end = {1, 1};
  p.has_bias = true;
  return p;
}

TEST(ConvPlan, DescriptorsFromShapes) {
  StatusOr<ConvDescriptors> d = PlanConvDescriptors(Conv2d());
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->nb_dims, 4);
  EXPECT_EQ(d->x_dims, (std::vector<int>{2, 4, 11, 9}));
  EXPECT_EQ(d->x_strides, (std::vector<int>{396, 99, 9, 1}));
  EXPECT_EQ(d->w_dims, (std::vector<int>{8, 2, 3, 3}));
  EXPECT_EQ(d->y_dims, (std::vector<int>{2, 8, 6, 5}));
  EXPECT_EQ(d->pads, (std::vector<int>{1, 1}));
  EXPECT_EQ(d->groups, 2);
  EXPECT_EQ(d->bias_dims, (std::vector<int>{1, 8, 1, 1}));
}

TEST(ConvPlan, OneDimensionalConvGetsAUnitHeight) {
  ConvParams p = Conv2d();
  p.spatial_rank = 1;
  p.in_spatial = {9};
  p.out_spatial = {5};
  p.kernel = {3};
  p.strides = {2};
  p.dilations = {1};
  p.pads_begin = p.pads_end = {1};
  StatusOr<ConvDescriptors> d = PlanConvDescriptors(p);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->x_dims, (std::vector<int>{2, 4, 1, 9}));
  EXPECT_EQ(d->w_dims, (std::vector<int>{8, 2, 1, 3}));
  EXPECT_EQ(d->strides, (std::vector<int>{1, 2}));
  EXPECT_EQ(d->pads, (std::vector<int>{0, 1}));
}

TEST(ConvPlan, OtherDtypesAreUnimplemented) {
  ConvParams p = Conv2d();
  p.dtype = DataType::kF16;
  EXPECT_EQ(PlanConvDescriptors(p).status().code(), StatusCode::kUnimplemented);
  EXPECT_FALSE(PlanConvDescriptors(Conv2d())->pre_pad);  // symmetric: no pre-pad
}

// out[n][k][oy][ox] of a 2-D conv with pads (top, left) and input dims h x w
// (zero outside), bias-free: a direct loop, the reference for the plan.
std::vector<float> DirectConv2d(const ConvParams& p, const std::vector<float>& x,
                                const std::vector<float>& w, int64_t h, int64_t wd,
                                int64_t top, int64_t left) {
  std::vector<float> y;
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t k = 0; k < p.out_channels; ++k)
      for (int64_t oy = 0; oy < p.out_spatial[0]; ++oy)
        for (int64_t ox = 0; ox < p.out_spatial[1]; ++ox) {
          const int64_t g = k / p.out_channels_per_group;
          double sum = 0;
          for (int64_t c = 0; c < p.in_channels_per_group; ++c)
            for (int64_t ky = 0; ky < p.kernel[0]; ++ky)
              for (int64_t kx = 0; kx < p.kernel[1]; ++kx) {
                const int64_t iy = oy * p.strides[0] - top + ky * p.dilations[0];
                const int64_t ix = ox * p.strides[1] - left + kx * p.dilations[1];
                if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
                const int64_t ci = g * p.in_channels_per_group + c;
                sum += static_cast<double>(x[static_cast<size_t>(((n * p.in_channels + ci) * h + iy) * wd + ix)]) *
                       w[static_cast<size_t>(((k * p.in_channels_per_group + c) * p.kernel[0] + ky) *
                                                 p.kernel[1] + kx)];
              }
          y.push_back(static_cast<float>(sum));
        }
  return y;
}

// A row part of a sliced conv (pads 1 on top, 0 below) and SAME_UPPER with an
// even kernel: cuDNN gets the smaller pad on both sides of an input padded
// by the excess first, and that computes the asymmetric conv.
TEST(ConvPlan, AsymmetricPadsPadTheInputFirstAndMatchTheDirectConv) {
  struct Pads {
    std::vector<int64_t> begin, end;
  };
  for (const Pads& pads : {Pads{{1, 1}, {0, 1}}, Pads{{0, 1}, {2, 1}}, Pads{{0, 0}, {1, 1}},
                           Pads{{2, 0}, {1, 1}}}) {
    ConvParams p = Conv2d();
    p.pads_begin = pads.begin;
    p.pads_end = pads.end;
    for (size_t i = 0; i < 2; ++i)
      p.out_spatial[i] = (p.in_spatial[i] + p.pads_begin[i] + p.pads_end[i] -
                          (p.kernel[i] - 1) * p.dilations[i] - 1) / p.strides[i] + 1;
    StatusOr<ConvDescriptors> d = PlanConvDescriptors(p);
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    ASSERT_TRUE(d->pre_pad);
    const int64_t h = p.in_spatial[0], wd = p.in_spatial[1];
    const int64_t ph = h + pads.begin[0] + pads.end[0] - 2 * d->pads[0];
    const int64_t pw = wd + pads.begin[1] + pads.end[1] - 2 * d->pads[1];
    EXPECT_EQ(d->x_dims, (std::vector<int>{2, 4, static_cast<int>(ph), static_cast<int>(pw)}));
    EXPECT_EQ(d->pads[0], std::min(pads.begin[0], pads.end[0]));
    EXPECT_EQ(d->pads[1], std::min(pads.begin[1], pads.end[1]));
    EXPECT_EQ(d->padded_bytes, static_cast<size_t>(2 * 4 * ph * pw) * sizeof(float));

    std::mt19937 rng(5);
    std::uniform_real_distribution<float> dist(-1, 1);
    std::vector<float> x(static_cast<size_t>(2 * 4 * h * wd));
    std::vector<float> w(static_cast<size_t>(8 * 2 * 3 * 3));
    for (float& v : x) v = dist(rng);
    for (float& v : w) v = dist(rng);
    std::vector<float> padded(static_cast<size_t>(d->pad.elements), 7.0f);
    for (int64_t i = 0; i < d->pad.elements; ++i)
      dm::PadElement(d->pad, i, x.data(), padded.data());
    const std::vector<float> want = DirectConv2d(p, x, w, h, wd, pads.begin[0], pads.begin[1]);
    const std::vector<float> got = DirectConv2d(p, padded, w, ph, pw, d->pads[0], d->pads[1]);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-5) << i;
  }
}

TEST(ConvPlan, AlgorithmKeyChangesWithEveryParameter) {
  const ConvParams base = Conv2d();
  const std::string key = ConvAlgorithmKey(base);
  EXPECT_EQ(key, ConvAlgorithmKey(Conv2d()));
  std::vector<ConvParams> variants(6, base);
  variants[0].batch = 3;
  variants[1].strides = {1, 2};
  variants[2].dilations = {2, 1};
  variants[3].groups = 4;
  variants[4].pads_begin = {0, 1};
  variants[5].in_spatial = {11, 10};
  std::set<std::string> keys = {key};
  for (const ConvParams& v : variants) keys.insert(ConvAlgorithmKey(v));
  EXPECT_EQ(keys.size(), 7u);
}

TEST(ConvPlan, EpilogueChoice) {
  using K = Activation::Kind;
  EXPECT_EQ(ChooseConvEpilogue(false, K::kNone, false), ConvEpilogue::kNone);
  EXPECT_EQ(ChooseConvEpilogue(true, K::kRelu, false), ConvEpilogue::kFusedBiasActivation);
  EXPECT_EQ(ChooseConvEpilogue(true, K::kNone, true), ConvEpilogue::kFusedBiasActivation);
  EXPECT_EQ(ChooseConvEpilogue(true, K::kNone, false), ConvEpilogue::kSeparate);
  EXPECT_EQ(ChooseConvEpilogue(true, K::kHardSwish, true), ConvEpilogue::kSeparate);
  EXPECT_EQ(ChooseConvEpilogue(false, K::kRelu, true), ConvEpilogue::kSeparate);
}

TEST(ConvPlan, EpilogueAddsBiasPerChannelThenActivation) {
  ConvParams p = Conv2d();
  p.activation.kind = Activation::Kind::kLeakyRelu;
  p.activation.alpha = 0.1f;
  const dm::EpilogueArgs e = PlanConvEpilogue(p);
  ASSERT_EQ(e.elements, 2 * 8 * 30);
  std::vector<float> y(static_cast<size_t>(e.elements), -1.0f), bias(8);
  for (int c = 0; c < 8; ++c) bias[static_cast<size_t>(c)] = static_cast<float>(c) * 0.5f;
  EmulateGridStride(GridStrideLaunch(e.elements), e.elements,
                    [&](int64_t i) { dm::EpilogueElement(e, i, bias.data(), y.data()); });
  for (int64_t i = 0; i < e.elements; ++i) {
    const float v = -1.0f + bias[static_cast<size_t>((i / 30) % 8)];
    EXPECT_FLOAT_EQ(y[static_cast<size_t>(i)], v >= 0 ? v : 0.1f * v) << i;
  }
}

// Add with a fused activation: PlanBinary carries it to the device args and
// BinaryElement applies it after the broadcast sum; Equal and Pow refuse it.
TEST(BinaryPlan, FusedActivationIsAppliedAfterTheSum) {
  Node add;
  add.name = "add";
  add.op_type = "Add";
  add.attrs.Set("activation", std::string("Clip"));
  add.attrs.Set("activation_min", -0.25f);
  add.attrs.Set("activation_max", 0.5f);
  PrepareArgs args;
  args.node = &add;
  args.opset = 17;
  args.inputs = {TensorDesc{DataType::kF32, {2, 3}}, TensorDesc{DataType::kF32, {3}}};
  args.outputs = {TensorDesc{DataType::kF32, {2, 3}}};
  args.constants = {nullptr, nullptr};
  StatusOr<dm::BinaryArgs> plan = PlanBinary(args);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->activation.kind, static_cast<int>(Activation::Kind::kClip));
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> a(6), b(3), y(6);
  for (float& v : a) v = dist(rng);
  for (float& v : b) v = dist(rng);
  for (int64_t i = 0; i < plan->elements; ++i) dm::BinaryElement(*plan, i, a.data(), b.data(), y.data());
  for (size_t i = 0; i < 6; ++i)
    EXPECT_EQ(y[i], std::min(std::max(a[i] + b[i % 3], -0.25f), 0.5f)) << i;

  for (const char* op : {"Equal", "Pow"}) {
    Node other = add;
    other.op_type = op;
    args.node = &other;
    args.outputs[0].dtype = std::string(op) == "Equal" ? DataType::kBool : DataType::kF32;
    StatusOr<dm::BinaryArgs> refused = PlanBinary(args);
    EXPECT_EQ(refused.status().code(), StatusCode::kUnimplemented) << op;
    EXPECT_TRUE(Contains(refused.status().message(), "fused activation")) << op;
  }
}

}  // namespace
}  // namespace braid::cuda
