// The cross-backend op harness over DataOpCases() (harness_cases_data.cc):
// every CPU implementation against the reference, and the case list's
// coverage of the ops.
#include <gtest/gtest.h>

#include <iostream>
#include <set>
#include <string>

#include "tests/kernels/op_harness.h"

namespace braid {
namespace {

// ------------------------------------------------------------- op harness

class DataOpHarness : public ::testing::TestWithParam<OpCase> {};

TEST_P(DataOpHarness, AllImplementationsMatchReference) {
  const CaseReport report = RunOpCase(GetParam(), HarnessRegistry());
  std::cout << "[harness] " << report.ToString() << "\n";
  EXPECT_TRUE(report.status.ok()) << report.ToString();
  EXPECT_TRUE(report.ok()) << report.ToString();  // Passing on the reference alone would check nothing fast: a skip, said.
  if (report.ok() && report.matched_on_cpu() == 0)
    GTEST_SKIP() << "no fast CPU implementation ran (all declined or none registered): "
                 << report.ToString();
}

INSTANTIATE_TEST_SUITE_P(Cases, DataOpHarness, ::testing::ValuesIn(DataOpCases()),
                         [](const ::testing::TestParamInfo<OpCase>& info) { return info.param.name; });

TEST(DataOpHarnessCases, NamesUniqueAndEveryOpCovered) {
  std::set<std::string> names, ops;
  for (const OpCase& c : DataOpCases()) {
    EXPECT_TRUE(names.insert(c.name).second) << c.name;
    ops.insert(c.op_type);
  }
  for (const char* op :
       {"Add", "Sub", "Mul", "Div", "Pow", "Min", "Max", "Equal", "Relu", "Sigmoid", "Tanh", "Exp", "Log",
        "Abs", "Neg", "Sqrt", "Reciprocal", "Erf", "Clip", "HardSigmoid", "HardSwish", "LeakyRelu", "Where",
        "Cast", "Identity", "Shape", "Gather", "Slice", "Concat", "Split", "Transpose", "Reshape",
        "Flatten", "Squeeze", "Unsqueeze", "Expand", "Pad", "ConstantOfShape", "Resize", "Upsample",
        "GatherElements", "ScatterElements", "Scatter", "GatherND", "Greater", "Less",
        "GreaterOrEqual", "LessOrEqual", "And", "Or", "Xor", "BitShift", "PRelu", "Sum", "Mean",
        "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Softplus",
        "Softsign", "Mish", "Elu", "Celu", "Selu", "ThresholdedRelu", "Shrink", "IsNaN", "IsInf",
        "OneHot", "DepthToSpace", "SpaceToDepth", "ReverseSequence"})
    EXPECT_TRUE(ops.count(op)) << op;
}

}  // namespace
}  // namespace braid
