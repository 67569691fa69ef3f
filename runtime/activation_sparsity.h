// Activation calibration: runs a model on the CPU and measures, per node,
// the fraction of exact zeros in the activations it reads (e.g. after a
// ReLU), then writes it into Annotation::activation_sparsity; or the range
// of every activation (MeasureActivationRanges, for int8 quantization).
//
//   braid::Graph g = ...;                            // passes run, shapes inferred
//   braid::ActivationSparsityOptions options;
//   options.samples = 8;                             // random N(0,1) inputs
//   // Real data instead (every sample reuses it; several tensors = several samples):
//   // options.inputs["input"] = {braid::Tensor::Borrow(braid::DataType::kF32, dims, ptr)};
//   ASSIGN_OR_RETURN(braid::ActivationSparsityReport report,
//                    braid::MeasureActivationSparsity(g, options));
//   for (const auto& n : report.nodes) std::cout << n.name << " " << n.sparsity << "\n";
//   // int8 calibration: [min, max] of every activation, for QuantizeStatic.
//   ASSIGN_OR_RETURN(braid::ActivationRangeReport ranges,
//                    braid::MeasureActivationRanges(g, options));
//
// What is measured: for every node, zeros / elements over its non-constant
// f32 inputs (graph inputs included), summed over all samples, so a node
// reading a big and a small tensor weights them by size. "Zero" means +0.0
// or -0.0, as for weight sparsity. Nodes without a non-constant f32 input
// keep -1 ("not measured").
//
// How: a copy of the graph gets every such intermediate tensor as an extra
// graph output and runs in a cpu-only Session; the kernels and their hot
// paths are untouched. Keeping all those tensors alive costs memory (the sum
// of the model's activations at the chosen batch), not correctness.
//
// Random inputs only approximate real data: a first conv sees ~0% zeros on
// random data, while real images (padding, black borders) may differ, and
// the ReLU zero fractions deeper in depend on the input distribution. Integer
// and bool inputs (indices, masks) are never randomised: give them.
#ifndef BRAID_RUNTIME_ACTIVATION_SPARSITY_H_
#define BRAID_RUNTIME_ACTIVATION_SPARSITY_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "braid/braid.h"
#include "graph/ir.h"
#include "graph/passes/passes.h"  // ActivationRange

