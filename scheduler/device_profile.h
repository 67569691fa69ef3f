// Device profiles: the numbers the cost model and the simulator know a
// machine by (compute, memory bandwidth, launch overhead, power, links), as
// JSON files with a source for every number.
//
//   ASSIGN_OR_RETURN(braid::DeviceProfile p, braid::LoadDeviceProfile("jetson-orin-nano-8gb"));
//   const braid::DeviceSpec* gpu = p.Find("cuda:0");
//   std::string json = braid::DeviceProfileToJson(p);        // what `braid calibrate` writes
//   ASSIGN_OR_RETURN(braid::DeviceProfile again, braid::DeviceProfileFromJson(json, "mine.json"));
//
// A name without '/' or ".json" is looked up as NAME.json in, in order: the
// source tree's profiles/, the install prefix's share/braid/profiles, and
// ../share/braid/profiles next to the running executable. "host" is built in
// (BuiltinHostProfile). The library reads no environment: the `braid` CLI
// looks in $BRAID_PROFILE_PATH first and passes what it finds as a path.
#ifndef BRAID_SCHEDULER_DEVICE_PROFILE_H_
#define BRAID_SCHEDULER_DEVICE_PROFILE_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "graph/status.h"

namespace braid {

// Per op class (see OpClassName in scheduler/cost_model.h): the fraction of
// peak compute and of peak bandwidth the device's kernels reach, and a
// fixed per-op overhead. Fitted from measured per-op times
// (FitEfficiency) or left at the device defaults.
struct OpClassEfficiency {
  std::string op_class;        // "conv", "gemm", "elementwise", ...
  double compute = 1.0;        // fraction of peak_gflops reached (> 0)
  double memory = 1.0;         // fraction of memory_bandwidth_gbps reached
  double overhead_us = -1;     // < 0: use the device's launch_overhead_us
  int samples = 0;             // measured ops the fit used (0: not fitted)
  // Fraction of cache_bandwidth_gbps reached by the bytes within the cache
  // (<= 0: `memory`). Memory-bound kernels stream from DRAM near its
  // bandwidth but stay well under the cache's, so one fraction for both
  // tiers was right for one size only.
  double cache_memory = -1;
};

// Per op type ("Concat", "Reshape", ...): a factor on the class's predicted
// work time, fitted to the residual of the class fit (FitOpTypeFactors). It
// captures kernels of one class whose speed differs (a Concat copies, a
// Reshape only moves a few cache lines).
struct OpTypeFactor {
  std::string op_type;
  double factor = 1.0;         // > 0; multiplies compute and memory time
  int samples = 0;
};

// The speed of the weight-sparse CPU kernel against the dense one for one
// sparse op class ("conv1x1", "conv3x3", "gemm", as kernels/cpu/sparse),
// measured by `braid calibrate`: at weight sparsity s >= crossover the op
// takes  (fixed + per_density * (1 - s))  times its dense time.
struct SparseKernelSpeed {
  std::string op_class;        // "conv1x1", "conv3x3" or "gemm"
  double crossover = 1.0;      // sparsity in [0, 1] from which the sparse kernel runs
  double fixed = 1.0;          // time ratio at sparsity 1 (>= 0)
  double per_density = 0.0;    // ratio added per unit of density (1 - s), >= 0
  int samples = 0;

