// Multi-model sets as one DAG (scheduler/worl_multi_model.h): names
// prefixed, no edge across models, every input and output kept, a valid
// topological interleaving, errors for bad sets, and a joint plan.
#include "scheduler/worl_multi_model.h"

#include <gtest/gtest.h>

#include "graph/annotate.h"
#include "graph/passes/passes.h"
#include "models/builtin.h"
#include "scheduler/optimal.h"
#include "scheduler/simulator.h"
#include "scheduler/worl_policy.h"

namespace braid {
namespace {

Graph Model(const std::string& name) {
  StatusOr<Graph> g = BuildBuiltinModel(name);
  EXPECT_TRUE(g.ok());
  EXPECT_TRUE(RunDefaultPasses(*g).ok());
  EXPECT_TRUE(Annotate(*g).ok());
  return std::move(*g);
}

std::string Prefix(const std::string& name) { return name.substr(0, name.find('/')); }

TEST(WorlMultiModelTest, CombinedGraphKeepsEveryModelApart) {
  const Graph cnn = Model("tiny_cnn"), squeeze = Model("squeezenet1_1");
  const std::vector<NamedGraph> set = {{"a", &cnn}, {"b", &squeeze}, {"c", &cnn}};
  StatusOr<Graph> joint = CombineGraphs(set);
  ASSERT_TRUE(joint.ok()) << joint.status().ToString();
  const Graph& g = *joint;
  EXPECT_TRUE(g.Validate().ok()) << g.Validate().ToString();
  EXPECT_EQ(g.name(), "a+b+c");
  EXPECT_EQ(g.num_nodes(), 2 * cnn.num_nodes() + squeeze.num_nodes());
  EXPECT_EQ(g.num_values(), 2 * cnn.num_values() + squeeze.num_values());
  ASSERT_EQ(g.inputs().size(), 2 * cnn.inputs().size() + squeeze.inputs().size());
  ASSERT_EQ(g.outputs().size(), 2 * cnn.outputs().size() + squeeze.outputs().size());
  EXPECT_EQ(g.value(g.inputs()[0]).name, "a/" + cnn.value(cnn.inputs()[0]).name);
  EXPECT_EQ(g.value(g.outputs().back()).name, "c/" + cnn.value(cnn.outputs().back()).name);
  // No cross-model edge, producers before readers, annotations kept.
  std::vector<int> seen(static_cast<size_t>(g.num_values()), 0);
  for (ValueId v : g.inputs()) seen[static_cast<size_t>(v)] = 1;
  for (const Node& n : g.nodes()) {
    const std::string model = Prefix(n.name);
    ASSERT_TRUE(model == "a" || model == "b" || model == "c") << n.name;
    for (ValueId v : n.inputs) {
      if (v == kNoValue) continue;
      EXPECT_EQ(Prefix(g.value(v).name), model) << n.name << " reads " << g.value(v).name;
      EXPECT_TRUE(seen[static_cast<size_t>(v)] || g.IsConstant(v)) << n.name;
    }
    for (ValueId v : n.outputs) seen[static_cast<size_t>(v)] = 1;
  }
  const Node& first_b = *std::find_if(g.nodes().begin(), g.nodes().end(),
                                      [](const Node& n) { return Prefix(n.name) == "b"; });
  EXPECT_EQ(first_b.name, "b/" + squeeze.nodes()[0].name);
  EXPECT_EQ(first_b.annotation.flops, squeeze.nodes()[0].annotation.flops);
  // Interleaved: the first three nodes come from the three models.
  EXPECT_EQ(Prefix(g.nodes()[0].name), "a");
  EXPECT_EQ(Prefix(g.nodes()[1].name), "b");
  EXPECT_EQ(Prefix(g.nodes()[2].name), "c");
}

TEST(WorlMultiModelTest, BadSetsAreRejected) {
  const Graph cnn = Model("tiny_cnn");
  const Graph empty;
  auto error = [](std::vector<NamedGraph> set) {
    StatusOr<Graph> g = CombineGraphs(set);
    EXPECT_EQ(g.status().code(), StatusCode::kInvalidArgument);
    return g.status().message();
  };
  EXPECT_NE(error({}).find("no models"), std::string::npos);
  EXPECT_NE(error({{"a", &cnn}, {"a", &cnn}}).find("twice"), std::string::npos);
  EXPECT_NE(error({{"a/b", &cnn}}).find("'a/b'"), std::string::npos);
  EXPECT_NE(error({{"", &cnn}}).find("non-empty"), std::string::npos);
  EXPECT_NE(error({{"a", nullptr}}).find("null"), std::string::npos);
  EXPECT_NE(error({{"a", &empty}}).find("no nodes"), std::string::npos);
}

TEST(WorlMultiModelTest, JointPlanSharesTheDevicesAndBeatsRunningTheModelsOneByOne) {
  const Graph cnn = Model("tiny_cnn"), squeeze = Model("squeezenet1_1");
  const std::vector<NamedGraph> set = {{"cnn", &cnn}, {"squeeze", &squeeze}};
  StatusOr<Graph> joint = CombineGraphs(set);
  ASSERT_TRUE(joint.ok());
  StatusOr<DeviceProfile> p = LoadDeviceProfile("jetson-orin-nano-8gb");
  ASSERT_TRUE(p.ok());
  CostModel model(*p);
  PlacementContext ctx;
  for (const DeviceSpec& d : p->devices) ctx.devices.push_back(d.name);
  ctx.cost_model = &model;
  PolicyRegistry registry;
  WorlOptions o;
  o.whales = 10;
  o.iterations = 15;
  o.episode_nodes = 16;
  RegisterWorlPolicy(registry, o);
  StatusOr<Plan> plan = MakePlan(registry, "worl", *joint, ctx);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  StatusOr<SimGraph> sg = BuildSimGraph(*joint, model, ctx.devices);
  ASSERT_TRUE(sg.ok());
  StatusOr<SimResult> makespan = SimulatePlan(*sg, *plan);
  ASSERT_TRUE(makespan.ok());
  // Each model alone at its own best single device, one after the other.
  double sequential = 0;
  for (const Graph* g : {&cnn, &squeeze}) {
    StatusOr<SimGraph> one = BuildSimGraph(*g, model, ctx.devices);
    ASSERT_TRUE(one.ok());
    double best = 0;
    for (const std::string& d : ctx.devices) {
      StatusOr<SimResult> r = SimulatePlan(*one, SingleDevicePlan(*g, d, "single"));
      ASSERT_TRUE(r.ok());
      best = best == 0 ? r->latency_us : std::min(best, r->latency_us);
    }
    sequential += best;
  }
  EXPECT_LT(makespan->latency_us, sequential);
}

}  // namespace
}  // namespace braid
