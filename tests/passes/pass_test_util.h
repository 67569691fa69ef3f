// Graph building for the pass tests: constants, single-output nodes and the
// PyTorch-style dynamic flatten target, built the same way in every test.
#ifndef BRAID_TESTS_PASSES_PASS_TEST_UTIL_H_
#define BRAID_TESTS_PASSES_PASS_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "graph/ir.h"

namespace braid::pass_test {

class GraphBuilder {
 public:
  // Each node's output value is named after the node plus `output_suffix`.
  explicit GraphBuilder(std::string output_suffix = "")
      : output_suffix_(std::move(output_suffix)) {}

  ValueId Input(const std::string& name, Shape shape) {
    return graph_.AddInput(name, DataType::kF32, std::move(shape));
  }
  ValueId Ints(const std::string& name, std::vector<int64_t> v,
               bool scalar = false) {
    Shape s = scalar ? Shape{} : Shape{Dim(static_cast<int64_t>(v.size()))};
    return graph_.AddConstant(name, DataType::kI64, s,
                              TensorData::Copy(v.data(), v.size() * 8));
  }
  ValueId Floats(const std::string& name, Shape shape,
                 const std::vector<float>& v) {
    return graph_.AddConstant(name, DataType::kF32, std::move(shape),
                              TensorData::Copy(v.data(), v.size() * 4));
  }
  // A constant of `shape` with every element `value`.
  ValueId Floats(const std::string& name, Shape shape, float value) {
    std::vector<float> v(static_cast<size_t>(ElementCount(shape)), value);
    return Floats(name, std::move(shape), v);
  }
  ValueId Op(const std::string& op, const std::string& name,
             std::vector<ValueId> inputs, Attributes attrs = {}) {
    Node n;
    n.name = name;
    n.op_type = op;
    n.inputs = std::move(inputs);
    n.attrs = std::move(attrs);
    n.outputs = {graph_.AddValue(name + output_suffix_)};
    ValueId out = n.outputs[0];
    graph_.AddNode(std::move(n));
    return out;
  }
  Graph& graph() { return graph_; }

 private:
  Graph graph_;
  std::string output_suffix_;
};

// Concat(Unsqueeze(Gather(Shape(x), 0)), [-1]): the [batch, -1] Reshape target
// PyTorch exports for a flatten, foldable only once the batch is known.
inline ValueId AddDynamicFlattenTarget(GraphBuilder& b, ValueId x) {
  ValueId shape = b.Op("Shape", "shape", {x});
  ValueId batch = b.Op("Gather", "gather", {shape, b.Ints("zero", {0}, true)});
  ValueId unsq =
      b.Op("Unsqueeze", "unsqueeze", {batch, b.Ints("axes", {0}, false)});
  Attributes axis0;
  axis0.Set("axis", int64_t{0});
  return b.Op("Concat", "concat", {unsq, b.Ints("rest", {-1}, false)}, axis0);
}

inline std::vector<std::string> OpTypes(const Graph& g) {
  std::vector<std::string> ops;
  for (const Node& n : g.nodes()) ops.push_back(n.op_type);
  return ops;
}

}  // namespace braid::pass_test

#endif  // BRAID_TESTS_PASSES_PASS_TEST_UTIL_H_
