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

// The host arena as engine_compile.cc builds it (EngineBuilder::Build,
// Ensure, AddCopy, Read): see HostArenaMirror.
struct Mirror {
  std::vector<uint8_t> on_host;     // per node: planned on the host
  std::vector<uint8_t> alias_view;  // per node: a view on the host of an arena buffer
  std::vector<size_t> root;         // per value: the value whose buffer holds it here
  std::vector<BufferRequest> requests;
  std::vector<ValueId> request_value;  // per request (kNoValue: an output's own slot)
  std::vector<size_t> request_of;      // per root value, or kNoRequest
  // Per request: the last node elsewhere a copy read its buffer for (the
  // copy runs just before it), or -1. A buffer's copies all fall in its
  // life, which no later writer of its bytes shares: the last is the latest.
  std::vector<int> copied_out_for;
  MemoryPlan plan;
};

Mirror BuildMirror(const Graph& graph, std::span<const uint8_t> runs_here) {
  const size_t n = static_cast<size_t>(graph.num_nodes());
  const size_t num_values = static_cast<size_t>(graph.num_values());
  Mirror m;
  m.on_host.assign(n, 1);
  if (runs_here.size() == n)
    for (size_t i = 0; i < n; ++i) m.on_host[i] = runs_here[i] != 0;
  m.alias_view.assign(n, 0);
  m.root.resize(num_values);
  for (size_t v = 0; v < num_values; ++v) m.root[v] = v;
  m.request_of.assign(num_values, kNoRequest);
  std::vector<uint8_t> graph_input(num_values);
  for (ValueId v : graph.inputs()) graph_input[static_cast<size_t>(v)] = 1;
  std::vector<uint8_t> copied_out(num_values);
  auto add_request = [&](ValueId value, size_t bytes, int first, int last) {
    m.requests.push_back({bytes, first, last});
    m.request_value.push_back(value);
    m.copied_out_for.push_back(-1);
    return m.requests.size() - 1;
  };
  // The value's home is the host: made by a host node (graph inputs are the
  // caller's memory, constants the model's: no buffer here).
  auto made_here = [&](size_t v) {
    const NodeId producer = graph.value(static_cast<ValueId>(v)).producer;
    return producer != kNoNode && m.on_host[static_cast<size_t>(producer)] != 0;
  };
  for (size_t i = 0; i < n; ++i) {
    const Node& node = graph.node(static_cast<NodeId>(i));
    const int step = static_cast<int>(i);
    for (ValueId in : node.inputs) {
      if (in == kNoValue || graph.IsConstant(in)) continue;
      const size_t r = m.root[static_cast<size_t>(in)];
      if (graph_input[r]) continue;
      size_t& q = m.request_of[r];
      if (!m.on_host[i]) {
        // Its copy to the other device reads the host buffer, once per value
        // (each view of a buffer is copied as a value of its own, also a
        // host view of a value made elsewhere); a value made elsewhere is
        // read there from its own memory.
        if (q != kNoRequest && made_here(static_cast<size_t>(in)) &&
            !copied_out[static_cast<size_t>(in)]) {
          copied_out[static_cast<size_t>(in)] = 1;
          m.requests[q].last_step = std::max(m.requests[q].last_step, step);
          m.copied_out_for[q] = std::max(m.copied_out_for[q], step);
        }
        continue;
      }
      if (q == kNoRequest) q = add_request(static_cast<ValueId>(r),
                                           static_cast<size_t>(ValueBytes(graph, in)), step, step);
      m.requests[q].last_step = std::max(m.requests[q].last_step, step);
    }
    if (!m.on_host[i]) continue;
    // A view of a buffer of this arena holds no bytes of its own (the
    // engine's views of a graph input or a constant are copies).
    if (RunsAsView(graph, node) && !node.inputs.empty() && node.inputs[0] != kNoValue &&
        !node.outputs.empty() && node.outputs[0] != kNoValue &&
        m.request_of[m.root[static_cast<size_t>(node.inputs[0])]] != kNoRequest) {
      m.alias_view[i] = 1;
      m.root[static_cast<size_t>(node.outputs[0])] = m.root[static_cast<size_t>(node.inputs[0])];
      continue;
    }
    for (ValueId out : node.outputs) {
      if (out == kNoValue || graph.IsConstant(out)) continue;
      m.request_of[static_cast<size_t>(out)] =
          add_request(out, static_cast<size_t>(ValueBytes(graph, out)), step, step);
    }
  }
  // Graph outputs live past the last node; one made elsewhere is copied
  // back, one that is a graph input or a constant gets bytes of its own.
  const int end = static_cast<int>(n);
  for (ValueId out : graph.outputs()) {
    if (out == kNoValue) continue;
    const size_t r = m.root[static_cast<size_t>(out)];
    const size_t bytes = static_cast<size_t>(ValueBytes(graph, out));
    if (graph.IsConstant(out) || graph_input[r]) {
      add_request(kNoValue, bytes, 0, end);
      continue;
    }
    if (m.request_of[r] == kNoRequest)
      m.request_of[r] = add_request(static_cast<ValueId>(r), bytes, end, end);
    m.requests[m.request_of[r]].last_step = end;
  }
  m.plan = PlanMemory(m.requests);
  return m;
}

}  // namespace

