// The sequential CPU executor: one prepared kernel per node, every pointer
// computed at plan time, steps run in order on the calling thread.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<braid::Executor> exec,
//                    braid::Executor::Create(std::move(static_graph), registry, *cpu, {4}));
//   const void* inputs[] = {image.data()};
//   RETURN_IF_ERROR(exec->Run(inputs));              // allocates nothing
//   const float* logits = static_cast<const float*>(exec->output(0));
//
// Create needs a graph whose every value has a static shape (see
// graph/passes/specialize.h). It prepares a kernel per node with
// PrepareFirstAccepting, plans one arena (scheduler/memory_planner.h) and one
// shared workspace, allocates both on the device, and fills each step's
// src/dst pointer arrays. Graph-input pointers are patched per Run.
#ifndef BRAID_RUNTIME_EXECUTOR_H_
#define BRAID_RUNTIME_EXECUTOR_H_

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "braid/braid.h"
#include "graph/ir.h"
#include "kernels/backend.h"

namespace braid {

struct ExecutorOptions {
  int num_threads = 1;  // intra-op threads; must be >= 1 (resolved by the caller)
  // Keep 4-D activations nhwc between kernels that handle it (runtime/layout.h).
  bool channels_last = true;
  // Run views (RunsAsView) in place; false copies them as kernels (a
  // reference that shares no buffer, for tests).
  bool views_in_place = true;
};

class Executor {
 public:
  static StatusOr<std::unique_ptr<Executor>> Create(Graph graph,
                                                    const KernelRegistry& registry,
                                                    Device& device,
                                                    const ExecutorOptions& options);

  // `inputs[k]` holds graph input k with the shape the plan was made for.
  // Returns the first kernel error, prefixed with the node. Allocates nothing.
  Status Run(std::span<const void* const> inputs);

  const Graph& graph() const { return graph_; }
  // Graph output k after Run; valid until the Executor is destroyed.
  const TensorDesc& output_desc(size_t k) const { return outputs_[k].desc; }
  void* output(size_t k) const { return outputs_[k].data; }
  const TensorDesc& input_desc(size_t k) const { return input_descs_[k]; }

  const std::vector<NodePlacement>& placements() const { return placements_; }
  size_t arena_bytes() const { return arena_bytes_; }
  // Set when channels-last was requested but the model had to run plain.
  const std::string& layout_note() const { return layout_note_; }
  size_t workspace_bytes() const { return workspace_bytes_; }

 private:
  Executor() = default;
  static StatusOr<std::unique_ptr<Executor>> Build(Graph graph, const KernelRegistry& registry,
                                                   Device& device, const ExecutorOptions& options);

  struct Step {
    const Node* node = nullptr;
    std::unique_ptr<Kernel> kernel;
    bool view = false;  // output aliases input 0 (RunsAsView): the kernel is not run
    std::vector<const void*> src;
    std::vector<void*> dst;
  };
  // src[slot] of step `step` reads graph input `input`.
  struct InputPatch {
    size_t step = 0;
    size_t slot = 0;
    size_t input = 0;
  };
  // Graph outputs that are a graph input or a constant are copied into their
  // own arena slot after the last step, so callers always get session memory.
  struct OutputCopy {
    void* dst = nullptr;
    const void* constant_src = nullptr;  // set for constants
    size_t input = 0;                    // else: the graph input to copy
    size_t bytes = 0;
  };
  struct Output {
    TensorDesc desc;
    void* data = nullptr;
  };

  Graph graph_;  // the specialized graph; steps point at its nodes
  int num_threads_ = 1;
  std::vector<Step> steps_;
  std::vector<InputPatch> input_patches_;
  std::vector<OutputCopy> output_copies_;
  std::vector<Output> outputs_;
  std::vector<TensorDesc> input_descs_;
  std::vector<NodePlacement> placements_;
  std::unique_ptr<Buffer> arena_;
  std::unique_ptr<Buffer> workspace_;
  std::unique_ptr<Stream> stream_;
  size_t arena_bytes_ = 0;
  std::string layout_note_;
  size_t workspace_bytes_ = 0;
};

}  // namespace braid

#endif  // BRAID_RUNTIME_EXECUTOR_H_