namespace braid {

struct ActivationSparsityOptions {
  // Runs with random inputs. When every graph input is given in `inputs`,
  // the model runs once per given tensor instead (the longest list).
  int samples = 8;
  uint64_t seed = 1;
  // Extent of every symbolic dimension of a random input.
  int64_t batch = 1;
  int num_threads = 0;  // 0 = all cores
  // Caller-provided inputs by graph input name. Run k uses
  // inputs[name][k % size]; inputs not named here are random (f32/f16 from
  // N(0,1); other dtypes are an error asking for data).
  std::map<std::string, std::vector<Tensor>> inputs;
  // Called after each run with (runs done, runs in total), e.g. for progress.
  std::function<void(int, int)> on_run;
};

struct NodeActivationSparsity {
  NodeId node = kNoNode;
  std::string name;
  std::string op_type;
  double sparsity = 0;   // zeros / elements, in [0, 1]
  int64_t elements = 0;  // elements counted per run (summed over inputs)
};

struct ActivationSparsityReport {
  int runs = 0;                            // model runs the figures average over
  std::vector<std::string> random_inputs;  // graph inputs that were random
  std::vector<NodeActivationSparsity> nodes;  // measured nodes, graph order
  int unmeasured_nodes = 0;  // nodes without a non-constant f32 input (kept -1)
};

// Measures and sets annotation.activation_sparsity on `graph`'s nodes (only
// on success; on error the graph is unchanged). `graph` must have run its
// passes (shapes and dtypes inferred); it is copied for the run.
// InvalidArgument for bad options (samples < 1, batch < 1, an input name the
// model does not have, an empty tensor list, a non-float input left random);
// Session errors (wrong dtype/shape of a given tensor) come back prefixed.
StatusOr<ActivationSparsityReport> MeasureActivationSparsity(
    Graph& graph, const ActivationSparsityOptions& options);

// The same runs for int8 calibration (`braid convert --precision int8`):
// the smallest and largest value every non-constant f32 node input and
// output took over all runs (NaN and Inf skipped; a tensor without a finite
// value is absent). With `percentile` below 100, the runs are made twice:
// the second time each tensor's values fall into 2048 bins over that range,
// and the range becomes [the (100 - percentile)th, the percentile-th
// percentile] (bin edges, outward), so a few outliers no longer stretch the
// quantization step of every other value.
struct ActivationRangeReport {
  int runs = 0;
  std::vector<std::string> random_inputs;
  std::map<ValueId, ActivationRange> ranges;
};
StatusOr<ActivationRangeReport> MeasureActivationRanges(const Graph& graph,
                                                        const ActivationSparsityOptions& options,
                                                        double percentile = 100);

// The f32 outputs of a model on the calibration inputs (the same runs as
// MeasureActivationRanges with the same options), kept to compare other
// versions of it with, e.g. the int8 one:
//
//   ASSIGN_OR_RETURN(braid::ReferenceOutputs f32, braid::ReferenceOutputs::Capture(g, options));
//   ASSIGN_OR_RETURN(double cosine, f32.Cosine(int8_graph));   // 1 = same direction
//
// The object keeps `options` (without on_run): tensors given in
// options.inputs are borrowed and must outlive it.
class ReferenceOutputs {
 public:
  static StatusOr<ReferenceOutputs> Capture(const Graph& graph,
                                            const ActivationSparsityOptions& options);
  // How many f32 outputs were captured (0: nothing to compare against).
  int outputs() const { return static_cast<int>(outputs_.size()); }
  // `candidate` run on the same inputs: per f32 output it shares by name with
  // the reference, the cosine similarity over every run; the lowest.
  // FailedPrecondition when no output could be compared (none shared, or
  // shapes that differ).
  StatusOr<double> Cosine(const Graph& candidate) const;

 private:
  ActivationSparsityOptions options_;
  std::map<std::string, std::vector<std::vector<float>>> outputs_;  // by name, per run
};

// Per-layer int8 sensitivity (`braid convert --precision int8`), for every
// node QuantizeStatic quantizes in `graph` (as MeasureActivationRanges took
// it), two figures on the calibration inputs (`options`; `f32` captured
// from `graph` on them):
// - the error quantizing the node's inputs and weights adds: the QDQ model
//   (before FoldQdq: fake quantization on f32 kernels, not the int8
//   kernels) runs with an f32 twin of each quantized node that reads the
//   unquantized inputs and weights (StaticQuantizationOptions::float_twins);
//   the two outputs' SQNR and cosine;
// - what it does to the model: the outputs' cosine to f32 when this node
//   alone is quantized, after the default passes (the int8 kernels; one
//   run of the model per node and sample). A tensor with outliers (a
//   transformer's residual stream) can add little error by SQNR and still
//   move a later LayerNorm's small rows a lot; this catches it.
// Sorted worst first by the second. on_layer(done, total) reports progress.
struct LayerQuantizationError {
  std::string node;
  std::string op_type;
  // 10 log10(sum f32^2 / sum (quantized - f32)^2): +inf if equal, -inf if
  // the f32 output is all zero and the other not; NaN (and cosine NaN) if
  // the pair could not be compared (not f32, or sizes that differ).
  double sqnr_db = 0;
  double cosine = 1;         // of the node's quantized and f32 outputs
  double output_cosine = 1;  // of the model's outputs with only this node int8
};
StatusOr<std::vector<LayerQuantizationError>> MeasureQuantizationSensitivity(
    const Graph& graph, const std::map<ValueId, ActivationRange>& ranges,
    const ActivationSparsityOptions& options, const ReferenceOutputs& f32,
    const std::function<void(int, int)>& on_layer = {});

}  // namespace braid

#endif  // BRAID_RUNTIME_ACTIVATION_SPARSITY_H_
