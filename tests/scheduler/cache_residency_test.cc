#include "scheduler/cache_residency.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "graph/op_schema.h"
#include "tests/scheduler/sim_test_util.h"

namespace braid {
namespace {

// Values of 1024 floats: 4096 bytes, 64 whole cache lines.
constexpr int64_t kElements = 1024;
constexpr double kBytes = 4096;

std::vector<double> BeyondCache(const std::vector<ColdBytes>& cold) {
  std::vector<double> out;
  for (const ColdBytes& c : cold) out.push_back(c.beyond_cache);
  return out;
}
std::vector<double> BeyondLlc(const std::vector<ColdBytes>& cold) {
  std::vector<double> out;
  for (const ColdBytes& c : cold) out.push_back(c.beyond_llc);
  return out;
}

// x -> n0 -> a -> n1 -> b -> n2 -> c, then add(a, c, c) -> out (a graph
// output). The arena, as the engine plans it: a at 0, b at 4096, c at 8192,
// and out on b's bytes (b is dead by then).
testing::TinyGraph Chain() {
  testing::TinyGraph t;
  const ValueId x = t.Input("x", kElements);
  const ValueId a = t.Op("n0", {x}, 1, kElements);
  const ValueId b = t.Op("n1", {a}, 1, kElements);
  const ValueId c = t.Op("n2", {b}, 1, kElements);
  t.Output(t.Op("add", {a, c, c}, 1, kElements, "Add"));  // c twice: counted once
  return t;
}

TEST(CacheResidencyTest, TheMirroredArenaOfChain) {
  // The engine's requests for Chain() (a buffer per output, alive to its
  // last reader; the graph output to the end) placed by PlanMemory: what the
  // walks below rely on. tests/engine/arena_mirror_test.cc compares the
  // mirror with the engine's own layout on real models and mixed plans.
  testing::TinyGraph t = Chain();
  const std::vector<ArenaBuffer> arena = HostArenaMirror(t.graph());
  ASSERT_EQ(arena.size(), 4u);
  std::vector<size_t> offsets;
  std::vector<std::pair<int, int>> lives;
  for (const ArenaBuffer& b : arena) {
    offsets.push_back(b.offset);
    lives.push_back({b.first_node, b.last_node});
  }
  EXPECT_EQ(offsets, (std::vector<size_t>{0, 4096, 8192, 4096}));
  EXPECT_EQ(lives, (std::vector<std::pair<int, int>>{{0, 3}, {1, 2}, {2, 3}, {3, 4}}));
}

TEST(CacheResidencyTest, InputsAndOutputsAgeByTheDistinctBytesTouchedSince) {
  testing::TinyGraph t = Chain();
  const Graph& g = t.graph();
  // Per node, with a cache of 8192 bytes:
  // n0: x, written by the caller, is cold; a's bytes were last touched by
  //     the previous run's add just before: warm.
  // n1: b lands on out's bytes, last touched after the previous run; since
  //     then n0 touched x and a (8192): still held.
  // n2: c's bytes were last touched by the previous run's add; since then
  //     n0 and n1 touched x, a and b (12288): cold.
  // add: a, last read by n1, then b and c (8192): held; out on b's bytes,
  //     b read by n2 just before: warm.
  EXPECT_EQ(BeyondCache(ColdBytesPerNode(g, 8192, 0)),
            (std::vector<double>{kBytes, 0, kBytes, 0}));
  // One byte less: n1's output and the add's a go cold too.
  const std::vector<ColdBytes> at_8191 = ColdBytesPerNode(g, 8191, 0);
  EXPECT_EQ(BeyondCache(at_8191), (std::vector<double>{kBytes, kBytes, kBytes, kBytes}));
  // The outputs' part: n1's b and n2's c (x and a are inputs).
  std::vector<double> written;
  for (const ColdBytes& c : at_8191) written.push_back(c.written_beyond_cache);
  EXPECT_EQ(written, (std::vector<double>{0, kBytes, kBytes, 0}));
  // The whole run fits: only the caller's x.
  EXPECT_EQ(BeyondCache(ColdBytesPerNode(g, 12288, 0)), (std::vector<double>{kBytes, 0, 0, 0}));
  // No cache: nothing is modelled cold.
  EXPECT_EQ(BeyondCache(ColdBytesPerNode(g, 0, 0)), (std::vector<double>{0, 0, 0, 0}));
  for (const ColdBytes& c : ColdBytesPerNode(g, 8191, 0)) EXPECT_EQ(c.beyond_llc, 0);
}

TEST(CacheResidencyTest, TheLastLevelCountsThePreviousRunForGraphInputs) {
  testing::TinyGraph t = Chain();
  const Graph& g = t.graph();
  // The run touches 16384 bytes (x and the 12288-byte arena). With a last
  // level of 12287: x was last read by the previous run's n0, a whole run
  // (12288 bytes) ago: from DRAM; c's bytes likewise (12288 since the
  // previous add). Everything else is within it.
  const std::vector<ColdBytes> llc = ColdBytesPerNode(g, 1, 12287);
  EXPECT_EQ(BeyondLlc(llc), (std::vector<double>{kBytes, 0, kBytes, 0}));
  EXPECT_EQ(llc[0].written_beyond_llc, 0);       // x, an input
  EXPECT_EQ(llc[2].written_beyond_llc, kBytes);  // c, the output
  // The output's part alone: n0's x goes, n2's c stays.
  EXPECT_EQ(llc[0].Written().beyond_llc, 0);
  EXPECT_EQ(llc[2].Written().beyond_llc, kBytes);
  EXPECT_EQ(llc[2].Written().written_beyond_llc, kBytes);
  EXPECT_EQ(BeyondLlc(ColdBytesPerNode(g, 1, 12288)), (std::vector<double>{0, 0, 0, 0}));
  // A run that fits the last level never leaves it.
  EXPECT_EQ(BeyondLlc(ColdBytesPerNode(g, 1, 16384)), (std::vector<double>{0, 0, 0, 0}));
  // The cache tier is independent of it.
  EXPECT_EQ(BeyondCache(ColdBytesPerNode(g, 8192, 12287)),
            (std::vector<double>{kBytes, 0, kBytes, 0}));
}

TEST(CacheResidencyTest, NodesElsewhereTouchNothingHereAndTheirValuesAreCopiedIn) {
  testing::TinyGraph t = Chain();
  const Graph& g = t.graph();
  // n2 runs elsewhere: it touches nothing here (a stays warm for the add),
  // c arrives by a copy (OpWork::copied_bytes prices it, not this) into a
  // buffer of its own, at 4096 (b is dead by then) and out at 8192.
  // n1: b lands on c's copy, made for the previous run's add; since then n0
  //     touched x and a (8192 > 8191): cold.
  // add: out's bytes were last touched after the previous run; since then
  //     n0 and n1 touched x, a and b: cold.
  EXPECT_EQ(BeyondCache(ColdBytesPerNode(g, 8191, 0, std::vector<uint8_t>{1, 1, 0, 1})),
            (std::vector<double>{kBytes, kBytes, 0, kBytes}));
  // n0 elsewhere: a is copied in for n1 (not counted there) into the bytes
  // a had, then ages like any value here: b and c pushed it out before the
  // add. b lands on out's bytes as before, and nothing here ran since the
  // previous run's end: warm.
  EXPECT_EQ(BeyondCache(ColdBytesPerNode(g, 8191, 0, std::vector<uint8_t>{0, 1, 1, 1})),
            (std::vector<double>{0, 0, kBytes, kBytes}));
}

// n0: x -> a (here); n1: a, w -> b (elsewhere: a is copied out for it); n2:
// x -> c (here, on a's bytes: a's buffer lives until its copy); n3: b, c ->
// out (here, b copied in). w is a 64 KB constant n1 reads.
testing::TinyGraph CopiedOutThenRewritten() {
  testing::TinyGraph t;
  const ValueId x = t.Input("x", kElements);
  const ValueId a = t.Op("n0", {x}, 1, kElements);
  std::vector<uint8_t> weights(64 << 10, 1);
  const ValueId w = t.graph().AddConstant("w", DataType::kF32, {16 << 10},
                                          TensorData::Copy(weights.data(), weights.size()));
  const ValueId b = t.Op("n1", {a, w}, 1, kElements);
  const ValueId c = t.Op("n2", {x}, 1, kElements);
  t.Output(t.Op("n3", {b, c}, 1, kElements, "Add"));
  return t;
}

TEST(CacheResidencyTest, OutputsOnLinesACopyReadAreHeldByItsThread) {
  testing::TinyGraph t = CopiedOutThenRewritten();
  const Graph& g = t.graph();
  const std::vector<uint8_t> placement = {1, 0, 1, 1};
  const std::vector<uint8_t> vgpu = {0, 1, 0, 0};  // n1's device copies on a host core
  const std::vector<ArenaBuffer> arena = HostArenaMirror(g, placement);
  ASSERT_EQ(arena.size(), 4u);  // a, c, b's copy in, out
  ASSERT_EQ(g.value(arena[0].value).name, "n0_out");
  ASSERT_EQ(g.value(arena[1].value).name, "n2_out");
  ASSERT_EQ(arena[1].offset, arena[0].offset) << "c should land on a's bytes";
  // Between the copy (for n1) and n2, the node elsewhere touched a's copy
  // and b: 8192 bytes, and not its 64 KB weight. Of a cache of 32 KB, a
  // quarter is displaced: 3072 of c's 4096 bytes are still held there.
  auto held = [&](double cache_bytes) {
    std::vector<double> out;
    for (const ColdBytes& c : ColdBytesPerNode(g, cache_bytes, 0, placement, vgpu))
      out.push_back(c.written_held_elsewhere);
    return out;
  };
  EXPECT_EQ(held(32768), (std::vector<double>{0, 0, 3072, 0}));
  EXPECT_EQ(held(16384), (std::vector<double>{0, 0, 2048, 0}));
  // A cache no larger than what it touched: nothing held.
  EXPECT_EQ(held(8192), (std::vector<double>{0, 0, 0, 0}));
  EXPECT_EQ(ColdBytesPerNode(g, 32768, 0, placement, vgpu)[2].Written().written_held_elsewhere,
            3072);
  // n1 on a device whose copies a DMA engine makes: no line is held.
  for (const ColdBytes& c : ColdBytesPerNode(g, 32768, 0, placement))
    EXPECT_EQ(c.written_held_elsewhere, 0);
  // All on the host: no copy, nothing held elsewhere.
  for (const ColdBytes& c : ColdBytesPerNode(g, 32768, 0))
    EXPECT_EQ(c.written_held_elsewhere, 0);
  // n1 on the host too, n2 elsewhere: c is made elsewhere, nothing here
  // writes a's bytes after a copy read them.
  for (const ColdBytes& c :
       ColdBytesPerNode(g, 32768, 0, std::vector<uint8_t>{1, 1, 0, 1},
                        std::vector<uint8_t>{0, 0, 1, 0}))
    EXPECT_EQ(c.written_held_elsewhere, 0);
}

TEST(CacheResidencyTest, TheLatestCopyOfABufferDatesItsHeldLines) {
  // x -> n0 -> a (here); views va = Reshape(a) read by n1 (elsewhere) and
  // vb = Flatten(a) read by n2 (elsewhere, later): each view is copied on
  // its own, so a's lines were read for n1 and again for n2. n3: x -> c
  // (here) lands on a's bytes. Since the copy for n2, the other core's
  // nodes touched vb's copy and n2's output (8192): half of 16 KB is held.
  // Dated from the first copy (n1), n1's 8192 would count too: nothing.
  testing::TinyGraph t;
  const ValueId x = t.Input("x", kElements);
  const ValueId a = t.Op("n0", {x}, 1, kElements);
  const ValueId va = t.Op("view_a", {a}, 0, kElements, "Reshape");
  const ValueId vb = t.Op("view_b", {a}, 0, kElements, "Flatten");
  const ValueId b = t.Op("n1", {va}, 1, kElements);
  const ValueId d = t.Op("n2", {vb}, 1, kElements);
  const ValueId c = t.Op("n3", {x}, 1, kElements);
  t.Output(t.Op("n4", {b, d, c}, 1, kElements, "Sum"));
  const Graph& g = t.graph();
  ASSERT_TRUE(RunsAsView(g, g.node(1)) && RunsAsView(g, g.node(2)));
  const std::vector<uint8_t> placement = {1, 1, 1, 0, 0, 1, 1};
  const std::vector<uint8_t> vgpu = {0, 0, 0, 1, 1, 0, 0};
  const std::vector<ArenaBuffer> arena = HostArenaMirror(g, placement);
  ASSERT_GE(arena.size(), 2u);
  ASSERT_EQ(g.value(arena[0].value).name, "n0_out");
  ASSERT_EQ(arena[0].last_node, 4) << "a lives until its last copy out, for n2";
  ASSERT_EQ(g.value(arena[1].value).name, "n3_out");
  ASSERT_EQ(arena[1].offset, arena[0].offset);
  EXPECT_EQ(ColdBytesPerNode(g, 16384, 0, placement, vgpu)[5].written_held_elsewhere, 2048);
}

TEST(CacheResidencyTest, AViewIsTheValueItViews) {
  // Chain() with a view of a read by n1 and the add: the view runs no
  // kernel, touches nothing and writes nothing; its bytes are a's.
  testing::TinyGraph t;
  const ValueId x = t.Input("x", kElements);
  const ValueId a = t.Op("n0", {x}, 1, kElements);
  const ValueId v = t.Op("view", {a}, 0, kElements, "Reshape");
  const ValueId b = t.Op("n1", {v}, 1, kElements);
  const ValueId c = t.Op("n2", {b}, 1, kElements);
  t.Output(t.Op("add", {v, c}, 1, kElements, "Add"));
  const Graph& g = t.graph();
  ASSERT_TRUE(RunsAsView(g, g.node(1)));
  EXPECT_EQ(ViewRoot(g, v), a);
  // As without the view (Chain()), a 0 for it.
  EXPECT_EQ(BeyondCache(ColdBytesPerNode(g, 8192, 0)),
            (std::vector<double>{kBytes, 0, 0, kBytes, 0}));
  EXPECT_EQ(BeyondCache(ColdBytesPerNode(g, 8191, 0)),
            (std::vector<double>{kBytes, 0, kBytes, kBytes, kBytes}));
}

TEST(CacheResidencyTest, ARecycledBufferCountsOnce) {
  // n0 -> first, then a chain n1..n7 of 64-byte values, then add(first, n7).
  // The arena recycles two 64-byte slots for the chain (each value dies as
  // the next is written), so between first's last read (n1) and the add
  // the cache saw 128 distinct bytes, not the chain's 6 x 64.
  testing::TinyGraph t;
  ValueId v = t.Input("x", 16);
  const ValueId first = v = t.Op("n0", {v}, 1, 16);
  for (const char* name : {"n1", "n2", "n3", "n4", "n5", "n6", "n7"}) v = t.Op(name, {v}, 1, 16);
  t.Output(t.Op("add", {first, v}, 1, 16, "Add"));
  const Graph& g = t.graph();
  EXPECT_EQ(BeyondCache(ColdBytesPerNode(g, 128, 0)).back(), 0);
  EXPECT_EQ(BeyondCache(ColdBytesPerNode(g, 127, 0)).back(), 64);  // first
}

TEST(CacheResidencyTest, ThisRunsTouchIsNewerThanTheCallersAfterTheLastRun) {
  // n0: x -> d (8 KB, never read), n1: x -> e, n2: e -> out (a graph
  // output). out lands on d's upper 4 KB (e takes the lower half): those
  // bytes were last touched by n0 in this run, after the caller read the
  // previous run's out. Since n0: x and e (8192 bytes).
  testing::TinyGraph t;
  const ValueId x = t.Input("x", kElements);
  t.Op("n0", {x}, 1, 2 * kElements);
  const ValueId e = t.Op("n1", {x}, 1, kElements);
  t.Output(t.Op("n2", {e}, 1, kElements));
  const Graph& g = t.graph();
  const std::vector<ArenaBuffer> arena = HostArenaMirror(g);
  ASSERT_EQ(arena.size(), 3u);
  EXPECT_EQ(arena[2].offset, 4096u);  // out on d's upper half
  EXPECT_EQ(ColdBytesPerNode(g, 10000, 0)[2].beyond_cache, 0);
  EXPECT_EQ(ColdBytesPerNode(g, 8191, 0)[2].beyond_cache, kBytes);
}

TEST(CacheResidencyTest, EmptyGraphsAndEmptyValuesCountNothing) {
  Graph empty;
  EXPECT_TRUE(ColdBytesPerNode(empty, 1 << 20, 32 << 20).empty());
  EXPECT_TRUE(HostArenaMirror(empty).empty());
  // A zero-element value between two ops: no bytes, no buffer.
  testing::TinyGraph t;
  const ValueId x = t.Input("x", kElements);
  const ValueId nothing = t.Op("n0", {x}, 1, 0);
  t.Output(t.Op("n1", {nothing, x}, 1, kElements, "Add"));
  EXPECT_EQ(HostArenaMirror(t.graph()).size(), 2u);
  const std::vector<ColdBytes> cold = ColdBytesPerNode(t.graph(), 4096, 0);
  ASSERT_EQ(cold.size(), 2u);
  EXPECT_EQ(cold[0].beyond_cache, kBytes);  // x, written by the caller
  // x read by n0 just before; the output's bytes last held the previous
  // run's output, read by the caller, and only x (4096) passed since.
  EXPECT_EQ(cold[1].beyond_cache, 0);
  // A runs_here of another size counts as every node here.
  EXPECT_EQ(BeyondCache(ColdBytesPerNode(t.graph(), 4096, 0, std::vector<uint8_t>{0})),
            BeyondCache(cold));
}

}  // namespace
}  // namespace braid
