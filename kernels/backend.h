// The backend interface: Device, Buffer, Stream, Event, Kernel and the kernel
// registry. The engine (runtime/) reaches backends only through this file.
//
//   braid::KernelRegistry registry;
//   braid::RegisterReferenceKernels(registry);   // kernels/reference/
//   braid::RegisterCpuKernels(registry);         // kernels/cpu/ (oneDNN)
//   std::unique_ptr<braid::Device> cpu = braid::CreateCpuDevice();
//   for (const braid::KernelEntry* e : registry.Candidates("Conv", braid::DeviceKind::kCpu)) {
//     std::unique_ptr<braid::Kernel> k = e->create();
//     braid::Status s = k->Prepare(prepare_args);
//     if (s.ok()) break;                  // first implementation that accepts wins
//     if (s.code() != braid::StatusCode::kUnimplemented) return s;
//   }
//   RETURN_IF_ERROR(kernel->Run(run_args));  // allocates nothing, chooses nothing
//
// Kernels are two-phase like XNNPACK / TFLite Micro: Prepare sees shapes,
// attributes and constant inputs (prepacks weights, builds primitives, sizes
// its workspace); Run sees only pointers.
#ifndef BRAID_KERNELS_BACKEND_H_
#define BRAID_KERNELS_BACKEND_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "graph/ir.h"

namespace braid {

// The kind of a device, which selects its kernels in a KernelRegistry. Open:
// a backend defined outside kernels/ (a test backend, kernels/backend_registry.h)
// takes a value from kFirstCustom on.
enum class DeviceKind : int { kCpu, kCuda, kVirtualGpu, kFirstCustom = 64 };
const char* DeviceKindName(DeviceKind kind);  // "cpu", "cuda", "vgpu", "custom"

// How a tensor's elements are laid out in memory. `dims` are always in ONNX
// axis order (N, C, H, W); only the memory order differs.
enum class TensorLayout {
  kPlain,        // row-major in ONNX axis order
  kChannelsLast, // 4-D only: N, H, W, C in memory (oneDNN's nhwc / acdb)
};

// A dense tensor as kernels see it: static dims in ONNX axis order, laid out
// as `layout` says. dtype kUndefined marks an omitted optional input.
struct TensorDesc {
  DataType dtype = DataType::kUndefined;
  std::vector<int64_t> dims;
  TensorLayout layout = TensorLayout::kPlain;

