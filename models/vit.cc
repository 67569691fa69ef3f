// A small Vision Transformer (ViT-Ti/16 layout, configurable depth), exported
// the way torch writes it at opset 17: LayerNormalization, MatMul + Add for
// linear layers, Softmax attention, GELU as Mul/Erf/Add/Mul/Mul.
//
// Everything stays shape-inferable with a symbolic batch N:
//  - patch tokens: Conv(16x16, stride 16) -> Reshape [0, dim, -1] (0 keeps N)
//    -> Transpose [0, 2, 1];
//  - class token: torch writes cls_token.expand(N, -1, -1), whose target shape
//    comes from Shape(x) and is not a constant. Instead the class token is
//    made from a batch-N tensor that already exists:
//      cls = Gather(tokens, [0], axis=1) * 0 + cls_token   ([N, 1, dim])
//    which is exactly cls_token for every finite input; Concat then joins it
//    with the patch tokens on axis 1;
//  - heads are split and merged with Reshape [0, 0, heads, head_dim] /
//    [0, 0, dim] and Transpose; q, k and v are three separate projections
//    (the same parameters as timm's fused qkv, without a Split);
//  - the classifier reads the class token with Gather(index 0, axis 1).
#include <cmath>
#include <string>

#include "models/architectures.h"
#include "models/graph_builder.h"

namespace braid {
namespace {

ValueId Attention(GraphBuilder& b, ValueId x, const VitConfig& c) {
  auto scope = b.Enter("attn");
  const int64_t head_dim = c.dim / c.heads;
  auto split_heads = [&](ValueId t, const std::string& module,
                         const std::vector<int64_t>& perm) {
    ValueId y = b.LinearMatMul(t, module, c.dim, c.dim);
    y = b.Reshape(y, {0, 0, c.heads, head_dim}, module);
    return b.Transpose(y, perm, module);
  };
  ValueId q = split_heads(x, "q", {0, 2, 1, 3});  // [N, heads, T, hd]
  ValueId k = split_heads(x, "k", {0, 2, 3, 1});  // [N, heads, hd, T]
  ValueId v = split_heads(x, "v", {0, 2, 1, 3});  // [N, heads, T, hd]
  ValueId scores = b.MatMul(q, k);
  const auto scale = static_cast<float>(1.0 / std::sqrt(head_dim));
  scores =
      b.Mul(scores, b.ConstantF32(b.module_path() + ".scale", {}, {scale}));
  ValueId attn = b.Softmax(scores, -1);
  ValueId y = b.MatMul(attn, v);     // [N, heads, T, hd]
  y = b.Transpose(y, {0, 2, 1, 3});  // [N, T, heads, hd]
  y = b.Reshape(y, {0, 0, c.dim});   // [N, T, dim]
  return b.LinearMatMul(y, "proj", c.dim, c.dim);
}

ValueId Mlp(GraphBuilder& b, ValueId x, const VitConfig& c) {
  auto scope = b.Enter("mlp");
  ValueId y = b.LinearMatMul(x, "fc1", c.dim, c.mlp_dim);
  y = b.Gelu(y, "act");
  return b.LinearMatMul(y, "fc2", c.mlp_dim, c.dim);
}

}  // namespace

Graph BuildVit(const VitConfig& c, uint64_t seed) {
  GraphBuilder b(
      c.depth == 4 ? "vit_tiny" : "vit_depth" + std::to_string(c.depth), seed);
  ValueId x = b.Input("input", {Dim::Symbol("N"), 3, c.image, c.image});
  const int64_t grid = c.image / c.patch;
  const int64_t tokens = grid * grid + 1;
  {
    auto scope = b.Enter("patch_embed");
    x = b.Conv(x, "proj",
               {.out_channels = c.dim,
                .kernel = c.patch,
                .stride = c.patch,
                .bias = true});
    x = b.Reshape(x, {0, c.dim, -1});  // [N, dim, grid*grid]
    x = b.Transpose(x, {0, 2, 1});     // [N, grid*grid, dim]
  }
  ValueId cls_token =
      b.RandomUniform("cls_token", {1, 1, c.dim}, -0.02f, 0.02f);
  ValueId zero = b.ConstantF32("cls_zero", {}, {0.0f});
  ValueId cls = b.Gather(x, 0, {1}, 1);  // [N, 1, dim]
  cls = b.Add(b.Mul(cls, zero), cls_token);
  x = b.Concat({cls, x}, 1);  // [N, tokens, dim]
  ValueId pos_embed =
      b.RandomUniform("pos_embed", {1, tokens, c.dim}, -0.02f, 0.02f);
  x = b.Add(x, pos_embed);
  for (int i = 0; i < c.depth; ++i) {
    auto blocks = b.Enter("blocks");
    auto block = b.Enter(std::to_string(i));
    x = b.Add(x, Attention(b, b.LayerNorm(x, "norm1", c.dim, 1e-6f), c));
    x = b.Add(x, Mlp(b, b.LayerNorm(x, "norm2", c.dim, 1e-6f), c));
  }
  x = b.LayerNorm(x, "norm", c.dim, 1e-6f);
  x = b.Gather(x, 0, {}, 1);  // class token: [N, dim]
  x = b.Linear(x, "head", c.dim, c.classes);
  b.Output(x, "output", {Dim::Symbol("N"), c.classes});
  return std::move(b).Finish();
}

}  // namespace braid
