#include "scheduler/optimal.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>

#include "graph/text.h"
#include "scheduler/heft_policy.h"
#include "scheduler/partition_policy.h"

namespace braid {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// One chain step, timed from the moment the previous node is done (every
// device, stream and copy engine is free then): the input sits on `home`.
// Mirrors Simulator::Run for a node with one input and one output.
double ChainStepUs(const PlacementSpace& space, int n, int home, const SimPlacement& p,
                   double in_bytes, double out_bytes) {
  const SimGraph& g = space.sim;
  const int d = p.device;
  const double copy_in_main = home != d ? space.CopyUs(home, d, in_bytes) : 0;
  const double main_end = copy_in_main + space.MainUs(n, p);
  if (p.other_device < 0) return main_end;
  const int o = p.other_device;
  const double other_end = (home != o ? space.CopyUs(home, o, in_bytes) : 0) + space.OtherUs(n, p);
  const size_t back = static_cast<size_t>(o) * static_cast<size_t>(space.num_devices) +
                      static_cast<size_t>(d);
  double back_end = other_end + g.link_latency_us[back];  // a mapped link's: wake-up only
  if (!g.link_mapped[back]) {
    // The input copy home -> d used the o -> d engine when home == o.
    const double engine_free = (home == o && g.copy_engines[back] == 1) ? copy_in_main : 0;
    back_end = std::max(other_end, engine_free) + g.link_latency_us[back] +
               (1.0 - SliceShare(g, n, p)) * out_bytes * g.link_us_per_byte[back];
  }
  // The join on d once both parts are there.
  return std::max(main_end, back_end) +
         g.join_us[static_cast<size_t>(n) * static_cast<size_t>(space.num_devices) +
                   static_cast<size_t>(d)];
}

std::vector<SimPlacement> ChainDp(const PlacementSpace& space) {
  const SimGraph& g = space.sim;
  const int N = g.num_nodes, D = space.num_devices;
  // cost[h]: least time until the live value is ready on device h.
  std::vector<double> cost(static_cast<size_t>(D), kInf), next(static_cast<size_t>(D));
  cost[0] = 0;
  // choice[n * D + d]: (option, previous home) that made node n's output land on d.
  std::vector<std::pair<int, int>> choice(static_cast<size_t>(N) * static_cast<size_t>(D), {-1, -1});
  for (int n = 0; n < N; ++n) {
    const double in_bytes = g.value_bytes[static_cast<size_t>(g.in_values[static_cast<size_t>(g.in_begin[n])])];
    const double out_bytes = g.value_bytes[static_cast<size_t>(g.out_values[static_cast<size_t>(g.out_begin[n])])];
    std::fill(next.begin(), next.end(), kInf);
    const std::vector<SimPlacement>& opts = space.options[static_cast<size_t>(n)];
    for (size_t k = 0; k < opts.size(); ++k) {
      for (int h = 0; h < D; ++h) {
        if (cost[static_cast<size_t>(h)] == kInf) continue;
        const double t = cost[static_cast<size_t>(h)] + ChainStepUs(space, n, h, opts[k], in_bytes, out_bytes);
        const size_t d = static_cast<size_t>(opts[k].device);
        if (t < next[d]) {
          next[d] = t;
          choice[static_cast<size_t>(n) * static_cast<size_t>(D) + d] = {static_cast<int>(k), h};
        }
      }
    }
    cost.swap(next);
  }
  const double out_bytes =
      g.value_bytes[static_cast<size_t>(g.out_values[static_cast<size_t>(g.out_begin[N - 1])])];
  int home = -1;
  double best = kInf;
  for (int h = 0; h < D; ++h) {
    const double t = cost[static_cast<size_t>(h)] + space.CopyUs(h, 0, out_bytes);
    if (t < best) {
      best = t;
      home = h;
    }
  }
  std::vector<SimPlacement> placement(static_cast<size_t>(N));
  for (int n = N - 1; n >= 0; --n) {
    const auto [k, prev] = choice[static_cast<size_t>(n) * static_cast<size_t>(D) + static_cast<size_t>(home)];
    placement[static_cast<size_t>(n)] = space.options[static_cast<size_t>(n)][static_cast<size_t>(k)];
    home = prev;
  }
  return placement;
}

// Options product, saturating just above `limit`.
int64_t OptionsProduct(const PlacementSpace& space, int64_t limit) {
  int64_t product = 1;
  for (const auto& opts : space.options) {
    const int64_t k = static_cast<int64_t>(opts.size());
    if (product > (limit + 1) / k) return limit + 1;
    product *= k;
  }
  return product;
}

std::vector<SimPlacement> Exhaustive(const PlacementSpace& space, Simulator& sim,
                                     int64_t* evaluations) {
  const size_t N = space.options.size();
  std::vector<size_t> digit(N, 0);
  std::vector<SimPlacement> placement(N), best;
  for (size_t n = 0; n < N; ++n) placement[n] = space.options[n][0];
  double best_latency = kInf, best_energy = kInf;
  while (true) {
    const SimResult& r = sim.Run(placement);
    ++*evaluations;
    if (best.empty() || Better(r.latency_us, r.energy_j, best_latency, best_energy)) {
      best = placement;
      best_latency = r.latency_us;
      best_energy = r.energy_j;
    }
    size_t n = 0;
    while (n < N && ++digit[n] == space.options[n].size()) {
      digit[n] = 0;
      placement[n] = space.options[n][0];
      ++n;
    }
    if (n == N) break;
    placement[n] = space.options[n][digit[n]];
  }
  return best;
}

// Seeded simulated annealing from `start` (latency objective, Metropolis
// acceptance, geometric cooling), returning the best plan seen.
std::vector<SimPlacement> Anneal(const PlacementSpace& space, Simulator& sim,
                                 std::vector<SimPlacement> current, int64_t iterations,
                                 uint64_t seed, int64_t* evaluations) {
  const int N = space.sim.num_nodes, D = space.num_devices;
  std::mt19937_64 rng(seed);
  auto uniform = [&rng] { return static_cast<double>(rng() >> 11) * 0x1.0p-53; };
  const SimResult& r0 = sim.Run(current);
  ++*evaluations;
  double cur_latency = r0.latency_us, cur_energy = r0.energy_j;
  std::vector<SimPlacement> best = current;
  double best_latency = cur_latency, best_energy = cur_energy;
  const double t0 = 0.03 * cur_latency, t1 = 1e-4 * cur_latency;
  std::vector<std::pair<int, SimPlacement>> undo;
  if (!(t0 > 0)) return best;  // nothing takes time: every plan is as good
  for (int64_t it = 0; it < iterations && N > 0; ++it) {
    const double temperature =
        t0 * std::pow(t1 / t0, static_cast<double>(it) / static_cast<double>(iterations));
    undo.clear();
    const int n = static_cast<int>(rng() % static_cast<uint64_t>(N));
    if (rng() % 5 == 0) {
      // A run of nodes onto one device: crosses transfer-cost hills.
      const int run = 2 + static_cast<int>(rng() % 7);
      const int d = static_cast<int>(rng() % static_cast<uint64_t>(D));
      for (int i = n; i < std::min(N, n + run); ++i) {
        if (!space.Allowed(i, d)) continue;
        undo.emplace_back(i, current[static_cast<size_t>(i)]);
        current[static_cast<size_t>(i)] = SimPlacement{};
        current[static_cast<size_t>(i)].device = static_cast<int16_t>(d);
      }
    } else {
      const std::vector<SimPlacement>& opts = space.options[static_cast<size_t>(n)];
      if (opts.size() < 2) continue;
      size_t k = static_cast<size_t>(rng() % opts.size());
      if (SamePlacement(opts[k], current[static_cast<size_t>(n)])) k = (k + 1) % opts.size();
      undo.emplace_back(n, current[static_cast<size_t>(n)]);
      current[static_cast<size_t>(n)] = opts[k];
    }
    const SimResult& r = sim.Run(current);
    ++*evaluations;
    const double delta = r.latency_us - cur_latency;
    if (delta <= 0 || uniform() < std::exp(-delta / temperature)) {
      cur_latency = r.latency_us;
      cur_energy = r.energy_j;
      if (Better(cur_latency, cur_energy, best_latency, best_energy)) {
        best = current;
        best_latency = cur_latency;
        best_energy = cur_energy;
      }
    } else {
      for (auto it2 = undo.rbegin(); it2 != undo.rend(); ++it2)
        current[static_cast<size_t>(it2->first)] = it2->second;
    }
  }
  return best;
}

}  // namespace

