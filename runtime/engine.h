// braid's one plan runner: compiles (static graph, Plan) into steps over one
// or several devices and runs them, with streams and events when the plan
// needs them and as a plain loop on the calling thread when it does not.
//
//   std::unique_ptr<braid::Device> cpu = braid::CreateCpuDevice();
//   std::unique_ptr<braid::VgpuDevice> vgpu = braid::CreateVgpuDevice();
//   std::vector<braid::EngineDevice> devices = {{cpu.get()}, {vgpu.get()}};
//   ASSIGN_OR_RETURN(auto engine, braid::Engine::Create(std::move(static_graph), plan,
//                                                       registry, devices, {}));
//   const void* inputs[] = {image.data()};
//   RETURN_IF_ERROR(engine->Run(inputs));
//   const float* logits = static_cast<const float*>(engine->output(0));
//   braid::TraceWriter trace;
//   engine->AppendTrace(trace);              // the last Run's per-step timeline
//
//   // The sequential path: every node on the host CPU, in order, on the calling thread.
//   ASSIGN_OR_RETURN(auto seq, braid::Engine::CreateSequential(std::move(g), registry, *cpu, {4}));
//
// Compile (Create): slices are expanded into part nodes and a Concat join
// (runtime/slicing.h); every node gets a kernel prepared for its device
// (PrepareFirstAccepting; a node no kernel of its device accepts falls back to
// the CPU, reported in placements()); a copy step is inserted for every value
// read in another memory space than the one it lives in (at most one copy per
// value and destination; device-to-device goes through host memory); every
// memory space gets one arena from the memory planner (the host arena is
// pinned when a discrete accelerator takes part, mapped when an integrated one
// shares it, and then no copies are made to it); constants read on a device
// are uploaded once; and the step dependency graph is built, including the
// write-after-read edges that arena reuse needs when steps run concurrently.
//
// Run: the calling thread runs CPU stream 0's steps in order and, around
// them, issues the steps of accelerator streams, copy streams (one per
// direction and device) and extra CPU streams (plan stream > 0, each a
// worker thread), each stream in step order, as early as their inputs allow.
// A cross-stream dependency the stream can queue (Stream::WaitsOnDevice: a
// CUDA event on a CUDA stream, anything on a worker stream) is issued at
// once; one it cannot (a CPU step's event on a CUDA stream, where WaitFor
// would block the caller) is issued when the event has completed, right
// after the CPU step that signals it. So the host never waits on work it has
// yet to issue itself (docs/engine.md, "Running"). Events are made once
// at compile time and recorded again each Run; steps on streams that are
// TimedByEvents (CUDA) are timed by events around them, on the device's
// clock. A failing step makes Run return its error, prefixed with the node
// and device; work that depends on it is skipped, every stream is drained,
// and the next Run starts clean.
//
// The sequential path: a plan whose every step runs on the calling thread
// (all nodes on the CPU's stream 0, hence no copies, worker streams or
// events) runs as a loop over the prepared kernels with nothing else per
// step: no issue order, no event, and no clock read unless step_times. This
// is what Session's fast path runs; compile, the channels-last retry, views,
// memory and fallbacks are the same code as for any plan.
#ifndef BRAID_RUNTIME_ENGINE_H_
#define BRAID_RUNTIME_ENGINE_H_

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "braid/braid.h"
#include "graph/ir.h"
#include "kernels/backend.h"
#include "kernels/host/worker_stream.h"
#include "runtime/thread_pinning.h"
#include "runtime/trace.h"
#include "scheduler/cache_residency.h"
#include "scheduler/plan.h"

