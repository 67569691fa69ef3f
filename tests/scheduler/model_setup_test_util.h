// A built-in model ready to plan (default passes, annotated) with a shipped
// device profile's cost model and a placement context over its devices: the
// setup the policy tests (sparoa, temporl, worl) share.
#ifndef BRAID_TESTS_SCHEDULER_MODEL_SETUP_TEST_UTIL_H_
#define BRAID_TESTS_SCHEDULER_MODEL_SETUP_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "graph/annotate.h"
#include "graph/passes/passes.h"
#include "models/builtin.h"
#include "scheduler/cost_model.h"
#include "scheduler/device_profile.h"
#include "scheduler/policy.h"

namespace braid::testing {

struct ModelSetup {
  Graph graph;
  std::unique_ptr<CostModel> model;
  PlacementContext ctx;
};

inline ModelSetup MakeSetup(const std::string& model_name, const std::string& profile_name) {
  ModelSetup s;
  StatusOr<Graph> g = BuildBuiltinModel(model_name);
  EXPECT_TRUE(g.ok());
  s.graph = std::move(*g);
  EXPECT_TRUE(RunDefaultPasses(s.graph).ok());
  EXPECT_TRUE(Annotate(s.graph).ok());
  StatusOr<DeviceProfile> p = LoadDeviceProfile(profile_name);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  s.model = std::make_unique<CostModel>(*p);
  for (const DeviceSpec& d : p->devices) s.ctx.devices.push_back(d.name);
  s.ctx.cost_model = s.model.get();
  return s;
}

}  // namespace braid::testing

#endif  // BRAID_TESTS_SCHEDULER_MODEL_SETUP_TEST_UTIL_H_
