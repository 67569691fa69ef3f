#include "scheduler/worl_policy.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <numeric>
#include <random>

#include "graph/text.h"
#include "scheduler/heft_policy.h"
#include "scheduler/partition_policy.h"
#include "scheduler/worl_ddqn.h"

namespace braid {
namespace {

// DDQN actions: a single device (the first kMaxDevices of the plan), a
// slice between devices[0] (the host) and devices[1] at one ratio bin, or a
// run of kRunLengths[i] nodes from this one (graph order) onto devices[0] /
// devices[1] (single-node moves cannot cross a transfer-cost hill).
constexpr int kMaxDevices = 4;
constexpr int kSliceActions = 7;
constexpr int kRunLengths[] = {4, 8};
constexpr int kRunActions = 2 * 2;
constexpr int kFirstRun = kMaxDevices + kSliceActions;
constexpr int kActions = kFirstRun + kRunActions;
constexpr int kFeatures = 11;
// Features, the current action (one-hot) and each action's lookahead.
constexpr int kStateSize = kFeatures + 2 * kActions;
constexpr double kPi = 3.14159265358979323846;

double Uniform(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

size_t At(int row, int cols, int col) {
  return static_cast<size_t>(row) * static_cast<size_t>(cols) + static_cast<size_t>(col);
}

// Share of node n's work on the host under p.
double HostShare(const SimGraph& g, int n, const SimPlacement& p) {
  if (p.other_device < 0) return p.device == 0 ? 1.0 : 0.0;
  const double share = SliceShare(g, n, p);
  if (p.device == 0) return share;
  return p.other_device == 0 ? 1.0 - share : 0.0;
}

// The per-node move MDP the DDQN acts in: an episode starts from a plan and
// revisits `length` nodes from `offset` in graph order (wrapping).
class MoveEnv {
 public:
  MoveEnv(const PlacementSpace& space, Simulator& sim, int64_t* evaluations)
      : space_(space), sim_(sim), evaluations_(evaluations) {
    const SimGraph& g = space.sim;
    const int N = g.num_nodes, D = space.num_devices;
    option_of_.assign(static_cast<size_t>(N), {});
    for (int n = 0; n < N; ++n) {
      std::array<int, kActions>& map = option_of_[static_cast<size_t>(n)];
      map.fill(-1);
      const std::vector<SimPlacement>& opts = space.options[static_cast<size_t>(n)];
      for (size_t k = 0; k < opts.size(); ++k) {
        const SimPlacement& p = opts[k];
        if (p.other_device < 0) {
          if (p.device < kMaxDevices) map[static_cast<size_t>(p.device)] = static_cast<int>(k);
        } else if (p.device == 0 && p.other_device == 1) {
          for (size_t j = 0; j < space.slice_ratios.size() && j < kSliceActions; ++j)
            if (static_cast<float>(space.slice_ratios[j]) == p.ratio)
              map[static_cast<size_t>(kMaxDevices) + j] = static_cast<int>(k);
        }
      }
    }
    std::vector<int> producer(static_cast<size_t>(g.num_values), -1);
    for (int n = 0; n < N; ++n)
      for (int32_t i = g.out_begin[static_cast<size_t>(n)]; i < g.out_begin[static_cast<size_t>(n) + 1]; ++i)
        producer[static_cast<size_t>(g.out_values[static_cast<size_t>(i)])] = n;
    producer_.assign(static_cast<size_t>(N), -1);
    consumer_.assign(static_cast<size_t>(N), -1);
    for (int n = N - 1; n >= 0; --n) {
      for (int32_t i = g.in_begin[static_cast<size_t>(n)]; i < g.in_begin[static_cast<size_t>(n) + 1]; ++i) {
        const int p = producer[static_cast<size_t>(g.in_values[static_cast<size_t>(i)])];
        if (p < 0) continue;
        consumer_[static_cast<size_t>(p)] = n;
        if (producer_[static_cast<size_t>(n)] < 0) producer_[static_cast<size_t>(n)] = p;
      }
    }
    host_us_.resize(static_cast<size_t>(N));
    acc_us_.resize(static_cast<size_t>(N));
    out_bytes_.resize(static_cast<size_t>(N));
    for (int n = 0; n < N; ++n) {
      double host = 0, acc = -1;
      for (int d = 0; d < D; ++d) {
        if (!space.Allowed(n, d)) continue;
        SimPlacement p;
        p.device = static_cast<int16_t>(d);
        const double us = space.MainUs(n, p);
        if (d == 0) host = us;
        else if (acc < 0 || us < acc) acc = us;
      }
      host_us_[static_cast<size_t>(n)] = host;
      acc_us_[static_cast<size_t>(n)] = std::max(acc, 0.0);
      double bytes = 0;
      for (int32_t i = g.out_begin[static_cast<size_t>(n)]; i < g.out_begin[static_cast<size_t>(n) + 1]; ++i)
        bytes += g.value_bytes[static_cast<size_t>(g.out_values[static_cast<size_t>(i)])];
      out_bytes_[static_cast<size_t>(n)] = bytes;
    }
  }

  void Reset(std::span<const SimPlacement> start, double latency_us, double energy_j, int offset,
             int length) {
    current_.assign(start.begin(), start.end());
    ref_us_ = std::max(latency_us, 1e-9);
    latency_us_ = latency_us;
    energy_j_ = energy_j;
    offset_ = offset;
    length_ = length;
    step_ = 0;
    cached_step_ = -1;
  }
  bool done() const { return step_ >= length_; }
  int node() const { return (offset_ + step_) % space_.sim.num_nodes; }
  uint32_t Mask() const {
    uint32_t m = 0;
    for (int a = 0; a < kFirstRun; ++a)
      if (option_of_[static_cast<size_t>(node())][static_cast<size_t>(a)] >= 0) m |= 1u << a;
    if (space_.num_devices > 1)
      for (int a = kFirstRun; a < kActions; ++a) m |= 1u << a;
    return m;
  }
  const std::vector<SimPlacement>& placement() const { return current_; }
  double latency_us() const { return latency_us_; }
  double energy_j() const { return energy_j_; }

  // Simulates every allowed action of the current node (the lookahead).
  const Eigen::VectorXd& State() {
    if (cached_step_ == step_) return state_;
    state_ = Eigen::VectorXd::Zero(kStateSize);
    prior_ = Eigen::VectorXd::Zero(kActions);
    cached_step_ = step_;
    if (done()) return state_;
    const SimGraph& g = space_.sim;
    const int n = node();
    const size_t un = static_cast<size_t>(n);
    const double host = host_us_[un], acc = acc_us_[un];
    state_(0) = std::log1p(100 * host / ref_us_);
    state_(1) = std::log1p(100 * acc / ref_us_);
    state_(2) = std::clamp(std::log((host + 1e-3) / (acc + 1e-3)) / 3, -3.0, 3.0);
    state_(3) = std::log10(1 + out_bytes_[un]) / 8;
    state_(4) = static_cast<double>(n) / g.num_nodes;
    const int p = producer_[un], c = consumer_[un];
    state_(5) = p >= 0 ? HostShare(g, p, current_[static_cast<size_t>(p)]) : 1;
    state_(6) = c >= 0 ? HostShare(g, c, current_[static_cast<size_t>(c)]) : 1;
    state_(7) = HostShare(g, n, current_[un]);
    state_(8) = space_.Sliceable(n) ? 1 : 0;
    state_(9) = 10 * (latency_us_ / ref_us_ - 1);
    state_(10) = acc / std::max(host + acc, 1e-9);
    const uint32_t mask = Mask();
    for (int a = 0; a < kActions; ++a) {
      if (!(mask >> a & 1u)) continue;
      const size_t ua = static_cast<size_t>(a);
      if (a < kFirstRun &&
          SamePlacement(space_.options[un][static_cast<size_t>(option_of_[un][ua])], current_[un])) {
        state_(kFeatures + a) = 1;
        look_us_[ua] = latency_us_;
        look_j_[ua] = energy_j_;
        continue;
      }
      undo_.clear();
      Apply(a);
      const SimResult& r = sim_.Run(current_);
      ++*evaluations_;
      look_us_[ua] = r.latency_us;
      look_j_[ua] = r.energy_j;
      for (const auto& [i, p] : undo_) current_[static_cast<size_t>(i)] = p;
      state_(kFeatures + kActions + a) = std::tanh(200 * (latency_us_ - r.latency_us) / ref_us_);
      prior_(a) = 100 * (latency_us_ - r.latency_us) / ref_us_;  // = Step's reward
    }
    return state_;
  }
  // Per action, the reward Step would give (the known part of Q); valid
  // after State().
  const Eigen::VectorXd& Prior() const { return prior_; }

  // Places the current node by `action` (from Mask()); the reward is the
  // drop in simulated latency, relative to the episode's start, x100.
  double Step(int action) {
    State();  // the lookahead holds every action's outcome
    double reward = 0;
    if (Mask() >> action & 1u) {
      undo_.clear();
      Apply(action);
      reward = 100 * (latency_us_ - look_us_[static_cast<size_t>(action)]) / ref_us_;
      latency_us_ = look_us_[static_cast<size_t>(action)];
      energy_j_ = look_j_[static_cast<size_t>(action)];
    }
    ++step_;
    return reward;
  }

 private:
  // Applies `action` at the current node, remembering what it replaced.
  void Apply(int action) {
    const int n = node();
    if (action < kFirstRun) {
      const size_t un = static_cast<size_t>(n);
      undo_.emplace_back(n, current_[un]);
      current_[un] = space_.options[un][static_cast<size_t>(option_of_[un][static_cast<size_t>(action)])];
      return;
    }
    const int run = kRunLengths[(action - kFirstRun) / 2];
    const int d = (action - kFirstRun) % 2;
    for (int i = n; i < std::min(space_.sim.num_nodes, n + run); ++i) {
      if (!space_.Allowed(i, d)) continue;
      undo_.emplace_back(i, current_[static_cast<size_t>(i)]);
      current_[static_cast<size_t>(i)] = SimPlacement{};
      current_[static_cast<size_t>(i)].device = static_cast<int16_t>(d);
    }
  }

  const PlacementSpace& space_;
  Simulator& sim_;
  int64_t* evaluations_;
  std::vector<std::array<int, kActions>> option_of_;  // per node: action -> option, -1 none
  std::vector<int> producer_, consumer_;              // first input's producer, first reader
  std::vector<double> host_us_, acc_us_, out_bytes_;
  std::vector<SimPlacement> current_;
  double ref_us_ = 1, latency_us_ = 0, energy_j_ = 0;
  int offset_ = 0, length_ = 0, step_ = 0, cached_step_ = -1;
  Eigen::VectorXd state_, prior_;
  std::array<double, kActions> look_us_{}, look_j_{};
  std::vector<std::pair<int, SimPlacement>> undo_;
};

// One DDQN episode; learn: epsilon-greedy with replay and updates, else greedy.
double RunEpisode(Ddqn& agent, MoveEnv& env, bool learn, double* loss_sum, int* updates) {
  double ret = 0;
  while (!env.done()) {
    const Eigen::VectorXd s = env.State();
    const Eigen::VectorXd prior = env.Prior();
    const uint32_t mask = env.Mask();
    const int a = agent.Act(s, mask, !learn, &prior);
    if (a < 0) {
      env.Step(0);  // a node with no DDQN action keeps its placement
      continue;
    }
    const double r = env.Step(a);
    ret += r;
    if (!learn) continue;
    DdqnTransition t;
    t.state = s;
    t.action = a;
    t.reward = r;
    t.mask = mask;
    t.done = env.done();
    t.prior = prior;
    t.next_state = env.State();
    t.next_prior = env.Prior();
    t.next_mask = t.done ? 0u : env.Mask();
    agent.Remember(std::move(t));
    if (agent.replay_size() > 0) {
      const double loss = agent.Update();
      if (agent.updates() > 0 && loss > 0) {
        *loss_sum += loss;
        ++*updates;
      }
    }
  }
  return ret;
}

int OptionIndex(const PlacementSpace& space, int n, const SimPlacement& p) {
  const std::vector<SimPlacement>& opts = space.options[static_cast<size_t>(n)];
  for (size_t k = 0; k < opts.size(); ++k)
    if (SamePlacement(opts[k], p)) return static_cast<int>(k);
  return 0;
}

std::vector<double> Ranks(std::span<const double> x) {
  std::vector<size_t> order(x.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return x[a] < x[b]; });
  std::vector<double> rank(x.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && x[order[j + 1]] == x[order[i]]) ++j;
    for (size_t k = i; k <= j; ++k) rank[order[k]] = 0.5 * static_cast<double>(i + j);
    i = j + 1;
  }
  return rank;
}

}  // namespace

