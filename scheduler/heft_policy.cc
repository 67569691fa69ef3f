#include "scheduler/heft_policy.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

namespace braid {
namespace {

std::string Us(double us) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", us);
  return buf;
}

}  // namespace

HeftPlacement PlaceHeft(const PlacementSpace& space) {
  const SimGraph& g = space.sim;
  const int N = g.num_nodes;
  const int D = space.num_devices;
  const auto k = [D](int n, int d) { return static_cast<size_t>(n) * static_cast<size_t>(D) +
                                            static_cast<size_t>(d); };
  // Producer of each value (-1: a graph input) and its readers.
  std::vector<int> producer(static_cast<size_t>(g.num_values), -1);
  std::vector<std::vector<int>> readers(static_cast<size_t>(g.num_values));
  for (int n = 0; n < N; ++n) {
    for (int32_t i = g.out_begin[n]; i < g.out_begin[n + 1]; ++i)
      producer[static_cast<size_t>(g.out_values[static_cast<size_t>(i)])] = n;
    for (int32_t i = g.in_begin[n]; i < g.in_begin[n + 1]; ++i)
      readers[static_cast<size_t>(g.in_values[static_cast<size_t>(i)])].push_back(n);
  }
  std::vector<uint8_t> is_output(static_cast<size_t>(g.num_values), 0);
  for (int32_t v : g.graph_output_values) is_output[static_cast<size_t>(v)] = 1;

  // Average copy time of `bytes` over ordered pairs of distinct devices.
  auto avg_copy = [&](double bytes) {
    if (D < 2) return 0.0;
    double sum = 0;
    for (int a = 0; a < D; ++a)
      for (int b = 0; b < D; ++b)
        if (a != b) sum += space.CopyUs(a, b, bytes);
    return sum / (D * (D - 1));
  };

  HeftPlacement out;
  out.rank_us.assign(static_cast<size_t>(N), 0);
  for (int n = N - 1; n >= 0; --n) {
    double cost = 0;
    int allowed = 0;
    for (int d = 0; d < D; ++d) {
      if (!space.Allowed(n, d)) continue;
      cost += g.overhead_us[k(n, d)] + g.work_us[k(n, d)];
      ++allowed;
    }
    cost /= std::max(allowed, 1);
    double tail = 0;
    for (int32_t i = g.out_begin[n]; i < g.out_begin[n + 1]; ++i) {
      const int v = g.out_values[static_cast<size_t>(i)];
      const double comm = avg_copy(g.value_bytes[static_cast<size_t>(v)]);
      if (is_output[static_cast<size_t>(v)]) tail = std::max(tail, comm);
      for (int r : readers[static_cast<size_t>(v)])
        tail = std::max(tail, comm + out.rank_us[static_cast<size_t>(r)]);
    }
    out.rank_us[static_cast<size_t>(n)] = cost + tail;
  }
  // Decreasing rank; ties in graph order keep producers first.
  std::vector<int> order(static_cast<size_t>(N));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return out.rank_us[static_cast<size_t>(a)] > out.rank_us[static_cast<size_t>(b)];
  });

  std::vector<double> device_free(static_cast<size_t>(D), 0);
  std::vector<double> ready(static_cast<size_t>(g.num_values) * static_cast<size_t>(D), -1);
  std::vector<int> home(static_cast<size_t>(g.num_values), 0);
  for (int32_t v : g.graph_input_values) ready[static_cast<size_t>(v) * static_cast<size_t>(D)] = 0;
  auto available = [&](int v, int d) {
    const double here = ready[static_cast<size_t>(v) * static_cast<size_t>(D) + static_cast<size_t>(d)];
    if (here >= 0) return here;
    const int h = home[static_cast<size_t>(v)];
    return ready[static_cast<size_t>(v) * static_cast<size_t>(D) + static_cast<size_t>(h)] +
           space.CopyUs(h, d, g.value_bytes[static_cast<size_t>(v)]);
  };

  out.placement.assign(static_cast<size_t>(N), SimPlacement{});
  out.finish_us.assign(static_cast<size_t>(N), 0);
  out.reasons.assign(static_cast<size_t>(N), "");
  std::vector<double> eft(static_cast<size_t>(D));
  for (int n : order) {
    int best = -1;
    double best_score = 0;
    for (int d = 0; d < D; ++d) {
      eft[static_cast<size_t>(d)] = -1;
      if (!space.Allowed(n, d)) continue;
      double start = device_free[static_cast<size_t>(d)];
      for (int32_t i = g.in_begin[n]; i < g.in_begin[n + 1]; ++i)
        start = std::max(start, available(g.in_values[static_cast<size_t>(i)], d));
      const double finish = start + g.overhead_us[k(n, d)] + g.work_us[k(n, d)];
      // A graph output placed off the host still has to come back.
      double score = finish;
      for (int32_t i = g.out_begin[n]; i < g.out_begin[n + 1]; ++i) {
        const int v = g.out_values[static_cast<size_t>(i)];
        if (is_output[static_cast<size_t>(v)])
          score = std::max(score, finish + space.CopyUs(d, 0, g.value_bytes[static_cast<size_t>(v)]));
      }
      eft[static_cast<size_t>(d)] = score;
      if (best < 0 || score < best_score) {
        best = d;
        best_score = score;
      }
    }
    // Commit: the copies the inputs needed, the device and the outputs.
    for (int32_t i = g.in_begin[n]; i < g.in_begin[n + 1]; ++i) {
      const int v = g.in_values[static_cast<size_t>(i)];
      ready[static_cast<size_t>(v) * static_cast<size_t>(D) + static_cast<size_t>(best)] =
          available(v, best);
    }
    const double finish = [&] {
      double start = device_free[static_cast<size_t>(best)];
      for (int32_t i = g.in_begin[n]; i < g.in_begin[n + 1]; ++i)
        start = std::max(start, available(g.in_values[static_cast<size_t>(i)], best));
      return start + g.overhead_us[k(n, best)] + g.work_us[k(n, best)];
    }();
    device_free[static_cast<size_t>(best)] = finish;
    for (int32_t i = g.out_begin[n]; i < g.out_begin[n + 1]; ++i) {
      const size_t v = static_cast<size_t>(g.out_values[static_cast<size_t>(i)]);
      home[v] = best;
      ready[v * static_cast<size_t>(D) + static_cast<size_t>(best)] = finish;
    }
    out.placement[static_cast<size_t>(n)].device = static_cast<int16_t>(best);
    out.finish_us[static_cast<size_t>(n)] = finish;
    std::string why = "heft: rank " + Us(out.rank_us[static_cast<size_t>(n)]) + " us; EFT";
    for (int d = 0; d < D; ++d)
      if (eft[static_cast<size_t>(d)] >= 0)
        why += " " + g.devices[static_cast<size_t>(d)] + " " + Us(eft[static_cast<size_t>(d)]);
    out.reasons[static_cast<size_t>(n)] = why + " us (estimate)";
  }
  return out;
}

StatusOr<Plan> HeftPolicy::Place(const Graph& graph, const PlacementContext& context) const {
  ASSIGN_OR_RETURN(PlacementSpace space,
                   BuildPlacementSpace(graph, context, "heft", /*allow_slices=*/false));
  HeftPlacement h = PlaceHeft(space);
  return space.ToPlan(graph, h.placement, name(), h.reasons);
}

}  // namespace braid
