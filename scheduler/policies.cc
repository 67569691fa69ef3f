#include "scheduler/policies.h"

#include <cmath>
#include <cstdlib>

#include "scheduler/optimal.h"
#include "scheduler/sparoa_options.h"
#include "scheduler/temporl_options.h"
#include "scheduler/threshold_policy.h"
#include "scheduler/worl_options.h"

namespace braid {
namespace {

StatusOr<double> Number(const std::string& key, const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(v))
    return InvalidArgument("policy setting " + key + " expects a number, got '" + text + "'");
  return v;
}

}  // namespace

std::string PolicyOfSetting(const std::string& key) { return key.substr(0, key.find('.')); }

Status RegisterPolicies(PolicyRegistry& registry, const PolicySettings& settings) {
  ThresholdOptions threshold;
  SparoaOptions sparoa;
  TemporlOptions temporl;
  WorlOptions worl;
  for (const auto& [key, value] : settings) {
    if (key == "threshold.intensity") {
      ASSIGN_OR_RETURN(threshold.intensity_threshold, Number(key, value));
    } else if (key == "threshold.sparsity") {
      ASSIGN_OR_RETURN(threshold.sparsity_threshold, Number(key, value));
    } else if (key == "sparoa.policy_file") {
      sparoa.policy_file = value;
    } else if (key == "sparoa.polish") {
      if (value != "0" && value != "1")
        return InvalidArgument("policy setting sparoa.polish expects 0 or 1, got '" + value + "'");
      sparoa.polish = value == "1";
    } else if (key == "sparoa.fallback_profile") {
      sparoa.fallback_profile = value;
    } else if (key == "temporl.model") {
      temporl.model_file = value;
    } else if (key == "temporl.base") {
      temporl.base = value;
    } else if (key == "temporl.guard") {
      if (value != "0" && value != "1")
        return InvalidArgument("policy setting temporl.guard expects 0 or 1, got '" + value + "'");
      temporl.guard = value == "1";
    } else if (PolicyOfSetting(key) == "worl") {
      RETURN_IF_ERROR(SetWorlOption(worl, key, value));
    } else {
      return InvalidArgument("unknown policy setting '" + key +
                             "' (known: threshold.intensity, threshold.sparsity, "
                             "sparoa.policy_file, sparoa.polish, sparoa.fallback_profile, "
                             "temporl.model, temporl.base, temporl.guard, worl.*: "
                             "scheduler/worl_options.h)");
    }
  }
  RegisterBasicPolicies(registry);
  RegisterCostModelPolicies(registry, threshold);
  RegisterBaselinePolicies(registry);
  RegisterSparoaPolicy(registry, sparoa);
  RegisterWorlPolicy(registry, worl);
  // temporl's base is any policy registered before it (a copy: no cycle).
  RegisterTemporlPolicy(registry, temporl, std::make_shared<const PolicyRegistry>(registry));
  return Status::Ok();
}

std::string PolicyFileSetting(const std::string& policy) {
  if (policy == "sparoa") return "sparoa.policy_file";
  if (policy == "temporl") return "temporl.model";
  return "";
}

}  // namespace braid
