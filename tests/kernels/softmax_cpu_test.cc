// braid's own CPU Softmax (kernels/cpu/softmax_cpu.cc) and its vector exp
// (kernels/cpu/vector_exp.h) on every instruction set this CPU runs, against
// the reference Softmax kernel (float in, double sums) and std::exp in
// double. Tolerances: exp relative 5e-7 (Cephes' expf measures 1.2e-7, one
// ulp); Softmax abs 1e-7 + rel 2e-6 per element (float sums of up to 1000
// terms in another order than the reference's double ones).
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kernels/backend.h"
#include "kernels/cpu/simd_isa.h"
#include "kernels/cpu/softmax_cpu.h"
#include "kernels/cpu/vector_exp.h"
#include "tests/kernels/op_harness.h"

namespace braid {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

std::vector<SimdIsa> SupportedIsas() {
  std::vector<SimdIsa> isas;
  for (SimdIsa isa : {SimdIsa::kPortable, SimdIsa::kAvx2, SimdIsa::kAvx512})
    if (SimdIsaSupported(isa)) isas.push_back(isa);
  return isas;
}

Node SoftmaxNode(int64_t axis) {
  Node node;
  node.name = "softmax";
  node.op_type = "Softmax";
  node.attrs.Set("axis", axis);
  return node;
}

PrepareArgs SoftmaxArgs(const Node& node, std::vector<int64_t> dims, int threads = 1) {
  PrepareArgs args;
  args.node = &node;
  args.opset = 13;
  args.inputs = {TensorDesc{DataType::kF32, dims}};
  args.outputs = {TensorDesc{DataType::kF32, dims}};
  args.constants = {nullptr};
  args.num_threads = threads;
  return args;
}

std::unique_ptr<Kernel> Prepared(const std::string& impl, const PrepareArgs& args) {
  for (const KernelEntry* e : HarnessRegistry().Candidates("Softmax", DeviceKind::kCpu)) {
    if (e->impl != impl) continue;
    std::unique_ptr<Kernel> k = e->create();
    if (Status s = k->Prepare(args); !s.ok()) {
      ADD_FAILURE() << impl << " declined: " << s.ToString();
      return nullptr;
    }
    return k;
  }
  ADD_FAILURE() << "no " << impl << " Softmax";
  return nullptr;
}

// A prepared one-input, one-output kernel's output for `x`.
std::vector<float> RunOn(Kernel& k, const std::vector<float>& x) {
  std::vector<float> y(x.size());
  const void* src[] = {x.data()};
  void* dst[] = {y.data()};
  RunArgs run;
  run.src = src;
  run.dst = dst;
  const Status s = k.Run(run);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return y;
}

// The reference kernel's output for rows x n.
std::vector<float> ReferenceSoftmax(const std::vector<float>& x, int64_t rows, int64_t n) {
  const Node node = SoftmaxNode(-1);
  std::unique_ptr<Kernel> k = Prepared("reference", SoftmaxArgs(node, {rows, n}));
  return k ? RunOn(*k, x) : std::vector<float>();
}

std::vector<float> Normal(size_t count, float sigma, std::mt19937& rng) {
  std::normal_distribution<float> dist(0.0f, sigma);
  std::vector<float> v(count);
  for (float& x : v) {
    x = dist(rng);
    if (x == 0.0f) x = 0.5f;  // never an all-zero row
  }
  return v;
}

TEST(VectorExp, MatchesDoubleExpOnEveryIsa) {
  std::vector<float> x;
  for (int i = 0; i <= 200000; ++i) x.push_back(-87.0f * static_cast<float>(i) / 200000.0f);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-87.0f, 0.0f);
  for (int i = 0; i < 10000; ++i) x.push_back(dist(rng));
  for (SimdIsa isa : SupportedIsas()) {
    std::vector<float> y(x.size());
    vector_math::ExpNonPositive(isa, x.data(), y.data(), static_cast<int64_t>(x.size()));
    double worst = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double want = std::exp(static_cast<double>(x[i]));
      worst = std::max(worst, std::fabs(y[i] - want) / want);
    }
    EXPECT_LT(worst, 5e-7) << SimdIsaName(isa);
    std::cout << SimdIsaName(isa) << ": worst relative error " << worst << "\n";
  }
}

