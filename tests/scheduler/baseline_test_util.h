// Shared fixtures for the heft / partition / optimal tests: the two-device
// test profile with per-class GPU speed, and helpers to plan and simulate.
#ifndef BRAID_TESTS_SCHEDULER_BASELINE_TEST_UTIL_H_
#define BRAID_TESTS_SCHEDULER_BASELINE_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "scheduler/optimal.h"
#include "scheduler/simulator.h"
#include "tests/scheduler/sim_test_util.h"

namespace braid::testing {

// TwoDeviceProfile where the gpu reaches `fraction` of its 4000 FLOP/us on
// `op_class` (0.25: as fast as the cpu; 0.1: 2.5x slower).
inline void SetGpuCompute(DeviceProfile& profile, const std::string& op_class, double fraction) {
  for (OpClassEfficiency& e : profile.devices[1].efficiency)
    if (e.op_class == op_class) e.compute = fraction;
}

// A policy's plan (through MakePlan: pins, allowed devices, validation) and
// its simulated latency.
struct Planned {
  Plan plan;
  double latency_us = 0;
};
inline Planned PlanAndSimulate(const std::string& policy, const Graph& graph,
                               const PlacementContext& ctx) {
  PolicyRegistry registry;
  RegisterBasicPolicies(registry);
  RegisterBaselinePolicies(registry);
  StatusOr<Plan> plan = MakePlan(registry, policy, graph, ctx);
  EXPECT_TRUE(plan.ok()) << policy << ": " << plan.status().ToString();
  if (!plan.ok()) return {};
  StatusOr<SimGraph> sg = BuildSimGraph(graph, *ctx.cost_model, ctx.devices);
  EXPECT_TRUE(sg.ok());
  StatusOr<SimResult> r = SimulatePlan(*sg, *plan);
  EXPECT_TRUE(r.ok());
  return {*plan, r.ok() ? r->latency_us : 0};
}

// "n<i>" (built by append: GCC 12's -Wrestrict misfires on "n" + to_string).
inline std::string NodeName(int i) {
  std::string s = "n";
  s += std::to_string(i);
  return s;
}

inline std::vector<std::string> DevicesOf(const Plan& plan) {
  std::vector<std::string> out;
  for (const NodePlan& p : plan.nodes) out.push_back(p.device);
  return out;
}

}  // namespace braid::testing

#endif  // BRAID_TESTS_SCHEDULER_BASELINE_TEST_UTIL_H_
