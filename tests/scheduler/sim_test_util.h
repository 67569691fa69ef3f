// Tiny hand-built graphs and profiles with round numbers, so simulator and
// cost-model tests can state their expected answers by hand.
#ifndef BRAID_TESTS_SCHEDULER_SIM_TEST_UTIL_H_
#define BRAID_TESTS_SCHEDULER_SIM_TEST_UTIL_H_

#include <string>
#include <vector>

#include "graph/ir.h"
#include "scheduler/cost_model.h"
#include "scheduler/device_profile.h"

namespace braid::testing {

// Devices "cpu" and "gpu": cpu does 1000 FLOP/us, gpu 4000 FLOP/us; both
// 1000 bytes/us; no overheads; every class at efficiency 1. Link cpu<->gpu:
// `latency_us` plus 1000 bytes/us, or mapped.
inline DeviceProfile TwoDeviceProfile(double latency_us = 10, bool mapped = false,
                                      int gpu_slots = 1) {
  DeviceProfile p;
  p.name = "test";
  for (const char* name : {"cpu", "gpu"}) {
    DeviceSpec d;
    d.name = name;
    d.kind = d.name == "cpu" ? "cpu" : "gpu";
    d.peak_gflops = d.name == "cpu" ? 1.0 : 4.0;
    d.memory_bandwidth_gbps = 1.0;
    d.active_power_w = d.name == "cpu" ? 2.0 : 5.0;
    d.idle_power_w = 0.5;
    d.concurrent_kernels = d.name == "cpu" ? 1 : gpu_slots;
    for (int c = 0; c < kNumOpClasses; ++c) {
      OpClassEfficiency e;
      e.op_class = OpClassName(static_cast<OpClass>(c));
      e.compute = 1;
      e.memory = 1;
      e.overhead_us = 0;
      d.efficiency.push_back(e);
    }
    p.devices.push_back(d);
  }
  for (auto [from, to] : {std::pair{"cpu", "gpu"}, std::pair{"gpu", "cpu"}}) {
    LinkSpec l;
    l.from = from;
    l.to = to;
    l.latency_us = latency_us;
    l.bandwidth_gbps = 1.0;
    l.mapped = mapped;
    p.links.push_back(l);
  }
  p.static_power_w = 1.0;
  return p;
}

// Builds graphs of "Relu"-typed nodes whose costs are set directly: a node
// of `cpu_us` takes that long on the cpu of TwoDeviceProfile (a quarter on
// the gpu). Values are f32 vectors of `elements` (4 bytes each).
class TinyGraph {
 public:
  ValueId Input(const std::string& name, int64_t elements) {
    return g_.AddInput(name, DataType::kF32, {elements});
  }
  // A node reading `inputs`, producing one value of `elements`.
  ValueId Op(const std::string& name, std::vector<ValueId> inputs, double cpu_us,
             int64_t elements = 250, const std::string& op_type = "Relu") {
    Value v;
    v.name = name + "_out";
    v.dtype = DataType::kF32;
    v.has_shape = true;
    v.shape = {elements};
    const ValueId out = g_.AddValue(std::move(v));
    Node n;
    n.name = name;
    n.op_type = op_type;
    n.inputs = std::move(inputs);
    n.outputs = {out};
    n.annotation.flops = cpu_us * 1000;  // 1000 FLOP/us on the cpu
    n.annotation.bytes = 1;              // never the bound
    n.annotation.intensity = n.annotation.flops;
    g_.AddNode(std::move(n));
    return out;
  }
  void Output(ValueId v) { g_.outputs().push_back(v); }
  Graph& graph() { return g_; }

 private:
  Graph g_;
};

}  // namespace braid::testing

#endif  // BRAID_TESTS_SCHEDULER_SIM_TEST_UTIL_H_
