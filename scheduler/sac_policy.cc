#include "scheduler/sac_policy.h"

#include <algorithm>
#include <cmath>

#include "scheduler/cost_model.h"

namespace braid {
namespace {

constexpr char kSacMagic[] = "BRAIDSAC";
constexpr double kMaskedLogit = -1e30;

double SafeLog(double p) { return std::log(std::max(p, 1e-12)); }

}  // namespace

// ---- DiscreteSac ----------------------------------------------------------------

DiscreteSac::DiscreteSac(int state_size, int num_actions, SacOptions options)
    : state_size_(state_size),
      num_actions_(num_actions),
      options_(options),
      actor_({.sizes = {state_size, options.hidden, options.hidden, num_actions}}, options.seed),
      q1_({.sizes = {state_size, options.hidden, options.hidden, num_actions}}, options.seed + 1),
      q2_({.sizes = {state_size, options.hidden, options.hidden, num_actions}}, options.seed + 2),
      q1_target_(q1_),
      q2_target_(q2_),
      log_alpha_(std::log(options.initial_alpha)),
      target_entropy_(options.target_entropy_ratio * std::log(static_cast<double>(num_actions))),
      replay_(static_cast<size_t>(std::max(options.replay_capacity, 1))),
      rng_(options.seed * 0x9E3779B97F4A7C15ULL + 7) {
  const AdamOptions adam{.learning_rate = options.learning_rate, .max_grad_norm = 10};
  actor_adam_ = Adam(actor_, adam);
  q1_adam_ = Adam(q1_, adam);
  q2_adam_ = Adam(q2_, adam);
}

// Softmax over the allowed actions only; disallowed ones get exactly 0
// (Eigen's vectorised exp stops at a denormal, not at 0).
Eigen::MatrixXd DiscreteSac::Masked(const Eigen::MatrixXd& logits,
                                    const std::vector<uint32_t>& masks) const {
  Eigen::MatrixXd out = logits;
  for (Eigen::Index b = 0; b < out.cols(); ++b)
    for (Eigen::Index a = 0; a < out.rows(); ++a)
      if (!(masks[static_cast<size_t>(b)] >> a & 1u)) out(a, b) = kMaskedLogit;
  out = SoftmaxColumns(out);
  for (Eigen::Index b = 0; b < out.cols(); ++b) {
    for (Eigen::Index a = 0; a < out.rows(); ++a)
      if (!(masks[static_cast<size_t>(b)] >> a & 1u)) out(a, b) = 0;
    out.col(b) /= out.col(b).sum();
  }
  return out;
}

Eigen::VectorXd DiscreteSac::Probabilities(const Eigen::VectorXd& state, uint32_t mask) const {
  return (Masked(actor_.Predict(state), {mask})).col(0);
}

int DiscreteSac::Act(const Eigen::VectorXd& state, uint32_t mask, bool greedy) {
  if (greedy) {
    Eigen::Index best;
    Probabilities(state, mask).maxCoeff(&best);
    return static_cast<int>(best);
  }
  return Sample(state, mask, rng_);
}

int DiscreteSac::Sample(const Eigen::VectorXd& state, uint32_t mask,
                        std::mt19937_64& rng) const {
  const Eigen::VectorXd p = Probabilities(state, mask);
  // Inverse-CDF draw from a 53-bit uniform: identical on every platform
  // (std::discrete_distribution's algorithm is not specified).
  const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;
  double acc = 0;
  int last_allowed = 0;
  for (int a = 0; a < num_actions_; ++a) {
    if (!(mask >> a & 1u)) continue;
    last_allowed = a;
    acc += p(a);
    if (u < acc) return a;
  }
  return last_allowed;
}

void DiscreteSac::Remember(SacTransition t) {
  replay_.Add(std::move(t));
}

SacLosses DiscreteSac::Update() {
  SacLosses losses;
  if (replay_.size() < static_cast<size_t>(std::max(options_.warmup_transitions, 1))) return losses;
  const int batch = options_.batch_size;
  const double inv_b = 1.0 / batch;
  Eigen::MatrixXd s(state_size_, batch), s2(state_size_, batch);
  std::vector<int> actions(static_cast<size_t>(batch));
  std::vector<uint32_t> masks(static_cast<size_t>(batch)), masks2(static_cast<size_t>(batch));
  Eigen::VectorXd rewards(batch), not_done(batch);
  for (int b = 0; b < batch; ++b) {
    const SacTransition& t = replay_[static_cast<size_t>(rng_() % replay_.size())];
    s.col(b) = t.state;
    s2.col(b) = t.next_state;
    actions[static_cast<size_t>(b)] = t.action;
    masks[static_cast<size_t>(b)] = t.mask;
    masks2[static_cast<size_t>(b)] = t.next_mask;
    rewards(b) = t.reward;
    not_done(b) = t.done ? 0.0 : 1.0;
  }
  const double alpha = std::exp(log_alpha_);

  // Soft state value of s': sum_a pi(a|s') (min Q_target(s', a) - alpha log pi(a|s')).
  const Eigen::MatrixXd p2 = (Masked(actor_.Predict(s2), masks2));
  const Eigen::MatrixXd min_q2 = q1_target_.Predict(s2).cwiseMin(q2_target_.Predict(s2));
  Eigen::VectorXd target(batch);
  for (int b = 0; b < batch; ++b) {
    double v = 0;
    for (int a = 0; a < num_actions_; ++a)
      if (p2(a, b) > 0) v += p2(a, b) * (min_q2(a, b) - alpha * SafeLog(p2(a, b)));
    target(b) = rewards(b) + options_.gamma * not_done(b) * v;
  }

  // Critics: 0.5 (Q_i(s, a) - target)^2.
  for (auto [q, adam] : {std::pair{&q1_, &q1_adam_}, std::pair{&q2_, &q2_adam_}}) {
    const Eigen::MatrixXd& values = q->Forward(s);
    Eigen::MatrixXd grad = Eigen::MatrixXd::Zero(num_actions_, batch);
    for (int b = 0; b < batch; ++b) {
      const double err = values(actions[static_cast<size_t>(b)], b) - target(b);
      grad(actions[static_cast<size_t>(b)], b) = err * inv_b;
      losses.critic += 0.5 * err * err * inv_b * 0.5;
    }
    q->ZeroGrad();
    q->Backward(grad);
    adam->Step(*q);
  }

  // Actor: sum_a pi(a|s) (alpha log pi(a|s) - min Q(s, a)); the gradient
  // with respect to the logits is p .* (f - sum p f).
  const Eigen::MatrixXd min_q = q1_.Predict(s).cwiseMin(q2_.Predict(s));
  const Eigen::MatrixXd p = (Masked(actor_.Forward(s), masks));
  Eigen::MatrixXd grad = Eigen::MatrixXd::Zero(num_actions_, batch);
  double entropy = 0;
  for (int b = 0; b < batch; ++b) {
    double mean_f = 0;
    Eigen::VectorXd f = Eigen::VectorXd::Zero(num_actions_);
    for (int a = 0; a < num_actions_; ++a) {
      if (!(p(a, b) > 0)) continue;
      f(a) = alpha * SafeLog(p(a, b)) - min_q(a, b);
      mean_f += p(a, b) * f(a);
      entropy -= p(a, b) * SafeLog(p(a, b)) * inv_b;
    }
    losses.actor += mean_f * inv_b;
    for (int a = 0; a < num_actions_; ++a) grad(a, b) = p(a, b) * (f(a) - mean_f) * inv_b;
  }
  actor_.ZeroGrad();
  actor_.Backward(grad);
  actor_adam_.Step(actor_);

  // Temperature: lower alpha while the entropy is above its target.
  losses.alpha = -log_alpha_ * (target_entropy_ - entropy);
  log_alpha_ -= options_.alpha_learning_rate * (entropy - target_entropy_);
  log_alpha_ = std::clamp(log_alpha_, std::log(1e-4), std::log(10.0));
  losses.entropy = entropy;

  q1_target_.SoftUpdate(q1_, options_.tau);
  q2_target_.SoftUpdate(q2_, options_.tau);
  return losses;
}

void DiscreteSac::SaveActor(BinaryWriter& out) const {
  out.Bytes(std::string_view(kSacMagic, 8));
  out.U32(static_cast<uint32_t>(state_size_));
  out.U32(static_cast<uint32_t>(num_actions_));
  actor_.Save(out);
}

StatusOr<std::unique_ptr<DiscreteSac>> DiscreteSac::LoadActor(BinaryReader& in) {
  RETURN_IF_ERROR(in.Expect(std::string_view(kSacMagic, 8)));
  ASSIGN_OR_RETURN(uint32_t state_size, in.U32());
  ASSIGN_OR_RETURN(uint32_t actions, in.U32());
  if (state_size == 0 || state_size > 4096 || actions == 0 || actions > 32)
    return in.Error("SAC actor: state or action count out of range");
  ASSIGN_OR_RETURN(Mlp actor, Mlp::Load(in));
  if (actor.input_size() != static_cast<int>(state_size) ||
      actor.output_size() != static_cast<int>(actions))
    return in.Error("SAC actor: network shape does not match its header");
  SacOptions options;
  options.hidden = 1;  // critics are unused after loading: keep them tiny
  auto agent = std::make_unique<DiscreteSac>(static_cast<int>(state_size),
                                             static_cast<int>(actions), options);
  agent->actor_ = std::move(actor);
  return agent;
}

// ---- PlacementEnv ---------------------------------------------------------------

StatusOr<std::unique_ptr<PlacementEnv>> PlacementEnv::Create(const Graph& graph,
                                                             const PlacementContext& context,
                                                             ThresholdPair start,
                                                             double energy_weight, int passes) {
  if (passes < 1 || passes > 8) return InvalidArgument("sparoa: passes must be 1..8");
  std::unique_ptr<PlacementEnv> env(new PlacementEnv());
  env->passes_ = passes;
  ASSIGN_OR_RETURN(env->space_, BuildPlacementSpace(graph, context, "sparoa", true));
  const SimGraph& sim = env->space_.sim;
  env->accelerator_ = sim.num_devices > 1 ? 1 : 0;
  ASSIGN_OR_RETURN(env->start_, ThresholdPlacement(graph, context, sim, start));
  env->sim_ = std::make_unique<Simulator>(sim);
  {
    const SimResult& r = env->sim_->Run(env->start_);
    env->scale_ = {r.latency_us, std::max(r.energy_j, 1e-12), energy_weight};
  }
  std::vector<int> producer(static_cast<size_t>(sim.num_values), -1);
  for (int n = 0; n < sim.num_nodes; ++n)
    for (int32_t i = sim.out_begin[static_cast<size_t>(n)];
         i < sim.out_begin[static_cast<size_t>(n) + 1]; ++i)
      producer[static_cast<size_t>(sim.out_values[static_cast<size_t>(i)])] = n;
  env->first_consumer_.assign(static_cast<size_t>(sim.num_nodes), -1);
  for (int n = sim.num_nodes - 1; n >= 0; --n)
    for (int32_t i = sim.in_begin[static_cast<size_t>(n)];
         i < sim.in_begin[static_cast<size_t>(n) + 1]; ++i) {
      const int p = producer[static_cast<size_t>(sim.in_values[static_cast<size_t>(i)])];
      if (p >= 0) env->first_consumer_[static_cast<size_t>(p)] = n;
    }
  for (int n = 0; n < sim.num_nodes; ++n) {
    const Node& node = graph.nodes()[static_cast<size_t>(n)];
    const Annotation& a = node.annotation;
    std::array<double, kNumOpClasses> one_hot{};
    one_hot[static_cast<size_t>(ClassifyOp(node))] = 1;
    env->op_class_.push_back(one_hot);
    env->log_flops_.push_back(std::log10(1 + a.flops) / 10);
    env->log_bytes_.push_back(std::log10(1 + a.bytes) / 10);
    env->log_intensity_.push_back(std::log2(1 + a.intensity) / 8);
    env->sparsity_.push_back(RoutableSparsity(node, &graph));
    const int32_t begin = sim.in_begin[static_cast<size_t>(n)];
    env->input_producer_.push_back(
        begin < sim.in_begin[static_cast<size_t>(n) + 1]
            ? producer[static_cast<size_t>(sim.in_values[static_cast<size_t>(begin)])]
            : -1);
  }
  if (env->accelerator_ > 0 && context.cost_model != nullptr) {
    const CostModel& m = *context.cost_model;
    const int c = m.DeviceIndex(context.devices[0]), g = m.DeviceIndex(context.devices[1]);
    if (c >= 0 && g >= 0) {
      env->peak_ratio_ = std::log(m.profile().devices[static_cast<size_t>(g)].peak_gflops /
                                  m.profile().devices[static_cast<size_t>(c)].peak_gflops) /
                         3;
      env->mapped_ = m.Mapped(c, g) ? 1 : 0;
    }
  }
  env->Reset();
  return env;
}

double PlacementEnv::CostOf(std::span<const SimPlacement> placement) {
  return scale_.Cost(sim_->Run(placement));
}

void PlacementEnv::Reset() {
  cached_step_ = -1;
  current_ = start_;
  step_ = 0;
  cost_ = CostOf(current_);
  node_end_.assign(static_cast<size_t>(num_nodes()), 0);
  device_busy_.assign(static_cast<size_t>(space_.num_devices), 0);
  device_queue_end_.assign(static_cast<size_t>(space_.num_devices), 0);
}

SimPlacement PlacementEnv::PlacementOf(int action) const {
  if (action <= 0 || accelerator_ == 0) return SimPlacement{0, 0, -1, 1.0f};
  if (action == 1) return SimPlacement{static_cast<int16_t>(accelerator_), 0, -1, 1.0f};
  return SimPlacement{0, 0, static_cast<int16_t>(accelerator_),
                      static_cast<float>(kSliceRatioBins[action - 2])};
}

bool PlacementEnv::HasOption(int node, const SimPlacement& p) const {
  for (const SimPlacement& o : space_.options[static_cast<size_t>(node)])
    if (o.device == p.device && o.other_device == p.other_device &&
        (p.other_device < 0 || std::abs(o.ratio - p.ratio) < 1e-6f))
      return true;
  return false;
}

uint32_t PlacementEnv::Mask() const {
  if (done()) return ~0u;
  uint32_t mask = 0;
  for (int a = 0; a < kNumActions; ++a)
    if ((a == 0 || accelerator_ > 0) && HasOption(node(), PlacementOf(a))) mask |= 1u << a;
  return mask == 0 ? 1u : mask;
}

Eigen::VectorXd PlacementEnv::State() const {
  if (cached_step_ == step_) return cached_state_;
  Eigen::VectorXd s = Eigen::VectorXd::Zero(kStateSize);
  if (done()) return s;
  const int node_index = node();
  const size_t n = static_cast<size_t>(node_index);
  for (int c = 0; c < kNumOpClasses; ++c) s(c) = op_class_[n][static_cast<size_t>(c)];
  s(9) = log_flops_[n];
  s(10) = log_bytes_[n];
  s(11) = log_intensity_[n];
  s(12) = sparsity_[n];
  const double ref = scale_.ref_latency_us;
  const double cpu_us = space_.MainUs(node_index, SimPlacement{0, 0, -1, 1.0f});
  const double acc_us =
      space_.MainUs(node_index, SimPlacement{static_cast<int16_t>(accelerator_), 0, -1, 1.0f});
  s(13) = std::log((cpu_us + 1e-3) / (acc_us + 1e-3)) / 3;
  s(14) = std::log1p(100 * cpu_us / ref);
  s(15) = std::log1p(100 * acc_us / ref);
  s(16) = start_[n].device == 0 ? 0 : 1;
  const int producer = input_producer_[n];
  s(17) = producer >= 0 && current_[static_cast<size_t>(producer)].device != 0 ? 1 : 0;
  s(18) = static_cast<double>(node_index) / num_nodes();
  s(19) = device_busy_[0] / ref;
  s(20) = device_busy_[static_cast<size_t>(accelerator_)] / ref;
  s(21) = (device_queue_end_[0] - device_queue_end_[static_cast<size_t>(accelerator_)]) / ref;
  s(22) = peak_ratio_;
  s(23) = mapped_;
  // Revisiting (pass > 0): where the node and its consumer sit now, as the
  // share the engine runs (SliceShare: whole channel blocks), not the bin.
  auto cpu_share = [this](int node, const SimPlacement& p) {
    if (p.other_device >= 0) {
      const double share = SliceShare(space_.sim, node, p);
      return p.device == 0 ? share : 1.0 - share;
    }
    return p.device == 0 ? 1.0 : 0.0;
  };
  s(24) = passes_ > 1 ? static_cast<double>(step_ / num_nodes()) / (passes_ - 1) : 0;
  s(25) = cpu_share(static_cast<int>(n), current_[n]);
  const int consumer = first_consumer_[n];
  s(26) = consumer >= 0 ? cpu_share(consumer, current_[static_cast<size_t>(consumer)]) : 1;
  s(27) = 10 * (cost_ - 1);
  // CPU share at which both parts' kernels finish together (no copies).
  s(28) = acc_us / std::max(cpu_us + acc_us, 1e-9);
  s(29) = producer >= 0 ? cpu_share(producer, current_[static_cast<size_t>(producer)]) : 1;
  // One-step lookahead: the simulated cost change of each allowed action
  // with every other node as currently placed (tanh-squashed; > 0 = better).
  const uint32_t mask = Mask();
  scratch_ = current_;
  for (int a = 0; a < kNumActions; ++a) {
    if (!(mask >> a & 1u)) continue;
    scratch_[n] = PlacementOf(a);
    if (!HasOption(node_index, scratch_[n])) scratch_[n] = space_.options[n].front();
    s(30 + a) = std::tanh(200 * (cost_ - scale_.Cost(sim_->Run(scratch_))));
  }
  cached_step_ = step_;
  cached_state_ = s;
  return s;
}

double PlacementEnv::Step(int action) {
  const int node_index = node();
  const size_t n = static_cast<size_t>(node_index);
  if (node_index == 0 && step_ > 0) {  // a new pass: the hardware state restarts
    device_busy_.assign(device_busy_.size(), 0);
    device_queue_end_.assign(device_queue_end_.size(), 0);
  }
  SimPlacement placement = PlacementOf(action);
  if (!HasOption(node_index, placement)) placement = space_.options[n].front();
  current_[n] = placement;
  const int device = placement.device;
  const SimResult& r = sim_->Run(current_, /*timeline=*/true);
  const double cost = scale_.Cost(r);
  const double reward = cost_ - cost;
  cost_ = cost;
  device_busy_[static_cast<size_t>(device)] += space_.MainUs(node_index, current_[n]);
  if (placement.other_device >= 0)
    device_busy_[static_cast<size_t>(placement.other_device)] +=
        space_.OtherUs(node_index, placement);
  if (n < r.nodes.size())
    device_queue_end_[static_cast<size_t>(device)] =
        std::max(device_queue_end_[static_cast<size_t>(device)], r.nodes[n].end_us);
  ++step_;
  return reward;
}

SacEpisode RunSacEpisode(DiscreteSac& agent, PlacementEnv& env, bool learn) {
  SacEpisode ep;
  env.Reset();
  while (!env.done()) {
    Eigen::VectorXd state = env.State();
    const uint32_t mask = env.Mask();
    const int action = agent.Act(state, mask, /*greedy=*/!learn);
    const double reward = env.Step(action);
    ep.episode_return += reward;
    if (!learn) continue;
    agent.Remember({std::move(state), env.State(), action, reward, env.done(), mask, env.Mask()});
    SacLosses l = agent.Update();
    if (l.critic != 0 || l.actor != 0) {
      ep.losses.critic += l.critic;
      ep.losses.actor += l.actor;
      ep.losses.alpha += l.alpha;
      ep.losses.entropy += l.entropy;
      ++ep.updates;
    }
  }
  if (ep.updates > 0) {
    ep.losses.critic /= ep.updates;
    ep.losses.actor /= ep.updates;
    ep.losses.alpha /= ep.updates;
    ep.losses.entropy /= ep.updates;
  }
  ep.final_cost = env.current_cost();
  return ep;
}

std::vector<SimPlacement> RefinePlacement(DiscreteSac& agent, PlacementEnv& env) {
  RunSacEpisode(agent, env, /*learn=*/false);
  return env.placement();
}

std::vector<SimPlacement> BestOfSampledPlacements(const DiscreteSac& agent, PlacementEnv& env,
                                                  int samples, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<SimPlacement> best;
  double best_cost = 0;
  for (int k = 0; k <= std::max(samples, 0); ++k) {
    env.Reset();
    while (!env.done()) {
      const Eigen::VectorXd state = env.State();
      const uint32_t mask = env.Mask();
      int action;
      if (k == 0) {  // the greedy episode first
        Eigen::Index a;
        agent.Probabilities(state, mask).maxCoeff(&a);
        action = static_cast<int>(a);
      } else {
        action = agent.Sample(state, mask, rng);
      }
      env.Step(action);
    }
    if (k == 0 || env.current_cost() < best_cost * (1 - 1e-12)) {
      best_cost = env.current_cost();
      best = env.placement();
    }
  }
  return best;
}

}  // namespace braid
