// The op-harness cases of the elementwise and data-movement ops (binary with
// broadcasting in the shapes oneDNN's binary primitive special-cases, unary
// activations, Clip, Cast, Where and the data-movement ops). Tolerances:
// elementwise math abs 1e-5 + rel 1e-5 (other implementations may use
// vectorised exp/tanh/erf approximations); data movement and integer outputs
// are exact. data_op_harness_test.cc runs them on every CPU implementation;
// tests/cuda emulates (and on a GPU runs) the CUDA kernels on them.
#include <cctype>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "tests/kernels/op_harness.h"

namespace braid {

namespace {

using Attr = std::pair<std::string, AttributeValue>;
using Ints = std::vector<int64_t>;

Attr I(const std::string& name, int64_t v) { return {name, v}; }
Attr F(const std::string& name, float v) { return {name, v}; }
Attr S(const std::string& name, const std::string& v) { return {name, v}; }
Attr L(const std::string& name, Ints v) { return {name, std::move(v)}; }

OpInput X(Ints dims, double low = -1.0, double high = 1.0) {
  OpInput in{DataType::kF32, std::move(dims)};
  in.low = low;
  in.high = high;
  return in;
}
OpInput Ix(DataType dtype, Ints dims, double low = -100, double high = 100) {
  OpInput in{dtype, std::move(dims)};
  in.low = low;
  in.high = high;
  return in;
}
OpInput ConstScalar(double low, double high) {
  OpInput in = X({}, low, high);
  in.constant = true;
  return in;
}
OpInput Ints64(Ints values, bool constant = true) {
  OpInput in{DataType::kI64, {static_cast<int64_t>(values.size())}};
  in.constant = constant;
  in.values = std::move(values);
  return in;
}
OpInput I64Scalar(int64_t value) {
  OpInput in{DataType::kI64, {}};
  in.constant = true;
  in.values = {value};
  return in;
}
OpInput Omitted() {
  OpInput in;
  in.omitted = true;
  return in;
}

OpCase Make(std::string name, std::string op, std::vector<OpInput> inputs,
            std::vector<Attr> attrs = {}, int num_outputs = 1, int64_t opset = 17) {
  OpCase c{std::move(name), std::move(op), opset, std::move(attrs), std::move(inputs)};
  c.num_outputs = num_outputs;
  return c;
}

std::vector<OpCase> MakeCases() {
  std::vector<OpCase> cases;
  auto add = [&cases](OpCase c) { cases.push_back(std::move(c)); };

  // Binary: same shape, scalar, per-channel, trailing vector, general, rank mismatch.
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Min", "Max"}) {
    const std::string lower = [op] {
      std::string s = op;
      for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      return s;
    }();
    add(Make(lower + "_same", op, {X({2, 3, 4, 5}), X({2, 3, 4, 5})}));
    add(Make(lower + "_scalar", op, {X({2, 3, 4, 5}), X({})}));
    add(Make(lower + "_per_channel", op, {X({2, 8, 3, 3}), X({1, 8, 1, 1})}));
    add(Make(lower + "_trailing", op, {X({2, 3, 7}), X({7})}));
    add(Make(lower + "_general", op, {X({4, 1, 3}), X({1, 5, 1})}));
    add(Make(lower + "_first_broadcast", op, {X({3, 1}), X({2, 3, 4})}));
  }
  // Two-input Min / Max on braid's CPU kernel: threaded with NaN / Inf (NaN
  // propagates), integers, a broadcast first operand.
  add(Make("max_large_naninf", "Max", {WithNanInf(X({4, 64, 16, 16})), X({64, 1, 1})}));
  add(Make("min_large_same_naninf", "Min", {X({4, 64, 16, 16}), WithNanInf(X({4, 64, 16, 16}))}));
  add(Make("min_i64_first_broadcast", "Min",
           {Ix(DataType::kI64, {3, 1}, -9, 9), Ix(DataType::kI64, {2, 3, 4}, -9, 9)}));
  add(Make("max_u8_general", "Max", {Ix(DataType::kU8, {4, 1, 3}, 1, 200), Ix(DataType::kU8, {1, 5, 1}, 1, 200)}));
  // Add with a fused activation (FuseActivations' residual Add -> Relu):
  // oneDNN applies it as an eltwise post-op, on either operand order.
  add(Make("add_fused_relu_same", "Add", {X({2, 8, 5, 5}), X({2, 8, 5, 5})},
           {S("activation", "Relu")}));
  add(Make("add_fused_relu_per_channel", "Add", {X({2, 8, 3, 3}), X({1, 8, 1, 1})},
           {S("activation", "Relu")}));
  add(Make("add_fused_clip_first_broadcast", "Add", {X({3, 1}), X({2, 3, 4})},
           {S("activation", "Clip"), F("activation_min", -0.25f), F("activation_max", 0.5f)}));
  add(Make("add_fused_clip_trailing", "Add", {X({2, 3, 7}), X({7})},
           {S("activation", "Clip"), F("activation_min", 0.0f), F("activation_max", 6.0f)}));
  add(Make("add_fused_leakyrelu_general", "Add", {X({4, 1, 3}), X({1, 5, 1})},
           {S("activation", "LeakyRelu"), F("activation_alpha", 0.1f)}));
  add(Make("add_fused_hardswish_same", "Add", {X({3, 16}, -4.0, 4.0), X({3, 16}, -4.0, 4.0)},
           {S("activation", "HardSwish")}));
  // Swin's attention-mask add: a middle axis stretched (braid's CPU kernel,
  // not oneDNN's reference path), and the same with the mask first.
  // Squeeze-excite at batch 2: [N, C, 1, 1] against [N, C, H, W] (plain and
  // channels-last).
  add(Make("mul_excite_batch", "Mul", {X({2, 6, 4, 5}), X({2, 6, 1, 1})}));
  add(Make("add_window_mask", "Add", {X({1, 16, 3, 7, 49}), X({1, 16, 1, 7, 49})}));
  add(Make("div_window_mask_first", "Div", {X({1, 16, 1, 7, 49}, 0.5, 2.0), X({1, 16, 3, 7, 49}, 0.5, 2.0)}));
  // A broadcast first operand of Sub / Div (ConViT's 1 - gate): oneDNN 2.6
  // refuses it, braid's CPU kernel takes it (plain and over the threads).
  add(Make("sub_scalar_first", "Sub", {X({}), X({2, 3, 4, 5})}));
  add(Make("div_per_channel_first", "Div", {X({1, 8, 1, 1}, 0.5, 2.0), X({2, 8, 3, 3}, 0.5, 2.0)}));
  add(Make("sub_scalar_first_large", "Sub", {X({1}), X({4, 96, 14, 14})}));
  add(Make("add_i32", "Add", {Ix(DataType::kI32, {3, 4}), Ix(DataType::kI32, {4})}));
  add(Make("mul_i64", "Mul", {Ix(DataType::kI64, {2, 3}), Ix(DataType::kI64, {2, 1})}));
  add(Make("div_i64_truncates", "Div", {Ix(DataType::kI64, {2, 5}), Ix(DataType::kI64, {5}, -7, 7)}));
  add(Make("max_variadic", "Max", {X({2, 3}), X({3}), X({2, 1})}));
  add(Make("min_single", "Min", {X({5})}));
  add(Make("pow_f32", "Pow", {X({2, 3, 4}, 0.5, 2.0), X({4}, -2.0, 2.0)}));
  add(Make("pow_int_exponent", "Pow", {X({6}, -2.0, 2.0), Ix(DataType::kI64, {}, 1, 3)}));
  add(Make("equal_i64", "Equal", {Ix(DataType::kI64, {4, 5}, -2, 2), Ix(DataType::kI64, {5}, -2, 2)}));
  for (const char* op : {"Greater", "Less", "GreaterOrEqual", "LessOrEqual"}) {
    add(Make(std::string("compare_") + op, op, {X({2, 3, 4}), X({3, 1})}));
    add(Make(std::string("compare_i32_") + op, op,
             {Ix(DataType::kI32, {4, 5}, -2, 2), Ix(DataType::kI32, {5}, -2, 2)}));
  }
  for (const char* op : {"And", "Or", "Xor"})
    add(Make(std::string("logical_") + op, op,
             {OpInput{DataType::kBool, {2, 3, 4}}, OpInput{DataType::kBool, {3, 1}}}));
  // Shifts of up to 9 bits: 8 and 9 shift every bit out.
  add(Make("bitshift_left_u8", "BitShift", {Ix(DataType::kU8, {3, 4}, 1, 255), Ix(DataType::kU8, {4}, 1, 9)},
           {S("direction", "LEFT")}));
  add(Make("bitshift_right_u8", "BitShift", {Ix(DataType::kU8, {3, 4}, 1, 255), Ix(DataType::kU8, {3, 1}, 1, 9)},
           {S("direction", "RIGHT")}));
  add(Make("prelu_channel_slope", "PRelu", {X({2, 3, 4, 5}), X({3, 1, 1})}));
  // PRelu on braid's CPU kernel (binary_cpu.cc takes every slope shape):
  // scalar, full-shape, middle-axis and trailing slopes, NaN / Inf / denormal
  // inputs (NaN passes through: x < 0 is false), and one large enough to
  // split over the harness's two threads.
  add(Make("prelu_scalar_slope", "PRelu", {WithNanInf(X({2, 3, 4, 5})), X({})}));
  add(Make("prelu_full_slope", "PRelu", {WithNanInf(X({2, 3, 4, 5})), X({2, 3, 4, 5})}));
  add(Make("prelu_middle_slope", "PRelu", {WithNanInf(X({2, 5, 3, 7})), X({5, 1, 1})}));
  add(Make("prelu_middle_axis_general", "PRelu", {WithNanInf(X({2, 3, 4, 5})), X({3, 1, 5})}));
  add(Make("prelu_channel_slope_naninf", "PRelu", {WithNanInf(X({2, 3, 4, 5})), X({3, 1, 1})}));
  add(Make("prelu_large_channel_slope", "PRelu", {WithNanInf(X({2, 16, 40, 40})), X({16, 1, 1})}));
  add(Make("sum_variadic", "Sum", {X({2, 3}), X({3}), X({2, 1})}));
  add(Make("sum_i64", "Sum", {Ix(DataType::kI64, {2, 3}), Ix(DataType::kI64, {3})}));
  add(Make("mean_variadic", "Mean", {X({2, 3}), X({3}), X({2, 1}), X({1})}));

