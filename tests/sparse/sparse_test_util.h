// Helpers of the sparse kernel tests: a one-node graph with given inputs
// (constants or run-time), its PrepareArgs, and running a kernel on it.
// Standalone (no oneDNN, no op harness) so scripts/test_aarch64_sparse.sh
// can build these tests with only the portable kernels and the reference.
#ifndef BRAID_TESTS_SPARSE_SPARSE_TEST_UTIL_H_
#define BRAID_TESTS_SPARSE_SPARSE_TEST_UTIL_H_

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "graph/ir.h"
#include "kernels/backend.h"

namespace braid::sparse_test {

struct Input {
  std::vector<int64_t> dims;
  std::vector<float> data;
  bool constant = false;
};

// Uniform values in [-1, 1] with |v| >= 0.01 (so sparsity is only what a
// test puts there).
std::vector<float> RandomNonZero(int64_t count, std::mt19937& rng);

// Zeroes exactly round(sparsity * blocks) blocks of the [rows, cols]
// row-major matrix `w` (blocks of block_rows x block_cols, partial at the
// edges), chosen at random.
void Sparsify(std::vector<float>& w, int64_t rows, int64_t cols, double sparsity,
              int64_t block_rows, int64_t block_cols, std::mt19937& rng);

class OneNode {
 public:
  // Builds the node and infers the output shape; `attrs` as in the IR.
  static std::unique_ptr<OneNode> Build(
      const std::string& op_type,
      std::vector<std::pair<std::string, AttributeValue>> attrs,
      std::vector<Input> inputs);

  PrepareArgs Args(int num_threads = 1) const;
  // The node's measured activation sparsity (what `braid convert
  // --activation-sparsity` writes; the input-sparse kernels read it).
  void set_activation_sparsity(double s) { graph_.node(0).annotation.activation_sparsity = s; }
  const TensorDesc& output() const { return output_; }
  // Prepares `kernel` (status returned as is) and runs it; output in *out.
  Status Run(Kernel& kernel, int num_threads, std::vector<float>* out) const;
  // The reference kernel's output (kernels/reference), asserting success.
  std::vector<float> Reference() const;

 private:
  Graph graph_;
  std::vector<Input> inputs_;
  std::vector<TensorDesc> input_descs_;
  TensorDesc output_;
};

// max over i of |got - want| / (abs_tol + rel_tol * |want|); <= 1 passes.
double WorstError(const std::vector<float>& got, const std::vector<float>& want,
                  double abs_tol, double rel_tol);

}  // namespace braid::sparse_test

#endif  // BRAID_TESTS_SPARSE_SPARSE_TEST_UTIL_H_
