// Annotation totals of the built-in ResNets after the default passes, against
// counts derived independently from the architecture.
#include <gtest/gtest.h>

#include <cstdint>

#include "graph/annotate.h"
#include "graph/passes/passes.h"
#include "models/builtin.h"

namespace braid {
namespace {

// Per-image work of a torchvision ResNet, computed from its stage table (not
// from the graph).
struct ResNetWork {
  double conv_macs = 0;      // multiply-adds of all convolutions
  double conv_outputs = 0;   // output elements of all convolutions
  double relu_elements = 0;  // elements passing through ReLU
  double add_elements = 0;   // residual Add outputs
};

ResNetWork CountResNet(bool bottleneck, const int (&blocks)[4]) {
  ResNetWork w;
  auto conv = [&](double cin, double cout, double k, double out_hw, bool relu) {
    w.conv_macs += cout * out_hw * out_hw * cin * k * k;
    w.conv_outputs += cout * out_hw * out_hw;
    if (relu) w.relu_elements += cout * out_hw * out_hw;
  };
  conv(3, 64, 7, 112, true);  // stem; then max pool to 56x56
  double channels = 64;
  double hw = 56;
  const double planes[4] = {64, 128, 256, 512};
  for (int stage = 0; stage < 4; ++stage) {
    for (int b = 0; b < blocks[stage]; ++b) {
      const double stride = stage > 0 && b == 0 ? 2 : 1;
      const double out_hw = hw / stride;
      const double p = planes[stage];
      const double out = bottleneck ? 4 * p : p;
      if (bottleneck) {
        conv(channels, p, 1, hw, true);
        conv(p, p, 3, out_hw, true);  // v1.5: stride on the 3x3
        conv(p, out, 1, out_hw, false);
      } else {
        conv(channels, p, 3, out_hw, true);
        conv(p, p, 3, out_hw, false);
      }
      if (stride != 1 || channels != out) conv(channels, out, 1, out_hw, false);
      w.add_elements += out * out_hw * out_hw;
      w.relu_elements += out * out_hw * out_hw;  // ReLU after the Add
      channels = out;
      hw = out_hw;
    }
  }
  return w;
}

// FLOPs of the folded, fused graph under the rules of docs/annotation.md:
// conv 2 * MACs + 1 per output (bias from the folded BN) + 1 per ReLU'd
// element (fused or not), Add 1 per element, max pool 9 per output
// (64*56*56), global pool 1 per input (C*7*7), fc 2*C*1000 + 1000 bias.
double ExpectedFlops(const ResNetWork& w, double final_channels) {
  return 2 * w.conv_macs + w.conv_outputs + w.relu_elements + w.add_elements +
         9.0 * 64 * 56 * 56 + final_channels * 7 * 7 +
         2.0 * final_channels * 1000 + 1000;
}

ModelTotals AnnotatedTotals(const std::string& name) {
  StatusOr<Graph> g = BuildBuiltinModel(name);
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  if (!g.ok()) return {};
  Status s = RunDefaultPasses(*g);
  EXPECT_TRUE(s.ok()) << s.ToString();
  s = Annotate(*g);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return ComputeTotals(*g);
}

TEST(AnnotateModelsTest, ResNet50FlopsPerImage) {
  const ResNetWork w = CountResNet(/*bottleneck=*/true, {3, 4, 6, 3});
  // The architecture gives 4,087,136,256 conv MACs; with the fc's 2,048,000
  // that is the well-known 4.089 GMACs, i.e. 8,178,368,512 FLOPs.
  EXPECT_DOUBLE_EQ(w.conv_macs, 4087136256.0);
  // The annotated graph also counts what the folk number leaves out:
  //   conv bias (folded BN)  11,113,984
  //   ReLU                    9,608,704
  //   residual Add            5,519,360
  //   max pool 3x3            1,806,336
  //   global pool               100,352
  //   fc bias                     1,000
  // so 8,206,518,248 FLOPs, +0.34% over 2 * 4.089e9.
  const double expected = ExpectedFlops(w, 2048);
  EXPECT_DOUBLE_EQ(expected, 8206518248.0);
  ModelTotals t = AnnotatedTotals("resnet50");
  EXPECT_NEAR(t.flops, expected, 1e-9 * expected);
  EXPECT_NEAR(t.flops, 2 * 4.089e9, 0.01 * 2 * 4.089e9);
  // After BN folding the constants are the conv weights, one bias per BN
  // channel and the fc: torchvision's 25,557,032 minus the 26,560 BN gammas
  // (the betas become the conv biases one for one) = 25,530,472.
  EXPECT_EQ(t.params, 25530472);
  EXPECT_DOUBLE_EQ(t.weight_sparsity, 0.0);
}

TEST(AnnotateModelsTest, ResNet18FlopsPerImage) {
  const ResNetWork w = CountResNet(/*bottleneck=*/false, {2, 2, 2, 2});
  // 1,813,561,344 conv MACs (+ 512,000 fc) = 1.814 GMACs.
  EXPECT_DOUBLE_EQ(w.conv_macs, 1813561344.0);
  ModelTotals t = AnnotatedTotals("resnet18");
  const double expected = ExpectedFlops(w, 512);
  EXPECT_NEAR(t.flops, expected, 1e-9 * expected);
}

// The other models: the multiply-adds of their convolutions and linear layers
// (from torch forward hooks on torchvision, or by hand for the ViT) bound the
// annotated FLOPs from below; per-element work (bias, activations, residual
// adds, pools, normalization, softmax) may add at most `extra` on top
// (observed: mobilenet_v2 +2.17%, squeezenet1_1 +1.19%, vit_tiny +1.38%).
TEST(AnnotateModelsTest, OtherModelsAreCloseToTheirMultiplyAdds) {
  struct Case {
    const char* name;
    double macs;
    double extra;
  };
  // vit_tiny (depth 4): patch conv 196*192*768 = 28,901,376; per block
  // q,k,v,proj 4*197*192*192 = 29,048,832, scores and context
  // 2*3*197*197*64 = 14,902,656, MLP 2*197*192*768 = 58,097,664, i.e.
  // 102,049,152; head 192,000. 28,901,376 + 4 * 102,049,152 + 192,000 =
  // 437,289,984.
  const Case cases[] = {{"mobilenet_v2", 300774272.0, 0.03},
                        {"squeezenet1_1", 349151936.0, 0.02},
                        {"vit_tiny", 437289984.0, 0.02}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ModelTotals t = AnnotatedTotals(c.name);
    EXPECT_GT(t.flops, 2 * c.macs);
    EXPECT_LT(t.flops, 2 * c.macs * (1 + c.extra));
    EXPECT_GT(t.bytes, 0);
    EXPECT_GT(t.params, 0);
  }
}

}  // namespace
}  // namespace braid