  // Unary activations (inputs inside each op's domain).
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "Exp", "Abs", "Neg", "Erf", "HardSwish"})
    add(Make(std::string("unary_") + op, op, {X({2, 3, 8, 8}, -4.0, 4.0)}));
  add(Make("unary_Log", "Log", {X({3, 17}, 0.1, 10.0)}));
  // Over 2 x kMinElementsPerThread elements: braid's CPU kernel splits them
  // over the harness's two threads (a block boundary mid-row).
  add(Make("unary_Mish_threaded", "Mish", {X({3, 7, 1601}, -5.0, 5.0)}));
  add(Make("unary_Sqrt", "Sqrt", {X({3, 17}, 0.1, 10.0)}));
  add(Make("unary_Reciprocal", "Reciprocal", {X({3, 17}, 0.5, 4.0)}));
  add(Make("hard_sigmoid", "HardSigmoid", {X({4, 9}, -5.0, 5.0)}, {F("alpha", 0.3f), F("beta", 0.4f)}));
  add(Make("leaky_relu", "LeakyRelu", {X({4, 9})}, {F("alpha", 0.2f)}));
  add(Make("relu_i64", "Relu", {Ix(DataType::kI64, {10})}));
  for (const char* op : {"Ceil", "Floor", "Round", "Sign"})
    add(Make(std::string("unary_") + op, op, {X({3, 11}, -6.0, 6.0)}));
  add(Make("sign_i32", "Sign", {Ix(DataType::kI32, {12})}));
  // Halves (to even), signed zeros and integers beyond 2^23, then threaded
  // sizes with a tail past the registers (braid's CPU loops on AVX2 / AVX-512).
  {
    OpInput halves = X({19});
    const float values[] = {-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, 3.5f, -0.0f, 0.0f,
                            0.49999997f, -0.49999997f, 8388609.0f, -4194304.5f, 1e30f, -1e30f,
                            2.4999998f, 1e-40f, -1e-40f, 4.5f};
    for (int64_t i = 0; i < 19; ++i) halves.specials.emplace_back(i, values[i]);
    for (const char* op : {"Ceil", "Floor", "Round", "Sign"})
      add(Make(std::string("unary_halves_") + op, op, {halves}));
  }
  for (const char* op : {"Ceil", "Floor", "Round", "Sign"})
    add(Make(std::string("unary_threaded_") + op, op, {X({3, 7, 1603}, -50.0, 50.0)}));
  for (const char* op : {"Sin", "Cos"})
    add(Make(std::string("unary_") + op, op, {X({3, 11}, -3.0, 3.0)}));
  add(Make("not", "Not", {OpInput{DataType::kBool, {2, 3, 4}}}));
  add(Make("mod_fmod_f32", "Mod", {X({3, 4}, -5.0, 5.0), X({4}, 0.5, 2.0)}, {I("fmod", 1)}));
  add(Make("mod_i64", "Mod", {Ix(DataType::kI64, {3, 4}), Ix(DataType::kI64, {4}, 1, 7)}));
  add(Make("dropout_inference", "Dropout", {X({2, 3, 4})}));
  add(Make("einsum_batched_matmul", "Einsum", {X({2, 3, 4}), X({2, 4, 5})},
           {S("equation", "bij,bjk->bik")}));
  // Equations LowerEinsum leaves to the Einsum kernels: a diagonal, a trace,
  // three operands, an outer product, an ellipsis that broadcasts, and one
  // large enough for braid's CPU kernel to split across the threads.
  add(Make("einsum_diagonal", "Einsum", {X({2, 5, 5})}, {S("equation", "bii->bi")}));
  add(Make("einsum_trace", "Einsum", {X({6, 6})}, {S("equation", "ii")}));
  add(Make("einsum_three_operands", "Einsum", {X({3, 4}), X({4, 5}), X({5, 2})},
           {S("equation", "ij,jk,kl->il")}));
  add(Make("einsum_outer", "Einsum", {X({3}), X({4})}, {S("equation", "i,j->ij")}));
  add(Make("einsum_ellipsis_broadcast", "Einsum", {X({2, 1, 3, 4}), X({5, 4})},
           {S("equation", "...ij,kj->...ik")}));
  add(Make("einsum_two_sums_large", "Einsum", {X({8, 64, 6, 7}), X({64, 7, 40})},
           {S("equation", "bchw,cwk->bhk")}));
  add(Make("einsum_outer_large", "Einsum", {X({3, 160}), X({3, 150})},
           {S("equation", "bi,bj->bij")}));
  // braid's CPU kernel (einsum_cpu.cc): no summed label (a transpose), a
  // diagonal, a sum of everything, three operands, an ellipsis broadcast, a
  // label of extent 0, and output elements over the two threads (one
  // thread's share starting mid-row).
  add(Make("einsum_transpose_implicit", "Einsum", {X({300, 200})}, {S("equation", "ji")}));
  add(Make("einsum_transpose_thread_mid_row", "Einsum", {X({7, 9999})}, {S("equation", "ij->ji")}));
  add(Make("einsum_diagonal_square", "Einsum", {X({50, 50})}, {S("equation", "ii->i")}));
  add(Make("einsum_sum_all", "Einsum", {X({3, 4})}, {S("equation", "ij->")}));
  add(Make("einsum_outer_three", "Einsum", {X({40}), X({30}), X({30})},
           {S("equation", "i,j,k->ijk")}));
  add(Make("einsum_batched_large", "Einsum", {X({4, 64, 32}), X({4, 32, 40})},
           {S("equation", "bij,bjk->bik")}));
  add(Make("einsum_ellipsis_batch_broadcast", "Einsum", {X({2, 1, 3, 4}), X({1, 3, 4, 5})},
           {S("equation", "...ij,...jk->...ik")}));
  add(Make("einsum_contract_middle_permuted", "Einsum", {X({5, 6, 7}), X({7, 5, 3})},
           {S("equation", "abc,cad->db")}));
  add(Make("einsum_empty_label", "Einsum", {X({0, 3})}, {S("equation", "ij->j")}));
  add(Make("unary_Tan", "Tan", {X({3, 11}, -1.2, 1.2)}));
  for (const char* op : {"Asin", "Acos", "Atanh"})
    add(Make(std::string("unary_") + op, op, {X({3, 11}, -0.99, 0.99)}));
  for (const char* op : {"Atan", "Sinh", "Cosh", "Asinh", "Softplus", "Softsign", "Elu", "Selu"})
    add(Make(std::string("unary_") + op, op, {X({3, 11}, -3.0, 3.0)}));
  add(Make("unary_Mish", "Mish", {X({3, 11}, -3.0, 3.0)}, {}, 1, 18));
  // Gelu (opset 20): exact (erf) and the tanh approximation.
  add(Make("gelu_erf", "Gelu", {X({2, 3, 5, 5}, -4.0, 4.0)}, {}, 1, 20));
  add(Make("gelu_tanh", "Gelu", {X({2, 3, 5, 5}, -4.0, 4.0)}, {S("approximate", "tanh")}, 1, 20));
  add(Make("unary_Acosh", "Acosh", {X({3, 11}, 1.01, 5.0)}));
  add(Make("elu_alpha", "Elu", {X({4, 9}, -3.0, 3.0)}, {F("alpha", 0.5f)}));
  add(Make("celu_alpha", "Celu", {X({4, 9}, -3.0, 3.0)}, {F("alpha", 2.0f)}));
  add(Make("selu_attrs", "Selu", {X({4, 9}, -3.0, 3.0)}, {F("alpha", 2.0f), F("gamma", 3.0f)}));
  add(Make("thresholded_relu", "ThresholdedRelu", {X({4, 9}, -3.0, 3.0)}, {F("alpha", 0.5f)}));
  add(Make("shrink_soft", "Shrink", {X({4, 9}, -3.0, 3.0)}, {F("lambd", 1.0f), F("bias", 0.5f)}));
  add(Make("is_nan", "IsNaN", {X({3, 5})}));
  add(Make("is_inf_positive_only", "IsInf", {X({3, 5})}, {I("detect_negative", 0)}));
  add(Make("clip_inputs", "Clip", {X({3, 10}), ConstScalar(-0.5, -0.4), ConstScalar(0.4, 0.5)}));
  add(Make("clip_max_only", "Clip", {X({3, 10}), Omitted(), ConstScalar(0.2, 0.3)}));
  add(Make("clip_relu6_attrs", "Clip", {X({3, 10}, -8.0, 8.0)}, {F("min", 0.0f), F("max", 6.0f)}, 1, 6));
  // braid's CPU Clip: a 4-D tensor split across the threads (and nhwc in
  // tests/kernels/channels_last_test.cc), bounds crossed (lo > hi gives hi).
  add(Make("clip_relu6_large", "Clip", {X({2, 16, 40, 40}, -8.0, 8.0), ConstScalar(-0.01, 0.0),
                                        ConstScalar(5.9, 6.0)}));
  add(Make("clip_crossed_bounds", "Clip", {X({3, 10}), ConstScalar(0.4, 0.5), ConstScalar(-0.5, -0.4)}));

  // QuantizeLinear / DequantizeLinear: per tensor and per axis, with and
  // without a zero point, large enough to split across threads; values past
  // the quantized range saturate.
  {
    auto constant = [](OpInput in) {
      in.constant = true;
      return in;
    };
    add(Make("quantize_u8_per_tensor", "QuantizeLinear",
             {X({4, 8, 40, 40}, -6.0, 6.0), constant(X({}, 0.02, 0.05)),
              constant(Ix(DataType::kU8, {}, 100, 150))}, {}, 1, 13));
    add(Make("quantize_i8_per_axis", "QuantizeLinear",
             {X({2, 6, 5, 5}, -3.0, 3.0), constant(X({6}, 0.01, 0.03)),
              constant(Ix(DataType::kI8, {6}, -10, 10))}, {I("axis", 1)}, 1, 13));
    add(Make("quantize_no_zero_point_runtime_scale", "QuantizeLinear",
             {X({3, 50}, -2.0, 2.0), X({}, 0.01, 0.02)}, {}, 1, 13));
    add(Make("dequantize_u8_per_tensor", "DequantizeLinear",
             {Ix(DataType::kU8, {4, 8, 40, 40}, 1, 255), constant(X({}, 0.02, 0.05)),
              constant(Ix(DataType::kU8, {}, 100, 150))}, {}, 1, 13));
    add(Make("dequantize_i8_per_axis_0", "DequantizeLinear",
             {Ix(DataType::kI8, {6, 3, 3, 3}, -127, 127), constant(X({6}, 0.001, 0.01)),
              constant(Ix(DataType::kI8, {6}, -5, 5))}, {I("axis", 0)}, 1, 13));
    add(Make("dequantize_i32_bias", "DequantizeLinear",
             {Ix(DataType::kI32, {16}, -100000, 100000), constant(X({16}, 1e-4, 1e-3))},
             {I("axis", 0)}, 1, 13));
  }
  add(Make("cast_f32_i32", "Cast", {X({4, 6}, -50.0, 50.0)}, {I("to", 6)}));
  add(Make("cast_i64_f32", "Cast", {Ix(DataType::kI64, {4, 6})}, {I("to", 1)}));
  add(Make("cast_f32_bool", "Cast", {X({10})}, {I("to", 9)}));
  add(Make("where_broadcast", "Where", {OpInput{DataType::kBool, {2, 1, 4}}, X({3, 4}), X({2, 3, 1})}));
  // braid's CPU Cast (cast_cpu.cc): > 2 x 16384 elements (split over the two
  // threads), NaN / Inf / out-of-range floats to integers (0, saturation,
  // wrap), f16 and f64 both ways, narrowing integers, bool and u8.
  add(Make("cast_large_f32_i64_naninf", "Cast", {WithNanInf(X({4, 100, 100}, -1e20, 1e20))},
           {I("to", 7)}));
  add(Make("cast_large_f32_i32_wraps", "Cast", {WithNanInf(X({40000}, -5e9, 5e9))}, {I("to", 6)}));
  add(Make("cast_large_f32_f16_naninf", "Cast", {WithNanInf(X({40000}, -7e4, 7e4))},
           {I("to", 10)}));
  add(Make("cast_f16_f32", "Cast", {Ix(DataType::kF16, {3, 7}, -300, 300)}, {I("to", 1)}));
  add(Make("cast_f32_f64_naninf", "Cast", {WithNanInf(X({5, 9}))}, {I("to", 11)}));
  add(Make("cast_f64_f32", "Cast", {Ix(DataType::kF64, {5, 9}, -1e3, 1e3)}, {I("to", 1)}));
  add(Make("cast_large_i64_i32_wraps", "Cast", {Ix(DataType::kI64, {40000}, -1e12, 1e12)},
           {I("to", 6)}));
  add(Make("cast_large_u8_f32", "Cast", {Ix(DataType::kU8, {40000}, 1, 255)}, {I("to", 1)}));
  add(Make("cast_large_bool_f32", "Cast", {OpInput{DataType::kBool, {40000}}}, {I("to", 1)}));
  add(Make("cast_f32_u8_wraps", "Cast", {X({6, 7}, -300, 300)}, {I("to", 2)}));
  add(Make("cast_i32_bool", "Cast", {Ix(DataType::kI32, {6, 7}, -2, 2)}, {I("to", 9)}));
  add(Make("cast_i8_i16", "Cast", {Ix(DataType::kI8, {6, 7}, -128, 127)}, {I("to", 5)}));
  add(Make("cast_same_type", "Cast", {X({6, 7})}, {I("to", 1)}));
  add(Make("castlike_large_i64_f32", "CastLike",
           {Ix(DataType::kI64, {40000}, -1e9, 1e9), X({1})}));
  // braid's CPU Where (where_cpu.cc): every step pattern (same shape, scalar
  // x / y, a broadcast condition), over the two threads, 1-, 4- and 8-byte
  // elements, an extent-1 output axis, a rank-0 result.
  add(Make("where_large_same", "Where",
           {OpInput{DataType::kBool, {4, 100, 100}}, X({4, 100, 100}), X({4, 100, 100})}));
  add(Make("where_large_mask_scalar_y", "Where",
           {OpInput{DataType::kBool, {1, 1, 64, 64}}, X({2, 8, 64, 64}), X({})}));
  add(Make("where_large_scalar_x_naninf", "Where",
           {OpInput{DataType::kBool, {2, 128, 160}}, X({}), WithNanInf(X({2, 128, 160}))}));
  add(Make("where_i64_row_cond", "Where",
           {OpInput{DataType::kBool, {5, 1}}, Ix(DataType::kI64, {5, 6}), Ix(DataType::kI64, {6})}));
  add(Make("where_u8_extent1", "Where",
           {OpInput{DataType::kBool, {3, 1, 4}}, Ix(DataType::kU8, {1, 1, 4}, 1, 255),
            Ix(DataType::kU8, {3, 1, 1}, 1, 255)}));
  add(Make("where_bool_values", "Where",
           {OpInput{DataType::kBool, {4, 5}}, OpInput{DataType::kBool, {4, 5}},
            OpInput{DataType::kBool, {5}}}));
  add(Make("where_rank0", "Where", {OpInput{DataType::kBool, {}}, X({}), X({})}));
  add(Make("where_rows_cut_by_threads", "Where",
           {OpInput{DataType::kBool, {7, 4999}}, X({1, 4999}), X({7, 1})}));
  add(Make("less_rows_cut_by_threads", "Less", {X({7, 4999}), X({4999})}));
  // braid's CPU comparisons, logical ops and Mod (binary_typed_cpu.cc): NaN
  // (compares false), every operand step pattern, the threaded path, 1- to
  // 8-byte dtypes, bool Equal, Mod's sign rules with negative divisors.
  for (const char* op : {"Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual"}) {
    add(Make(std::string("compare_large_naninf_") + op, op,
             {WithNanInf(X({4, 128, 64})), X({64})}));
    add(Make(std::string("compare_scalar_first_") + op, op, {X({}), X({3, 4})}));
    add(Make(std::string("compare_u8_") + op, op,
             {Ix(DataType::kU8, {3, 1, 5}, 1, 4), Ix(DataType::kU8, {4, 1}, 1, 4)}));
    add(Make(std::string("compare_f64_") + op, op,
             {Ix(DataType::kF64, {3, 4}, -2, 2), Ix(DataType::kF64, {3, 1}, -2, 2)}));
    add(Make(std::string("compare_i64_large_") + op, op,
             {Ix(DataType::kI64, {2, 200, 100}, -3, 3), Ix(DataType::kI64, {200, 1}, -3, 3)}));
  }
  add(Make("equal_bool", "Equal", {OpInput{DataType::kBool, {4, 5}}, OpInput{DataType::kBool, {5}}}));
  add(Make("equal_i8", "Equal", {Ix(DataType::kI8, {4, 5}, -2, 2), Ix(DataType::kI8, {4, 5}, -2, 2)}));
  for (const char* op : {"And", "Or", "Xor"})
    add(Make(std::string("logical_large_") + op, op,
             {OpInput{DataType::kBool, {2, 200, 100}}, OpInput{DataType::kBool, {200, 1}}}));
  add(Make("logical_scalar_And", "And",
           {OpInput{DataType::kBool, {}}, OpInput{DataType::kBool, {7}}}));
  add(Make("not_large", "Not", {OpInput{DataType::kBool, {300, 200}}}));
  add(Make("mod_i32_divisor_sign", "Mod",
           {Ix(DataType::kI32, {4, 5}, -100, 100), Ix(DataType::kI32, {5}, -7, 7)}));
  add(Make("mod_i32_fmod_dividend_sign", "Mod",
           {Ix(DataType::kI32, {4, 5}, -100, 100), Ix(DataType::kI32, {5}, -7, 7)}, {I("fmod", 1)}));
  add(Make("mod_i64_large", "Mod",
           {Ix(DataType::kI64, {4, 100, 100}, -1e6, 1e6), Ix(DataType::kI64, {100}, -9, 9)}));
  add(Make("mod_i8_scalar_divisor", "Mod",
           {Ix(DataType::kI8, {3, 4}, -128, 127), Ix(DataType::kI8, {}, -3, -3)}));
  add(Make("mod_u8", "Mod", {Ix(DataType::kU8, {3, 4}, 1, 255), Ix(DataType::kU8, {3, 1}, 1, 9)}));
  add(Make("mod_fmod_f32_large_naninf", "Mod",
           {WithNanInf(X({4, 100, 100}, -50, 50)), X({100}, -3, 3)}, {I("fmod", 1)}));
  add(Make("mod_fmod_f64", "Mod",
           {Ix(DataType::kF64, {3, 4}, -50, 50), Ix(DataType::kF64, {4}, -3, 3)}, {I("fmod", 1)}));
  add(Make("mod_fmod_f16", "Mod",
           {Ix(DataType::kF16, {3, 4}, -50, 50), Ix(DataType::kF16, {4}, -3, 3)}, {I("fmod", 1)}));

  // Data movement.
  add(Make("identity", "Identity", {X({2, 3})}));
  add(Make("reshape", "Reshape", {X({2, 3, 4}), Ints64({4, -1})}));
  add(Make("flatten", "Flatten", {X({2, 3, 4})}, {I("axis", 2)}));
  add(Make("squeeze", "Squeeze", {X({2, 1, 4}), Ints64({1})}));
  add(Make("unsqueeze", "Unsqueeze", {X({2, 4}), Ints64({0, -1})}));
  add(Make("shape_slice", "Shape", {X({2, 3, 4})}, {I("start", 1)}));
  add(Make("gather_axis0", "Gather", {X({5, 4}), Ints64({4, -1, 0}, false)}));
  add(Make("gather_elements_axis1", "GatherElements", {X({3, 5}), Ix(DataType::kI64, {3, 4}, -5, 4)},
           {I("axis", 1)}));
  add(Make("gather_elements_axis0_i32", "GatherElements",
           {X({4, 2, 3}), Ix(DataType::kI32, {2, 2, 3}, -4, 3)}));
  add(Make("scatter_elements_axis0", "ScatterElements",
           {X({4, 3}), Ix(DataType::kI64, {2, 3}, -4, 3), X({2, 3})}));
  add(Make("scatter_elements_add", "ScatterElements",
           {X({3, 5}), Ix(DataType::kI64, {3, 4}, -5, 4), X({3, 4})},
           {I("axis", 1), S("reduction", "add")}));
  add(Make("scatter_elements_max_i64", "ScatterElements",
           {Ix(DataType::kI64, {3, 5}), Ix(DataType::kI64, {3, 2}, -5, 4), Ix(DataType::kI64, {3, 2})},
           {I("axis", -1), S("reduction", "max")}, 1, 18));
  add(Make("scatter_deprecated", "Scatter", {X({3, 4}), Ix(DataType::kI64, {3, 2}, -4, 3), X({3, 2})},
           {I("axis", 1)}, 1, 10));
  add(Make("gather_nd_pairs", "GatherND", {X({4, 3, 5}), Ix(DataType::kI64, {2, 2}, -3, 2)}));
  add(Make("gather_nd_batch", "GatherND", {X({2, 4, 3}), Ix(DataType::kI64, {2, 3, 1}, -4, 3)},
           {I("batch_dims", 1)}));
  // ReverseSequence: time-major and batch-major, some rows only partly reversed.
  add(Make("reverse_sequence_time_major", "ReverseSequence", {X({5, 3, 4}), Ints64({5, 2, 0}, false)}, {}));
  add(Make("reverse_sequence_batch_major", "ReverseSequence", {Ix(DataType::kI64, {3, 4, 2}), Ints64({1, 4, 3}, false)},
           {I("batch_axis", 0), I("time_axis", 1)}));
  add(Make("one_hot_axis1", "OneHot", {Ix(DataType::kI64, {2, 3}, -6, 6), Ints64({5}), X({2})},
           {I("axis", 1)}));
  add(Make("depth_to_space_dcr", "DepthToSpace", {X({2, 8, 3, 2})}, {I("blocksize", 2)}));
  add(Make("depth_to_space_crd", "DepthToSpace", {X({1, 18, 2, 2})},
           {I("blocksize", 3), S("mode", "CRD")}));
  add(Make("space_to_depth", "SpaceToDepth", {X({1, 3, 4, 6})}, {I("blocksize", 2)}));
  // braid's CPU kernel (depth_space_cpu.cc): blocksize 2 and 3 in both
  // modes, other element sizes, and planes split over the two threads.
  add(Make("depth_to_space_dcr_b3_i64", "DepthToSpace", {Ix(DataType::kI64, {2, 18, 3, 4})},
           {I("blocksize", 3)}));
  add(Make("depth_to_space_crd_b2_u8", "DepthToSpace", {Ix(DataType::kU8, {2, 12, 3, 5}, 1, 255)},
           {I("blocksize", 2), S("mode", "CRD")}));
  add(Make("space_to_depth_b3_i32", "SpaceToDepth", {Ix(DataType::kI32, {2, 2, 6, 9})},
           {I("blocksize", 3)}));
  add(Make("depth_to_space_dcr_large", "DepthToSpace", {X({2, 32, 24, 24})}, {I("blocksize", 2)}));
  add(Make("depth_to_space_crd_large", "DepthToSpace", {X({1, 36, 30, 32})},
           {I("blocksize", 3), S("mode", "CRD")}));
  add(Make("space_to_depth_large", "SpaceToDepth", {X({2, 8, 48, 48})}, {I("blocksize", 2)}));
  add(Make("gather_axis1_i32", "Gather", {X({2, 5, 3}), Ix(DataType::kI32, {2, 2}, -5, 4)}, {I("axis", 1)}));
  add(Make("slice_steps", "Slice", {X({6, 8}), Ints64({1, -1}), Ints64({5, 0}), Ints64({0, 1}), Ints64({2, -3})}));
  add(Make("slice_attrs", "Slice", {X({6, 8})}, {L("starts", {2}), L("ends", {100}), L("axes", {1})}, 1, 9));
  add(Make("concat_axis1", "Concat", {X({2, 3, 4}), X({2, 1, 4}), X({2, 2, 4})}, {I("axis", 1)}));
  add(Make("concat_last", "Concat", {X({2, 3}), X({2, 5})}, {I("axis", -1)}));
  // Feature maps (nhwc in the channels-last test): a sliced conv's uneven
  // channel join, a width concat, a batch concat, 1x1 maps (whose nhwc and
  // plain memory agree), and 64-bit elements.
  add(Make("concat_4d_channels_join", "Concat", {X({2, 7, 3, 5}), X({2, 1, 3, 5})}, {I("axis", 1)}));
  add(Make("concat_4d_width", "Concat", {X({1, 3, 2, 4}), X({1, 3, 2, 3}), X({1, 3, 2, 1})},
           {I("axis", 3)}));
  add(Make("concat_4d_batch", "Concat", {X({1, 4, 3, 3}), X({2, 4, 3, 3})}, {I("axis", 0)}));
  add(Make("concat_4d_1x1_maps", "Concat", {X({1, 6, 1, 1}), X({1, 10, 1, 1})}, {I("axis", 1)}));
  add(Make("concat_i64", "Concat", {Ix(DataType::kI64, {2, 3}), Ix(DataType::kI64, {1, 3})},
           {I("axis", 0)}));
  add(Make("split_uneven", "Split", {X({4, 10}), Ints64({3, 7})}, {I("axis", 1)}, 2));
  // Feature-map windows (nhwc in the channels-last test): GhostNet's channel
  // slice, a strided spatial slice with a negative step, a channel Split and
  // 64-bit elements.
  add(Make("slice_4d_channels", "Slice", {X({2, 6, 3, 5}), Ints64({1}), Ints64({4}), Ints64({1})}));
  add(Make("slice_4d_strided", "Slice",
           {X({1, 4, 7, 6}), Ints64({6, 1}), Ints64({0, 6}), Ints64({2, 3}), Ints64({-2, 2})}));
  add(Make("split_4d_channels", "Split", {X({1, 8, 3, 3}), Ints64({3, 5})}, {I("axis", 1)}, 2));
  add(Make("slice_i64", "Slice", {Ix(DataType::kI64, {4, 5}), Ints64({1}), Ints64({3}), Ints64({0})}));
  add(Make("split_equal", "Split", {X({6, 2})}, {}, 3));
  add(Make("transpose_default", "Transpose", {X({2, 3, 4})}));
  add(Make("transpose_nchw_nhwc", "Transpose", {X({2, 3, 4, 5})}, {L("perm", {0, 2, 3, 1})}));
  add(Make("expand", "Expand", {X({3, 1}), Ints64({2, 3, 4})}));
  // braid's CPU Expand (expand_cpu.cc): contiguous rows (memcpy) and
  // stretched rows (fill), over the two threads; a shape of lower rank than
  // the input, extent-1 axes, a scalar input, 1- and 8-byte elements, an
  // empty output.
  add(Make("expand_large_rows", "Expand", {X({1, 1, 256}), Ints64({2, 100, 256})}));
  add(Make("expand_large_stretch_last", "Expand", {X({64, 1}), Ints64({8, 64, 128})}));
  add(Make("expand_lower_rank_shape", "Expand", {X({2, 3, 4}), Ints64({3, 1})}));
  add(Make("expand_extent1", "Expand", {X({1, 5}), Ints64({1, 1})}));
  add(Make("expand_scalar", "Expand", {X({}), Ints64({3, 4})}));
  add(Make("expand_middle_i64", "Expand", {Ix(DataType::kI64, {3, 1, 5}), Ints64({2, 3, 4, 5})}));
  add(Make("expand_bool", "Expand", {OpInput{DataType::kBool, {1, 7}}, Ints64({6, 1})}));
  add(Make("expand_empty", "Expand", {X({1, 4}), Ints64({0, 4})}));
  // 7 rows of 4999 over two threads: the share boundary cuts a row (memcpy
  // and fill).
  add(Make("expand_rows_cut_by_threads", "Expand", {X({1, 4999}), Ints64({7, 4999})}));
  add(Make("expand_fill_cut_by_threads", "Expand", {X({7, 1}), Ints64({7, 4999})}));
  add(Make("tile", "Tile", {X({2, 3}), Ints64({2, 3})}));
  // braid's CPU kernel (tile_cpu.cc): repeats on the first, a middle and
  // the last axis only, every axis, 64- and 8-bit elements, a rank-1 input,
  // and rows split over the two threads.
  add(Make("tile_first_axis", "Tile", {X({2, 3, 4}), Ints64({3, 1, 1})}));
  add(Make("tile_middle_axis", "Tile", {X({2, 3, 4}), Ints64({1, 4, 1})}));
  add(Make("tile_last_axis", "Tile", {X({2, 3, 4}), Ints64({1, 1, 5})}));
  add(Make("tile_every_axis_i64", "Tile", {Ix(DataType::kI64, {2, 1, 3}), Ints64({2, 3, 2})}));
  add(Make("tile_u8", "Tile", {Ix(DataType::kU8, {3, 1, 5}, 1, 255), Ints64({1, 7, 3})}));
  add(Make("tile_rank1", "Tile", {X({5}), Ints64({9})}));
  add(Make("tile_large", "Tile", {X({4, 3, 50, 60}), Ints64({1, 2, 2, 3})}));
  add(Make("scatter_nd_rows", "ScatterND", {X({4, 3}), [] {
             OpInput rows{DataType::kI64, {2, 1}};
             rows.constant = true;
             rows.values = {2, 0};
             return rows;
           }(), X({2, 3})}));
  // braid's CPU gather / scatter kernels (gather_scatter_cpu.cc): row and
  // element copies over the two threads (> 2 x 16384 outputs), every index
  // and element size the harness makes, negative axes and indices, an extent
  // of 1, scalar indices, and scatters whose random indices repeat (the
  // reference's last-write-wins and reduction order must hold).
  add(Make("gather_large_rows", "Gather", {X({64, 40, 32}), Ix(DataType::kI64, {30}, -40, 39)},
           {I("axis", 1)}));
  add(Make("gather_large_elements_i32", "Gather",
           {Ix(DataType::kI32, {300, 200}), Ix(DataType::kI32, {150}, -200, 199)}, {I("axis", -1)}));
  add(Make("gather_u8_last_axis", "Gather",
           {Ix(DataType::kU8, {5, 7}, 1, 255), Ix(DataType::kI64, {3, 2}, -7, 6)}, {I("axis", 1)}));
  add(Make("gather_i64_constant_indices", "Gather", {Ix(DataType::kI64, {6, 3}), Ints64({5, -6, 0})}));
  add(Make("gather_scalar_index", "Gather", {X({3, 5, 2}), Ix(DataType::kI64, {}, -5, 4)},
           {I("axis", -2)}));
  add(Make("gather_extent_one", "Gather", {X({1, 4}), Ix(DataType::kI32, {3}, -1, 0)}));
  add(Make("gather_elements_large_last_axis", "GatherElements",
           {X({200, 300}), Ix(DataType::kI64, {200, 200}, -300, 299)}, {I("axis", -1)}));
  add(Make("gather_elements_large_axis0_i32", "GatherElements",
           {X({50, 40, 30}), Ix(DataType::kI32, {40, 40, 25}, -50, 49)}));
  add(Make("gather_elements_middle_u8", "GatherElements",
           {Ix(DataType::kU8, {4, 6, 5}, 1, 255), Ix(DataType::kI64, {3, 4, 5}, -6, 5)},
           {I("axis", 1)}));
  add(Make("gather_elements_rank1_i64", "GatherElements",
           {Ix(DataType::kI64, {7}), Ix(DataType::kI64, {10}, -7, 6)}));
  add(Make("gather_nd_large_slices", "GatherND",
           {X({64, 32, 20}), Ix(DataType::kI64, {100, 1}, -64, 63)}));
  add(Make("gather_nd_large_elements", "GatherND",
           {X({200, 200}), Ix(DataType::kI64, {200, 200, 2}, -200, 199)}));
  add(Make("gather_nd_batch2_i64", "GatherND",
           {Ix(DataType::kI64, {2, 3, 4, 5}), Ix(DataType::kI64, {2, 3, 2, 2}, -4, 3)},
           {I("batch_dims", 2)}));
  add(Make("gather_nd_u8_full_tuple", "GatherND",
           {Ix(DataType::kU8, {3, 4}, 1, 255), Ix(DataType::kI64, {5, 2}, -3, 2)}));
  add(Make("scatter_nd_large_rows_repeated", "ScatterND",
           {X({64, 1024}), Ix(DataType::kI64, {40, 1}, -64, 63), X({40, 1024})}));
  add(Make("scatter_nd_large_add", "ScatterND",
           {X({64, 1024}), Ix(DataType::kI64, {40, 1}, -64, 63), X({40, 1024})},
           {S("reduction", "add")}, 1, 16));
  add(Make("scatter_nd_mul_i32", "ScatterND",
           {Ix(DataType::kI32, {6, 4}, -9, 9), Ix(DataType::kI64, {8, 1}, -6, 5),
            Ix(DataType::kI32, {8, 4}, -9, 9)},
           {S("reduction", "mul")}, 1, 16));
  add(Make("scatter_nd_max_i64_elements", "ScatterND",
           {Ix(DataType::kI64, {5, 4}), Ix(DataType::kI64, {30, 2}, -4, 3), Ix(DataType::kI64, {30})},
           {S("reduction", "max")}, 1, 18));
  add(Make("scatter_nd_min_large", "ScatterND",
           {X({8, 64, 128}), Ix(DataType::kI64, {6, 1}, -8, 7), X({6, 64, 128})},
           {S("reduction", "min")}, 1, 18));
  add(Make("scatter_nd_elements_repeated", "ScatterND",
           {X({50, 40}), Ix(DataType::kI64, {100, 2}, -40, 39), X({100})}));
  add(Make("scatter_nd_u8", "ScatterND",
           {Ix(DataType::kU8, {6, 5}, 1, 255), Ix(DataType::kI64, {3, 1}, -6, 5),
            Ix(DataType::kU8, {3, 5}, 1, 255)}));
  add(Make("scatter_elements_large_axis1", "ScatterElements",
           {X({256, 256}), Ix(DataType::kI64, {256, 200}, -256, 255), X({256, 200})},
           {I("axis", 1)}));
  add(Make("scatter_elements_large_axis0_add", "ScatterElements",
           {X({256, 256}), Ix(DataType::kI32, {200, 256}, -256, 255), X({200, 256})},
           {S("reduction", "add")}, 1, 16));
  add(Make("scatter_elements_middle_mul_i32", "ScatterElements",
           {Ix(DataType::kI32, {4, 5, 6}, -9, 9), Ix(DataType::kI64, {3, 4, 5}, -5, 4),
            Ix(DataType::kI32, {3, 4, 5}, -9, 9)},
           {I("axis", -2), S("reduction", "mul")}, 1, 16));
  add(Make("scatter_elements_min_u8", "ScatterElements",
           {Ix(DataType::kU8, {3, 8}, 1, 255), Ix(DataType::kI64, {3, 6}, -8, 7),
            Ix(DataType::kU8, {3, 6}, 1, 255)},
           {I("axis", 1), S("reduction", "min")}, 1, 18));
  add(Make("scatter_elements_max_i8_axis0", "ScatterElements",
           {Ix(DataType::kI8, {4, 6}, -100, 100), Ix(DataType::kI64, {7, 6}, -4, 3),
            Ix(DataType::kI8, {7, 6}, -100, 100)},
           {S("reduction", "max")}, 1, 18));
  add(Make("scatter_elements_rank1_repeated", "ScatterElements",
           {X({10}), Ix(DataType::kI64, {15}, -10, 9), X({15})}));
  add(Make("scatter_elements_u8_none", "ScatterElements",
           {Ix(DataType::kU8, {5, 4}, 1, 255), Ix(DataType::kI32, {5, 3}, -4, 3),
            Ix(DataType::kU8, {5, 3}, 1, 255)},
           {I("axis", 1)}));
  add(Make("range_i64", "Range", {I64Scalar(3), I64Scalar(17), I64Scalar(4)}));
  add(Make("cumsum_axis1_reverse", "CumSum", {X({3, 5}), I64Scalar(1)}, {I("reverse", 1)}));
  add(Make("pad_constant", "Pad", {X({2, 3, 4}), Ints64({0, 1, 2, 0, 1, 0}), ConstScalar(0.5, 0.6)}));
  // 4-D (braid's CPU kernel, plain and channels-last): HGNetV2's stem pads H and
  // W; padding the channels too.
  add(Make("pad_constant_spatial", "Pad", {X({2, 3, 5, 6}), Ints64({0, 0, 0, 0, 0, 0, 1, 1})}));
  add(Make("pad_constant_channels", "Pad", {X({1, 4, 3, 5}), Ints64({0, 1, 2, 0, 0, 2, 0, 3}),
                                             ConstScalar(-0.6, -0.5)}));
  add(Make("pad_reflect", "Pad", {X({1, 2, 4, 4}), Ints64({0, 0, 2, 1, 0, 0, 1, 3})},
           {S("mode", "reflect")}));
  add(Make("pad_edge", "Pad", {X({1, 2, 3, 3}), Ints64({0, 0, 1, 1, 0, 0, 2, 2})}, {S("mode", "edge")}));
  add(Make("constant_of_shape", "ConstantOfShape", {Ints64({2, 3})}));
  // Resize: YOLO's nearest 2x (constant scales), linear and cubic to given
  // sizes, Upsample-9. Expected values: the ONNX backend cases
  // (braid onnx-test, test_resize_* and test_upsample_*).
  OpInput scales2x{DataType::kF32, {4}};
  scales2x.constant = true;
  scales2x.values = {1, 1, 2, 2};
  add(Make("resize_nearest_2x", "Resize", {X({1, 3, 5, 4}), Omitted(), scales2x}));
  add(Make("resize_linear_sizes", "Resize", {X({1, 2, 6, 5}), Omitted(), Omitted(), Ints64({1, 2, 4, 9})},
           {S("mode", "linear")}));
  add(Make("resize_cubic_align_corners", "Resize",
           {X({1, 2, 5, 5}), Omitted(), Omitted(), Ints64({1, 2, 8, 3})},
           {S("mode", "cubic"), S("coordinate_transformation_mode", "align_corners")}));
  add(Make("upsample_nearest", "Upsample", {X({1, 2, 3, 3}), scales2x}, {}, 1, 9));
  // Taps braid's CPU kernel sums per element (cubic, antialiased shrinks),
  // one axis resized alone, and a rows-over-threads size (CrossViT's
  // position embedding); an axis outside the two innermost stays on the
  // reference.
  add(Make("resize_cubic_large", "Resize",
           {X({1, 192, 14, 14}), Omitted(), Omitted(), Ints64({1, 192, 15, 15})},
           {S("mode", "cubic")}));
  add(Make("resize_cubic_exclude_outside_w_only", "Resize",
           {X({2, 3, 4, 6}), Omitted(), Omitted(), Ints64({2, 3, 4, 11})},
           {S("mode", "cubic"), I("exclude_outside", 1), F("cubic_coeff_a", -0.5f)}));
  add(Make("resize_linear_antialias_shrink", "Resize",
           {X({1, 2, 12, 10}), Omitted(), Omitted(), Ints64({1, 2, 5, 3})},
           {S("mode", "linear"), I("antialias", 1)}, 1, 18));
  add(Make("resize_cubic_antialias_h_only", "Resize",
           {X({1, 2, 9, 4}), Omitted(), Omitted(), Ints64({1, 2, 4, 4})},
           {S("mode", "cubic"), I("antialias", 1)}, 1, 18));
  add(Make("resize_cubic_three_axes", "Resize",
           {X({1, 3, 4, 5}), Omitted(), Omitted(), Ints64({1, 5, 6, 7})}, {S("mode", "cubic")}));
  // Index-producing and masking ops.
  add(Make("argmax_axis1_keepdims", "ArgMax", {X({3, 5, 4})}, {I("axis", 1)}));
  add(Make("argmax_i32_last_index", "ArgMax", {Ix(DataType::kI32, {4, 6}, -3, 3)},
           {I("axis", -1), I("keepdims", 0), I("select_last_index", 1)}));
  add(Make("argmin_axis0_no_keepdims", "ArgMin", {X({5, 3})}, {I("keepdims", 0)}));
  add(Make("topk_largest_last_axis", "TopK", {X({3, 7}), Ints64({3})}, {}, 2));
  add(Make("topk_smallest_axis0_i64", "TopK", {Ix(DataType::kI64, {6, 4}), Ints64({2})},
           {I("axis", 0), I("largest", 0)}, 2));
  // braid's CPU kernels (arg_reduce_cpu.cc, top_k_cpu.cc, cum_sum_cpu.cc,
  // trilu_cpu.cc, one_hot_cpu.cc, range_cpu.cc), whose results are the
  // reference's bit for bit (exact: zero tolerance): rows (inner 1) and
  // column blocks (inner > 1, one block partly filled), split over the two
  // threads; every dtype class; ties (small integer ranges), both
  // select_last_index / largest / exclusive / reverse settings; NaN, Inf,
  // several NaNs in one row or column; negative axes; extents of 1; the
  // run-time axis CumSum's kernel declines.
  auto exact = [](OpCase c) {
    c.abs_tolerance = c.rel_tolerance = 0;
    return c;
  };
  auto nans_at = [](OpInput in, Ints positions) {
    for (int64_t at : positions) in.specials.push_back({at, std::numeric_limits<float>::quiet_NaN()});
    return in;
  };
  add(Make("argmax_rows_threads_naninf", "ArgMax", {WithNanInf(X({300, 130}))}, {I("axis", -1)}));
  add(Make("argmin_columns_threads_naninf", "ArgMin", {WithNanInf(X({4, 60, 300}))},
           {I("axis", 1), I("keepdims", 0)}));
  add(Make("argmax_i8_ties_last_index", "ArgMax", {Ix(DataType::kI8, {6, 5, 7}, -2, 2)},
           {I("axis", -2), I("select_last_index", 1)}));
  add(Make("argmin_u8_ties_last_index", "ArgMin", {Ix(DataType::kU8, {9, 4}, 1, 3)},
           {I("axis", 0), I("select_last_index", 1)}));
  add(Make("argmin_i64_ties", "ArgMin", {Ix(DataType::kI64, {5, 33}, -3, 3)}, {I("axis", 1)}));
  add(Make("argmax_f64_columns", "ArgMax", {Ix(DataType::kF64, {3, 8, 5}, -1, 1)}, {I("axis", 1)}));
  add(Make("argmax_extent_1", "ArgMax", {X({4, 1, 6})}, {I("axis", 1)}));
  for (int last = 0; last <= 1; ++last) {
    const std::string suffix = last ? "_last_index" : "";
    add(Make("argmax_nans_in_row" + suffix, "ArgMax", {nans_at(X({2, 40}), {3, 17, 30, 45, 79})},
             {I("axis", 1), I("select_last_index", last)}));
    add(Make("argmin_nans_in_column" + suffix, "ArgMin", {nans_at(X({40, 3}), {3, 30, 60, 61, 119})},
             {I("axis", 0), I("select_last_index", last)}));
  }
  add(Make("topk_rows_threads", "TopK", {X({200, 300}), Ints64({5})}, {}, 2));
  add(exact(Make("topk_smallest_middle_axis_naninf", "TopK", {WithNanInf(X({3, 50, 7})), Ints64({10})},
                 {I("axis", 1), I("largest", 0)}, 2)));
  add(exact(Make("topk_largest_nans_in_row", "TopK", {nans_at(X({2, 40}), {3, 17, 30, 45, 79}), Ints64({6})},
                 {}, 2)));
  add(exact(Make("topk_smallest_nans_in_row", "TopK", {nans_at(X({2, 40}), {3, 17, 30, 45, 79}), Ints64({38})},
                 {I("largest", 0)}, 2)));
  add(Make("topk_i32_ties", "TopK", {Ix(DataType::kI32, {5, 30}, -3, 3), Ints64({8})}, {}, 2));
  // A K below extent / 16: the kernel's heap path (above: selection).
  add(exact(Make("topk_heap_nans_in_row", "TopK", {nans_at(X({2, 200}), {3, 17, 150, 230, 399}), Ints64({4})},
                 {}, 2)));
  add(exact(Make("topk_heap_smallest_nans_in_row", "TopK",
                 {nans_at(X({2, 200}), {3, 17, 150, 230, 399}), Ints64({5})}, {I("largest", 0)}, 2)));
  add(Make("topk_heap_i32_ties_columns", "TopK", {Ix(DataType::kI32, {3, 300, 4}, -3, 3), Ints64({10})},
           {I("axis", 1)}, 2));
  add(Make("topk_u8_ties_all_smallest", "TopK", {Ix(DataType::kU8, {4, 6}, 1, 4), Ints64({6})},
           {I("axis", -1), I("largest", 0)}, 2));
  add(exact(Make("topk_f64_columns_threads", "TopK", {Ix(DataType::kF64, {2, 300, 60}, -1, 1), Ints64({7})},
                 {I("axis", -2)}, 2)));
  add(Make("topk_extent_1", "TopK", {X({5, 1}), Ints64({1})}, {}, 2));
  OpInput axis_i32{DataType::kI32, {}};
  axis_i32.constant = true;
  axis_i32.values = {0};
  add(exact(Make("cumsum_rows_threads_exclusive", "CumSum", {X({300, 200}), I64Scalar(1)},
                 {I("exclusive", 1)})));
  add(exact(Make("cumsum_columns_threads_reverse_exclusive_f64", "CumSum",
                 {Ix(DataType::kF64, {4, 70, 300}, -1, 1), I64Scalar(-2)},
                 {I("exclusive", 1), I("reverse", 1)})));
  add(exact(Make("cumsum_columns_reverse_naninf", "CumSum", {WithNanInf(X({6, 40})), I64Scalar(0)},
                 {I("reverse", 1)})));
  add(exact(Make("cumsum_rows_naninf", "CumSum", {WithNanInf(X({6, 40})), I64Scalar(-1)})));
  add(Make("cumsum_i32_axis_i32", "CumSum", {Ix(DataType::kI32, {50, 7}), axis_i32}));
  add(Make("cumsum_i64_wraps_reverse", "CumSum", {Ix(DataType::kI64, {3, 5}, -4e18, 4e18), I64Scalar(1)},
           {I("reverse", 1)}));
  add(Make("cumsum_u32_wraps_exclusive", "CumSum", {Ix(DataType::kU32, {4, 9}, 1, 4e9), I64Scalar(1)},
           {I("exclusive", 1)}));
  add(Make("cumsum_u64", "CumSum", {Ix(DataType::kU64, {7, 3}, 1, 1e6), I64Scalar(0)}));
  add(Make("cumsum_rank1_extent_1", "CumSum", {X({1}), I64Scalar(0)}));
  add(Make("cumsum_runtime_axis", "CumSum", {X({3, 4}), [] {
             OpInput axis{DataType::kI64, {}};
             axis.values = {1};
             return axis;
           }()}));
  add(Make("trilu_upper_threads", "Trilu", {X({8, 100, 90}), I64Scalar(-3)}));
  add(Make("trilu_lower_threads_wide", "Trilu", {X({6, 40, 150}), I64Scalar(20)}, {I("upper", 0)}));
  add(Make("trilu_lower_keeps_all_u8", "Trilu", {Ix(DataType::kU8, {3, 7, 5}, 1, 200), I64Scalar(100)},
           {I("upper", 0)}));
  add(Make("trilu_upper_zeroes_all_i16", "Trilu", {Ix(DataType::kI16, {2, 4, 6}), I64Scalar(100)}));
  add(Make("trilu_lower_clears_all_f64", "Trilu", {Ix(DataType::kF64, {4, 3}), I64Scalar(-100)},
           {I("upper", 0)}));
  add(Make("trilu_upper_huge_k_i64", "Trilu",
           {Ix(DataType::kI64, {3, 4}), I64Scalar(std::numeric_limits<int64_t>::min())}));
  add(Make("one_hot_rows_threads", "OneHot", {Ix(DataType::kI64, {500, 80}, -12, 12), Ints64({10}), X({2})}));
  add(Make("one_hot_axis0_columns_i32_to_i64", "OneHot",
           {Ix(DataType::kI32, {3, 1500}, -12, 12), Ints64({10}), Ix(DataType::kI64, {2})}, {I("axis", 0)}));
  add(Make("one_hot_f32_indices_u8_values", "OneHot", {X({4, 5}, -6, 6), Ints64({5}), Ix(DataType::kU8, {2}, 1, 200)},
           {I("axis", 1)}));
  add(Make("one_hot_nan_indices_f64_values", "OneHot",
           {WithNanInf(X({4, 5}, -6, 6)), Ints64({6}), Ix(DataType::kF64, {2})}, {I("axis", -2)}));
  add(Make("one_hot_u64_indices_i16_values", "OneHot",
           {Ix(DataType::kU64, {3, 4}, 1, 9), Ints64({7}), Ix(DataType::kI16, {2})}, {I("axis", 2)}));
  add(Make("range_i32_threads", "Range", {[] {
             OpInput v{DataType::kI32, {}};
             v.constant = true;
             v.values = {5};
             return v;
           }(), [] {
             OpInput v{DataType::kI32, {}};
             v.constant = true;
             v.values = {5 + 3 * 40000};
             return v;
           }(), [] {
             OpInput v{DataType::kI32, {}};
             v.constant = true;
             v.values = {3};
             return v;
           }()}));
  add(Make("range_i64_negative_delta", "Range", {I64Scalar(1000), I64Scalar(-70000), I64Scalar(-7)}));
  add(Make("range_f32_declined", "Range", {ConstScalar(0.5, 0.5), ConstScalar(7.5, 7.5), ConstScalar(0.25, 0.25)}));
  // Random corners in [0, 1]: boxes overlap a lot, some thresholds leave classes
  // short of the maximum, others fill them. The rows depend on the data.
  add(Make("non_max_suppression", "NonMaxSuppression",
           {X({2, 30, 4}, 0, 1), X({2, 3, 30}, 0, 1), Ints64({6}), X({1}, 0.3, 0.6),
            X({1}, 0.2, 0.5)}));
  add(Make("non_max_suppression_center_boxes_runtime_max", "NonMaxSuppression",
           {X({1, 25, 4}, 0.1, 1), X({1, 2, 25}, 0, 1), Ints64({4}, false), X({1}, 0.1, 0.3)},
           {I("center_point_box", 1)}));
  // braid's CPU kernel (non_max_suppression_cpu.cc): (batch, class) walks
  // over the two threads, in both box formats; tied scores (lower box index
  // first), NaN / Inf scores, a maximum above N, omitted scalars (no rows),
  // iou_threshold 0 and 1, and a computed maximum.
  add(Make("non_max_suppression_large", "NonMaxSuppression",
           {X({2, 600, 4}, 0, 1), X({2, 8, 600}, 0, 1), Ints64({40}), X({1}, 0.4, 0.5),
            X({1}, 0.1, 0.2)}));
  add(Make("non_max_suppression_large_center_runtime_max", "NonMaxSuppression",
           {X({3, 500, 4}, 0.05, 1), X({3, 6, 500}, 0, 1), Ints64({25}, false), X({1}, 0.5, 0.6)},
           {I("center_point_box", 1)}));
  {
    OpInput tied{DataType::kF32, {2, 3, 40}};
    for (int64_t i = 0; i < 240; ++i) tied.values.push_back(1 + i % 3);
    add(Make("non_max_suppression_tied_scores", "NonMaxSuppression",
             {X({2, 40, 4}, 0, 1), tied, Ints64({100}), [] {
                OpInput iou = X({1});
                iou.values = {1};
                return iou;
              }()}));
  }
  add(Make("non_max_suppression_naninf_scores", "NonMaxSuppression",
           {X({2, 30, 4}, 0, 1), WithNanInf(X({2, 3, 30}, 0, 1)), Ints64({10}), [] {
              OpInput iou = X({1});
              iou.values = {0};
              return iou;
            }()}));
  add(Make("non_max_suppression_scalars_omitted", "NonMaxSuppression",
           {X({1, 10, 4}, 0, 1), X({1, 2, 10}, 0, 1)}));
  add(Make("trilu_upper_runtime_k", "Trilu", {X({2, 4, 5}), [] {
             OpInput k{DataType::kI64, {}};
             k.values = {1};
             return k;
           }()}));
  add(Make("trilu_lower_i32", "Trilu", {Ix(DataType::kI32, {5, 3})}, {I("upper", 0)}));
  add(Make("eye_like_k_dtype", "EyeLike", {X({3, 5})}, {I("k", 2), I("dtype", 7)}));
  add(Make("size", "Size", {X({2, 3, 4})}));
  add(Make("castlike_f32_to_i32", "CastLike", {X({3, 4}, -50, 50), Ix(DataType::kI32, {1})}));

  // NaN, +-Inf and denormals in input 0 (docs/ops.md "NaN and Inf").
  auto nan_inf = [&](OpCase c) {
    c.name += "_naninf";
    c.inputs[0] = WithNanInf(std::move(c.inputs[0]));
    add(std::move(c));
  };
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "Exp", "Abs", "Neg", "Erf", "HardSwish",
                         "Sqrt", "Softplus", "Softsign", "Elu", "Selu", "Celu", "Sign", "Ceil",
                         "Floor", "Round"})
    nan_inf(Make(std::string("unary_") + op, op, {X({2, 3, 8, 8}, -4.0, 4.0)}));
  nan_inf(Make("gelu", "Gelu", {X({3, 17}, -4.0, 4.0)}, {}, 1, 20));
  nan_inf(Make("hard_sigmoid", "HardSigmoid", {X({4, 9}, -5.0, 5.0)},
               {F("alpha", 0.3f), F("beta", 0.4f)}));
  nan_inf(Make("leaky_relu", "LeakyRelu", {X({4, 9})}, {F("alpha", 0.2f)}));
  nan_inf(Make("thresholded_relu", "ThresholdedRelu", {X({4, 9}, -3.0, 3.0)}, {F("alpha", 0.5f)}));
  nan_inf(Make("clip_inputs", "Clip", {X({3, 10}), ConstScalar(-0.5, -0.4), ConstScalar(0.4, 0.5)}));
  nan_inf(Make("clip_attrs_relu6", "Clip", {X({3, 10}, -8.0, 8.0)}, {F("min", 0.0f), F("max", 6.0f)},
               1, 6));
  for (const char* op : {"Add", "Mul", "Min", "Max"}) {
    nan_inf(Make(std::string("binary_same_") + op, op, {X({2, 3, 4, 5}), X({2, 3, 4, 5})}));
    nan_inf(Make(std::string("binary_channel_") + op, op, {X({2, 3, 4, 5}), X({3, 1, 1})}));
  }
  // Scatter max / min keep a NaN of data or update (scatter_reduction.h).
  nan_inf(Make("scatter_elements_max_f32", "ScatterElements",
               {X({4, 5}), Ix(DataType::kI64, {4, 5}, -5, 4), WithNanInf(X({4, 5}))},
               {I("axis", 1), S("reduction", "max")}, 1, 18));
  nan_inf(Make("scatter_nd_min_f32", "ScatterND",
               {X({6, 4}), Ix(DataType::kI64, {5, 1}, -6, 5), X({5, 4})},
               {S("reduction", "min")}, 1, 18));
  nan_inf(Make("add_fused_relu", "Add", {X({2, 3, 4, 5}), X({2, 3, 4, 5})},
               {S("activation", "Relu")}));
  nan_inf(Make("add_fused_clip_trailing", "Add", {X({2, 3, 7}), X({7})},
               {S("activation", "Clip"), F("activation_min", 0.0f), F("activation_max", 6.0f)}));
  return cases;
}

}  // namespace

std::span<const OpCase> DataOpCases() {
  static const std::vector<OpCase>* cases = new std::vector<OpCase>(MakeCases());
  return *cases;
}

}  // namespace braid
