// braid's embedding API: open a model, bind inputs, run, read outputs.
//
//   #include <braid/braid.h>
//
//   braid::SessionOptions options;
//   options.num_threads = 2;
//   auto session = braid::Session::Open("mobilenet_v2.braid", options);  // .braid, .onnx or builtin:NAME
//   if (!session.ok()) { std::cerr << session.status().ToString() << "\n"; return 2; }
//   std::vector<float> image(1 * 3 * 224 * 224, 0.5f);
//   braid::Tensor input = braid::Tensor::Borrow(braid::DataType::kF32, {1, 3, 224, 224}, image.data());
//   braid::Status s = (*session)->SetInput("input", input);   // wrong name/shape: error lists the model's inputs
//   if (s.ok()) s = (*session)->Run();
//   braid::StatusOr<braid::Tensor> logits = (*session)->GetOutput("output");
//   if (logits.ok()) std::cout << logits->data<float>()[0] << "\n";  // valid until the next Run
//
// Threading: one Session runs one Run at a time. A Run that starts while
// another Run of the same Session is in progress returns FailedPrecondition
// (it does not block and does not corrupt the first). Use one Session per
// thread for concurrent inference; Sessions share nothing mutable.
//
// Memory: the first Run for a set of input shapes plans and allocates; later
// Runs with the same shapes allocate nothing in braid itself (oneDNN 2.6
// still allocates a few small blocks inside each primitive execution; see
// docs/runtime.md). New input shapes (e.g. a different batch) re-plan once.
#ifndef BRAID_BRAID_H_
#define BRAID_BRAID_H_

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "braid/types.h"

namespace braid {

// A dense row-major host tensor: owning, or borrowing the caller's memory.
class Tensor {
 public:
  Tensor() = default;
  // Zero-filled, owned by the Tensor.
  static Tensor Allocate(DataType dtype, std::vector<int64_t> dims);
  // Wraps `data` without copying; the caller keeps it alive.
  static Tensor Borrow(DataType dtype, std::vector<int64_t> dims, void* data);

  DataType dtype() const { return dtype_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t elements() const;
  size_t bytes() const;
  void* raw_data() const { return data_; }
  template <typename T>
  T* data() const {
    return static_cast<T*>(data_);
  }

 private:
  DataType dtype_ = DataType::kUndefined;
  std::vector<int64_t> dims_;
  void* data_ = nullptr;
  std::shared_ptr<void> owned_;
};

struct SessionOptions {
  int num_threads = 0;                    // intra-op threads; 0 = all cores
  std::vector<std::string> devices = {"cpu"};
  std::string policy = "cpu-only";        // placement policy (scheduler)
  bool fuse = true;                       // .onnx opened directly: BN folding and fusion
  // Heterogeneous engine (docs/engine.md). devices may add "vgpu" (the
  // virtual GPU: CPU kernels on their own threads and memory, a test/demo
  // device) and "cuda" / "cuda:K". policy is looked up in the scheduler's
  // policy registry ("cpu-only", "gpu-only", ...) unless plan_file names a
  // plan JSON (`braid plan --save`), which then wins.
  std::string plan_file;
  // Record a per-step timeline on every Run (Session::WriteTrace).
  bool trace = false;
  // Heterogeneous engine only: keep the thread calling Run on its own cores
  // and the devices' worker threads (a vgpu's, extra CPU streams) on the
  // others, so a handoff does not move the CPU stream away from its cached
  // data (docs/engine.md). No effect with one core (notices() says so).
  bool pin_threads = false;
  // vgpu timing shaping: "none" or "orin-like" (a model, never a GPU figure).
  std::string vgpu_timing = "none";
  // Settings of `policy`, "POLICY.KEY" -> value (scheduler/policies.h), e.g.
  // {"sparoa.policy_file", "sparoa.bin"} (a model from `braid train`; none:
  // grid-searched thresholds, no SAC), {"threshold.intensity", "8"}. A
  // setting of another policy than `policy`, an unknown key or a bad value
  // is InvalidArgument. sparoa's cost model is the host-vgpu profile when
  // vgpu is open, else the host profile, unless `profile` names one
  // (docs/scheduler.md).
  std::map<std::string, std::string> policy_settings;
  // Device profile (scheduler/device_profile.h: a name or a .json file) the
  // cost-model policies (threshold, heft, partition, optimal) and online
  // adaptation predict with. Empty: this host's generic CPU figures plus, for
  // a vgpu, its timing shaping (capped at one host thread's speed). Its
  // "cpu" entry's sparse crossovers (`braid calibrate`) also decide where the
  // weight-sparse CPU kernels replace the dense ones (docs/sparse.md).
  std::string profile;
  // The weight-sparse CPU kernels (docs/sparse.md), on the CPU and on a vgpu
  // alike: off registers none (oneDNN everywhere); sparse_crossover
  // ("conv1x1=F,conv3x3=F,gemm=F,gemm_input=F", any subset, values in [0,1])
  // overrides the profile's measured crossovers. The `braid` CLI maps the
  // environment variables BRAID_SPARSE and BRAID_SPARSE_CROSSOVER onto these.
  bool sparse_kernels = true;
  std::string sparse_crossover;
  // Online adaptation (docs/engine.md): every Run's kernel time per device is
  // compared with the plan's prediction; when a device drifts (e.g. the CPU
  // is loaded by another process) the session re-plans with `policy` on a
  // profile corrected by the observed factor, with hysteresis, and says so
  // in notices(). Off by default.
  bool adapt = false;
  // With num_threads > 1 on the CPU-only fast path: Runs are timed and the
  // session runs on all threads or on one, whichever is faster now, probing
  // the other now and then (when other processes keep the cores busy,
  // OpenMP's barriers wait for descheduled threads and one thread wins;
  // runtime/thread_adaptation.h, docs/runtime.md). notices() says when it
  // went to one thread. The one-thread kernels (and their arena) are
  // prepared at the first probe, after 3 Runs, and kept: memory for a second
  // set of prepared weights. false: always num_threads, one set.
  bool adapt_threads = true;
};

// What a model expects at one input or produces at one output. Symbolic
// dimensions (e.g. the batch "N") are reported with extent -1 and a symbol.
struct TensorInfo {
  std::string name;
  DataType dtype = DataType::kUndefined;
  // -1 where symbolic, or where only the data tells: the rows of an output
  // such as NonMaxSuppression's, symbol "rows?" (GetOutput gives the count).
  std::vector<int64_t> dims;
  std::vector<std::string> symbols;   // per dim: "" or the symbol name
  std::string ToString() const;       // "input: f32[N,3,224,224]"
};

// Where one node runs and with which implementation; fallbacks say why.
struct NodePlacement {
  std::string node;
  std::string op_type;
  std::string device;          // "cpu", ...
  std::string implementation;  // "onednn", "cpu", "reference", ...
  bool fallback = false;       // true when a preferred implementation declined
  std::string reason;          // why the preferred implementation declined
  // For the parts and join of a sliced node ("conv1#0", "conv1#join"): the
  // range it computes, e.g. "channels [0,24) of 48"; empty otherwise.
  std::string slice;
};

class Session {
 public:
  virtual ~Session() = default;