  bool present() const { return dtype != DataType::kUndefined; }
  int rank() const { return static_cast<int>(dims.size()); }
  int64_t elements() const;
  size_t bytes() const { return static_cast<size_t>(elements()) * DataTypeSize(dtype); }
  std::string ToString() const;  // "f32[1,3,224,224]", "f32[1,8,4,4]nhwc"
  // The axes in memory order, outermost first: {0, 2, 3, 1} channels-last.
  std::vector<int> MemoryOrder() const;
  bool operator==(const TensorDesc&) const = default;
};

enum class MemoryKind {
  kDevice,      // only the device addresses it
  kHostPinned,  // host memory the device copies from quickly
  kHostMapped,  // host memory the device addresses directly (zero-copy)
};

class Device;

// A block of device memory. Freed when destroyed.
class Buffer {
 public:
  virtual ~Buffer() = default;
  virtual void* data() = 0;
  virtual size_t size() const = 0;
  virtual MemoryKind memory_kind() const = 0;
};

// Completion marker recorded on a stream.
class Event {
 public:
  virtual ~Event() = default;
  virtual bool Ready() const = 0;
  virtual Status Wait() = 0;  // blocks the calling thread
  // Microseconds from `earlier` to this event on the device's own clock: both
  // made by Stream::CreateEvent(/*timing=*/true) on one device and completed
  // without error (an event after failed work gives that error).
  // Unimplemented where the device keeps no such clock.
  virtual StatusOr<double> MicrosecondsSince(const Event& earlier) const;
};

// An ordered queue of work on one device. Work submitted to one stream runs
// in order; cross-stream ordering goes through events.
class Stream {
 public:
  virtual ~Stream() = default;
  virtual Device& device() = 0;
  // Runs `work` in stream order. Host devices without a worker run it inline.
  virtual Status Submit(std::function<Status()> work) = 0;
  // A new event marking the work submitted so far.
  virtual StatusOr<std::shared_ptr<Event>> Record() = 0;
  // An event to record again and again (RecordEvent), made once (when a plan
  // is compiled) so that recording allocates nothing. `timing`: it takes a
  // timestamp on the device's clock (Event::MicrosecondsSince).
  virtual StatusOr<std::shared_ptr<Event>> CreateEvent(bool timing) = 0;
  // Re-arms `event` (from CreateEvent of a stream of this device) to complete
  // once the work submitted so far has run. Only after this call may another
  // stream wait for it.
  virtual Status RecordEvent(const std::shared_ptr<Event>& event) = 0;
  // Orders later work after `event`. Where WaitsOnDevice(*event) is false
  // this blocks the calling thread until the event completes (CUDA, for an
  // event of another device): callers must not wait so on work that they
  // have yet to submit themselves.
  virtual Status WaitFor(const std::shared_ptr<Event>& event) = 0;
  // True when WaitFor(event) queues the wait in the stream and returns at
  // once, without the calling thread waiting.
  virtual bool WaitsOnDevice(const Event& event) const = 0;
  // True when Submit's work only launches device work that runs later (a
  // CUDA stream): host clocks around it measure the launch, so step times
  // come from timing events recorded around the work instead.
  virtual bool TimedByEvents() const { return false; }
  virtual Status Synchronize() = 0;
  // Copies between host and this device in stream order.
  virtual Status CopyToDevice(void* dst, const void* src, size_t bytes) = 0;
  virtual Status CopyToHost(void* dst, const void* src, size_t bytes) = 0;
};

struct DeviceInfo {
  std::string name;         // "cpu", "cuda:0", "vgpu"
  DeviceKind kind = DeviceKind::kCpu;
  std::string description;  // model name, cores / SMs, ...
  size_t memory_bytes = 0;
  int compute_units = 0;    // CPU cores, GPU SMs
  bool virtual_device = false;
};

class Device {
 public:
  virtual ~Device() = default;
  virtual const DeviceInfo& info() const = 0;
  DeviceKind kind() const { return info().kind; }
  const std::string& name() const { return info().name; }
  // Failure is ResourceExhausted naming the size, never a crash.
  virtual StatusOr<std::unique_ptr<Buffer>> Allocate(
      size_t bytes, MemoryKind kind = MemoryKind::kDevice) = 0;
  virtual StatusOr<std::unique_ptr<Stream>> CreateStream() = 0;
  // Bytes of kDevice memory free now (cudaMemGetInfo), so that a plan that
  // cannot fit is refused before anything is allocated. Unimplemented where
  // the device does not know (the host).
  virtual StatusOr<size_t> FreeMemory() const;
};

// Everything a kernel may look at while preparing.
struct PrepareArgs {
  const Node* node = nullptr;         // op_type, name, attributes
  int64_t opset = 0;                  // the model's default-domain opset
  std::vector<TensorDesc> inputs;     // one per node input
  std::vector<TensorDesc> outputs;    // one per node output
  // One per node input: the constant's bytes, or nullptr when the input is
  // computed at run time. Kernels may prepack constants here.
  std::vector<const TensorData*> constants;
  int num_threads = 1;                // intra-op threads for this kernel
  Device* device = nullptr;

