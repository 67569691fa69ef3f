#include "graph/passes/prune.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <unordered_set>

namespace braid {
namespace {

bool ParsePositive(std::string_view text, int64_t& value) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  return ec == std::errc() && ptr == end && value >= 1;
}

// A weight seen as `matrices` stacked [rows, cols] matrices:
// element (m, r, c) at data[m * matrix_stride + r * row_stride + c * col_stride].
struct MatrixView {
  int64_t matrices = 1;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t matrix_stride = 0;
  int64_t row_stride = 0;
  int64_t col_stride = 0;
};

std::string Where(const Node& node) {
  return "node '" + node.name + "' (" + node.op_type + ")";
}

// The weight of a prunable node as a matrix [outputs, reduction]; nullopt
// (with `why`) when the node is not prunable.
std::optional<MatrixView> WeightMatrix(const Graph& graph, const Node& node,
                                       std::string& why) {
  if (node.op_type != "Conv" && node.op_type != "Gemm" && node.op_type != "MatMul")
    return std::nullopt;
  if (node.inputs.size() < 2 || !graph.IsConstant(node.inputs[1])) {
    why = "weight is not a constant";
    return std::nullopt;
  }
  const Value& w = graph.value(node.inputs[1]);
  if (w.dtype != DataType::kF32) {
    why = "weight is not f32";
    return std::nullopt;
  }
  std::vector<int64_t> dims;
  for (const Dim& d : w.shape) {
    if (!d.is_static()) {
      why = "weight shape is not static";
      return std::nullopt;
    }
    dims.push_back(d.extent());
  }
  const int64_t elements =
      std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<>());
  if (static_cast<size_t>(elements) * sizeof(float) != w.constant->size()) {
    why = "weight bytes do not match its shape";
    return std::nullopt;
  }
  MatrixView m;
  if (node.op_type == "Conv") {
    if (dims.size() < 3) {
      why = "Conv weight has rank < 3";
      return std::nullopt;
    }
    m.rows = dims[0];
    m.cols = dims[0] == 0 ? 0 : elements / dims[0];
    m.row_stride = m.cols;
    m.col_stride = 1;
  } else if (node.op_type == "Gemm") {
    if (dims.size() != 2) {
      why = "Gemm weight is not 2-D";
      return std::nullopt;
    }
    const bool trans_b = node.attrs.GetInt("transB", 0) != 0;
    m.rows = trans_b ? dims[0] : dims[1];  // N
    m.cols = trans_b ? dims[1] : dims[0];  // K
    m.row_stride = trans_b ? m.cols : 1;
    m.col_stride = trans_b ? 1 : m.rows;
  } else {  // MatMul B [..., K, N]
    if (dims.size() < 2) {
      why = "MatMul weight is a vector";
      return std::nullopt;
    }
    const int64_t k = dims[dims.size() - 2], n = dims.back();
    m.rows = n;
    m.cols = k;
    m.row_stride = 1;
    m.col_stride = n;
    m.matrix_stride = k * n;
    m.matrices = k * n == 0 ? 0 : elements / (k * n);
  }
  return m;
}

bool IsDepthwise(const Graph& graph, const Node& node) {
  if (node.op_type != "Conv") return false;
  const Shape& w = graph.value(node.inputs[1]).shape;
  return node.attrs.GetInt("group", 1) > 1 && w.size() >= 2 &&
         w[1].is_static() && w[1].extent() == 1;
}

int64_t CountZeros(std::span<const float> w) {
  return std::count(w.begin(), w.end(), 0.0f);
}