std::vector<ArenaBuffer> HostArenaMirror(const Graph& graph, std::span<const uint8_t> runs_here) {
  const Mirror m = BuildMirror(graph, runs_here);
  std::vector<ArenaBuffer> out;
  for (size_t q = 0; q < m.requests.size(); ++q)
    out.push_back({m.request_value[q], m.plan.offsets[q], m.requests[q].bytes,
                   m.requests[q].first_step, m.requests[q].last_step});
  return out;
}

std::vector<ColdBytes> ColdBytesPerNode(const Graph& graph, double cache_bytes, double llc_bytes,
                                        std::span<const uint8_t> runs_here,
                                        std::span<const uint8_t> on_host_cores) {
  const size_t n = static_cast<size_t>(graph.num_nodes());
  const size_t num_values = static_cast<size_t>(graph.num_values());
  std::vector<ColdBytes> cold(n);
  if (!(cache_bytes > 0) && !(llc_bytes > 0)) return cold;
  const Mirror m = BuildMirror(graph, runs_here);
  const std::vector<BufferRequest>& requests = m.requests;
  const std::vector<size_t>& offsets = m.plan.offsets;
  auto root = [&](ValueId v) { return m.root[static_cast<size_t>(v)]; };
  // Nodes that run a kernel on the host (a view of an arena buffer runs none
  // and touches nothing).
  auto here = [&](size_t i) { return m.on_host[i] != 0 && m.alias_view[i] == 0; };
  auto buffer_of = [&](ValueId v) {
    const size_t q = m.request_of[root(v)];
    return q != kNoRequest && requests[q].bytes > 0 ? q : kNoRequest;
  };

  // A run that touches no more than the last level holds stays in it.
  double footprint = static_cast<double>(m.plan.arena_bytes);
  {
    std::vector<uint8_t> counted(num_values);
    for (size_t i = 0; i < n; ++i) {
      if (!here(i)) continue;
      for (ValueId in : graph.node(static_cast<NodeId>(i)).inputs)
        if (in != kNoValue && buffer_of(in) == kNoRequest && !counted[root(in)]) {
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
  const size_t pages = (m.plan.arena_bytes + kPageBytes - 1) / kPageBytes;
  std::vector<int64_t> page_walk(pages, -1);  // the walk whose lines page_lines holds
  std::vector<uint64_t> page_lines(pages * kWordsPerPage);
  std::vector<int64_t> value_seen(num_values, -1);
  int64_t walk = 0;
  auto touch = [&](ValueId v) {
    const size_t q = buffer_of(v);
    if (q == kNoRequest) {
      if (value_seen[root(v)] == walk) return 0.0;
      value_seen[root(v)] = walk;
      return ValueBytes(graph, v);
    }
    const size_t first = offsets[q] / kLineBytes;
    const size_t end = (offsets[q] + requests[q].bytes + kLineBytes - 1) / kLineBytes;
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
    const int64_t nodes = static_cast<int64_t>(n);
    const int64_t steps = from < to ? to - from - 1 : to + nodes - from - 1;
    for (int64_t k = 1; k <= steps && sum <= limit; ++k) {
      const size_t j = static_cast<size_t>((to - k + nodes) % nodes);
      if (!here(j)) continue;
      const Node& between = graph.node(static_cast<NodeId>(j));
      for (const std::vector<ValueId>* values : {&between.inputs, &between.outputs})
        for (ValueId v : *values)
          if (v != kNoValue) sum += touch(v);
    }
    return sum;
  };
  // The share of the lines a copy read for node `copied_for` that its
  // thread's core still holds at node `to`: 1 - the distinct non-constant
  // bytes (by value) that core's nodes touched from `copied_for` on, over
  // cache_bytes (the other core's cache is the host's size); 0 for a copy
  // no host core made.
  auto on_other_core = [&](size_t j) {
    return on_host_cores.size() == n && on_host_cores[j] != 0 && !m.on_host[j];
  };
  std::vector<int64_t> value_seen_elsewhere(num_values, -1);
  int64_t walk_elsewhere = 0;
  auto held_elsewhere_share = [&](int64_t copied_for, int64_t to) {
    if (!(cache_bytes > 0) || !on_other_core(static_cast<size_t>(copied_for))) return 0.0;
    ++walk_elsewhere;
    double sum = 0;
    const int64_t nodes = static_cast<int64_t>(n);
    const int64_t from = copied_for - 1;
    const int64_t steps = from < to ? to - from - 1 : to + nodes - from - 1;
    for (int64_t k = 1; k <= steps && sum < cache_bytes; ++k) {
      const size_t j = static_cast<size_t>((to - k + nodes) % nodes);
      if (!on_other_core(j)) continue;
      const Node& there = graph.node(static_cast<NodeId>(j));
      for (const std::vector<ValueId>* values : {&there.inputs, &there.outputs})
        for (ValueId v : *values) {
          if (v == kNoValue || graph.IsConstant(v)) continue;
          int64_t& seen = value_seen_elsewhere[static_cast<size_t>(v)];
          if (seen == walk_elsewhere) continue;
          seen = walk_elsewhere;
          sum += ValueBytes(graph, v);
        }
    }
    return std::max(0.0, 1.0 - sum / cache_bytes);
  };
  auto add = [&](ColdBytes& c, double bytes, double since, bool written) {
    if (cache_bytes > 0 && since > cache_bytes) {
      c.beyond_cache += bytes;
      if (written) c.written_beyond_cache += bytes;
    }
    if (llc > 0 && since > llc) {
      c.beyond_llc += bytes;
      if (written) c.written_beyond_llc += bytes;
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
    size_t request;
    int64_t touched;  // node index; >= the output's node: in the previous run
    int64_t age;      // twice the nodes back to that touch (+1: after a run)
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
      const size_t q = buffer_of(out);
      if (q == kNoRequest) continue;
      const size_t begin = offsets[q], end = begin + requests[q].bytes;
      // Ages order the touches: this run's first (node 0: 2 * at back), then
      // after the previous run (a graph output read by the caller), then the
      // previous run's nodes, latest first.
      auto age_of = [&](int64_t touched) {
        if (touched < at) return 2 * (at - touched);
        if (touched >= static_cast<int64_t>(n)) return 2 * at + 1;
        return 2 * (at - touched + static_cast<int64_t>(n));
      };
      // Its own bytes were last touched by itself in the previous run; the
      // values that shared them (lifetimes apart) may have been since.
      holders.clear();
      holders.push_back({begin, end, q, requests[q].last_step, age_of(requests[q].last_step)});
      for (size_t t = 0; t < requests.size(); ++t) {
        if (t == q || requests[t].bytes == 0) continue;
        const size_t b = std::max(begin, offsets[t]);
        const size_t e = std::min(end, offsets[t] + requests[t].bytes);
        if (b < e)
          holders.push_back({b, e, t, requests[t].last_step, age_of(requests[t].last_step)});
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
      size_t memo_copied = kNoRequest;
      double memo_held = 0;
      for (size_t c = 0; c + 1 < cuts.size(); ++c) {
        const Holder* latest = nullptr;
        for (const Holder& h : holders)
          if (h.begin <= cuts[c] && cuts[c + 1] <= h.end &&
              (latest == nullptr || h.age < latest->age))
            latest = &h;
        if (latest == nullptr) continue;
        if (latest->touched != memo_touch) {
          memo_touch = latest->touched;
          // Touched after the previous run (a graph output): from its end.
          memo_since = bytes_between(
              latest->touched >= static_cast<int64_t>(n) ? -1 : latest->touched, at);
        }
        const double piece = static_cast<double>(cuts[c + 1] - cuts[c]);
        add(cold[i], piece, memo_since, true);
        if (const int copied_for = m.copied_out_for[latest->request]; copied_for >= 0) {
          if (latest->request != memo_copied) {
            memo_copied = latest->request;
            memo_held = held_elsewhere_share(copied_for, at);
          }
          cold[i].written_held_elsewhere += piece * memo_held;
        }
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