  // `model` is a .braid file, an .onnx file (converted in memory) or
  // "builtin:NAME". Errors name the file, the node and the problem.
  static StatusOr<std::unique_ptr<Session>> Open(const std::string& model,
                                                 const SessionOptions& options = {});

  virtual const std::vector<TensorInfo>& inputs() const = 0;
  virtual const std::vector<TensorInfo>& outputs() const = 0;

  // Borrows `tensor`'s memory until Run returns. A wrong name, dtype or
  // shape is InvalidArgument listing what the model expects.
  virtual Status SetInput(std::string_view name, const Tensor& tensor) = 0;
  virtual Status Run() = 0;
  // A view of session-owned memory, valid until the next Run or SetInput
  // that changes shapes.
  virtual StatusOr<Tensor> GetOutput(std::string_view name) const = 0;

  // After the first Run: per-node device and implementation, and the planned
  // peak bytes of intermediate tensors.
  virtual std::vector<NodePlacement> placements() const = 0;
  virtual size_t planned_peak_bytes() const = 0;

  // Things the session decided on its own and wants the caller to know, e.g.
  // "device 'vgpu' became unavailable (...); re-planned onto cpu".
  virtual std::vector<std::string> notices() const { return {}; }
  // Writes the last Run's per-step timeline as Chrome trace JSON (needs
  // SessionOptions::trace). FailedPrecondition when there is none.
  virtual Status WriteTrace(const std::string& path) const {
    return FailedPrecondition("WriteTrace: this session records no trace (" + path + ")");
  }
  // Writes the plan the last Run ran (after any re-planning) as the plan JSON
  // that SessionOptions::plan_file and `braid run --plan` read, so a session
  // reopened with it places every node the same way. The plan is for the
  // graph specialized to that Run's input shapes: run the reopened session
  // with the same shapes. FailedPrecondition before the first successful Run.
  virtual Status SavePlan(const std::string& path) const {
    return FailedPrecondition("SavePlan: this session has no plan to save (" + path + ")");
  }
};

}  // namespace braid

#endif  // BRAID_BRAID_H_
