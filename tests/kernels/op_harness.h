// Cross-backend op harness (in the spirit of ggml's test-backend-ops and
// oneDNN's benchdnn): a declarative list of single-op cases, each run by the
// reference kernel and by every other implementation registered for the op on
// every available device, with the outputs compared within the case's
// tolerance.
//
//   const braid::KernelRegistry& registry = braid::HarnessRegistry();
//   for (const braid::OpCase& c : braid::ComputeOpCases()) {
//     braid::CaseReport report = braid::RunOpCase(c, registry);
//     if (!report.ok()) std::cerr << report.ToString() << "\n";
//   }
//
// A case builds a one-node Graph (graph/ir.h) with seeded random non-zero
// inputs (constants too), infers the output descs with braid::InferShapes and
// hands the kernels exactly what the runtime would. Benchmarks reuse the
// same pieces: OpCaseInstance::Build + PrepareImpl + Run.
#ifndef BRAID_TESTS_KERNELS_OP_HARNESS_H_
#define BRAID_TESTS_KERNELS_OP_HARNESS_H_

#include <cstdint>
#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "graph/ir.h"
#include "kernels/backend.h"
#include "kernels/backend_registry.h"

namespace braid {

struct OpInput {
  DataType dtype = DataType::kF32;
  std::vector<int64_t> dims;
  bool constant = false;  // an initializer: kernels see it in PrepareArgs
  bool omitted = false;   // an optional input left out (kNoValue)
  // Random values are drawn from [low, high], never closer to zero than
  // 1% of max(|low|, |high|); integers are rounded and never 0 unless the
  // range is exactly [0, 0].
  double low = -1.0;
  double high = 1.0;
  // Explicit contents for integer inputs (axes, shapes); empty = random.
  std::vector<int64_t> values;
  // f32 / f64 / f16 only: this fraction of the elements (rounded, at seeded
  // positions) is exactly zero, as in a pruned weight or an activation after
  // ReLU, so the sparse kernels take the case instead of declining it.
  double zero_fraction = 0;
  // f32 / f64 / f16 only (f16: rounded once): values written over the random
  // fill at these flat positions (NaN, infinities, denormals: NaN / Inf
  // semantics, docs/ops.md).
  std::vector<std::pair<int64_t, float>> specials;
};

struct OpCase {
  std::string name;  // unique, [A-Za-z0-9_] (used as a gtest parameter name)
  std::string op_type;
  int64_t opset = 17;
  std::vector<std::pair<std::string, AttributeValue>> attributes;
  std::vector<OpInput> inputs;
  int num_outputs = 1;
  // |got - want| <= abs_tolerance + rel_tolerance * |want| per element
  // (integer outputs: exact, or within int_tolerance).
  double abs_tolerance = 1e-5;
  double rel_tolerance = 1e-5;
  // Quantized outputs that a fast kernel requantizes in float (the reference
  // in double) may differ by this many quantization steps.
  double int_tolerance = 0;
  // The node's measured activation sparsity (`braid convert
  // --activation-sparsity`), which the input-sparse kernels need; -1 = none.
  double activation_sparsity = -1;
};

// `in` (f32, at least 8 elements) with NaN at its first, middle and last
// element, +Inf at n/5, -Inf at 2n/5 and the denormals +-1e-40 at 3n/5 and
// 4n/5 written over its random values (OpInput::specials): the NaN / Inf
// cases, compared with the reference NaN for NaN and Inf for Inf.
OpInput WithNanInf(OpInput in);

// gtest prints a case parameter as its name.
void PrintTo(const OpCase& c, std::ostream* os);

// The compute-op cases (tests/kernels/harness_cases_compute.cc) and the
// data-movement / elementwise ones (tests/kernels/harness_cases_data.cc).
std::span<const OpCase> ComputeOpCases();
std::span<const OpCase> DataOpCases();

// A case made concrete: the one-node graph, input bytes, and the
// PrepareArgs a kernel sees. Not copyable (PrepareArgs points into it).
class OpCaseInstance {
 public:
  static StatusOr<std::unique_ptr<OpCaseInstance>> Build(const OpCase& c,
                                                         uint32_t seed = 0);

  const OpCase& op_case() const { return case_; }
  const Graph& graph() const { return graph_; }
  const Node& node() const { return graph_.node(0); }
  // For a kernel on `device` with `num_threads` intra-op threads.
  PrepareArgs MakePrepareArgs(Device* device, int num_threads = 1) const;
  const std::vector<TensorDesc>& input_descs() const { return input_descs_; }
  const std::vector<TensorDesc>& output_descs() const { return output_descs_; }
  // Host bytes per input (nullptr for omitted inputs).
  const std::vector<const void*>& input_pointers() const { return input_ptrs_; }