const char* OptimalKindName(OptimalKind kind) {
  switch (kind) {
    case OptimalKind::kChainDp: return "exact (chain DP)";
    case OptimalKind::kExhaustive: return "exact (exhaustive)";
    case OptimalKind::kSearched: return "searched + bound";
  }
  return "?";
}

double PlacementLowerBoundUs(const PlacementSpace& space) {
  const SimGraph& g = space.sim;
  const int N = g.num_nodes;
  std::vector<int> producer(static_cast<size_t>(g.num_values), -1);
  std::vector<double> finish(static_cast<size_t>(N), 0);
  double critical = 0, least_busy = 0;
  for (int n = 0; n < N; ++n) {
    double min_time = kInf, min_busy = kInf;
    for (const SimPlacement& p : space.options[static_cast<size_t>(n)]) {
      const double a = space.MainUs(n, p), b = space.OtherUs(n, p);
      min_time = std::min(min_time, std::max(a, b));
      min_busy = std::min(min_busy, a + b);
    }
    double start = 0;
    for (int32_t i = g.in_begin[n]; i < g.in_begin[n + 1]; ++i) {
      const int p = producer[static_cast<size_t>(g.in_values[static_cast<size_t>(i)])];
      if (p >= 0) start = std::max(start, finish[static_cast<size_t>(p)]);
    }
    finish[static_cast<size_t>(n)] = start + min_time;
    critical = std::max(critical, finish[static_cast<size_t>(n)]);
    least_busy += min_busy;
    for (int32_t i = g.out_begin[n]; i < g.out_begin[n + 1]; ++i)
      producer[static_cast<size_t>(g.out_values[static_cast<size_t>(i)])] = n;
  }
  double slots = 0;
  for (int32_t k : g.concurrent_kernels) slots += std::max(1, static_cast<int>(k));
  return std::max(critical, least_busy / std::max(1.0, slots));
}