// Zeroes round(ratio * blocks) blocks of smallest mean |w| in `w`.
void PruneMatrix(std::span<float> w, const MatrixView& m, const PruneOptions& o) {
  const int64_t block_rows_count = (m.rows + o.block_rows - 1) / o.block_rows;
  const int64_t block_cols_count = (m.cols + o.block_cols - 1) / o.block_cols;
  const int64_t per_matrix = block_rows_count * block_cols_count;
  const int64_t blocks = per_matrix * m.matrices;
  const int64_t to_zero = std::llround(o.ratio * static_cast<double>(blocks));
  if (to_zero == 0) return;
  auto for_each_element = [&](int64_t block, auto&& fn) {
    const int64_t mat = block / per_matrix;
    const int64_t br = block % per_matrix / block_cols_count;
    const int64_t bc = block % block_cols_count;
    const int64_t r1 = std::min(m.rows, (br + 1) * o.block_rows);
    const int64_t c1 = std::min(m.cols, (bc + 1) * o.block_cols);
    for (int64_t r = br * o.block_rows; r < r1; ++r)
      for (int64_t c = bc * o.block_cols; c < c1; ++c)
        fn(w[static_cast<size_t>(mat * m.matrix_stride + r * m.row_stride +
                                 c * m.col_stride)]);
  };
  std::vector<float> score(static_cast<size_t>(blocks));
  for (int64_t b = 0; b < blocks; ++b) {
    double sum = 0;
    int64_t count = 0;
    for_each_element(b, [&](float v) {
      sum += std::fabs(v);
      ++count;
    });
    score[static_cast<size_t>(b)] = static_cast<float>(sum / static_cast<double>(count));
  }
  std::vector<int64_t> order(static_cast<size_t>(blocks));
  std::iota(order.begin(), order.end(), 0);
  auto smaller = [&](int64_t a, int64_t b) {
    const float sa = score[static_cast<size_t>(a)], sb = score[static_cast<size_t>(b)];
    return sa != sb ? sa < sb : a < b;
  };
  if (to_zero < blocks)
    std::nth_element(order.begin(), order.begin() + to_zero, order.end(), smaller);
  for (int64_t i = 0; i < to_zero; ++i)
    for_each_element(order[static_cast<size_t>(i)], [](float& v) { v = 0.0f; });
}

}  // namespace

Status ParsePruneStructure(std::string_view text, PruneOptions& options) {
  if (text == "unstructured") {
    options.block_rows = options.block_cols = 1;
    return Status::Ok();
  }
  const std::string bad = "prune structure must be 'unstructured' or 'block:RxC' "
                          "with R, C >= 1, got '" + std::string(text) + "'";
  if (text.substr(0, 6) != "block:") return InvalidArgument(bad);
  const std::string_view dims = text.substr(6);
  const size_t x = dims.find('x');
  int64_t rows = 0, cols = 0;
  if (x == std::string_view::npos || !ParsePositive(dims.substr(0, x), rows) ||
      !ParsePositive(dims.substr(x + 1), cols))
    return InvalidArgument(bad);
  options.block_rows = rows;
  options.block_cols = cols;
  return Status::Ok();
}

Status ParsePruneSkip(std::string_view text, PruneOptions& options) {
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (item == "first") options.skip_first = true;
    else if (item == "depthwise") options.skip_depthwise = true;
    else if (!item.empty())
      return InvalidArgument("prune skip: unknown rule '" + std::string(item) +
                             "' (first, depthwise)");
  }
  return Status::Ok();
}

StatusOr<PruneReport> PruneWeights(Graph& graph, const PruneOptions& options) {
  if (!(options.ratio >= 0.0 && options.ratio <= 1.0))
    return InvalidArgument("prune ratio must lie in [0, 1], got " +
                           std::to_string(options.ratio));
  if (options.block_rows < 1 || options.block_cols < 1)
    return InvalidArgument("prune block must be at least 1x1");
  PruneReport report;
  std::unordered_set<ValueId> pruned;
  bool first = true;
  for (const Node& node : graph.nodes()) {
    std::string why;
    std::optional<MatrixView> m = WeightMatrix(graph, node, why);
    if (!m) {
      if (!why.empty()) report.skipped.push_back(Where(node) + ": " + why);
      continue;
    }
    const bool is_first = first;
    first = false;
    if (is_first && options.skip_first) {
      report.skipped.push_back(Where(node) + ": first layer");
      continue;
    }
    if (options.skip_depthwise && IsDepthwise(graph, node)) {
      report.skipped.push_back(Where(node) + ": depthwise");
      continue;
    }
    const ValueId id = node.inputs[1];
    if (!pruned.insert(id).second) continue;
    Value& value = graph.value(id);
    TensorData copy = TensorData::Copy(value.constant->data(), value.constant->size());
    std::span<float> w = copy.mutable_as<float>();
    PrunedLayer layer{node.name, node.op_type, static_cast<int64_t>(w.size()),
                      CountZeros(w), 0};
    PruneMatrix(w, *m, options);
    layer.zeros_after = CountZeros(w);
    value.constant = std::move(copy);
    report.elements += layer.elements;
    report.zeros_before += layer.zeros_before;
    report.zeros_after += layer.zeros_after;
    report.layers.push_back(std::move(layer));
  }
  return report;
}

}  // namespace braid
