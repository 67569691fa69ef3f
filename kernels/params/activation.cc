#include "kernels/params/activation.h"

#include <string>

#include "kernels/params/parse_util.h"

namespace braid {

const char* Activation::Name() const {
  switch (kind) {
    case Kind::kNone: return "none";
    case Kind::kRelu: return "Relu";
    case Kind::kClip: return "Clip";
    case Kind::kHardSwish: return "HardSwish";
    case Kind::kSigmoid: return "Sigmoid";
    case Kind::kSiLU: return "SiLU";
    case Kind::kHardSigmoid: return "HardSigmoid";
    case Kind::kLeakyRelu: return "LeakyRelu";
    case Kind::kGelu: return "Gelu";
  }
  return "unknown";
}

StatusOr<Activation> ParseFusedActivation(const PrepareArgs& args) {
  using params_internal::Invalid;
  if (args.node == nullptr) return InvalidArgument("kernel: PrepareArgs without node");
  const Attributes& attrs = args.node->attrs;
  Activation act;
  if (!attrs.Has("activation")) return act;
  const std::string name = attrs.GetString("activation", "");
  if (name == "Relu") {
    act.kind = Activation::Kind::kRelu;
  } else if (name == "Clip") {
    act.kind = Activation::Kind::kClip;
    act.min = attrs.GetFloat("activation_min", act.min);
    act.max = attrs.GetFloat("activation_max", act.max);
    if (std::isnan(act.min) || std::isnan(act.max) || act.min > act.max)
      return Invalid(args, std::string("fused Clip bounds [")
                               .append(std::to_string(act.min))
                               .append(", ")
                               .append(std::to_string(act.max))
                               .append("] are not ordered"));
  } else if (name == "HardSwish") {
    act.kind = Activation::Kind::kHardSwish;
  } else if (name == "Sigmoid") {
    act.kind = Activation::Kind::kSigmoid;
  } else if (name == "SiLU") {
    act.kind = Activation::Kind::kSiLU;
  } else if (name == "HardSigmoid") {
    act.kind = Activation::Kind::kHardSigmoid;
    act.alpha = attrs.GetFloat("activation_alpha", 0.2f);
    act.beta = attrs.GetFloat("activation_beta", 0.5f);
  } else if (name == "LeakyRelu") {
    act.kind = Activation::Kind::kLeakyRelu;
    act.alpha = attrs.GetFloat("activation_alpha", 0.01f);
  } else if (name == "Gelu") {
    act.kind = Activation::Kind::kGelu;
    const std::string approximate = attrs.GetString("activation_approximate", "none");
    if (approximate != "none" && approximate != "tanh")
      return Invalid(args, "fused Gelu activation_approximate='" + approximate +
                               "' (expected none or tanh)");
    act.alpha = approximate == "tanh" ? 1.0f : 0.0f;
  } else {
    return Invalid(args, std::string("unknown fused activation '")
                             .append(name)
                             .append("'"));
  }
  return act;
}

}  // namespace braid