bool IsChain(const SimGraph& g) {
  const int N = g.num_nodes;
  if (N < 1 || g.graph_output_values.empty()) return false;
  int32_t previous = -1;
  for (int n = 0; n < N; ++n) {
    if (g.in_begin[n + 1] - g.in_begin[n] != 1 || g.out_begin[n + 1] - g.out_begin[n] != 1)
      return false;
    const int32_t in = g.in_values[static_cast<size_t>(g.in_begin[n])];
    if (n == 0) {
      if (std::find(g.graph_input_values.begin(), g.graph_input_values.end(), in) ==
          g.graph_input_values.end())
        return false;
    } else if (in != previous) {
      return false;
    }
    previous = g.out_values[static_cast<size_t>(g.out_begin[n])];
  }
  for (int32_t v : g.graph_output_values)
    if (v != previous) return false;
  return true;
}

StatusOr<OptimalResult> FindOptimal(const PlacementSpace& space, const OptimalOptions& options) {
  if (space.sim.num_nodes == 0) return InvalidArgument("optimal: the graph has no nodes");
  if (options.search_iterations < 0 || options.exhaustive_limit < 0)
    return InvalidArgument("optimal: budgets must be >= 0");
  Simulator sim(space.sim);
  OptimalResult out;
  const bool chain = IsChain(space.sim);
  const bool small = OptionsProduct(space, options.exhaustive_limit) <= options.exhaustive_limit;
  OptimalMethod method = options.method;
  if (method == OptimalMethod::kAuto)
    method = chain ? OptimalMethod::kChainDp
                   : small ? OptimalMethod::kExhaustive : OptimalMethod::kSearch;
  switch (method) {
    case OptimalMethod::kChainDp:
      if (!chain) return FailedPrecondition("optimal: chain DP asked for, but the graph is not a chain");
      out.placement = ChainDp(space);
      out.kind = OptimalKind::kChainDp;
      break;
    case OptimalMethod::kExhaustive:
      if (!small)
        return FailedPrecondition("optimal: more than " + std::to_string(options.exhaustive_limit) +
                                  " plans to enumerate");
      out.placement = Exhaustive(space, sim, &out.evaluations);
      out.kind = OptimalKind::kExhaustive;
      break;
    default: {
      PartitionResult start = PlacePartition(space);
      out.evaluations += start.stats.evaluations + 3;
      out.placement = Anneal(space, sim, std::move(start.placement), options.search_iterations,
                             options.seed, &out.evaluations);
      out.evaluations += ImproveByLocalMoves(space, sim, out.placement).evaluations;
      out.kind = OptimalKind::kSearched;
      break;
    }
  }
  const SimResult& r = sim.Run(out.placement);
  ++out.evaluations;
  out.latency_us = r.latency_us;
  out.energy_j = r.energy_j;
  out.lower_bound_us = out.exact() ? out.latency_us : PlacementLowerBoundUs(space);
  return out;
}

StatusOr<Plan> FindOptimalPlan(const Graph& graph, const PlacementContext& context,
                               const OptimalOptions& options, OptimalResult* result) {
  ASSIGN_OR_RETURN(PlacementSpace space,
                   BuildPlacementSpace(graph, context, "optimal", options.allow_slices));
  ASSIGN_OR_RETURN(OptimalResult r, FindOptimal(space, options));
  std::string why = std::string("optimal: ") + OptimalKindName(r.kind) + ", simulated " +
                    FixedDigits(r.latency_us / 1e3, 3) + " ms";
  if (!r.exact())
    why += ", proven bound " + FixedDigits(r.lower_bound_us / 1e3, 3) + " ms, gap " +
           FixedDigits(100 * r.Gap(), 1) + "%";
  std::vector<std::string> reasons(r.placement.size(), why);
  Plan plan = space.ToPlan(graph, r.placement, "optimal", reasons);
  if (result != nullptr) *result = std::move(r);
  return plan;
}

StatusOr<Plan> OptimalPolicy::Place(const Graph& graph, const PlacementContext& context) const {
  return FindOptimalPlan(graph, context, options_);
}

void RegisterBaselinePolicies(PolicyRegistry& registry, const OptimalOptions& optimal) {
  registry.Register("heft", [] { return std::make_unique<HeftPolicy>(); });
  registry.Register("partition", [] { return std::make_unique<PartitionPolicy>(); });
  registry.Register("optimal", [optimal] { return std::make_unique<OptimalPolicy>(optimal); });
}

}  // namespace braid