TEST(VectorExp, EdgesAndTails) {
  // Below -87 (and -inf): 0; NaN stays NaN; 0: exactly 1. Every tail length
  // of the masked paths gives what the full registers give.
  const std::vector<float> edges = {0.0f, -87.5f, -100.0f, -kInf, kNaN, -1e-30f, -86.99f};
  for (SimdIsa isa : SupportedIsas()) {
    std::vector<float> y(edges.size());
    vector_math::ExpNonPositive(isa, edges.data(), y.data(), static_cast<int64_t>(edges.size()));
    EXPECT_EQ(y[0], 1.0f) << SimdIsaName(isa);
    EXPECT_EQ(y[1], 0.0f) << SimdIsaName(isa);
    EXPECT_EQ(y[2], 0.0f) << SimdIsaName(isa);
    EXPECT_EQ(y[3], 0.0f) << SimdIsaName(isa);
    EXPECT_TRUE(std::isnan(y[4])) << SimdIsaName(isa);
    EXPECT_EQ(y[5], 1.0f) << SimdIsaName(isa);
    const double near_lowest = std::exp(static_cast<double>(-86.99f));
    EXPECT_NEAR(y[6], near_lowest, 5e-7 * near_lowest) << SimdIsaName(isa);

    std::mt19937 rng(5);
    std::uniform_real_distribution<float> dist(-20.0f, 0.0f);
    std::vector<float> x(48);
    for (float& v : x) v = dist(rng);
    std::vector<float> full(x.size());
    vector_math::ExpNonPositive(isa, x.data(), full.data(), static_cast<int64_t>(x.size()));
    for (int64_t n = 0; n <= 40; ++n) {
      std::vector<float> part(x.size(), -7.0f);
      vector_math::ExpNonPositive(isa, x.data(), part.data(), n);
      for (int64_t i = 0; i < n; ++i) EXPECT_EQ(part[static_cast<size_t>(i)], full[static_cast<size_t>(i)]);
      for (size_t i = static_cast<size_t>(n); i < part.size(); ++i)
        EXPECT_EQ(part[i], -7.0f) << "wrote past " << n << " (" << SimdIsaName(isa) << ")";
    }
  }
}

// Any input: one ulp of double exp inside [-87, 80]; outside it, and for the
// infinities and NaN, std::exp's own result (what the reference Exp gives).
TEST(VectorExp, AnyInputOnEveryIsa) {
  std::vector<float> x;
  for (int i = 0; i <= 200000; ++i) x.push_back(-110.0f + 210.0f * static_cast<float>(i) / 200000.0f);
  for (float edge : {-87.0f, 80.0f, 88.72f, 88.73f, 89.0f, -103.9f, -104.0f, kInf, -kInf, kNaN, 0.0f})
    x.push_back(edge);
  for (SimdIsa isa : SupportedIsas()) {
    std::vector<float> y(x.size());
    vector_math::Exp(isa, x.data(), y.data(), static_cast<int64_t>(x.size()));
    double worst = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      if (x[i] >= vector_math::kExpAnyLow && x[i] <= vector_math::kExpAnyHigh) {
        const double want = std::exp(static_cast<double>(x[i]));
        worst = std::max(worst, std::fabs(y[i] - want) / want);
        continue;
      }
      const float want = std::exp(x[i]);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(y[i])) << x[i] << " " << SimdIsaName(isa);
      } else {
        EXPECT_EQ(y[i], want) << "exp(" << x[i] << ") " << SimdIsaName(isa);
      }
    }
    EXPECT_LT(worst, 5e-7) << SimdIsaName(isa);
    // Every length: the scalar tail matches, nothing written past n.
    for (int64_t n = 0; n <= 40; ++n) {
      std::vector<float> part(48, -7.0f);
      vector_math::Exp(isa, x.data() + 1000, part.data(), n);
      for (size_t i = static_cast<size_t>(n); i < part.size(); ++i)
        EXPECT_EQ(part[i], -7.0f) << "wrote past " << n << " (" << SimdIsaName(isa) << ")";
    }
  }
}

TEST(SoftmaxRows, MatchesReferenceOnEveryIsa) {
  std::mt19937 rng(11);
  int compared = 0;
  for (SimdIsa isa : SupportedIsas()) {
    for (int64_t n : {1, 5, 8, 15, 16, 17, 31, 197, 1000}) {
      for (float sigma : {1.0f, 8.0f, 30.0f}) {
        const int64_t rows = 7;
        const std::vector<float> x = Normal(static_cast<size_t>(rows * n), sigma, rng);
        const std::vector<float> want = ReferenceSoftmax(x, rows, n);
        for (int threads : {1, 2}) {
          // A guard past the last row: a masked tail that wrote too far
          // would change it (ASan does not see masked stores).
          constexpr size_t kGuard = 32;
          std::vector<float> y(x.size() + kGuard, kNaN);
          SoftmaxRows(isa, x.data(), y.data(), rows, n, threads);
          for (size_t i = x.size(); i < y.size(); ++i)
            ASSERT_TRUE(std::isnan(y[i])) << SimdIsaName(isa) << " n=" << n << " wrote past the end";
          y.resize(x.size());
          for (size_t i = 0; i < y.size(); ++i) {
            ASSERT_NEAR(y[i], want[i], 1e-7 + 2e-6 * want[i])
                << SimdIsaName(isa) << " n=" << n << " sigma=" << sigma << " element " << i;
          }
          ++compared;
        }
      }
    }
  }
  EXPECT_EQ(compared, static_cast<int>(SupportedIsas().size()) * 9 * 3 * 2);
}