namespace braid {

struct EngineDevice {
  Device* device = nullptr;  // not owned; devices[0] must be the host CPU
  // The device addresses host memory directly (an integrated GPU with mapped
  // memory): it shares the host arena and no copies are made for it.
  bool host_addressable = false;
  int threads = 1;  // intra-op threads its kernels are prepared with
  // A modelled time each kernel step is padded up to (the backend's timing
  // shaping, kernels/backend_registry.h); empty: none.
  std::function<std::chrono::nanoseconds(double flops, double bytes)> kernel_time;
};

struct EngineOptions {
  int num_threads = 1;  // CPU intra-op threads (>= 1)
  // Keep 4-D activations nhwc between kernels that handle it, on every
  // device (runtime/layout.h); copies move the bytes as they are.
  bool channels_last = true;
  // Run views (RunsAsView) in place; false copies them as kernels (a
  // reference that shares no buffer, for tests).
  bool views_in_place = true;
  // Pin the threads (runtime/thread_pinning.h): the thread calling Run to
  // the first num_threads cores for the length of each Run, the worker
  // threads (a vgpu's streams, extra CPU streams) to the other cores (to the
  // last one when num_threads takes them all); a plan without worker
  // threads is not pinned. Off:
  // the OS places them, and a CPU stream woken by another device's thread
  // may move to that thread's core, away from its cached data. No effect
  // with fewer than two cores (thread_note() says so).
  bool pin_threads = false;
  // Time every step on streams that are TimedByEvents (CUDA) with two timing
  // events (docs/engine.md, "Running"). Off: those steps record only the
  // events other streams wait for, and their timeline() entries hold host
  // launch times, not execution times (a plain Run needs none: the Session
  // turns this on for traces and adaptation only). Off on the sequential
  // path: no step is timed (timeline() lists none as run, DeviceBusyUs is 0).
  bool step_times = true;
};

// One executed step of the last Run, times relative to the Run's start.
struct StepTiming {
  std::string name;      // node name, or "copy VALUE -> DEVICE"
  std::string category;  // "kernel" or "copy"
  std::string device;    // the device that executed it
  std::string track;     // "cpu/stream0", "vgpu/stream0", "vgpu/h2d", "vgpu/d2h"
  size_t bytes = 0;      // bytes moved (copies) or written (kernels)
  bool view = false;     // a view (RunsAsView): its output is its input's buffer, no kernel ran
  bool ran = false;      // false when skipped after a failure
  double start_us = 0;
  double end_us = 0;
};

class Engine {
 public:
  static StatusOr<std::unique_ptr<Engine>> Create(Graph graph, const Plan& plan,
                                                  const KernelRegistry& registry,
                                                  std::span<const EngineDevice> devices,
                                                  const EngineOptions& options);
  // Every node on `cpu` (the host CPU), stream 0: the sequential path.
  static StatusOr<std::unique_ptr<Engine>> CreateSequential(Graph graph,
                                                            const KernelRegistry& registry,
                                                            Device& cpu,
                                                            const EngineOptions& options);
  ~Engine();

  Status Run(std::span<const void* const> inputs);

  const Graph& graph() const { return graph_; }  // after slice expansion
  const TensorDesc& output_desc(size_t k) const { return outputs_[k].desc; }
  void* output(size_t k) const { return outputs_[k].data; }
  const TensorDesc& input_desc(size_t k) const { return input_descs_[k]; }
  const std::vector<NodePlacement>& placements() const { return placements_; }
  // Set when channels-last was requested but the plan had to run plain.
  const std::string& layout_note() const { return layout_note_; }
  // With EngineOptions::pin_threads: where the threads run, or why not.
  const std::string& thread_note() const { return thread_note_; }
  size_t arena_bytes() const { return arena_bytes_; }  // all memory spaces
  // Every step runs on the calling thread (see the top of this file).
  bool sequential() const { return sequential_; }
  // The host arena's buffers in request order (first_node / last_node are
  // step indices here, copies included): what scheduler/cache_residency.h's
  // HostArenaMirror reproduces for the cost model.
  const std::vector<ArenaBuffer>& host_arena() const { return host_arena_; }
  size_t num_steps() const { return steps_.size(); }
  size_t num_copy_steps() const;
  // The steps step `i` waits for on other streams (indices into timeline()):
  // at most one per stream, none implied by another (ReduceCrossStreamWaits).
  const std::vector<int>& step_waits(size_t i) const { return steps_[i].waits; }
  std::vector<StepTiming> timeline() const;
  // Kernel time per engine device in the last Run: the sum of each kernel
  // step's start..end that ran (a shaped vgpu's padding included; copies and
  // event waits excluded). `busy_us` has one entry per device; allocates
  // nothing, so the session can measure every Run (online adaptation).
  void DeviceBusyUs(std::span<double> busy_us) const;
  void AppendTrace(TraceWriter& trace) const;
  // The device of the first step that failed in the last Run, or "".
  std::string failed_device() const;

 private:
  Engine() = default;
  friend class EngineBuilder;

