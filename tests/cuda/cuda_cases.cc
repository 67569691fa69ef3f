// Elementwise and data-movement op cases for the CUDA backend's tests
// (tests/cuda/emulate.h: CudaDataOpCases). f32 unless stated: the CUDA
// elementwise kernels are f32-only; data movement takes any element size.
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "tests/cuda/emulate.h"

namespace braid::cuda_test {
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
OpInput Typed(DataType dtype, Ints dims) {
  OpInput in{dtype, std::move(dims)};
  in.low = -100;
  in.high = 100;
  return in;
}
OpInput Ints64(Ints values) {
  OpInput in{DataType::kI64, {static_cast<int64_t>(values.size())}};
  in.constant = true;
  in.values = std::move(values);
  return in;
}
OpInput ConstScalar(double low, double high) {
  OpInput in = X({}, low, high);
  in.constant = true;
  return in;
}

OpCase Make(std::string name, std::string op, std::vector<OpInput> inputs,
            std::vector<Attr> attrs = {}, int num_outputs = 1) {
  OpCase c{std::move(name), std::move(op), 17, std::move(attrs), std::move(inputs)};
  c.num_outputs = num_outputs;
  c.abs_tolerance = 1e-5;
  c.rel_tolerance = 1e-5;
  return c;
}

std::vector<OpCase> MakeCases() {
  std::vector<OpCase> cases;
  auto add = [&cases](OpCase c) { cases.push_back(std::move(c)); };
  // Broadcasting binary ops: same shape, scalar, per-channel, general, rank mismatch.
  const std::vector<std::pair<std::string, std::pair<Ints, Ints>>> shapes = {
      {"same", {{2, 3, 4}, {2, 3, 4}}},      {"scalar", {{2, 3, 4}, {}}},
      {"channel", {{2, 3, 4, 5}, {1, 3, 1, 1}}}, {"general", {{2, 1, 4}, {3, 1}}},
      {"rank", {{5}, {2, 3, 5}}}};
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Min", "Max", "Equal"})
    for (const auto& [shape_name, dims] : shapes) {
      std::string name = std::string(op) + "_" + shape_name;
      add(Make(name, op, {X(dims.first), X(dims.second)}));
    }
  // Add with a fused activation (docs/ir.md): applied per element on the
  // broadcast sum.
  for (const auto& [shape_name, dims] : shapes) {
    add(Make("Add_fused_relu_" + shape_name, "Add", {X(dims.first), X(dims.second)},
             {S("activation", "Relu")}));
    add(Make("Add_fused_clip_" + shape_name, "Add", {X(dims.first), X(dims.second)},
             {S("activation", "Clip"), F("activation_min", -0.25f), F("activation_max", 0.5f)}));
  }
  add(Make("Add_fused_leakyrelu_same", "Add", {X({2, 3, 4}), X({2, 3, 4})},
           {S("activation", "LeakyRelu"), F("activation_alpha", 0.1f)}));
  add(Make("Pow_general", "Pow", {X({2, 3, 4}, 0.5, 2.0), X({4}, -2.0, 2.0)}));
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "Exp", "Abs", "Neg", "Erf", "HardSwish"})
    add(Make(std::string(op) + "_x", op, {X({3, 17}, -4, 4)}));
  for (const char* op : {"Log", "Sqrt", "Reciprocal"})
    add(Make(std::string(op) + "_x", op, {X({3, 17}, 0.1, 4)}));
  add(Make("HardSigmoid_x", "HardSigmoid", {X({40}, -5, 5)}, {F("alpha", 0.3f), F("beta", 0.4f)}));
  add(Make("LeakyRelu_x", "LeakyRelu", {X({40}, -5, 5)}, {F("alpha", 0.07f)}));
  add(Make("Clip_x", "Clip", {X({40}, -2, 2), ConstScalar(-0.8, -0.5), ConstScalar(0.5, 0.9)}));
  {
    OpInput cond{DataType::kBool, {2, 1, 4}};
    add(Make("Where_broadcast", "Where", {cond, X({3, 1}), X({2, 3, 4})}));
  }
  add(Make("Transpose_0213", "Transpose", {X({2, 3, 4, 5})}, {L("perm", {0, 2, 1, 3})}));
  add(Make("Transpose_default_i64", "Transpose", {Typed(DataType::kI64, {3, 4, 5})}));
  add(Make("Slice_steps", "Slice",
           {X({4, 6, 5}), Ints64({1, -1}), Ints64({4, -7}), Ints64({0, 1}), Ints64({2, -2})}));
  add(Make("Expand_x", "Expand", {X({3, 1}), Ints64({2, 3, 4})}));
  add(Make("Concat_axis1", "Concat", {X({2, 3, 4}), X({2, 1, 4}), X({2, 5, 4})}, {I("axis", 1)}));
  add(Make("Concat_axis_last_u8", "Concat",
           {Typed(DataType::kU8, {3, 2}), Typed(DataType::kU8, {3, 5})}, {I("axis", -1)}));
  add(Make("Split_sizes", "Split", {X({2, 7, 3}), Ints64({2, 4, 1})}, {I("axis", 1)}, 3));
  {
    OpInput idx = Ints64({2, 0, -1, 1});
    idx.dims = {2, 2};
    add(Make("Gather_axis1", "Gather", {X({3, 4, 5}), idx}, {I("axis", 1)}));
  }
  add(Make("Pad_constant", "Pad", {X({2, 3, 4}), Ints64({0, 1, 2, 0, 1, 0}), ConstScalar(0.5, 0.6)}));
  add(Make("Pad_reflect", "Pad", {X({1, 2, 4, 4}), Ints64({0, 0, 2, 1, 0, 0, 1, 3})},
           {S("mode", "reflect")}));
  add(Make("Pad_edge", "Pad", {X({1, 2, 3, 3}), Ints64({0, 0, 1, 1, 0, 0, 2, 2})},
           {S("mode", "edge")}));
  add(Make("Reshape_x", "Reshape", {X({2, 3, 4}), Ints64({4, -1})}));
  add(Make("Flatten_x", "Flatten", {X({2, 3, 4})}, {I("axis", 2)}));
  add(Make("Unsqueeze_x", "Unsqueeze", {X({3, 4}), Ints64({0, 3})}));
  // QuantizeLinear / DequantizeLinear: per tensor and per axis, u8 / i8 / i32,
  // with and without a zero point; values past the range saturate.
  auto constant = [](OpInput in) {
    in.constant = true;
    return in;
  };
  auto typed = [](DataType dtype, Ints dims, double low, double high) {
    OpInput in = Typed(dtype, std::move(dims));
    in.low = low;
    in.high = high;
    return in;
  };
  add(Make("QuantizeLinear_u8", "QuantizeLinear",
           {X({2, 8, 9, 9}, -6.0, 6.0), constant(X({}, 0.02, 0.05)),
            constant(typed(DataType::kU8, {}, 100, 150))}, {}));
  add(Make("QuantizeLinear_i8_axis1", "QuantizeLinear",
           {X({2, 6, 5, 5}, -3.0, 3.0), constant(X({6}, 0.01, 0.03)),
            constant(typed(DataType::kI8, {6}, -10, 10))}, {I("axis", 1)}));
  add(Make("QuantizeLinear_no_zero_point", "QuantizeLinear",
           {X({3, 50}, -2.0, 2.0), X({}, 0.01, 0.02)}));
  add(Make("DequantizeLinear_u8", "DequantizeLinear",
           {typed(DataType::kU8, {4, 8, 10}, 1, 255), constant(X({}, 0.02, 0.05)),
            constant(typed(DataType::kU8, {}, 100, 150))}, {}));
  add(Make("DequantizeLinear_i8_axis0", "DequantizeLinear",
           {typed(DataType::kI8, {6, 3, 3, 3}, -127, 127), constant(X({6}, 0.001, 0.01)),
            constant(typed(DataType::kI8, {6}, -5, 5))}, {I("axis", 0)}));
  add(Make("DequantizeLinear_i32", "DequantizeLinear",
           {typed(DataType::kI32, {16}, -100000, 100000), constant(X({16}, 1e-4, 1e-3))},
           {I("axis", 0)}));
  // Cast: NaN, +-Inf and values past the target's range (truncation toward
  // zero, NaN -> 0, saturation at int64 then wrap; != 0 for bool), and
  // every integer / bool / f64 path.
  auto cast = [&](const std::string& name, OpInput in, int64_t to) {
    add(Make(name, "Cast", {std::move(in)}, {I("to", to)}));
  };
  auto ranged = [](DataType dtype, Ints dims, double low, double high) {
    OpInput in = Typed(dtype, std::move(dims));
    in.low = low;
    in.high = high;
    return in;
  };
  cast("Cast_f32_i64_naninf", WithNanInf(X({4, 16}, -3e19, 3e19)), 7);
  cast("Cast_f32_i8_wraps", X({4, 16}, -1000.0, 1000.0), 3);
  cast("Cast_f32_u8_wraps", X({4, 16}, -1000.0, 1000.0), 2);
  cast("Cast_f32_bool_naninf", WithNanInf(X({4, 16})), 9);
  cast("Cast_i64_i8_wraps", ranged(DataType::kI64, {40}, -100000, 100000), 3);
  cast("Cast_i64_f64", ranged(DataType::kI64, {40}, -100000, 100000), 11);
  cast("Cast_u8_f32", ranged(DataType::kU8, {40}, 0, 255), 1);
  cast("Cast_bool_i32", OpInput{DataType::kBool, {3, 5}}, 6);
  cast("Cast_i32_i16_wraps", ranged(DataType::kI32, {40}, -100000, 100000), 5);
  // NaN and +-Inf through the newer reductions, comparisons and Resize.
  for (const char* op : {"ReduceLogSumExp", "ReduceMin", "ReduceL2", "ReduceProd"})
    add(Make(std::string(op) + "_naninf", op, {WithNanInf(X({3, 7, 5}))}, {L("axes", {1})}));
  for (const char* op : {"Greater", "LessOrEqual", "PRelu"})
    add(Make(std::string(op) + "_naninf", op, {WithNanInf(X({2, 3, 4})), X({3, 1})}));
  {
    OpInput scales{DataType::kF32, {4}};
    scales.constant = true;
    scales.values = {1, 1, 2, 3};
    OpInput roi{DataType::kF32, {0}};
    roi.constant = true;
    add(Make("Resize_linear_naninf", "Resize", {WithNanInf(X({1, 2, 4, 6})), roi, scales},
             {S("mode", "linear")}, 1));
  }
  // Logical ops and predicates: bool broadcasting against a scalar, NaN /
  // +-Inf through IsNaN and IsInf (either sign alone too).
  for (const char* op : {"And", "Or", "Xor"})
    add(Make(std::string(op) + "_scalar", op,
             {OpInput{DataType::kBool, {3, 4}}, OpInput{DataType::kBool, {}}}));
  add(Make("IsNaN_naninf", "IsNaN", {WithNanInf(X({4, 10}))}));
  add(Make("IsInf_naninf", "IsInf", {WithNanInf(X({4, 10}))}));
  add(Make("IsInf_negative_only_naninf", "IsInf", {WithNanInf(X({4, 10}))},
           {I("detect_positive", 0)}));
  // Variadic Sum / Mean / Max / Min: up to the kernel's 8 inputs, NaN /
  // +-Inf, and a fused activation (the reference takes one on Sum / Max / Min).
  add(Make("Sum_eight_inputs", "Sum",
           {X({2, 3, 4}), X({4}), X({3, 1}), X({}), X({2, 1, 1}), X({2, 3, 4}), X({1, 4}),
            X({3, 4})}));
  add(Make("Mean_two_inputs", "Mean", {X({2, 3, 4}), X({3, 1})}));
  add(Make("Max_variadic_naninf", "Max", {WithNanInf(X({3, 4, 5})), X({5}), X({4, 1})}));
  add(Make("Min_variadic_naninf", "Min", {WithNanInf(X({3, 4, 5})), X({4, 5}), X({3, 1, 1})}));
  add(Make("Sum_fused_relu", "Sum", {X({2, 3, 4}), X({4}), X({3, 1})},
           {S("activation", "Relu")}));
  add(Make("Max_fused_clip", "Max", {X({2, 3, 4}), X({3, 4})},
           {S("activation", "Clip"), F("activation_min", -0.25f), F("activation_max", 0.5f)}));
  // ArgMax / ArgMin: ties (+-2 twice in a row, beyond the random [-1, 1])
  // with and without select_last_index, and NaN (two in row 0) with +-Inf.
  auto with = [](OpInput in, std::vector<std::pair<int64_t, float>> specials) {
    in.specials = std::move(specials);
    return in;
  };
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const OpInput ties = with(X({4, 6}), {{1, 2.0f}, {4, 2.0f}, {6, -2.0f}, {11, -2.0f},
                                        {13, 2.0f}, {15, 2.0f}, {14, -2.0f}, {16, -2.0f},
                                        {18, 2.0f}, {23, 2.0f}});
  const OpInput nans = with(X({3, 6}), {{1, nan}, {4, nan}, {7, inf}, {9, -inf},
                                        {10, nan}, {13, -inf}, {16, inf}});
  for (const char* op : {"ArgMax", "ArgMin"}) {
    for (int64_t last : {0, 1}) {
      const std::string suffix = last ? "_last" : "_first";
      add(Make(std::string(op) + "_ties" + suffix, op, {ties},
               {I("axis", -1), I("select_last_index", last)}));
      add(Make(std::string(op) + "_nan" + suffix, op, {nans},
               {I("axis", 1), I("keepdims", 0), I("select_last_index", last)}));
    }
    add(Make(std::string(op) + "_axis1_naninf", op, {WithNanInf(X({3, 7, 5}))}, {I("axis", 1)}));
  }
  // CumSum: exclusive, exclusive + reverse, a negative i32 axis, NaN / Inf.
  auto axis32 = [](int64_t v) {
    OpInput in{DataType::kI32, {}};
    in.constant = true;
    in.values = {v};
    return in;
  };
  auto axis64 = [](int64_t v) {
    OpInput in{DataType::kI64, {1}};
    in.constant = true;
    in.values = {v};
    return in;
  };
  add(Make("CumSum_exclusive", "CumSum", {X({3, 5, 4}), axis64(1)}, {I("exclusive", 1)}));
  add(Make("CumSum_exclusive_reverse", "CumSum", {X({3, 5, 4}), axis64(2)},
           {I("exclusive", 1), I("reverse", 1)}));
  add(Make("CumSum_axis_negative_i32", "CumSum", {X({6, 2, 3}), axis32(-3)}));
  add(Make("CumSum_naninf", "CumSum", {WithNanInf(X({4, 9})), axis64(1)}));
  // Trilu: constant k of either sign, rows > cols and cols > rows, 1- and
  // 8-byte elements (the run-time k is DataOpCases' trilu_upper_runtime_k).
  auto k_const = [](int64_t v) {
    OpInput in{DataType::kI64, {}};
    in.constant = true;
    in.values = {v};
    return in;
  };
  add(Make("Trilu_upper_k_negative", "Trilu", {X({2, 6, 4}), k_const(-2)}));
  add(Make("Trilu_lower_k_positive", "Trilu", {X({3, 4, 7}), k_const(2)}, {I("upper", 0)}));
  add(Make("Trilu_lower_u8", "Trilu", {Typed(DataType::kU8, {5, 5})}, {I("upper", 0)}));
  add(Make("Trilu_upper_i64_k", "Trilu", {Typed(DataType::kI64, {2, 3, 3}), k_const(1)}));
  // GatherElements / ScatterElements: explicit indices (negative, duplicate),
  // constant or computed, i32 / i64, 1-, 4- and 8-byte data, indices
  // smaller than data off the axis; every reduction over duplicates (folded
  // in index order as on the CPU), NaN through max / min.
  auto idx = [](DataType dtype, Ints dims, Ints values, bool constant) {
    OpInput in{dtype, std::move(dims)};
    in.values = std::move(values);
    in.constant = constant;
    return in;
  };
  auto opset18 = [](OpCase c) {  // reduction max / min: opset 18
    c.opset = 18;
    return c;
  };
  const Ints dup_rows = {0, 0, -4, 2, 1, 1, 1, -3, 3, -1, 0, 3};  // [3, 4] into axis 1 of 4
  add(Make("GatherElements_const_negative_u8", "GatherElements",
           {Typed(DataType::kU8, {3, 4}), idx(DataType::kI64, {3, 4}, dup_rows, true)},
           {I("axis", 1)}));
  add(Make("GatherElements_axis1_rank3_i64_i32", "GatherElements",
           {Typed(DataType::kI64, {3, 4, 5}),
            idx(DataType::kI32, {2, 2, 3}, {3, -4, 0, 1, 1, -1, 2, 0, -2, 3, 3, 1}, false)},
           {I("axis", 1)}));
  add(Make("GatherElements_axis0_f32", "GatherElements",
           {X({4, 3}), idx(DataType::kI64, {2, 3}, {-1, 0, 3, 2, -4, 1}, false)}));
  for (const char* reduction : {"none", "add", "mul", "max", "min"}) {
    const std::string r = reduction;
    add(opset18(Make("ScatterElements_dup_" + r, "ScatterElements",
                     {X({3, 4}), idx(DataType::kI64, {3, 4}, dup_rows, false), X({3, 4})},
                     {I("axis", -1), S("reduction", r)})));
  }
  OpInput nan_updates = X({3, 4});
  nan_updates.specials = {{0, std::numeric_limits<float>::quiet_NaN()}, {7, -0.0f}};
  OpInput nan_data = X({3, 4});
  nan_data.specials = {{5, std::numeric_limits<float>::quiet_NaN()}};
  for (const char* reduction : {"max", "min"})
    add(opset18(Make(std::string("ScatterElements_nan_") + reduction, "ScatterElements",
                     {nan_data, idx(DataType::kI32, {3, 4}, dup_rows, true), nan_updates},
                     {I("axis", 1), S("reduction", reduction)})));
  add(Make("ScatterElements_axis1_rank3_i64_dup", "ScatterElements",
           {Typed(DataType::kI64, {2, 4, 3}),
            idx(DataType::kI32, {2, 3, 2}, {1, -1, 1, 0, 3, 2, -4, 0, 0, 0, 2, 2}, false),
            Typed(DataType::kI64, {2, 3, 2})},
           {I("axis", 1)}));
  add(Make("ScatterElements_const_u8_axis0", "ScatterElements",
           {Typed(DataType::kU8, {4, 3}), idx(DataType::kI64, {2, 3}, {-1, 0, 3, -1, 2, 3}, true),
            Typed(DataType::kU8, {2, 3})}));
  // GatherND / ScatterND: batch_dims 1 and 2, whole-element tuples (k =
  // rank - b), negative and duplicate tuples, constant or computed; every
  // reduction over duplicate tuples with row slices and scalar slices.
  add(Make("GatherND_batch2_scalar_u8", "GatherND",
           {Typed(DataType::kU8, {2, 3, 4}),
            idx(DataType::kI64, {2, 3, 2, 1}, {0, -1, 3, 3, 1, -4, 2, 2, 0, 1, -2, 3}, false)},
           {I("batch_dims", 2)}));
  add(Make("GatherND_batch1_const_i64", "GatherND",
           {Typed(DataType::kI64, {2, 3, 4, 2}),
            idx(DataType::kI64, {2, 3, 2}, {-1, 3, 0, 0, 2, -4, 1, 1, -3, 2, 1, 1}, true)},
           {I("batch_dims", 1)}));
  add(Make("GatherND_full_tuples_f32", "GatherND",
           {X({3, 4}), idx(DataType::kI64, {5, 2}, {2, 3, -1, -1, 0, 0, 1, -4, 2, 3}, false)}));
  const Ints dup_tuples = {1, -3, 2, 1, 0, 2};  // rows 1, 0, 2, 1, 0, 2 of 3
  const Ints dup_points = {0, 1, -3, -3, 2, 3, 0, 1, 0, -4};  // [5, 2] into [3, 4]
  for (const char* reduction : {"none", "add", "mul", "max", "min"}) {
    const std::string r = reduction;
    add(opset18(Make("ScatterND_dup_rows_" + r, "ScatterND",
                     {X({3, 4}), idx(DataType::kI64, {2, 3, 1}, dup_tuples, false), X({2, 3, 4})},
                     {S("reduction", r)})));
    add(opset18(Make("ScatterND_dup_points_" + r, "ScatterND",
                     {X({3, 4}), idx(DataType::kI64, {5, 2}, dup_points, r == "add"), X({5})},
                     {S("reduction", r)})));
  }
  OpInput nan_rows = X({2, 3, 4});
  nan_rows.specials = {{1, std::numeric_limits<float>::quiet_NaN()},
                       {17, std::numeric_limits<float>::quiet_NaN()}};
  for (const char* reduction : {"max", "min"})
    add(opset18(Make(std::string("ScatterND_nan_") + reduction, "ScatterND",
                     {nan_data, idx(DataType::kI64, {2, 3, 1}, dup_tuples, true), nan_rows},
                     {S("reduction", reduction)})));
  add(Make("ScatterND_i64_dup_rank3", "ScatterND",
           {Typed(DataType::kI64, {3, 2, 4}),
            idx(DataType::kI64, {4, 2}, {2, 1, -1, -1, 0, 0, 2, 1}, false),
            Typed(DataType::kI64, {4, 4})}));
  add(Make("ScatterND_const_u8", "ScatterND",
           {Typed(DataType::kU8, {4, 3}), idx(DataType::kI64, {2, 1}, {-1, 1}, true),
            Typed(DataType::kU8, {2, 3})}));
  // OneHot: indices of each dtype the kernel reads (f32 truncating, with NaN /
  // Inf / past the depth matching no row), negative from the end, axis 0 and
  // -1, 1-, 4- and 8-byte values.
  auto depth = [](int64_t d) {
    OpInput in{DataType::kI64, {1}};
    in.constant = true;
    in.values = {d};
    return in;
  };
  OpInput f32_indices = X({2, 4}, -5.0, 5.0);
  f32_indices.specials = {{0, std::numeric_limits<float>::quiet_NaN()},
                          {1, std::numeric_limits<float>::infinity()},
                          {2, -3.7f},
                          {3, 2.9f},
                          {4, 1e20f},
                          {5, -0.5f}};
  add(Make("OneHot_f32_indices_axis0", "OneHot", {f32_indices, depth(4), X({2})},
           {I("axis", 0)}));
  add(Make("OneHot_i32_values_i64", "OneHot",
           {idx(DataType::kI32, {3, 2}, {-1, 0, 5, -6, 2, -7}, false), depth(6),
            Typed(DataType::kI64, {2})}));
  add(Make("OneHot_i8_values_u8_axis1", "OneHot",
           {idx(DataType::kI8, {2, 3}, {-3, 1, 2, 3, -1, 0}, false), depth(3),
            Typed(DataType::kU8, {2})},
           {I("axis", 1)}));
  add(Make("OneHot_u8", "OneHot",
           {idx(DataType::kU8, {5}, {0, 4, 7, 1, 4}, true), depth(5), X({2})}));
  // Range: f32 accumulated over 400 steps (the reference's rounding), a
  // negative delta, i32 and i64. The harness needs constant inputs to size
  // the output; the kernel reads them from the device either way.
  auto scalar = [](DataType dtype, int64_t v) {
    OpInput in{dtype, {}};
    in.constant = true;
    in.values = {v};
    return in;
  };
  auto f32_scalar = [](float v) {
    OpInput in{DataType::kF32, {}};
    in.constant = true;
    in.specials = {{0, v}};
    return in;
  };
  auto exact = [](OpCase c) {  // f32 Range claims the reference's bits
    c.abs_tolerance = 0;
    c.rel_tolerance = 0;
    return c;
  };
  add(exact(Make("Range_f32_accumulates", "Range",
                 {f32_scalar(0.1f), f32_scalar(40.05f), f32_scalar(0.1f)})));
  add(exact(Make("Range_f32_negative_delta", "Range",
                 {f32_scalar(3.0f), f32_scalar(-1.3f), f32_scalar(-0.7f)})));
  add(Make("Range_i32", "Range",
           {scalar(DataType::kI32, -7), scalar(DataType::kI32, 20),
            scalar(DataType::kI32, 3)}));
  add(Make("Range_i64_negative_delta", "Range",
           {scalar(DataType::kI64, 10), scalar(DataType::kI64, -5),
            scalar(DataType::kI64, -4)}));
  // EyeLike: k of either sign, past the matrix (no ones), non-square; 1-,
  // 4- and 8-byte outputs.
  add(Make("EyeLike_k_negative_u8", "EyeLike", {Typed(DataType::kU8, {5, 3})}, {I("k", -2)}));
  add(Make("EyeLike_f32", "EyeLike", {X({4, 6})}));
  add(Make("EyeLike_k_past_cols_i64", "EyeLike", {X({3, 4})}, {I("k", 9), I("dtype", 7)}));
  add(Make("EyeLike_k_one_i32", "EyeLike", {Typed(DataType::kI32, {4, 4})}, {I("k", 1)}));
  // TopK: smallest along axis 0, ties and NaN (NaN ranks above every
  // number: last for the smallest), K equal to the axis.
  add(Make("TopK_smallest_axis0", "TopK", {X({6, 4}), Ints64({3})},
           {I("axis", 0), I("largest", 0)}, 2));
  add(Make("TopK_largest_ties_nan", "TopK", {nans, Ints64({4})}, {}, 2));
  add(Make("TopK_smallest_ties_nan", "TopK", {ties, Ints64({3})}, {I("largest", 0)}, 2));
  add(Make("TopK_smallest_nan_all", "TopK", {nans, Ints64({6})}, {I("largest", 0)}, 2));
  add(Make("TopK_largest_middle_axis_naninf", "TopK", {WithNanInf(X({2, 7, 3})), Ints64({5})},
           {I("axis", 1)}, 2));
  // GridSample: every mode x padding_mode x align_corners, grid values past
  // [-1, 1] (reaching the padding, reflection folding more than once), and
  // points on exact half-pixel coordinates: W = 4 without align_corners maps
  // x = 0 / 0.5 / -0.5 / -1 / 1 to 1.5 / 2.5 / 0.5 / -0.5 / 3.5 and H = 5
  // with it maps y = 0.25 / -0.75 to 2.5 / 0.5, which nearest rounds half to
  // even (as ONNX and the reference do).
  OpInput grid = X({2, 3, 4, 2}, -2.6, 2.6);
  grid.specials = {{0, 0.0f},  {2, 0.5f},  {4, -0.5f}, {6, -1.0f}, {8, 1.0f},
                   {1, 0.25f}, {3, -0.75f}, {5, 0.5f}, {7, -0.5f}, {9, 0.0f}};
  for (const char* mode : {"bilinear", "nearest", "bicubic"})
    for (const char* padding : {"zeros", "border", "reflection"})
      for (int64_t align : {0, 1})
        add(Make(std::string("GridSample_") + mode + "_" + padding + (align ? "_aligned" : ""),
                 "GridSample", {X({2, 3, 5, 4}), grid},
                 {S("mode", mode), S("padding_mode", padding), I("align_corners", align)}));
  // The opset-20 names of the modes, a 1-pixel axis (reflection's empty
  // range), and one channel sampled over a wider grid.
  add(Make("GridSample_linear_name_1_pixel_reflection", "GridSample",
           {X({1, 2, 1, 6}), X({1, 3, 3, 2}, -1.5, 1.5)},
           {S("mode", "linear"), S("padding_mode", "reflection")}));
  add(Make("GridSample_cubic_name_border", "GridSample",
           {X({1, 1, 6, 7}), X({1, 5, 6, 2}, -1.2, 1.2)},
           {S("mode", "cubic"), S("padding_mode", "border")}));
  // NonMaxSuppression (rows compared only up to the count each reports, and
  // the counts must agree: emulate.cc KeepReportedRows). B = 2, C = 3 over
  // random corner boxes (which overlap a lot): some classes fill to the
  // maximum, some lose boxes to overlap; batch 1's class 2 has no score above
  // the threshold.
  {
    auto value = [](float v, bool constant) {
      OpInput in = X({1}, 0.5, 0.6);
      in.specials = {{0, v}};
      in.constant = constant;
      return in;
    };
    auto max_boxes = [](int64_t v, bool constant) {
      OpInput in{DataType::kI64, {1}};
      in.values = {v};
      in.constant = constant;
      return in;
    };
    OpInput scores = X({2, 3, 40}, 0, 1);
    for (int64_t i = 0; i < 40; ++i) scores.specials.push_back({(1 * 3 + 2) * 40 + i, 0.25f});
    const OpInput corners = X({2, 40, 4}, 0, 1);
    for (float iou : {0.0f, 0.3f, 0.5f, 0.9f})
      add(Make("NonMaxSuppression_corners_iou_" + std::to_string(static_cast<int>(iou * 10)),
               "NonMaxSuppression",
               {corners, scores, max_boxes(12, true), value(iou, true), value(0.3f, true)}));
    // Computed (non-constant) maximum and score threshold (a computed
    // iou_threshold declines: its range is checked on the CPU); center boxes.
    const OpInput centers = X({2, 40, 4}, 0.05, 0.6);
    add(Make("NonMaxSuppression_center_computed_scalars", "NonMaxSuppression",
             {centers, scores, max_boxes(7, false), value(0.4f, true), value(0.3f, false)},
             {I("center_point_box", 1)}));
    add(Make("NonMaxSuppression_center_no_score_threshold", "NonMaxSuppression",
             {centers, scores, max_boxes(40, true), value(0.5f, true)},
             {I("center_point_box", 1)}));
    // The maximum past N (clamped to N), negative (0), omitted (0).
    add(Make("NonMaxSuppression_max_past_boxes", "NonMaxSuppression",
             {corners, scores, max_boxes(100, false), value(0.6f, true)}));
    add(Make("NonMaxSuppression_max_negative", "NonMaxSuppression",
             {corners, scores, max_boxes(-3, false), value(0.6f, true)}));
    add(Make("NonMaxSuppression_max_omitted", "NonMaxSuppression", {corners, scores}));
    // Ties in score (the lower box first), identical boxes (IoU 1), boxes
    // with no area (never suppress), swapped corners, NaN scores (never
    // selected), a score equal to the threshold (not above it).
    OpInput boxes = X({1, 8, 4}, 0, 1);
    const float fixed[8][4] = {{0, 0, 1, 1},     {0, 0, 1, 1},    {1, 1, 0, 0},
                               {0.5f, 0.5f, 0.5f, 2}, {0, 0.1f, 1, 1.1f}, {2, 2, 3, 3},
                               {2, 2, 3, 3},     {0.5f, 0.5f, 0.5f, 2}};
    for (int64_t b = 0; b < 8; ++b)
      for (int64_t k = 0; k < 4; ++k) boxes.specials.push_back({b * 4 + k, fixed[b][k]});
    OpInput tied = X({1, 2, 8}, 0, 1);
    const float tie_scores[2][8] = {{0.9f, 0.9f, 0.9f, 0.8f, 0.9f, 0.7f, 0.7f, 0.8f},
                                    {0.5f, NAN, 0.6f, 0.6f, 0.3f, 0.6f, 0.6f, NAN}};
    for (int64_t c = 0; c < 2; ++c)
      for (int64_t b = 0; b < 8; ++b) tied.specials.push_back({c * 8 + b, tie_scores[c][b]});
    for (float iou : {0.5f, 0.95f, 1.0f})
      add(Make("NonMaxSuppression_ties_identical_iou_" +
                   std::to_string(static_cast<int>(iou * 100)),
               "NonMaxSuppression",
               {boxes, tied, max_boxes(8, true), value(iou, true), value(0.5f, false)}));
  }
  // Einsum: matmul, the attention pair, transpose, diagonal and trace
  // (repeated labels), reductions, outer and Hadamard products, three
  // operands, implicit output, case-sensitive labels, ellipsis (broadcasting
  // an extent-1 axis), a long contraction and an empty summed label.
  auto einsum = [&](const std::string& name, const std::string& equation,
                    std::vector<OpInput> inputs) {
    add(Make("Einsum_" + name, "Einsum", std::move(inputs), {S("equation", equation)}));
  };
  einsum("matmul", "ij,jk->ik", {X({5, 7}), X({7, 6})});
  einsum("attention_scores", "bhid,bhjd->bhij", {X({2, 3, 4, 8}), X({2, 3, 5, 8})});
  einsum("attention_values", "bhij,bhjd->bhid", {X({2, 3, 4, 5}), X({2, 3, 5, 8})});
  einsum("transpose", "ij->ji", {X({4, 6})});
  einsum("diagonal", "ii->i", {X({5, 5})});
  einsum("trace", "ii->", {X({5, 5})});
  einsum("batch_diagonal_spaces", "b ii -> bi", {X({3, 4, 4})});
  einsum("row_sums", "ij->i", {X({4, 9})});
  einsum("sum_all", "ijk->", {X({3, 4, 5})});
  einsum("outer", "i,j->ij", {X({5}), X({7})});
  einsum("hadamard", "ij,ij->ij", {X({3, 4}), X({3, 4})});
  einsum("three_operands", "ij,jk,kl->il", {X({3, 4}), X({4, 5}), X({5, 2})});
  einsum("implicit_output", "ij,jk", {X({3, 4}), X({4, 2})});
  einsum("case_sensitive", "Ab,bA->A", {X({3, 4}), X({4, 3})});
  einsum("ellipsis_batch_matmul", "...ij,...jk->...ik", {X({2, 3, 4, 5}), X({3, 5, 6})});
  einsum("ellipsis_broadcast_one", "...ij,...jk->...ik", {X({2, 1, 4, 5}), X({3, 5, 2})});
  einsum("ellipsis_implicit", "...i,i", {X({2, 3, 6}), X({6})});
  einsum("long_contraction", "ij,jk->ik", {X({3, 700}), X({700, 4})});
  einsum("empty_summed_label", "ij,jk->ik", {X({3, 0}), X({0, 4})});
  return cases;
}

}  // namespace

std::span<const OpCase> CudaDataOpCases() {
  static const std::vector<OpCase>* cases = new std::vector<OpCase>(MakeCases());
  return *cases;
}

}  // namespace braid::cuda_test