double Pearson(std::span<const double> x, std::span<const double> y) {
  const size_t n = std::min(x.size(), y.size());
  if (n < 2) return 0;
  double mx = 0, my = 0;
  for (size_t i = 0; i < n; ++i) {
    mx += x[i];
    my += y[i];
  }
  mx /= static_cast<double>(n);
  my /= static_cast<double>(n);
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < n; ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  if (!(sxx > 0) || !(syy > 0)) return 0;
  return sxy / std::sqrt(sxx * syy);
}

double Spearman(std::span<const double> x, std::span<const double> y) {
  const size_t n = std::min(x.size(), y.size());
  return Pearson(Ranks(x.first(n)), Ranks(y.first(n)));
}

int PlanDistance(std::span<const SimPlacement> a, std::span<const SimPlacement> b) {
  int d = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) d += SamePlacement(a[i], b[i]) ? 0 : 1;
  return d + static_cast<int>(std::max(a.size(), b.size()) - std::min(a.size(), b.size()));
}

PlanDistanceStudy StudyPlanDistance(const PlacementSpace& space,
                                    std::span<const SimPlacement> reference, int samples,
                                    uint64_t seed) {
  PlanDistanceStudy out;
  const int N = space.sim.num_nodes;
  if (static_cast<int>(reference.size()) != N || samples < 1) return out;
  std::vector<int> movable;
  for (int n = 0; n < N; ++n)
    if (space.options[static_cast<size_t>(n)].size() > 1) movable.push_back(n);
  if (movable.empty()) return out;
  Simulator sim(space.sim);
  const double ref_us = sim.Run(reference).latency_us;
  std::mt19937_64 rng(seed);
  std::vector<SimPlacement> plan;
  for (int s = 0; s < samples; ++s) {
    plan.assign(reference.begin(), reference.end());
    const size_t d = 1 + static_cast<size_t>(rng() % movable.size());
    for (size_t i = 0; i < d; ++i) {  // partial Fisher-Yates: d distinct nodes
      std::swap(movable[i], movable[i + static_cast<size_t>(rng() % (movable.size() - i))]);
      const size_t n = static_cast<size_t>(movable[i]);
      const std::vector<SimPlacement>& opts = space.options[n];
      size_t k = static_cast<size_t>(rng() % opts.size());
      if (SamePlacement(opts[k], plan[n])) k = (k + 1) % opts.size();
      plan[n] = opts[k];
    }
    out.distance.push_back(PlanDistance(plan, reference));
    out.gap_us.push_back(sim.Run(plan).latency_us - ref_us);
  }
  std::vector<double> x(out.distance.begin(), out.distance.end());
  out.pearson = Pearson(x, out.gap_us);
  out.spearman = Spearman(x, out.gap_us);
  double sxy = 0, sxx = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sxy += x[i] * out.gap_us[i];
    sxx += x[i] * x[i];
  }
  out.slope_us_per_node = sxx > 0 ? sxy / sxx : 0;
  return out;
}