TEST(SoftmaxRows, SpecialValuesFollowTheReference) {
  const int64_t n = 21;  // a full AVX2 / AVX-512 register and a tail
  std::mt19937 rng(13);
  std::vector<std::vector<float>> rows;
  std::vector<float> masked = Normal(n, 2.0f, rng);
  masked[3] = masked[19] = -kInf;  // an attention mask
  rows.push_back(masked);
  std::vector<float> with_nan = Normal(n, 2.0f, rng);
  with_nan[20] = kNaN;  // in the tail
  rows.push_back(with_nan);
  rows.push_back(std::vector<float>(n, -kInf));
  std::vector<float> with_inf = Normal(n, 2.0f, rng);
  with_inf[4] = kInf;
  rows.push_back(with_inf);
  std::vector<float> x;
  for (const auto& r : rows) x.insert(x.end(), r.begin(), r.end());
  const int64_t count = static_cast<int64_t>(rows.size());
  const std::vector<float> want = ReferenceSoftmax(x, count, n);
  for (SimdIsa isa : SupportedIsas()) {
    std::vector<float> y(x.size(), kNaN);  // every element must be written
    SoftmaxRows(isa, x.data(), y.data(), count, n, 1);
    double masked_sum = 0;
    for (int64_t i = 0; i < n; ++i) masked_sum += y[static_cast<size_t>(i)];
    EXPECT_NEAR(masked_sum, 1.0, 1e-6) << SimdIsaName(isa);
    EXPECT_EQ(y[3], 0.0f) << SimdIsaName(isa);
    EXPECT_EQ(y[19], 0.0f) << SimdIsaName(isa);
    for (size_t i = 0; i < y.size(); ++i) {
      if (std::isnan(want[i])) {
        EXPECT_TRUE(std::isnan(y[i])) << SimdIsaName(isa) << " element " << i;
      } else {
        EXPECT_NEAR(y[i], want[i], 1e-7 + 2e-6 * want[i]) << SimdIsaName(isa) << " element " << i;
      }
    }
    // Rows 1-3 are NaN throughout in the reference too.
    for (int64_t i = n; i < 4 * n; ++i) EXPECT_TRUE(std::isnan(want[static_cast<size_t>(i)])) << i;
  }
}

TEST(SoftmaxCpuKernel, TakesInnermostAndStridedAxes) {
  if (BestSimdIsa() == SimdIsa::kPortable)
    GTEST_SKIP() << "this CPU has neither AVX2 + FMA nor AVX-512: braid's CPU Softmax declines";
  const Node last = SoftmaxNode(-1);
  StatusOr<PreparedKernel> chosen =
      PrepareFirstAccepting(HarnessRegistry(), DeviceKind::kCpu, SoftmaxArgs(last, {1, 3, 197, 197}, 2));
  ASSERT_TRUE(chosen.ok()) << chosen.status().ToString();
  EXPECT_EQ(chosen->entry->impl, "cpu");
  EXPECT_FALSE(chosen->fell_back());

  // A strided axis too (YOLOv8's DFL softmax over axis 1): the positions
  // along the innermost axes side by side, in blocks of 64 (here 8 blocks,
  // the last one partial), against a softmax computed in double.
  const Node middle = SoftmaxNode(1);
  chosen = PrepareFirstAccepting(HarnessRegistry(), DeviceKind::kCpu, SoftmaxArgs(middle, {2, 5, 4}));
  ASSERT_TRUE(chosen.ok()) << chosen.status().ToString();
  EXPECT_EQ(chosen->entry->impl, "cpu");
  EXPECT_FALSE(chosen->fell_back());
  {
    std::mt19937 rng(3);
    const int64_t outer = 2, n = 16, inner = 4 * 115;
    const std::vector<float> xs = Normal(static_cast<size_t>(outer * n * inner), 4.0f, rng);
    std::unique_ptr<Kernel> strided = Prepared("cpu", SoftmaxArgs(middle, {outer, n, 4, 115}, 2));
    ASSERT_NE(strided, nullptr);
    const std::vector<float> ys = RunOn(*strided, xs);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < inner; ++j) {
        double max = -INFINITY, sum = 0;
        auto at = [&](int64_t k) { return static_cast<size_t>((o * n + k) * inner + j); };
        for (int64_t k = 0; k < n; ++k) max = std::max(max, static_cast<double>(xs[at(k)]));
        for (int64_t k = 0; k < n; ++k) sum += std::exp(xs[at(k)] - max);
        for (int64_t k = 0; k < n; ++k) {
          const double want = std::exp(xs[at(k)] - max) / sum;
          ASSERT_NEAR(ys[at(k)], want, 1e-7 + 2e-6 * want) << o << " " << j << " " << k;
        }
      }
    }
  }

  // Through Kernel::Run, [1, 3, 197, 197] with two threads: the reference's.
  std::mt19937 rng(17);
  const std::vector<float> x = Normal(3 * 197 * 197, 4.0f, rng);
  std::unique_ptr<Kernel> k = Prepared("cpu", SoftmaxArgs(last, {1, 3, 197, 197}, 2));
  ASSERT_NE(k, nullptr);
  const std::vector<float> y = RunOn(*k, x);
  const std::vector<float> want = ReferenceSoftmax(x, 3 * 197, 197);
  for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], want[i], 1e-7 + 2e-6 * want[i]) << i;
}

}  // namespace
}  // namespace braid
