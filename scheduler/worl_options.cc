#include "scheduler/worl_options.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace braid {
namespace {

Status Bad(const char* who, const char* field, const std::string& why) {
  return InvalidArgument(std::string(who) + field + " " + why);
}

}  // namespace

Status ValidateDdqnOptions(const DdqnOptions& o) {
  constexpr char kWho[] = "worl ddqn: ";
  if (o.hidden < 1 || o.hidden > 4096) return Bad(kWho, "hidden", "must be in [1, 4096]");
  if (!(o.gamma >= 0 && o.gamma < 1)) return Bad(kWho, "gamma", "must be in [0, 1)");
  if (!(o.learning_rate > 0 && o.learning_rate < 1))
    return Bad(kWho, "learning_rate", "must be in (0, 1)");
  if (o.batch_size < 1 || o.batch_size > 4096) return Bad(kWho, "batch_size", "must be in [1, 4096]");
  if (o.replay_capacity < o.batch_size) return Bad(kWho, "replay_capacity", "must be >= batch_size");
  if (o.warmup_transitions < 0) return Bad(kWho, "warmup_transitions", "must be >= 0");
  if (o.target_sync_every < 1) return Bad(kWho, "target_sync_every", "must be >= 1");
  if (!(o.epsilon_start >= 0 && o.epsilon_start <= 1 && o.epsilon_end >= 0 &&
        o.epsilon_end <= o.epsilon_start))
    return Bad(kWho, "epsilon", "needs 0 <= epsilon_end <= epsilon_start <= 1");
  if (o.epsilon_decay_steps < 1) return Bad(kWho, "epsilon_decay_steps", "must be >= 1");
  if (!(o.huber_delta > 0)) return Bad(kWho, "huber_delta", "must be > 0");
  return Status::Ok();
}

Status ValidateWorlOptions(const WorlOptions& o) {
  constexpr char kWho[] = "worl: ";
  if (o.whales < 3 || o.whales > 10'000) return Bad(kWho, "whales", "must be in [3, 10000]");
  if (o.iterations < 1 || o.iterations > 1'000'000)
    return Bad(kWho, "iterations", "must be in [1, 1000000]");
  if (!(o.spiral_b > 0 && o.spiral_b <= 10)) return Bad(kWho, "spiral_b", "must be in (0, 10]");
  if (o.ddqn_every < 1) return Bad(kWho, "ddqn_every", "must be >= 1");
  if (o.episode_nodes < 1) return Bad(kWho, "episode_nodes", "must be >= 1");
  return ValidateDdqnOptions(o.ddqn_options);
}

Status SetWorlOption(WorlOptions& o, const std::string& key, const std::string& value) {
  auto integer = [&](int64_t lo, int64_t hi) -> StatusOr<int64_t> {
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || errno != 0 || v < lo || v > hi)
      return InvalidArgument("policy setting " + key + " expects an integer in [" +
                             std::to_string(lo) + ", " + std::to_string(hi) + "], got '" +
                             value + "'");
    return static_cast<int64_t>(v);
  };
  auto flag = [&](bool& out) -> Status {
    if (value != "0" && value != "1")
      return InvalidArgument("policy setting " + key + " expects 0 or 1, got '" + value + "'");
    out = value == "1";
    return Status::Ok();
  };
  if (key == "worl.whales") {
    ASSIGN_OR_RETURN(int64_t v, integer(3, 10'000));
    o.whales = static_cast<int>(v);
  } else if (key == "worl.iterations") {
    ASSIGN_OR_RETURN(int64_t v, integer(1, 1'000'000));
    o.iterations = static_cast<int>(v);
  } else if (key == "worl.seed") {
    ASSIGN_OR_RETURN(int64_t v, integer(0, INT64_MAX));
    o.seed = static_cast<uint64_t>(v);
  } else if (key == "worl.ddqn") {
    return flag(o.ddqn);
  } else if (key == "worl.rtgs") {
    return flag(o.rtgs);
  } else if (key == "worl.slices") {
    return flag(o.allow_slices);
  } else if (key == "worl.seed_partition") {
    return flag(o.seed_partition);
  } else {
    return InvalidArgument("unknown policy setting '" + key +
                           "' (known for worl: worl.whales, worl.iterations, worl.seed, "
                           "worl.ddqn, worl.rtgs, worl.slices, worl.seed_partition)");
  }
  return Status::Ok();
}

}  // namespace braid