  // "node 'conv1' (Conv)": for error messages.
  std::string Where() const;
};

struct RunArgs {
  std::span<const void* const> src;  // per input; nullptr for omitted
  std::span<void* const> dst;        // per output
  void* workspace = nullptr;         // workspace_bytes() from Prepare
  Stream* stream = nullptr;
  // Ops whose output 0 has a data-dependent leading extent (kOpDataDependentRows,
  // graph/op_schema.h: NonMaxSuppression) write the rows they produced here;
  // output 0 is sized for shape inference's upper bound. Null: the caller
  // cannot take such a count, and those kernels fail.
  int64_t* output_rows = nullptr;
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  // Unimplemented means "not this implementation, try the next one"; any
  // other error is a real failure (bad attributes, inconsistent shapes).
  virtual Status Prepare(const PrepareArgs& args) = 0;
  virtual size_t workspace_bytes() const { return 0; }
  // Allocates nothing and makes no decisions.
  virtual Status Run(const RunArgs& args) = 0;
};

// The floating-point arithmetic a node asks for: its "precision" attribute
// (docs/ir.md), set by `braid convert --precision bf16`. kF32 (no attribute)
// is ONNX's; kBF16 rounds the node's inputs and weights to bfloat16 (round to
// nearest even) and accumulates and writes f32. Tensors stay f32 either way.
enum class ComputePrecision : uint8_t { kF32 = 0, kBF16 = 1 };
const char* ComputePrecisionName(ComputePrecision precision);  // "f32", "bf16"
constexpr uint32_t PrecisionBit(ComputePrecision precision) {
  return 1u << static_cast<unsigned>(precision);
}
// The node's precision; an unknown "precision" value is InvalidArgument
// naming the node, the attribute and the value.
StatusOr<ComputePrecision> NodeComputePrecision(const Node& node);

struct KernelEntry {
  std::string op_type;
  DeviceKind device = DeviceKind::kCpu;
  std::string impl;  // "onednn", "cpu", "reference", "cudnn", ...
  int priority = 0;  // higher tried first; reference kernels use 0
  std::function<std::unique_ptr<Kernel>()> create;
  // Reads and writes TensorLayout::kChannelsLast tensors. Entries without it
  // are never handed one: PrepareFirstAccepting declines them instead.
  bool channels_last = false;
  // Takes only the inputs it is faster on (e.g. sparse weights above a
  // crossover): its declines are routine, not fallbacks.
  bool specialized = false;
  // The ComputePrecisions it computes in (PrecisionBit set). An entry is
  // never handed a node that asks for another one: PrepareFirstAccepting
  // declines it with the reason, so no kernel silently computes in f32.
  uint32_t precisions = PrecisionBit(ComputePrecision::kF32);
};

// Explicit registry: each backend fills it from its RegisterXxxKernels().
class KernelRegistry {
 public:
  void Register(KernelEntry entry);
  // Implementations of `op_type` on `device`, highest priority first.
  std::vector<const KernelEntry*> Candidates(std::string_view op_type,
                                             DeviceKind device) const;
  // Sorted op types with at least one implementation on `device`.
  std::vector<std::string> OpTypes(DeviceKind device) const;

 private:
  std::vector<std::unique_ptr<KernelEntry>> entries_;
};

// A higher-priority implementation that returned Unimplemented from Prepare.
struct DeclinedCandidate {
  std::string impl;
  std::string reason;    // its Unimplemented message
  bool routine = false;  // a specialized entry (KernelEntry::specialized)
};

// Whether `entry` may be handed the node of `args`: Unimplemented with the
// reason when it reads no nhwc operand that the node has, or does not compute
// in the precision the node asks for; InvalidArgument for a bad "precision".
// PrepareFirstAccepting (and any caller preparing entries itself) asks first.
Status EntryMayTake(const KernelEntry& entry, const PrepareArgs& args);

// Prepares the first candidate that accepts `args`; reports which one, and
// which preferred candidates declined and why (so fallbacks are never silent).
struct PreparedKernel {
  std::unique_ptr<Kernel> kernel;
  const KernelEntry* entry = nullptr;
  std::vector<DeclinedCandidate> declined;  // in the order tried

  // A preferred, general implementation declined: the node runs on a
  // fallback, which callers report.
  bool fell_back() const {
    for (const DeclinedCandidate& d : declined)
      if (!d.routine) return true;
    return false;
  }
};
StatusOr<PreparedKernel> PrepareFirstAccepting(const KernelRegistry& registry,
                                               DeviceKind device,
                                               const PrepareArgs& args);

}  // namespace braid

#endif  // BRAID_KERNELS_BACKEND_H_
