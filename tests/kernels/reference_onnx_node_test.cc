// The reference elementwise / data-movement kernels against ONNX backend node
// cases (Debian's libonnx-testdata): each case's single node is imported
// from model.onnx, its inputs and expected outputs read from
// test_data_set_0/*.pb; integer inputs are handed to Prepare as constants
// (like initializers), and output descs are the expected outputs' dtype and
// shape (what the runtime's shape inference supplies).
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "graph/onnx_importer.h"
#include "graph/onnx_tensor.h"
#include "kernels/backend.h"
#include "kernels/reference/registration.h"

namespace braid {
namespace {

namespace fs = std::filesystem;


double Element(const TensorAttr& t, size_t i) {
  const std::byte* p = t.data.data() + i * DataTypeSize(t.dtype);
  auto get = [p](auto x) {
    std::memcpy(&x, p, sizeof x);
    return static_cast<double>(x);
  };
  switch (t.dtype) {
    case DataType::kF32: return get(float{});
    case DataType::kF16: return get(uint16_t{});  // bits: compared exactly
    case DataType::kI64: return get(int64_t{});
    case DataType::kI32: return get(int32_t{});
    case DataType::kI8: return get(int8_t{});
    case DataType::kU8:
    case DataType::kBool: return get(uint8_t{});
    case DataType::kF64: return get(double{});
    case DataType::kBF16: return get(uint16_t{});  // bits, as f16
    case DataType::kI16: return get(int16_t{});
    case DataType::kU16: return get(uint16_t{});
    case DataType::kU32: return get(uint32_t{});
    case DataType::kU64: return get(uint64_t{});
    case DataType::kUndefined: break;
  }
  return 0;
}

// "" when the case passes, else why not.
std::string RunNodeCase(const std::string& name) {
  const fs::path dir = fs::path(BRAID_ONNX_TESTDATA_DIR) / "node" / name;
  StatusOr<Graph> imported = ImportOnnxFile((dir / "model.onnx").string());
  if (!imported.ok()) return "import: " + imported.status().ToString();
  const Graph& graph = *imported;
  if (graph.num_nodes() != 1) return "expected one node, got " + std::to_string(graph.num_nodes());
  const Node& node = graph.node(0);

  std::vector<TensorAttr> inputs;
  PrepareArgs args;
  args.node = &node;
  args.opset = graph.opset();
  inputs.reserve(node.inputs.size());
  for (ValueId id : node.inputs) {
    if (id == kNoValue) {
      inputs.emplace_back();
      continue;
    }
    const Value& v = graph.value(id);
    if (v.constant) {
      StatusOr<std::vector<int64_t>> dims = StaticExtents(v.shape);
      if (!dims.ok()) return dims.status().ToString();
      inputs.push_back(TensorAttr{v.dtype, *dims, *v.constant});
      continue;
    }
    size_t index = 0;
    while (index < graph.inputs().size() && graph.inputs()[index] != id) ++index;
    StatusOr<TensorAttr> t =
        onnx_import::ReadTensorProtoFile(
            (dir / "test_data_set_0" / ("input_" + std::to_string(index) + ".pb")).string());
    if (!t.ok()) return t.status().ToString();
    inputs.push_back(std::move(*t));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorAttr& t = inputs[i];
    args.inputs.push_back(TensorDesc{t.dtype, t.dims});
    const bool integer = t.dtype == DataType::kI64 || t.dtype == DataType::kI32;
    args.constants.push_back(t.dtype != DataType::kUndefined && integer && i > 0 ? &t.data
                                                                                   : nullptr);
  }
  std::vector<TensorAttr> expected;
  for (size_t o = 0; o < node.outputs.size(); ++o) {
    StatusOr<TensorAttr> t =
        onnx_import::ReadTensorProtoFile(
            (dir / "test_data_set_0" / ("output_" + std::to_string(o) + ".pb")).string());
    if (!t.ok()) break;  // optional outputs the case does not check
    args.outputs.push_back(TensorDesc{t->dtype, t->dims});
    expected.push_back(std::move(*t));
  }

  KernelRegistry registry;
  RegisterReferenceElementwiseAndDataKernels(registry);
  StatusOr<PreparedKernel> prepared = PrepareFirstAccepting(registry, DeviceKind::kCpu, args);
  if (!prepared.ok()) return "prepare: " + prepared.status().ToString();
  std::vector<std::vector<std::byte>> out_bytes;
  std::vector<void*> dst;
  for (const TensorDesc& d : args.outputs) {
    out_bytes.emplace_back(std::max<size_t>(d.bytes(), 1), std::byte{0xA5});
    dst.push_back(out_bytes.back().data());
  }
  std::vector<const void*> src;
  for (const TensorAttr& t : inputs)
    src.push_back(t.dtype == DataType::kUndefined ? nullptr : t.data.data());
  RunArgs run;
  run.src = src;
  run.dst = dst;
  if (Status s = prepared->kernel->Run(run); !s.ok()) return "run: " + s.ToString();

  for (size_t o = 0; o < expected.size(); ++o) {
    TensorAttr got{expected[o].dtype, expected[o].dims,
                   TensorData::Copy(out_bytes[o].data(), args.outputs[o].bytes())};
    const size_t n = static_cast<size_t>(args.outputs[o].elements());
    for (size_t i = 0; i < n; ++i) {
      const double g = Element(got, i), w = Element(expected[o], i);
      if (std::isnan(g) && std::isnan(w)) continue;
      const double bound = expected[o].dtype == DataType::kF32 ? 1e-5 + 1e-5 * std::fabs(w) : 0;
      if (!(std::fabs(g - w) <= bound) && !(g == w))
        return "output " + std::to_string(o) + "[" + std::to_string(i) + "] = " + std::to_string(g) +
               ", expected " + std::to_string(w);
    }
  }
  return "";
}

class ReferenceOnnxNodeTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ReferenceOnnxNodeTest, MatchesExpectedOutputs) {
  if (!fs::exists(fs::path(BRAID_ONNX_TESTDATA_DIR) / "node" / GetParam()))
    GTEST_SKIP() << "libonnx-testdata case missing: " << GetParam();
  const std::string failure = RunNodeCase(GetParam());
  EXPECT_TRUE(failure.empty()) << GetParam() << ": " << failure;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ReferenceOnnxNodeTest,
    ::testing::Values(
        "test_add_bcast", "test_sub_bcast", "test_mul_bcast", "test_div_bcast", "test_div_example",
        "test_pow_bcast_array", "test_pow_types_int64_float32", "test_min_example", "test_max_example",
        "test_equal_bcast", "test_relu", "test_sigmoid", "test_tanh", "test_exp", "test_log", "test_abs",
        "test_neg", "test_sqrt", "test_reciprocal", "test_erf", "test_clip", "test_clip_example",
        "test_clip_default_int8_min", "test_hardswish", "test_leakyrelu",
        "test_where_example", "test_where_long_example", "test_cast_FLOAT_to_FLOAT16",
        "test_cast_FLOAT16_to_FLOAT", "test_shape_start_1", "test_gather_0", "test_gather_1",
        "test_gather_negative_indices", "test_slice", "test_slice_neg_steps", "test_slice_negative_axes",
        "test_slice_end_out_of_bounds", "test_concat_3d_axis_negative_1", "test_split_variable_parts_2d",
        "test_split_equal_parts_2d", "test_transpose_default", "test_transpose_all_permutations_3",
        "test_reshape_negative_dim", "test_flatten_axis2", "test_squeeze", "test_unsqueeze_axis_1",
        "test_expand_dim_changed", "test_constant_pad", "test_reflect_pad", "test_edge_pad",
        "test_constantofshape_int_zeros", "test_identity", "test_dropout_default"),
    [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace braid
