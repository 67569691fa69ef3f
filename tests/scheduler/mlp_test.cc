// MLP building blocks: finite-difference gradient checks, Adam on a
// quadratic, save/load round trip and hostile files.
#include "scheduler/mlp.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

namespace braid {
namespace {

Eigen::MatrixXd RandomMatrix(int rows, int cols, uint64_t seed) {
  Mlp source({.sizes = {cols, rows}}, seed);  // a seeded uniform source
  Eigen::MatrixXd x = Eigen::MatrixXd::Identity(cols, cols);
  return source.Predict(x) * 2.0;  // rows x cols, uniform, non-zero
}

// Loss = sum(c .* net(x)) for a fixed random c: dL/dy = c.
double Loss(Mlp& net, const Eigen::MatrixXd& x, const Eigen::MatrixXd& c) {
  return net.Forward(x).cwiseProduct(c).sum();
}

void CheckGradients(MlpActivation hidden, MlpActivation output) {
  Mlp net({.sizes = {4, 6, 5, 3}, .hidden = hidden, .output = output}, 11);
  // Non-zero biases so ReLU kinks are unlikely at the check points.
  std::vector<size_t> sizes;
  std::vector<double*> params = net.ParamBlocks(&sizes);
  for (size_t b = 1; b < params.size(); b += 2)
    for (size_t i = 0; i < sizes[b]; ++i) params[b][i] = 0.1 + 0.03 * static_cast<double>(i);
  const Eigen::MatrixXd x = RandomMatrix(4, 7, 3);
  const Eigen::MatrixXd c = RandomMatrix(3, 7, 5);
  net.ZeroGrad();
  net.Forward(x);
  const Eigen::MatrixXd dx = net.Backward(c);
  std::vector<double*> grads = net.GradBlocks();
  // Central differences, h = 1e-6: truncation error O(h^2), rounding
  // O(eps / h) ~ 1e-10; tolerance 1e-6 relative to max(1, |g|).
  const double h = 1e-6, tol = 1e-6;
  int checked = 0;
  for (size_t b = 0; b < params.size(); ++b)
    for (size_t i = 0; i < sizes[b]; ++i) {
      const double saved = params[b][i];
      params[b][i] = saved + h;
      const double up = Loss(net, x, c);
      params[b][i] = saved - h;
      const double down = Loss(net, x, c);
      params[b][i] = saved;
      const double numeric = (up - down) / (2 * h);
      EXPECT_NEAR(grads[b][i], numeric, tol * std::max(1.0, std::abs(numeric)))
          << "block " << b << " index " << i;
      ++checked;
    }
  EXPECT_EQ(checked, net.num_params());
  // Input gradient too.
  Eigen::MatrixXd xp = x;
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    const double saved = xp.data()[i];
    xp.data()[i] = saved + h;
    const double up = Loss(net, xp, c);
    xp.data()[i] = saved - h;
    const double down = Loss(net, xp, c);
    xp.data()[i] = saved;
    EXPECT_NEAR(dx.data()[i], (up - down) / (2 * h), tol * std::max(1.0, std::abs(dx.data()[i])));
  }
}

TEST(MlpTest, GradientsMatchFiniteDifferencesRelu) {
  CheckGradients(MlpActivation::kRelu, MlpActivation::kNone);
}
TEST(MlpTest, GradientsMatchFiniteDifferencesTanh) {
  CheckGradients(MlpActivation::kTanh, MlpActivation::kTanh);
}

TEST(MlpTest, SoftmaxColumnsSumToOneAndAreStable) {
  Eigen::MatrixXd logits(3, 2);
  logits << 1000, -5, 1001, 0, 999, 5;
  const Eigen::MatrixXd p = SoftmaxColumns(logits);
  for (int c = 0; c < 2; ++c) EXPECT_NEAR(p.col(c).sum(), 1.0, 1e-12);
  EXPECT_TRUE(p.allFinite());
  EXPECT_GT(p(1, 0), p(0, 0));
}

TEST(MlpTest, AdamReducesQuadraticLoss) {
  // Regress y = A x for a random linear A with a linear net: loss 0.5|y - t|^2.
  Mlp net({.sizes = {5, 3}}, 2);
  const Eigen::MatrixXd a = RandomMatrix(3, 5, 9);
  const Eigen::MatrixXd x = RandomMatrix(5, 32, 10);
  const Eigen::MatrixXd t = a * x;
  Adam adam(net, {.learning_rate = 0.02});
  auto loss = [&] { return 0.5 * (net.Forward(x) - t).squaredNorm() / 32; };
  const double initial = loss();
  for (int step = 0; step < 500; ++step) {
    net.ZeroGrad();
    const Eigen::MatrixXd y = net.Forward(x);
    net.Backward((y - t) / 32);
    adam.Step(net);
  }
  const double final_loss = loss();
  EXPECT_GT(initial, 0.01);
  EXPECT_LT(final_loss, 1e-3 * initial);
}

TEST(MlpTest, SameSeedSameNet) {
  Mlp a({.sizes = {4, 8, 2}}, 42), b({.sizes = {4, 8, 2}}, 42), c({.sizes = {4, 8, 2}}, 43);
  const Eigen::MatrixXd x = RandomMatrix(4, 3, 1);
  EXPECT_EQ(a.Predict(x), b.Predict(x));
  EXPECT_NE(a.Predict(x), c.Predict(x));
}

std::string TempPath(const std::string& leaf) {
  return ::testing::TempDir() + "/braid_mlp_" + leaf;
}

TEST(MlpTest, SaveLoadRoundTrip) {
  Mlp net({.sizes = {4, 8, 2}, .hidden = MlpActivation::kTanh}, 5);
  const std::string path = TempPath("round.bin");
  ASSERT_TRUE(SaveMlpFile(net, path).ok());
  StatusOr<Mlp> again = LoadMlpFile(path);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  const Eigen::MatrixXd x = RandomMatrix(4, 3, 1);
  EXPECT_EQ(net.Predict(x), again->Predict(x));
  EXPECT_EQ(again->spec().hidden, MlpActivation::kTanh);
  std::remove(path.c_str());
}

TEST(MlpTest, TruncatedAndHostileFilesGiveClearErrors) {
  Mlp net({.sizes = {4, 8, 2}}, 5);
  const std::string path = TempPath("bad.bin");
  ASSERT_TRUE(SaveMlpFile(net, path).ok());
  StatusOr<std::string> bytes = ReadFileBytes(path);
  ASSERT_TRUE(bytes.ok());
  // Every truncation fails cleanly.
  for (size_t n = 0; n < bytes->size(); n += 7) {
    ASSERT_TRUE(WriteFileBytes(path, bytes->substr(0, n)).ok());
    StatusOr<Mlp> r = LoadMlpFile(path);
    EXPECT_FALSE(r.ok()) << n;
  }
  // Wrong magic.
  std::string bad = *bytes;
  bad[0] = 'X';
  ASSERT_TRUE(WriteFileBytes(path, bad).ok());
  StatusOr<Mlp> r = LoadMlpFile(path);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().ToString().find("magic"), std::string::npos);
  // A huge declared width: rejected before allocating.
  bad = *bytes;
  const uint32_t huge = 0x7fffffff;
  std::memcpy(bad.data() + 8 + 4 + 4, &huge, 4);
  ASSERT_TRUE(WriteFileBytes(path, bad).ok());
  r = LoadMlpFile(path);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().ToString().find("out of range"), std::string::npos);
  // Declared sizes larger than the data.
  bad = *bytes;
  const uint32_t wide = 60000;
  std::memcpy(bad.data() + 8 + 4 + 4 + 4, &wide, 4);
  ASSERT_TRUE(WriteFileBytes(path, bad).ok());
  r = LoadMlpFile(path);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().ToString().find("truncated"), std::string::npos);
  // Trailing garbage.
  ASSERT_TRUE(WriteFileBytes(path, *bytes + "x").ok());
  EXPECT_FALSE(LoadMlpFile(path).ok());
  EXPECT_FALSE(LoadMlpFile(TempPath("missing.bin")).ok());
  std::remove(path.c_str());
}

}  // namespace
}  // namespace braid