  OpCaseInstance(const OpCaseInstance&) = delete;
  OpCaseInstance& operator=(const OpCaseInstance&) = delete;

 private:
  OpCaseInstance() = default;

  OpCase case_;
  Graph graph_;
  std::vector<TensorDesc> input_descs_;
  std::vector<TensorDesc> output_descs_;
  std::vector<const TensorData*> constants_;
  std::vector<TensorData> input_data_;  // per input (empty when omitted)
  std::vector<const void*> input_ptrs_;
};

// One implementation prepared for an instance, with device buffers for its
// outputs and workspace. Run() may be called repeatedly (benchmarks).
class PreparedImpl {
 public:
  // Prepare's status is returned as is (Unimplemented = declined).
  static StatusOr<std::unique_ptr<PreparedImpl>> Prepare(
      const OpCaseInstance& instance, const KernelEntry& entry, Device& device,
      int num_threads = 1);

  // Runs the kernel; on a device other than the CPU the outputs are then
  // copied back to host memory through the stream (the inputs were copied to
  // the device once, at Prepare).
  Status Run();
  const KernelEntry& entry() const { return *entry_; }
  // Output i's bytes in host memory.
  const void* output(size_t i) const {
    return host_outputs_.empty() ? dst_[i] : host_outputs_[i].data();
  }
  // The rows a kOpDataDependentRows kernel reported in its last Run (-1: none).
  int64_t output_rows() const { return output_rows_; }

 private:
  PreparedImpl() = default;

  const KernelEntry* entry_ = nullptr;
  std::unique_ptr<Kernel> kernel_;
  std::unique_ptr<Stream> stream_;
  std::vector<std::unique_ptr<Buffer>> buffers_;  // outputs, then workspace
  std::vector<const void*> src_;
  std::vector<void*> dst_;
  void* workspace_ = nullptr;
  std::vector<size_t> output_bytes_;
  std::vector<std::vector<std::byte>> host_outputs_;  // non-CPU devices only
  int64_t output_rows_ = -1;
};

// The kernels and devices the harness runs: the host and every backend of a
// registry that runs on any machine (host-addressable or virtual; CUDA's
// cases are tests/cuda/), opened with default options, each backend's
// kernels registered, the reference kernels included.
struct Harness {
  KernelRegistry registry;
  std::vector<std::unique_ptr<Device>> devices;  // the host first
};
StatusOr<std::unique_ptr<Harness>> MakeHarness(const BackendRegistry& backends);

// The built-in backends' harness registry: every CPU implementation plus the
// reference kernels, and the same kernels on the virtual GPU, which the
// harness runs with device memory and explicit copies.
const KernelRegistry& HarnessRegistry();
// The reference implementation of `op_type`, or nullptr.
const KernelEntry* FindReference(const KernelRegistry& registry,
                                 const std::string& op_type);

struct ImplReport {
  std::string impl;
  std::string device;
  enum class Outcome { kMatched, kDeclined, kMismatch, kError } outcome =
      Outcome::kMatched;
  std::string detail;         // decline reason, mismatch summary, error
  double max_abs_error = 0;   // over all outputs
};

struct CaseReport {
  std::string case_name;
  Status status;  // harness or reference failure
  std::vector<ImplReport> impls;  // non-reference implementations

  // The reference ran and no implementation mismatched or erred.
  bool ok() const;
  // Implementations other than the reference that ran and matched.
  int matched() const;
  // Non-reference implementations on the CPU that ran and matched: zero
  // means the case checked no fast CPU kernel (all declined, or none is
  // registered), and the harness tests count it as a skip, not a pass.
  int matched_on_cpu() const;
  // "conv_3x3: reference ok; onednn@cpu matched (max abs err 1e-07)".
  std::string ToString() const;
};

// On the built-in backends' devices.
CaseReport RunOpCase(const OpCase& c, const KernelRegistry& registry);
CaseReport RunOpCase(const OpCase& c, const Harness& harness);
// On `devices` (the host first).
CaseReport RunOpCase(const OpCase& c, const KernelRegistry& registry,
                     std::span<const std::unique_ptr<Device>> devices);

}  // namespace braid

#endif  // BRAID_TESTS_KERNELS_OP_HARNESS_H_
