// The virtual GPU "vgpu": a device backed by the CPU kernels that behaves like
// a discrete accelerator. Its memory is its own (separate allocations, filled
// only through explicit stream copies), each of its streams runs work in
// order on its own worker thread, and its events are real completion markers.
// With a VgpuTiming it pads every kernel and copy to a modelled duration, so
// overlap of copies with compute and of CPU with "GPU" work shows in
// wall-clock time and traces. It is a test and demo device: it is always
// reported as virtual and its timings are a model, never a GPU measurement.
//
//   braid::VgpuOptions options;
//   options.timing = braid::VgpuTimingPreset("orin-like").value();   // or none
//   std::unique_ptr<braid::VgpuDevice> vgpu = braid::CreateVgpuDevice(options);
//   braid::KernelRegistry registry;
//   braid::RegisterVgpuKernels(registry);      // the CPU kernels, DeviceKind::kVirtualGpu
//   auto buffer = vgpu->Allocate(bytes);        // vgpu memory
//   auto stream = vgpu->CreateStream();         // its own worker thread
//   stream.value()->CopyToDevice(buffer.value()->data(), host, bytes);
#ifndef BRAID_KERNELS_VGPU_VGPU_DEVICE_H_
#define BRAID_KERNELS_VGPU_VGPU_DEVICE_H_

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/backend.h"
#include "kernels/cpu/cpu_device.h"

namespace braid {

// A roofline timing model: a kernel takes at least
//   launch_us + max(flops / peak_gflops, bytes / mem_gbps)
// (the cost model's formula, scheduler/cost_model.h RooflineCost, with
// efficiencies 1), a copy at least copy_latency_us + bytes / copy_gbps.
// Measured time wins when it is longer (the CPU kernels underneath cannot
// be made faster). `kernel_model_us`, when set, replaces the formula: the
// tools set it to the cost model's own estimate for the profile's vgpu
// (VgpuTimingFromProfile), so shaping and prediction are one function.
struct VgpuTiming {
  std::string label = "none";  // "none", "orin-like", "custom", ...
  bool enabled = false;        // false: no padding at all
  double peak_gflops = 0;
  double mem_gbps = 0;
  double copy_gbps = 0;
  double copy_latency_us = 0;
  double launch_us = 0;
  std::function<double(double flops, double bytes)> kernel_model_us;

  std::chrono::nanoseconds KernelTime(double flops, double bytes) const;
  std::chrono::nanoseconds CopyTime(double bytes) const;
  // "orin-like (model): 5300 GFLOP/s, 204.8 GB/s memory, ..." or "none".
  std::string Describe() const;
};

// Built-in presets: "none" and "orin-like" (a model loosely shaped on a
// Jetson AGX Orin's published fp32 peak and bandwidth; not a measurement).
// NotFound lists the known names.
StatusOr<VgpuTiming> VgpuTimingPreset(std::string_view name);
std::vector<std::string> VgpuTimingPresetNames();

struct VgpuOptions {
  VgpuTiming timing;
  int threads = 1;           // OpenMP threads of each vgpu stream's worker
  std::string name = "vgpu";
  // Behave as a CUDA stream does towards its caller, so that code written
  // for CUDA is tested on any machine: WaitFor on an event of another device
  // (the CPU's, another vgpu's) blocks the calling thread until it completes
  // (cudaStreamWaitEvent takes only CUDA events, so a CUDA stream must), and
  // TimedByEvents() is true, so the engine reads step times from the
  // stream's own event timestamps. Kernels run later on the worker, as
  // always. Off: every wait queues on the worker thread.
  bool cuda_semantics = false;
  // Device memory (kDevice buffers), as a GPU's is bounded: 0 = no limit.
  // Allocations beyond it fail with ResourceExhausted; FreeMemory reports
  // what is left.
  size_t memory_bytes = 0;
};

class VgpuDevice : public Device {
 public:
  virtual const VgpuTiming& timing() const = 0;
  virtual int threads() const = 0;
  // Test hook: a device forced off fails Allocate, CreateStream, Submit and
  // copies with Unavailable "vgpu: device is off (forced off)", like a GPU
  // that fell off the bus.
  virtual void SetForcedOff(bool off) = 0;
  virtual bool forced_off() const = 0;
  virtual bool cuda_semantics() const = 0;  // VgpuOptions::cuda_semantics
};

std::unique_ptr<VgpuDevice> CreateVgpuDevice(const VgpuOptions& options);
std::unique_ptr<VgpuDevice> CreateVgpuDevice();  // no timing shaping, 1 thread

// Registers every CPU kernel (reference, oneDNN and braid's CPU kernels, at
// their CPU priorities) under DeviceKind::kVirtualGpu.
// `options`: the same as the CPU's (a session registers both with one set,
// so the CPU and the vgpu choose the same kernels for a node).
void RegisterVgpuKernels(KernelRegistry& registry);
void RegisterVgpuKernels(KernelRegistry& registry, const CpuKernelOptions& options);

}  // namespace braid

#endif  // BRAID_KERNELS_VGPU_VGPU_DEVICE_H_