  // Sparse time / dense time at sparsity `s` (1 below the crossover).
  double Ratio(double s) const {
    if (!(s >= crossover)) return 1.0;
    const double r = fixed + per_density * (1.0 - s);
    return r > 0 ? r : 0;
  }
};

// What the planner needs to know of a profile device kind (DeviceSpec::kind):
// kept as data (device_profile.cc's one table), so scheduler code asks for a
// property, never compares a kind or backend name.
struct DeviceKindTraits {
  std::string_view kind;
  bool host = false;                  // the host CPU (a profile's device 0)
  bool exact_roofline = false;        // padded to exactly its roofline (virtual)
  bool input_sparse_kernels = false;  // its kernels skip zero activations
};
// Null for a kind the profile format does not know.
const DeviceKindTraits* FindDeviceKindTraits(std::string_view kind);

struct DeviceSpec {
  std::string name;            // the plan's device name: "cpu", "cuda:0", "vgpu"
  std::string kind;            // "cpu", "gpu" or "vgpu"
  std::string description;
  int compute_units = 1;       // CPU cores / GPU SMs
  double clock_ghz = 0;        // 0: unknown
  double peak_gflops = 0;      // FP32, > 0
  double memory_bandwidth_gbps = 0;  // GB/s (1e9 bytes), > 0
  double launch_overhead_us = 0;     // per kernel (dispatch / launch)
  double active_power_w = 0;   // while a kernel runs
  double idle_power_w = 0;     // while idle (within an inference)
  int concurrent_kernels = 1;  // kernels of different streams that may overlap
  // Wake-up latency: a stream of this device that waits for work of another
  // device (an event) starts this long after the event; the copy streams of
  // an accelerator's links pay it too. 0: not modelled (datasheet profiles);
  // `braid calibrate` measures it for the host and the vgpu.
  double sync_us = 0;
  // How much slower an op runs when it starts on data another device just
  // handed over, relative to the same op after one of its own (>= 1; 1: not
  // modelled). The stream slept through the other device's work: its core
  // idled and its caches went cold. `braid calibrate` measures the host's.
  double resume_factor = 1;
  // How fast an op reads an input another device just wrote into this one's
  // memory (GB/s; 0: the memory bandwidth at the elementwise class's memory
  // efficiency). On a CPU the copy's writer left those lines in another
  // core's cache or in memory. `braid calibrate` measures the host's.
  double copied_read_gbps = 0;
  // The same for a window op (depthwise conv, pool: each input row read by
  // several output rows, GB/s; 0: copied_read_gbps). A 3x3 depthwise conv
  // reads a copied input slower than an Add does. `braid calibrate` measures
  // the host's.
  double copied_window_read_gbps = 0;
  // The same for a depthwise conv (GB/s; 0: copied_window_read_gbps): its
  // copied read depends on the map's shape (8.8-9.5 GB/s on 384 x 14 x 14
  // maps, 12.4-12.6 on 64 x 28 x 28 on the AMD host); `braid calibrate`
  // solves it over two map shapes, a pool keeps the window rate.
  double copied_depthwise_read_gbps = 0;
  // How fast an op writes over lines another device's copy just read and
  // whose reader still holds them (GB/s; 0: not modelled): the vgpu's copies
  // run on a worker thread on another core of the host, and each such line
  // must be taken back from it (OpWork::reclaimed_bytes). A DMA engine
  // leaves no line behind: datasheet profiles leave it 0. `braid calibrate`
  // measures the host's against its vgpu.
  double reclaim_gbps = 0;
  // Optional cache tier: the first `cache_bytes` an op touches move at
  // cache_bandwidth_gbps, the rest at memory_bandwidth_gbps (0: no tier).
  double cache_bytes = 0;
  double cache_bandwidth_gbps = 0;
  // Optional DRAM tier (0: none): the bytes a memory-bound op touches that
  // the last-level cache (`llc_bytes`, at least cache_bytes) no longer holds
  // cost a stall of their traffic (an output byte twice) at
  // dram_bandwidth_gbps instead of moving at memory_bandwidth_gbps
  // (OpWork::dram_bytes). On a host whose memory bandwidth was measured
  // within its L3 (the AMD host: 89 GB/s there, 22 from DRAM), a MaxPool
  // writing into arena bytes the last run left long ago ran 1.6x its
  // prediction without it.
  double llc_bytes = 0;
  double dram_bandwidth_gbps = 0;
  // Optional: the device runs the kernels of this other device of the
  // profile (the vgpu runs the host's CPU kernels), so an op never takes
  // less than it does there. Empty: none.
  std::string floor_device;
  std::vector<OpClassEfficiency> efficiency;
  std::vector<OpTypeFactor> op_types;       // optional, see OpTypeFactor
  std::vector<SparseKernelSpeed> sparse;    // optional, see SparseKernelSpeed
  // Field name -> where the number comes from ("NVIDIA Jetson Orin Nano
  // datasheet DS-11105-001 ...", "measured by braid calibrate", "estimate: ...").
  std::map<std::string, std::string> sources;

  // The entry for `op_class`, or nullptr.
  const OpClassEfficiency* Efficiency(std::string_view op_class) const;
  const OpTypeFactor* OpType(std::string_view op_type) const;
  const SparseKernelSpeed* Sparse(std::string_view sparse_class) const;
};

// A copy path between two devices (one direction).
struct LinkSpec {
  std::string from;
  std::string to;
  double latency_us = 0;
  double bandwidth_gbps = 0;   // > 0 unless mapped
  // Both sides address the same memory (Jetson's unified DRAM with mapped /
  // pinned buffers): no copy at all.
  bool mapped = false;
  int copy_engines = 1;        // copies in flight at once in this direction
  std::map<std::string, std::string> sources;
};

struct DeviceProfile {
  std::string name;            // "jetson-orin-nano-8gb"
  std::string description;
  std::string origin;          // "datasheet", "calibrated", "builtin"
  std::string power_mode;      // "15W", "MAXN", ... (informational)
  double static_power_w = 0;   // board power drawn regardless of the devices
  std::vector<DeviceSpec> devices;  // devices[0] is the host CPU
  std::vector<LinkSpec> links;
  std::map<std::string, std::string> sources;

  const DeviceSpec* Find(std::string_view device) const;
  DeviceSpec* Find(std::string_view device);
  // The link from -> to, or nullptr (same device: no link needed).
  const LinkSpec* FindLink(std::string_view from, std::string_view to) const;
};

// Checks the numbers: names unique and non-empty, kind known, peak and
// bandwidth positive, powers and overheads non-negative, links between
// known devices with positive bandwidth unless mapped. Errors name the field.
Status ValidateDeviceProfile(const DeviceProfile& profile);

// `where` prefixes errors (a file name). Unknown keys are errors, so a typo
// in a hand-edited profile is not silently ignored.
StatusOr<DeviceProfile> DeviceProfileFromJson(std::string_view json, std::string_view where);
std::string DeviceProfileToJson(const DeviceProfile& profile);

// A conservative profile of "this host" for when nothing was calibrated:
// one CPU device with the core count from the OS and generic figures, every
// number marked as an estimate.
DeviceProfile BuiltinHostProfile();

// Directories searched for NAME.json (see the header comment); existing only.
std::vector<std::string> DeviceProfileSearchPath();
// Profile names found in `extra_dirs` and on the search path, plus "host";
// sorted, unique.
std::vector<std::string> ListDeviceProfiles(const std::vector<std::string>& extra_dirs = {});
// True for a file path (contains '/' or ends in .json), false for a name.
bool IsDeviceProfilePath(const std::string& name_or_path);
// DIR/NAME.json of the first of `dirs` that has it, or "".
std::string FindDeviceProfileFile(const std::string& name, const std::vector<std::string>& dirs);
// A file path (contains '/' or ends in .json) or a name. NotFound lists the
// directories searched and the names found there.
StatusOr<DeviceProfile> LoadDeviceProfile(const std::string& name_or_path);
Status SaveDeviceProfile(const DeviceProfile& profile, const std::string& path);

}  // namespace braid

#endif  // BRAID_SCHEDULER_DEVICE_PROFILE_H_
