#include "scheduler/worl_ddqn.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace braid {
namespace {

double Uniform(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

}  // namespace

Ddqn::Ddqn(int state_size, int num_actions, DdqnOptions options)
    : state_size_(state_size),
      num_actions_(std::clamp(num_actions, 1, 32)),
      options_(options),
      online_({.sizes = {state_size, options.hidden, options.hidden, num_actions_}}, options.seed),
      target_(online_),
      replay_(static_cast<size_t>(std::max(options.replay_capacity, 1))),
      rng_(options.seed * 0x9E3779B97F4A7C15ULL + 11) {
  adam_ = Adam(online_, {.learning_rate = options.learning_rate, .max_grad_norm = 10});
}

double Ddqn::epsilon() const {
  const double t = std::min(1.0, static_cast<double>(steps_) / options_.epsilon_decay_steps);
  return options_.epsilon_start + t * (options_.epsilon_end - options_.epsilon_start);
}

Eigen::VectorXd Ddqn::QValues(const Eigen::VectorXd& state, const Eigen::VectorXd* prior) const {
  Eigen::VectorXd q = online_.Predict(state).col(0);
  if (prior != nullptr && prior->size() == q.size()) q += *prior;
  return q;
}

int Ddqn::Greedy(const Eigen::VectorXd& state, uint32_t mask, const Eigen::VectorXd* prior) const {
  const Eigen::VectorXd q = QValues(state, prior);
  int best = -1;
  for (int a = 0; a < num_actions_; ++a)
    if ((mask >> a & 1u) && (best < 0 || q(a) > q(best))) best = a;
  return best;
}

int Ddqn::Act(const Eigen::VectorXd& state, uint32_t mask, bool greedy,
              const Eigen::VectorXd* prior) {
  if (greedy) return Greedy(state, mask, prior);
  const double eps = epsilon();
  ++steps_;
  if (Uniform(rng_) < eps) {
    int allowed = 0;
    for (int a = 0; a < num_actions_; ++a) allowed += (mask >> a & 1u) ? 1 : 0;
    if (allowed == 0) return -1;
    int pick = static_cast<int>(rng_() % static_cast<uint64_t>(allowed));
    for (int a = 0; a < num_actions_; ++a)
      if ((mask >> a & 1u) && pick-- == 0) return a;
  }
  return Greedy(state, mask, prior);
}

void Ddqn::Remember(DdqnTransition t) {
  replay_.Add(std::move(t));
}

Eigen::VectorXd Ddqn::Targets(std::span<const DdqnTransition* const> batch) const {
  const Eigen::Index B = static_cast<Eigen::Index>(batch.size());
  Eigen::MatrixXd s2(state_size_, B);
  for (Eigen::Index b = 0; b < B; ++b) s2.col(b) = batch[static_cast<size_t>(b)]->next_state;
  // Double DQN: the online net picks the next action, the target net values it.
  Eigen::MatrixXd q_online = online_.Predict(s2);
  Eigen::MatrixXd q_target = target_.Predict(s2);
  for (Eigen::Index b = 0; b < B; ++b) {
    const Eigen::VectorXd& prior = batch[static_cast<size_t>(b)]->next_prior;
    if (prior.size() != num_actions_) continue;
    q_online.col(b) += prior;
    q_target.col(b) += prior;
  }
  Eigen::VectorXd y(B);
  for (Eigen::Index b = 0; b < B; ++b) {
    const DdqnTransition& t = *batch[static_cast<size_t>(b)];
    double next = 0;
    if (!t.done) {
      int best = -1;
      for (int a = 0; a < num_actions_; ++a)
        if ((t.next_mask >> a & 1u) && (best < 0 || q_online(a, b) > q_online(best, b))) best = a;
      if (best >= 0) next = q_target(best, b);
    }
    y(b) = t.reward + options_.gamma * next;
  }
  return y;
}

double Ddqn::TdError(std::span<const DdqnTransition> batch) const {
  if (batch.empty()) return 0;
  std::vector<const DdqnTransition*> ptrs;
  for (const DdqnTransition& t : batch) ptrs.push_back(&t);
  const Eigen::VectorXd y = Targets(ptrs);
  double sum = 0;
  for (size_t b = 0; b < batch.size(); ++b) {
    const double q = QValues(batch[b].state, &batch[b].prior)(batch[b].action);
    sum += (q - y(static_cast<Eigen::Index>(b))) * (q - y(static_cast<Eigen::Index>(b)));
  }
  return sum / static_cast<double>(batch.size());
}

double Ddqn::Step(std::span<const DdqnTransition* const> batch) {
  const Eigen::Index B = static_cast<Eigen::Index>(batch.size());
  const Eigen::VectorXd y = Targets(batch);
  Eigen::MatrixXd s(state_size_, B);
  for (Eigen::Index b = 0; b < B; ++b) s.col(b) = batch[static_cast<size_t>(b)]->state;
  const Eigen::MatrixXd& q = online_.Forward(s);
  Eigen::MatrixXd grad = Eigen::MatrixXd::Zero(num_actions_, B);
  const double delta = options_.huber_delta;
  double loss = 0;
  for (Eigen::Index b = 0; b < B; ++b) {
    const DdqnTransition& t = *batch[static_cast<size_t>(b)];
    const int a = t.action;
    const double known = t.prior.size() == num_actions_ ? t.prior(a) : 0.0;
    const double err = q(a, b) + known - y(b);
    const double abs_err = std::abs(err);
    loss += abs_err <= delta ? 0.5 * err * err : delta * (abs_err - 0.5 * delta);
    grad(a, b) = std::clamp(err, -delta, delta) / static_cast<double>(B);
  }
  online_.ZeroGrad();
  online_.Backward(grad);
  adam_.Step(online_);
  ++updates_;
  return loss / static_cast<double>(B);
}

double Ddqn::UpdateOn(std::span<const DdqnTransition> batch) {
  if (batch.empty()) return 0;
  std::vector<const DdqnTransition*> ptrs;
  for (const DdqnTransition& t : batch) ptrs.push_back(&t);
  return Step(ptrs);
}

double Ddqn::Update() {
  const size_t need = static_cast<size_t>(std::max({options_.warmup_transitions, 1}));
  if (replay_.size() < need) return 0;
  std::vector<const DdqnTransition*> batch(static_cast<size_t>(options_.batch_size));
  for (auto& p : batch) p = &replay_[static_cast<size_t>(rng_() % replay_.size())];
  const double loss = Step(batch);
  if (updates_ % options_.target_sync_every == 0) SyncTarget();
  return loss;
}

}  // namespace braid
