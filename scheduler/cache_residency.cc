#include "scheduler/cache_residency.h"

#include <algorithm>
#include <bit>
#include <limits>

#include "graph/op_schema.h"
#include "scheduler/cost_model.h"
#include "scheduler/memory_planner.h"

namespace braid {
namespace {

// Arena bytes are counted by 64-byte cache line (a line two small values
// share counts once), kept per 16 KB page as a bit mask.
constexpr size_t kLineBytes = 64;
constexpr size_t kPageBytes = 16 << 10;
constexpr size_t kWordsPerPage = kPageBytes / kLineBytes / 64;
constexpr size_t kNoRequest = std::numeric_limits<size_t>::max();

}  // namespace

std::vector<ColdBytes> ColdBytesPerNode(const Graph& graph, double cache_bytes, double llc_bytes,
                                        std::span<const uint8_t> runs_here) {
  const size_t n = static_cast<size_t>(graph.num_nodes());
  const size_t num_values = static_cast<size_t>(graph.num_values());
  std::vector<ColdBytes> cold(n);
  if (!(cache_bytes > 0) && !(llc_bytes > 0)) return cold;

  // Views touch nothing (their output is their input's bytes): they are
  // skipped, and a view's output counts as the value it views.
  std::vector<uint8_t> view(n);
  for (size_t i = 0; i < n; ++i) view[i] = RunsAsView(graph, graph.node(static_cast<NodeId>(i)));
  std::vector<size_t> roots(num_values);
  for (size_t v = 0; v < num_values; ++v)
    roots[v] = static_cast<size_t>(ViewRoot(graph, static_cast<ValueId>(v)));
  auto root = [&](ValueId v) { return roots[static_cast<size_t>(v)]; };
  auto on_device = [&](size_t i) { return runs_here.empty() || runs_here[i] != 0; };
  auto here = [&](size_t i) { return on_device(i) && !view[i]; };
  std::vector<uint8_t> graph_input(num_values);
  for (ValueId v : graph.inputs()) graph_input[root(v)] = 1;

  // The device's arena, requested as the engine requests it: per node in
  // order, a buffer for each input another device made (its copy), then one
  // per output; a buffer lives until its last reader here, or the first
  // reader elsewhere (the copy out reads it), or past the end for a graph
  // output. Graph inputs are the caller's memory, constants the model's.
  std::vector<BufferRequest> requests;
  std::vector<size_t> request_of(num_values, kNoRequest);  // by root value
  std::vector<uint8_t> copied_out(num_values);
  for (size_t i = 0; i < n; ++i) {
    if (view[i]) continue;
    const Node& node = graph.node(static_cast<NodeId>(i));
    const int step = static_cast<int>(i);
    for (ValueId in : node.inputs) {
      if (in == kNoValue || graph.IsConstant(in) || graph_input[root(in)]) continue;
      size_t& q = request_of[root(in)];
      if (!on_device(i)) {
        if (q != kNoRequest && !copied_out[root(in)]) {
          copied_out[root(in)] = 1;
          requests[q].last_step = std::max(requests[q].last_step, step);
        }
        continue;
      }
      if (q == kNoRequest) {
        q = requests.size();
        requests.push_back({static_cast<size_t>(ValueBytes(graph, in)), step, step});
      }
      requests[q].last_step = std::max(requests[q].last_step, step);
    }
    if (!on_device(i)) continue;
    for (ValueId out : node.outputs) {
      if (out == kNoValue || graph.IsConstant(out)) continue;
      request_of[root(out)] = requests.size();
      requests.push_back({static_cast<size_t>(ValueBytes(graph, out)), step, step});
    }
  }
  for (ValueId out : graph.outputs())
    if (out != kNoValue && request_of[root(out)] != kNoRequest)
      requests[request_of[root(out)]].last_step = static_cast<int>(n);
  const MemoryPlan arena = PlanMemory(requests);


  // A run that touches no more than the last level holds stays in it.
  double footprint = static_cast<double>(arena.arena_bytes);
  {
    std::vector<uint8_t> counted(num_values);
    for (size_t i = 0; i < n; ++i) {
      if (!here(i)) continue;
      for (ValueId in : graph.node(static_cast<NodeId>(i)).inputs)
        if (in != kNoValue && request_of[root(in)] == kNoRequest && !counted[root(in)]) {
          counted[root(in)] = 1;
          footprint += ValueBytes(graph, in);
        }
    }
  }
  const double llc = llc_bytes > 0 && footprint > llc_bytes ? llc_bytes : 0;
  const double limit = std::max(cache_bytes, llc);
  if (!(limit > 0)) return cold;

  // Distinct bytes the nodes strictly between `from` and `to` touched,
  // walking back from `to` and on through the previous run's end when
  // from >= to (from == -1: from the start of this run), until over `limit`.
  const size_t pages = (arena.arena_bytes + kPageBytes - 1) / kPageBytes;
  std::vector<int64_t> page_walk(pages, -1);  // the walk whose lines page_lines holds
  std::vector<uint64_t> page_lines(pages * kWordsPerPage);
  std::vector<int64_t> value_seen(num_values, -1);
  int64_t walk = 0;
  auto touch = [&](ValueId v) {
    const size_t r = root(v);
    const size_t q = request_of[r];
    if (q == kNoRequest || requests[q].bytes == 0) {
      if (value_seen[r] == walk) return 0.0;
      value_seen[r] = walk;
      return ValueBytes(graph, v);
    }
    const size_t first = arena.offsets[q] / kLineBytes;
    const size_t end = (arena.offsets[q] + requests[q].bytes + kLineBytes - 1) / kLineBytes;
    size_t added = 0;
    for (size_t line = first; line < end;) {
      const size_t page = line * kLineBytes / kPageBytes;
      uint64_t* words = &page_lines[page * kWordsPerPage];
      if (page_walk[page] != walk) {
        page_walk[page] = walk;
        std::fill(words, words + kWordsPerPage, 0);
      }
      const size_t word = line / 64 % kWordsPerPage;
      const size_t bit = line % 64;
      const size_t count = std::min<size_t>(64 - bit, end - line);
      const uint64_t mask = (count == 64 ? ~uint64_t{0} : ((uint64_t{1} << count) - 1)) << bit;
      added += static_cast<size_t>(std::popcount(mask & ~words[word]));
      words[word] |= mask;
      line += count;
    }
    return static_cast<double>(added * kLineBytes);
  };
  auto bytes_between = [&](int64_t from, int64_t to) {
    ++walk;
    double sum = 0;
    const int64_t steps = from < to ? to - from - 1 : to + static_cast<int64_t>(n) - from - 1;
    for (int64_t k = 1; k <= steps && sum <= limit; ++k) {
      const int64_t j = (to - k + static_cast<int64_t>(n)) % static_cast<int64_t>(n);
      if (!here(static_cast<size_t>(j))) continue;
      const Node& between = graph.node(static_cast<NodeId>(j));
      for (const std::vector<ValueId>* values : {&between.inputs, &between.outputs})
        for (ValueId v : *values)
          if (v != kNoValue) sum += touch(v);
    }
    return sum;
  };
  auto add = [&](ColdBytes& c, double bytes, double since, bool written) {
    if (cache_bytes > 0 && since > cache_bytes) c.beyond_cache += bytes;
    if (llc > 0 && since > llc) {
      c.beyond_llc += bytes;
      if (written) c.beyond_llc_written += bytes;
    }
  };

  // Per root value: the node that last touched it in this run so far, and
  // its last reader here (where the previous run last touched a graph input).
  std::vector<int64_t> last_touch(num_values, -1);
  std::vector<int64_t> last_reader(num_values, -1);
  for (size_t i = 0; i < n; ++i)
    if (here(i))
      for (ValueId in : graph.node(static_cast<NodeId>(i)).inputs)
        if (in != kNoValue) last_reader[root(in)] = static_cast<int64_t>(i);

  struct Holder {  // an arena byte range's last value before this output
    size_t begin, end;
    int64_t touched;   // node index; >= i: in the previous run
    int64_t distance;  // nodes back from i to that touch
  };
  std::vector<Holder> holders;
  std::vector<size_t> cuts;
  for (size_t i = 0; i < n; ++i) {
    if (!here(i)) continue;
    const int64_t at = static_cast<int64_t>(i);
    const Node& node = graph.node(static_cast<NodeId>(i));
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const ValueId in = node.inputs[k];
      if (in == kNoValue || graph.IsConstant(in) || RepeatsEarlierInput(node, k)) continue;
      const int64_t last = last_touch[root(in)];
      const NodeId producer = graph.value(static_cast<ValueId>(root(in))).producer;
      // Made on another device and not read here yet: it arrives by a copy,
      // which OpWork::copied_bytes prices.
      if (last < 0 && producer != kNoNode && !here(static_cast<size_t>(producer))) continue;
      const double bytes = ValueBytes(graph, in);
      if (last >= 0) {
        add(cold[i], bytes, bytes_between(last, at), false);
      } else {
        // A graph input: the caller wrote it before the run (beyond the
        // cache tier); the previous run's reads were its last touch.
        if (cache_bytes > 0) cold[i].beyond_cache += bytes;
        if (llc > 0 && bytes_between(last_reader[root(in)], at) > llc) cold[i].beyond_llc += bytes;
      }
    }
    for (ValueId out : node.outputs) {
      if (out == kNoValue || graph.IsConstant(out)) continue;
      const size_t q = request_of[root(out)];
      if (q == kNoRequest || requests[q].bytes == 0) continue;
      const size_t begin = arena.offsets[q], end = begin + requests[q].bytes;
      auto distance_to = [&](int64_t touched) {
        return touched < at ? at - touched : at - touched + static_cast<int64_t>(n);
      };
      // Its own bytes were last touched by itself in the previous run; the
      // values that shared them (lifetimes apart) may have been since.
      holders.clear();
      holders.push_back({begin, end, requests[q].last_step, distance_to(requests[q].last_step)});
      for (size_t t = 0; t < requests.size(); ++t) {
        if (t == q || requests[t].bytes == 0) continue;
        const size_t b = std::max(begin, arena.offsets[t]);
        const size_t e = std::min(end, arena.offsets[t] + requests[t].bytes);
        if (b < e) holders.push_back({b, e, requests[t].last_step, distance_to(requests[t].last_step)});
      }
      cuts.clear();
      for (const Holder& h : holders) {
        cuts.push_back(h.begin);
        cuts.push_back(h.end);
      }
      std::sort(cuts.begin(), cuts.end());
      cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
      // Per piece between cuts: the holder touched most recently.
      int64_t memo_touch = -2;
      double memo_since = 0;
      for (size_t c = 0; c + 1 < cuts.size(); ++c) {
        const Holder* latest = nullptr;
        for (const Holder& h : holders)
          if (h.begin <= cuts[c] && cuts[c + 1] <= h.end &&
              (latest == nullptr || h.distance < latest->distance))
            latest = &h;
        if (latest == nullptr) continue;
        if (latest->touched != memo_touch) {
          memo_touch = latest->touched;
          // Touched after the previous run (a graph output): from its end.
          memo_since = bytes_between(
              latest->touched >= static_cast<int64_t>(n) ? -1 : latest->touched, at);
        }
        add(cold[i], static_cast<double>(cuts[c + 1] - cuts[c]), memo_since, true);
      }
    }
    for (ValueId in : node.inputs)
      if (in != kNoValue) last_touch[root(in)] = at;
    for (ValueId out : node.outputs)
      if (out != kNoValue) last_touch[root(out)] = at;
  }
  return cold;
}

}  // namespace braid