StatusOr<WorlResult> PlaceWorl(const PlacementSpace& space, const WorlOptions& options) {
  RETURN_IF_ERROR(ValidateWorlOptions(options));
  const int N = space.sim.num_nodes, D = space.num_devices, W = options.whales;
  if (N == 0) return InvalidArgument("worl: the graph has no nodes");
  WorlResult out;
  WorlStats& stats = out.stats;
  Simulator sim(space.sim);
  std::mt19937_64 rng(options.seed * 0x9E3779B97F4A7C15ULL + 3);

  std::vector<double> K(static_cast<size_t>(N));
  for (int n = 0; n < N; ++n) K[static_cast<size_t>(n)] = static_cast<double>(space.options[static_cast<size_t>(n)].size());
  std::vector<double> pos(static_cast<size_t>(W) * static_cast<size_t>(N));
  std::vector<int> idx(pos.size());
  std::vector<double> lat(static_cast<size_t>(W)), energy(static_cast<size_t>(W));
  std::vector<SimPlacement> plan(static_cast<size_t>(N));
  auto option_of = [&](int n, double x) {
    return std::min(static_cast<int>(K[static_cast<size_t>(n)]) - 1, std::max(0, static_cast<int>(x)));
  };
  auto evaluate = [&](const int* whale_idx, double* us, double* j) {
    for (int n = 0; n < N; ++n)
      plan[static_cast<size_t>(n)] = space.options[static_cast<size_t>(n)][static_cast<size_t>(whale_idx[n])];
    const SimResult& r = sim.Run(plan);
    ++stats.evaluations;
    *us = r.latency_us;
    *j = r.energy_j;
  };
  auto set_whale = [&](int w, std::span<const SimPlacement> p) {
    for (int n = 0; n < N; ++n) {
      const int k = OptionIndex(space, n, p[static_cast<size_t>(n)]);
      idx[At(w, N, n)] = k;
      pos[At(w, N, n)] = k + 0.5;
    }
  };

  // Start population: HEFT, partition, each single device, then uniform random.
  int seeded = 0;
  set_whale(seeded++, PlaceHeft(space).placement);
  if (options.seed_partition) {
    PartitionResult start = PlacePartition(space);
    stats.evaluations += start.stats.evaluations;
    set_whale(seeded++, start.placement);
  }
  for (int d = 0; d < D && seeded < W; ++d) set_whale(seeded++, space.SingleDevice(d));
  for (int w = seeded; w < W; ++w)
    for (int n = 0; n < N; ++n) {
      const double x = Uniform(rng) * K[static_cast<size_t>(n)];
      pos[At(w, N, n)] = x;
      idx[At(w, N, n)] = option_of(n, x);
    }
  int leader = 0;
  for (int w = 0; w < W; ++w) {
    evaluate(&idx[At(w, N, 0)], &lat[static_cast<size_t>(w)], &energy[static_cast<size_t>(w)]);
    if (Better(lat[static_cast<size_t>(w)], energy[static_cast<size_t>(w)],
               lat[static_cast<size_t>(leader)], energy[static_cast<size_t>(leader)]))
      leader = w;
  }
  std::vector<double> best_pos(pos.begin() + static_cast<std::ptrdiff_t>(At(leader, N, 0)),
                               pos.begin() + static_cast<std::ptrdiff_t>(At(leader + 1, N, 0)));
  std::vector<int> best_idx(idx.begin() + static_cast<std::ptrdiff_t>(At(leader, N, 0)),
                            idx.begin() + static_cast<std::ptrdiff_t>(At(leader + 1, N, 0)));
  double best_us = lat[static_cast<size_t>(leader)], best_j = energy[static_cast<size_t>(leader)];
  stats.start_us = best_us;
  auto take_lead = [&](const double* p, const int* k, double us, double j) {
    if (!Better(us, j, best_us, best_j)) return false;
    std::copy(p, p + N, best_pos.begin());
    std::copy(k, k + N, best_idx.begin());
    best_us = us;
    best_j = j;
    return true;
  };

  DdqnOptions ddqn_options = options.ddqn_options;
  ddqn_options.seed = options.seed * 0x2545F4914F6CDD1DULL + 5;
  // Exploration fades over the first half of this search's DDQN steps.
  const int64_t ddqn_steps = static_cast<int64_t>((options.iterations + options.ddqn_every - 1) /
                                                  options.ddqn_every) *
                             std::min(N, options.episode_nodes);
  ddqn_options.epsilon_decay_steps = static_cast<int>(std::clamp<int64_t>(ddqn_steps / 2, 1, 1 << 30));
  Ddqn agent(kStateSize, kActions, ddqn_options);
  MoveEnv env(space, sim, &stats.evaluations);

  std::vector<int> radius(static_cast<size_t>(W), N);
  std::vector<double> next(static_cast<size_t>(N));
  std::vector<int> next_idx(static_cast<size_t>(N)), changed;
  double pearson_sum = 0, slope_sum = 0;
  int fitted = 0;
  for (int t = 0; t < options.iterations; ++t) {
    const double a = 2.0 - 2.0 * t / options.iterations;
    for (int w = 0; w < W; ++w) {
      const double A = 2 * a * Uniform(rng) - a;
      const double p = Uniform(rng);
      const double l = 2 * Uniform(rng) - 1;
      int other = static_cast<int>(rng() % static_cast<uint64_t>(W - 1));
      if (other >= w) ++other;
      const double* x = &pos[At(w, N, 0)];
      const double* target = (p < 0.5 && std::abs(A) >= 1) ? &pos[At(other, N, 0)] : best_pos.data();
      const double spiral = std::exp(options.spiral_b * l) * std::cos(2 * kPi * l);
      for (int n = 0; n < N; ++n) {
        const size_t un = static_cast<size_t>(n);
        double v;
        if (p < 0.5) {
          const double C = 2 * Uniform(rng);
          v = target[un] - A * std::abs(C * target[un] - x[un]);
        } else {
          v = std::abs(best_pos[un] - x[un]) * spiral + best_pos[un];
        }
        next[un] = std::clamp(v, 0.0, std::nextafter(K[un], 0.0));
        next_idx[un] = option_of(n, next[un]);
      }
      if (options.rtgs && radius[static_cast<size_t>(w)] < N) {
        // Keep the `radius` changes whose positions moved most.
        changed.clear();
        for (int n = 0; n < N; ++n)
          if (next_idx[static_cast<size_t>(n)] != idx[At(w, N, n)]) changed.push_back(n);
        const size_t keep = static_cast<size_t>(radius[static_cast<size_t>(w)]);
        if (changed.size() > keep) {
          std::stable_sort(changed.begin(), changed.end(), [&](int i, int j) {
            return std::abs(next[static_cast<size_t>(i)] - x[static_cast<size_t>(i)]) >
                   std::abs(next[static_cast<size_t>(j)] - x[static_cast<size_t>(j)]);
          });
          for (size_t c = keep; c < changed.size(); ++c) {
            const size_t un = static_cast<size_t>(changed[c]);
            next[un] = x[un];
            next_idx[un] = idx[At(w, N, changed[c])];
          }
        }
      }
      std::copy(next.begin(), next.end(), pos.begin() + static_cast<std::ptrdiff_t>(At(w, N, 0)));
      std::copy(next_idx.begin(), next_idx.end(), idx.begin() + static_cast<std::ptrdiff_t>(At(w, N, 0)));
      evaluate(&idx[At(w, N, 0)], &lat[static_cast<size_t>(w)], &energy[static_cast<size_t>(w)]);
      if (take_lead(&pos[At(w, N, 0)], &idx[At(w, N, 0)], lat[static_cast<size_t>(w)],
                    energy[static_cast<size_t>(w)]))
        ++stats.woa_leads;
    }

    if (options.ddqn && t % options.ddqn_every == 0) {
      // A DDQN episode from the leader; its plan replaces the worst whale.
      for (int n = 0; n < N; ++n)
        plan[static_cast<size_t>(n)] = space.options[static_cast<size_t>(n)][static_cast<size_t>(best_idx[static_cast<size_t>(n)])];
      env.Reset(plan, best_us, best_j, static_cast<int>(rng() % static_cast<uint64_t>(N)),
                std::min(N, options.episode_nodes));
      double loss_sum = 0;
      int updates = 0;
      RunEpisode(agent, env, /*learn=*/true, &loss_sum, &updates);
      stats.td_loss = updates > 0 ? loss_sum / updates : 0;
      ++stats.ddqn_episodes;
      int worst = 0;
      for (int w = 1; w < W; ++w)
        if (lat[static_cast<size_t>(w)] > lat[static_cast<size_t>(worst)]) worst = w;
      set_whale(worst, env.placement());
      lat[static_cast<size_t>(worst)] = env.latency_us();
      energy[static_cast<size_t>(worst)] = env.energy_j();
      if (take_lead(&pos[At(worst, N, 0)], &idx[At(worst, N, 0)], env.latency_us(), env.energy_j()))
        ++stats.ddqn_leads;
    }

    // RTGS: fit FTG = k * SPD over the population against the leader.
    double sxy = 0, sxx = 0;
    std::vector<double> spd, ftg;
    for (int w = 0; w < W; ++w) {
      int d = 0;
      for (int n = 0; n < N; ++n) d += idx[At(w, N, n)] != best_idx[static_cast<size_t>(n)] ? 1 : 0;
      const double g = lat[static_cast<size_t>(w)] - best_us;
      spd.push_back(d);
      ftg.push_back(g);
      sxy += d * g;
      sxx += static_cast<double>(d) * d;
    }
    const double k = sxx > 0 ? sxy / sxx : 0;
    if (sxx > 0) {
      pearson_sum += Pearson(spd, ftg);
      slope_sum += k;
      ++fitted;
    }
    for (int w = 0; w < W; ++w) {
      const double g = ftg[static_cast<size_t>(w)];
      radius[static_cast<size_t>(w)] =
          k > 0 ? static_cast<int>(std::clamp(std::ceil(g / k), 1.0, static_cast<double>(N))) : N;
    }
    if (options.rtgs) {
      // Whales sitting on the leader's plan (SPD 0) have stopped searching:
      // but one, each moves to a plan at most `reach` nodes from the leader,
      // reach the SPD the fitted line gives the population's mean gap.
      double gap_sum = 0;
      int far = 0;
      for (int w = 0; w < W; ++w)
        if (spd[static_cast<size_t>(w)] > 0) {
          gap_sum += ftg[static_cast<size_t>(w)];
          ++far;
        }
      const int reach = k > 0 && far > 0
                            ? static_cast<int>(std::clamp(std::ceil(gap_sum / far / k), 1.0,
                                                          static_cast<double>(N)))
                            : 2;
      bool kept = false;
      for (int w = 0; w < W; ++w) {
        if (spd[static_cast<size_t>(w)] > 0) continue;
        if (!kept) {
          kept = true;
          continue;
        }
        std::copy(best_pos.begin(), best_pos.end(), pos.begin() + static_cast<std::ptrdiff_t>(At(w, N, 0)));
        std::copy(best_idx.begin(), best_idx.end(), idx.begin() + static_cast<std::ptrdiff_t>(At(w, N, 0)));
        const int d = 1 + static_cast<int>(rng() % static_cast<uint64_t>(reach));
        for (int i = 0; i < d; ++i) {
          const int n = static_cast<int>(rng() % static_cast<uint64_t>(N));
          const int options_n = static_cast<int>(K[static_cast<size_t>(n)]);
          if (options_n < 2) continue;
          int o = static_cast<int>(rng() % static_cast<uint64_t>(options_n));
          if (o == best_idx[static_cast<size_t>(n)]) o = (o + 1) % options_n;
          idx[At(w, N, n)] = o;
          pos[At(w, N, n)] = o + Uniform(rng);
        }
        evaluate(&idx[At(w, N, 0)], &lat[static_cast<size_t>(w)], &energy[static_cast<size_t>(w)]);
        if (take_lead(&pos[At(w, N, 0)], &idx[At(w, N, 0)], lat[static_cast<size_t>(w)],
                      energy[static_cast<size_t>(w)]))
          ++stats.rtgs_leads;
        radius[static_cast<size_t>(w)] = d;
      }
    }
    stats.leader_us.push_back(best_us);
    ++stats.iterations;
  }
  for (int pass = 0; options.ddqn && pass < 8; ++pass) {
    // The trained DDQN's greedy passes over every node from the leader.
    for (int n = 0; n < N; ++n)
      plan[static_cast<size_t>(n)] = space.options[static_cast<size_t>(n)][static_cast<size_t>(best_idx[static_cast<size_t>(n)])];
    env.Reset(plan, best_us, best_j, 0, N);
    double unused = 0;
    int unused_updates = 0;
    RunEpisode(agent, env, /*learn=*/false, &unused, &unused_updates);
    std::vector<int> k(static_cast<size_t>(N));
    std::vector<double> x(static_cast<size_t>(N));
    for (int n = 0; n < N; ++n) {
      k[static_cast<size_t>(n)] = OptionIndex(space, n, env.placement()[static_cast<size_t>(n)]);
      x[static_cast<size_t>(n)] = k[static_cast<size_t>(n)] + 0.5;
    }
    if (!take_lead(x.data(), k.data(), env.latency_us(), env.energy_j())) break;
    ++stats.ddqn_leads;
  }
  if (fitted > 0) {
    stats.spd_ftg_pearson = pearson_sum / fitted;
    stats.ftg_us_per_node = slope_sum / fitted;
  }
  out.placement.resize(static_cast<size_t>(N));
  for (int n = 0; n < N; ++n)
    out.placement[static_cast<size_t>(n)] =
        space.options[static_cast<size_t>(n)][static_cast<size_t>(best_idx[static_cast<size_t>(n)])];
  out.latency_us = best_us;
  out.energy_j = best_j;
  return out;
}

StatusOr<Plan> WorlPolicy::Place(const Graph& graph, const PlacementContext& context) const {
  RETURN_IF_ERROR(ValidateWorlOptions(options_));
  ASSIGN_OR_RETURN(PlacementSpace space,
                   BuildPlacementSpace(graph, context, name_, options_.allow_slices));
  ASSIGN_OR_RETURN(WorlResult r, PlaceWorl(space, options_));
  const std::string why = "worl: WOA " + std::to_string(options_.whales) + " whales x " +
                          std::to_string(options_.iterations) + " iterations" +
                          (options_.ddqn ? " + DDQN" : "") + (options_.rtgs ? " + RTGS" : "") +
                          ", seed " + std::to_string(options_.seed) + ", simulated " +
                          FixedDigits(r.latency_us / 1e3, 3) + " ms";
  std::vector<std::string> reasons(r.placement.size(), why);
  return space.ToPlan(graph, r.placement, name_, reasons);
}

void RegisterWorlPolicy(PolicyRegistry& registry, const WorlOptions& options,
                        const std::string& name) {
  registry.Register(name, [options, name] { return std::make_unique<WorlPolicy>(options, name); });
}

}  // namespace braid
