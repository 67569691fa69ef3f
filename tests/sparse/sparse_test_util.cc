#include "tests/sparse/sparse_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "graph/passes/passes.h"
#include "kernels/cpu/cpu_device.h"

namespace braid::sparse_test {

std::vector<float> RandomNonZero(int64_t count, std::mt19937& rng) {
  std::uniform_real_distribution<float> mag(0.01f, 1.0f);
  std::bernoulli_distribution sign(0.5);
  std::vector<float> v(static_cast<size_t>(count));
  for (float& x : v) x = sign(rng) ? mag(rng) : -mag(rng);
  return v;
}

void Sparsify(std::vector<float>& w, int64_t rows, int64_t cols, double sparsity,
              int64_t block_rows, int64_t block_cols, std::mt19937& rng) {
  const int64_t brs = (rows + block_rows - 1) / block_rows;
  const int64_t bcs = (cols + block_cols - 1) / block_cols;
  std::vector<int64_t> blocks(static_cast<size_t>(brs * bcs));
  std::iota(blocks.begin(), blocks.end(), 0);
  std::shuffle(blocks.begin(), blocks.end(), rng);
  const int64_t zero = std::llround(sparsity * static_cast<double>(blocks.size()));
  for (int64_t i = 0; i < zero; ++i) {
    const int64_t b = blocks[static_cast<size_t>(i)];
    const int64_t br = b / bcs, bc = b % bcs;
    for (int64_t r = br * block_rows; r < std::min(rows, (br + 1) * block_rows); ++r)
      for (int64_t c = bc * block_cols; c < std::min(cols, (bc + 1) * block_cols); ++c)
        w[static_cast<size_t>(r * cols + c)] = 0.0f;
  }
}

std::unique_ptr<OneNode> OneNode::Build(
    const std::string& op_type,
    std::vector<std::pair<std::string, AttributeValue>> attrs,
    std::vector<Input> inputs) {
  auto one = std::unique_ptr<OneNode>(new OneNode());
  Graph& g = one->graph_;
  Node node;
  node.name = "op";
  node.op_type = op_type;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Input& in = inputs[i];
    const std::string name = "in" + std::to_string(i);
    ValueId id;
    if (in.constant) {
      id = g.AddConstant(name, DataType::kF32, StaticShape(in.dims),
                         TensorData::Copy(in.data.data(), in.data.size() * sizeof(float)));
    } else {
      id = g.AddInput(name, DataType::kF32, StaticShape(in.dims));
    }
    node.inputs.push_back(id);
    one->input_descs_.push_back({DataType::kF32, in.dims});
  }
  const ValueId y = g.AddValue("y");
  node.outputs = {y};
  for (auto& [name, value] : attrs) node.attrs.Set(name, value);
  g.AddNode(std::move(node));
  g.outputs().push_back(y);
  Status s = InferShapes(g);
  EXPECT_TRUE(s.ok()) << s.ToString();
  StatusOr<std::vector<int64_t>> dims = StaticExtents(g.value(y).shape);
  EXPECT_TRUE(dims.ok());
  if (dims.ok()) one->output_ = {DataType::kF32, *dims};
  one->inputs_ = std::move(inputs);
  return one;
}

PrepareArgs OneNode::Args(int num_threads) const {
  PrepareArgs a;
  a.node = &graph_.node(0);
  a.opset = 17;
  a.inputs = input_descs_;
  a.outputs = {output_};
  for (ValueId id : graph_.node(0).inputs)
    a.constants.push_back(graph_.IsConstant(id) ? &*graph_.value(id).constant : nullptr);
  a.num_threads = num_threads;
  return a;
}

Status OneNode::Run(Kernel& kernel, int num_threads, std::vector<float>* out) const {
  RETURN_IF_ERROR(kernel.Prepare(Args(num_threads)));
  std::vector<const void*> src;
  for (const Input& in : inputs_) src.push_back(in.data.data());
  out->assign(static_cast<size_t>(output_.elements()), -12345.0f);
  std::vector<void*> dst = {out->data()};
  std::vector<std::byte> workspace(kernel.workspace_bytes() + 64);
  RunArgs r;
  r.src = src;
  r.dst = dst;
  r.workspace = workspace.data();
  return kernel.Run(r);
}

std::vector<float> OneNode::Reference() const {
  KernelRegistry registry;
  RegisterReferenceKernels(registry);
  std::vector<const KernelEntry*> c =
      registry.Candidates(graph_.node(0).op_type, DeviceKind::kCpu);
  EXPECT_FALSE(c.empty());
  std::vector<float> out;
  if (c.empty()) return out;
  std::unique_ptr<Kernel> k = c.front()->create();
  Status s = Run(*k, 1, &out);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return out;
}

double WorstError(const std::vector<float>& got, const std::vector<float>& want,
                  double abs_tol, double rel_tol) {
  if (got.size() != want.size()) return INFINITY;
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double err = std::fabs(static_cast<double>(got[i]) - want[i]);
    const double allowed = abs_tol + rel_tol * std::fabs(static_cast<double>(want[i]));
    if (!(err <= allowed * 1e30)) return INFINITY;  // NaN
    worst = std::max(worst, err / allowed);
  }
  return worst;
}

}  // namespace braid::sparse_test