  struct Step {
    bool is_copy = false;
    int device = 0;        // engine device index that executes it
    int stream = -1;       // index into streams_; -1 = the calling thread
    std::string name;
    std::string track;
    const Node* node = nullptr;
    std::unique_ptr<Kernel> kernel;
    bool view = false;  // output aliases input 0 (RunsAsView): the kernel is not run
    std::vector<const void*> src;
    std::vector<void*> dst;
    void* workspace = nullptr;
    // Copies.
    void* copy_dst = nullptr;
    const void* copy_src = nullptr;
    bool to_device = true;
    size_t bytes = 0;
    std::chrono::nanoseconds modelled{0};  // vgpu timing shaping (kernels)
    std::vector<int> waits;  // cross-stream dependencies (step indices)
    bool needs_event = false;
    std::shared_ptr<ManualEvent> manual_event;  // calling-thread steps
    // Stream steps, made at compile time: the completion event others wait
    // for (its stream's), the event they get instead when the step is not
    // issued, and the timing events of a TimedByEvents stream.
    std::shared_ptr<Event> done_event;
    std::shared_ptr<ManualEvent> failed_event;
    std::shared_ptr<Event> start_timer, end_timer;
    // Per Run.
    std::shared_ptr<Event> event;
    Status status;
    bool issued = false;  // stream steps: handed to the stream
    bool ran = false;
    int64_t output_rows = -1;  // RunArgs::output_rows (kOpDataDependentRows ops)
    std::chrono::steady_clock::time_point start, end;
  };
  // The sequential path's loop, one cache line per step: the kernel call's
  // arguments made at compile time (spans over the step's src / dst).
  struct SequentialStep {
    Kernel* kernel = nullptr;  // null: a view, nothing runs
    RunArgs args;
    Step* step = nullptr;
  };
  struct ExecStream {
    std::unique_ptr<Stream> stream;
    std::string track;
    int device = 0;
    std::vector<size_t> steps;  // its steps, in order
    bool timed = false;         // Stream::TimedByEvents
    std::shared_ptr<Event> origin;  // timed: recorded first in every Run
    // Per Run.
    size_t next = 0;  // the first step not yet issued
    Status error;     // set: the stream's later steps are skipped
    std::chrono::steady_clock::time_point origin_at;
  };
  struct InputPatch {
    size_t step = 0;
    int slot = -1;  // src slot, or -1 for a copy's source
    size_t input = 0;
  };
  struct OutputCopy {
    void* dst = nullptr;
    const void* constant_src = nullptr;
    size_t input = 0;
    size_t bytes = 0;
  };
  struct Output {
    TensorDesc desc;
    void* data = nullptr;
    // The step whose kernel reports this output's rows (kOpDataDependentRows):
    // desc.dims[0] is set from it after every Run. -1: a fixed shape.
    int rows_step = -1;
    int64_t rows_bound = 0;  // the planned upper bound of those rows
  };

  Status RunStep(size_t i);
  // The data-dependent extents of the last Run into the outputs' descs.
  Status TakeOutputRows();
  Status RunSequential(std::span<const void* const> inputs);
  // The issue order (see the top of this file).
  // A wait on `dep` the stream cannot queue, whose event has not completed.
  static bool HostMustWait(const ExecStream& es, const Step& dep);
  bool Issuable(size_t i) const;
  void Issue(size_t i);
  void IssueReady();
  Status EnsureIssued(size_t i);  // issues stream step i, waiting on issued work only
  void ReadEventTimes();          // TimedByEvents streams, after they drained
  Status CreateEvents();          // at compile time
  Status PinThreads();  // EngineOptions::pin_threads, after Build
  std::string StepWhere(const Step& step) const;

  Graph graph_;
  std::vector<EngineDevice> devices_;
  int num_threads_ = 1;
  std::vector<Step> steps_;
  std::vector<ExecStream> streams_;
  std::vector<size_t> caller_steps_;  // CPU stream 0, in order
  bool step_times_ = true;            // EngineOptions::step_times
  bool sequential_ = false;           // no streams_: RunSequential
  std::vector<SequentialStep> sequential_steps_;
  bool sequential_failed_ = false;    // a step's status to clear at the next Run
  std::vector<size_t> ensure_todo_;   // EnsureIssued's worklist (kept: no allocation per Run)
  std::vector<InputPatch> input_patches_;
  std::vector<OutputCopy> output_copies_;
  std::vector<Output> outputs_;
  std::vector<TensorDesc> input_descs_;
  std::vector<NodePlacement> placements_;
  std::string layout_note_;
  std::string thread_note_;
  bool pin_caller_ = false;
  cpu_set_t caller_cores_;
  std::vector<std::unique_ptr<Buffer>> buffers_;  // arenas, constants, workspaces
  size_t arena_bytes_ = 0;
  std::vector<ArenaBuffer> host_arena_;
  std::chrono::steady_clock::time_point run_start_;
};

}  // namespace braid

#endif  // BRAID_RUNTIME_ENGINE_H_
