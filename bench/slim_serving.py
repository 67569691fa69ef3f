#!/usr/bin/env python3
"""Slim Scheduler serving benchmark (issue 31 item 5): routers compared side by side in one run.

    PYTHONPATH=build/python python3 bench/slim_serving.py --quick          # CI: < 2 minutes
    PYTHONPATH=build/python python3 bench/slim_serving.py                  # the figures in docs/serving.md
    python3 bench/slim_serving.py --only sim --save-router build/ppo.npz   # no braid needed

Part 1, SIMULATED cluster (serving/braid_serving/cluster_sim.py: the paper's 3
servers in shape, 2 fast + 1 at 0.42x; batch times from braid's segment
latencies): PPO routers trained offline on it, then every router on the same
seeded Poisson stream: the paper's Tables III-V (random baseline vs PPO at two
reward weightings) and the trade-off table per width policy.
Part 2, braid in-process: three nodes of real braid segment Sessions (cpu, vgpu,
vgpu orin-like padded 2.5x: different "devices", vgpu virtual, the padding
simulated), the greedy scheduler per node, the same routers under an open-loop
Poisson load. Energy is an ESTIMATE everywhere (no power sensor here); the
accuracy prior is the paper's CIFAR-100 table, not measured on braid.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "serving"))

import numpy as np  # noqa: E402

from braid_serving.accuracy import PAPER_LABEL  # noqa: E402
from braid_serving.cluster_sim import PAPER_LIKE_CLUSTER, ClusterSim, LatencyModel, estimate_capacity  # noqa: E402
from braid_serving.greedy import GreedyConfig  # noqa: E402
from braid_serving.router import (  # noqa: E402
    BALANCED,
    LATENCY_HEAVY,
    TAIL_AWARE,
    UNIFORM,
    WIDTH_CHOICES,
    LeastLoadedRouter,
    PPORouter,
    RandomRouter,
    RoundRobinRouter,
)

GROUP = 4  # the baselines' block size (PPO picks its own from 1, 2, 4, 8)


def fmt_row(name: str, s: dict[str, float]) -> str:
    return (f"{name:<34} {s['mean_ms']:>10.2f} {s['p50_ms']:>9.2f} {s['p99_ms']:>10.2f} {s['throughput_rps']:>9.1f} "
            f"{s['energy_j']:>10.3f} {100 * s['accuracy_prior']:>7.2f} {s['completed']:>6.0f} {s['rejected'] + s['failed']:>6.0f}")  # fmt: skip


HEADER = (f"{'router / width policy':<34} {'mean ms':>10} {'p50 ms':>9} {'p99 ms':>10} {'req/s':>9} "
          f"{'energy J*':>10} {'acc %**':>7} {'done':>6} {'lost':>6}")  # fmt: skip
FOOTER = ("  * estimate: the paper's E_t = mean server power x latency, power modelled from utilisation\n"
          f"  ** accuracy prior: {PAPER_LABEL}\n"
          "  lost = rejected (backpressure 'overloaded') + failed; every accepted request completes or fails")  # fmt: skip


def paper_table(title: str, s: dict[str, float], util_var_std: float) -> None:
    print(f"  {title}")
    print(f"    Accuracy prior (%)    {100 * s['accuracy_prior']:8.2f}")
    print(f"    Latency (ms)          {s['mean_ms']:8.3f}   sd {s['std_ms']:.3f}")
    print(f"    Energy (J, estimate)  {s['energy_j']:8.3f}   sd {s['energy_std_j']:.3f}")
    print(f"    Util Var              {s['util_var']:8.4f}   sd {util_var_std:.4f}")
    print(f"    Completed requests    {s['completed']:8.0f}   ({s['throughput_rps']:.1f} req/s)")


def train(sim: ClusterSim, router: PPORouter, rate: float, episodes: int, n: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    for ep in range(episodes):  # loads from light to past the baseline's saturation
        sim.run(router, rate=rate * rng.uniform(0.3, 1.0), n_requests=n, max_time=60.0, seed=seed * 1000 + ep)
    router.flush()
    router.training = False
    return time.perf_counter() - t0


def sim_part(args: argparse.Namespace) -> dict[str, PPORouter]:
    latency = LatencyModel.default()
    if args.measure:
        import braid

        latency = LatencyModel.measure(braid.SlimmableModel("builtin:slim_resnet"), threads=1)
    sim = ClusterSim(PAPER_LIKE_CLUSTER, latency, GreedyConfig(b_max=8, t_idle=1.0, q_th=16, n_new=2, max_queue=1024))
    capacity = estimate_capacity(PAPER_LIKE_CLUSTER, latency, WIDTH_CHOICES, GROUP)
    rate = args.load * capacity
    episodes, n_train, n_eval = (4, 1500, 2000) if args.quick else (10, 3000, 5000)
    print(f"== Part 1: SIMULATED cluster: {', '.join(f'{s.name} (speed {s.speed})' for s in PAPER_LIKE_CLUSTER)}")
    print(f"   batch times: {latency.source}; Poisson {rate:.0f} req/s ({args.load:.2f} x the random mix's "
          f"estimated capacity), {n_eval} requests, seed {args.seed}")  # fmt: skip

    routers: dict[str, PPORouter] = {}
    specs = [("ppo latency-heavy", None, LATENCY_HEAVY), ("ppo balanced", None, BALANCED)]
    specs += [(f"ppo @ {w}", w, LATENCY_HEAVY if args.paper_router else TAIL_AWARE) for w in (1.0, 0.75, 0.5, 0.25)]
    for name, width, weights in specs:
        if args.load_router and name == "ppo latency-heavy":
            routers[name] = PPORouter.load(args.load_router, weights=weights)
            routers[name].training = False
            continue
        widths = WIDTH_CHOICES if width is None else (UNIFORM[width],)
        if width is None or args.paper_router:  # the paper's state, reward and update size; sampled at evaluation
            router = PPORouter(len(PAPER_LIKE_CLUSTER), widths=widths, weights=weights, seed=args.seed,
                               expected_wait=False)  # fmt: skip
        else:  # + expected wait per server (shared per-server score), tail-aware reward, argmax at evaluation
            router = PPORouter(len(PAPER_LIKE_CLUSTER), widths=widths, weights=weights, seed=args.seed,
                               update_every=128, lr=3e-3)  # fmt: skip
        eps = episodes * 2 if width is None else episodes  # the width head needs more episodes
        secs = train(sim, router, rate, eps, n_train, args.seed + 1)
        if width is not None and not args.paper_router:
            router.eval_mode = "greedy"
        print(f"   trained {name}: {eps} episodes x {n_train} requests, {router.updates} PPO updates, {secs:.1f} s")
        routers[name] = router
    if args.save_router:
        routers["ppo latency-heavy"].save(args.save_router)
        print(f"   saved the latency-heavy router to {args.save_router}")

    def run(router: object, seed: int = args.seed) -> tuple[dict[str, float], float]:
        res = sim.run(router, rate=rate, n_requests=n_eval, max_time=60.0, seed=seed)  # type: ignore[arg-type]
        return res.summary(), float(np.std(res.util_var)) if res.util_var else math.nan

    print("\n-- The paper's Tables III-V in form (SIMULATED; accuracy = paper's prior)")
    base, base_sd = run(RandomRouter(None, GROUP, args.seed))
    paper_table("Baseline: random routing, random width tuple (paper Table III)", base, base_sd)
    results = {}
    for name, table in (("ppo latency-heavy", "IV"), ("ppo balanced", "V")):
        s, sd = run(routers[name])
        results[name] = s
        paper_table(f"PPO + greedy, {name} reward (paper Table {table})", s, sd)
        print(f"    vs random: mean latency {100 * (s['mean_ms'] / base['mean_ms'] - 1):+.2f}%, "
              f"energy {100 * (s['energy_j'] / base['energy_j'] - 1):+.2f}%, "
              f"accuracy prior {100 * (s['accuracy_prior'] - base['accuracy_prior']):+.2f} points")  # fmt: skip
    heavy = results["ppo latency-heavy"]
    cut = 100 * (1 - heavy["mean_ms"] / base["mean_ms"])
    print(f"   check: latency-heavy PPO mean latency {cut:.2f}% below random at accuracy prior "
          f"{100 * heavy['accuracy_prior']:.2f}% (target >= 90%; paper 96.45% at 70.30%): "
          f"{'PASS' if cut >= 90 else 'FAIL'}")  # fmt: skip

    print("\n-- Trade-off per width policy (SIMULATED), same stream for every row")
    print(HEADER)
    policies: list[tuple[str, tuple[float, ...] | None]] = [(f"uniform {w}", UNIFORM[w]) for w in (1.0, 0.75, 0.5, 0.25)]
    policies.append(("random tuple", None))
    p99_wins = []
    for label, widths in policies:
        row = {}
        for router in (RandomRouter(widths, GROUP, args.seed), RoundRobinRouter(widths, GROUP, args.seed),
                       LeastLoadedRouter(widths, GROUP, args.seed)):  # fmt: skip
            row[router.name], _ = run(router)
            print(fmt_row(f"{router.name} / {label}", row[router.name]))
        if widths is not None:
            ppo = routers[f"ppo @ {widths[0]}"]
            before = ppo.redirected
            s, _ = run(ppo)
            print(fmt_row(f"ppo / {label}", s))
            ll = row["least-loaded"]
            p99_wins.append((label, s["p99_ms"], ll["p99_ms"], s["rejected"] + s["failed"], ll["rejected"] + ll["failed"],
                             ppo.redirected - before))  # fmt: skip
    for name in ("ppo latency-heavy", "ppo balanced"):
        print(fmt_row(f"{name} / learned", results[name]))
    print(FOOTER)
    for label, ppo_p99, ll_p99, ppo_lost, ll_lost, redirected in p99_wins:
        print(f"   check: p99 at {label}: ppo {ppo_p99:.2f} ms ({ppo_lost:.0f} lost, {redirected} decisions redirected "
              f"from a full server) vs least-loaded {ll_p99:.2f} ms "
              f"({ll_lost:.0f} lost): {'lower' if ppo_p99 < ll_p99 else 'NOT lower'}"
              f"{'' if ppo_lost <= ll_lost else ', MORE LOST'}")  # fmt: skip
    # Training used seeds (seed + 1) * 1000 + episode; these evaluation streams are none of them.
    extra = [int(x) for x in args.eval_seeds.split(",") if x] if args.eval_seeds else []
    if extra:
        print(f"\n-- ppo (width pinned) vs least-loaded on evaluation seeds {extra}: mean / p99 ms, lost")
    for w in (1.0, 0.75, 0.5, 0.25) if extra else ():
        for sd in extra:
            ll, _ = run(LeastLoadedRouter(UNIFORM[w], GROUP, args.seed), sd)
            pp, _ = run(routers[f"ppo @ {w}"], sd)
            lost = lambda s: s["rejected"] + s["failed"]  # noqa: E731
            ok = pp["p99_ms"] < ll["p99_ms"] and lost(pp) <= lost(ll)
            print(f"   uniform {w} seed {sd}: ppo {pp['mean_ms']:.2f} / {pp['p99_ms']:.2f}, {lost(pp):.0f} lost; "
                  f"least-loaded {ll['mean_ms']:.2f} / {ll['p99_ms']:.2f}, {lost(ll):.0f} lost: "
                  f"{'lower p99, no more lost' if ok else 'NOT better'}")  # fmt: skip
    return routers


def braid_part(args: argparse.Namespace, routers: dict[str, PPORouter]) -> None:
    try:
        import braid
    except ImportError as e:
        print(f"\n== Part 2 skipped: braid is not importable ({e}); PYTHONPATH=build/python or the wheel")
        return
    from braid_serving.backend import DEVICE_SHAPES, BraidBackend
    from braid_serving.loadgen import open_loop
    from braid_serving.server import Cluster, SlimServer

    model = braid.SlimmableModel("builtin:slim_resnet")
    shapes = [DEVICE_SHAPES[k] for k in ("cpu", "vgpu", "vgpu-orin-slow")]
    n, rate = (150, 60.0) if args.quick else (600, 120.0)
    print(f"\n== Part 2: braid in-process: nodes {', '.join(s.name for s in shapes)} (vgpu: virtual GPU on the CPU; "
          f"orin-slow: vgpu orin-like padded 2.5x, simulated), 1 thread each, on this {os.cpu_count()}-core host")  # fmt: skip
    print(f"   open-loop Poisson {rate:.0f} req/s, {n} requests per router; energy = estimate (utilisation power model)")
    config = GreedyConfig(b_max=8, t_idle=5.0, q_th=16, n_new=2, max_queue=256, m_max_bytes=64 << 20)

    def image(rng: np.random.Generator) -> np.ndarray:
        return rng.standard_normal((3, 32, 32)).astype(np.float32)

    ppo = routers.get("ppo latency-heavy")
    candidates: list[tuple[str, object]] = [
        ("random / random tuple", RandomRouter(None, GROUP, args.seed)),
        ("round-robin / random tuple", RoundRobinRouter(None, GROUP, args.seed)),
        ("least-loaded / random tuple", LeastLoadedRouter(None, GROUP, args.seed)),
        ("least-loaded / uniform 0.25", LeastLoadedRouter(UNIFORM[0.25], GROUP, args.seed)),
    ]
    if ppo is not None:
        candidates.append(("ppo latency-heavy (sim-trained)", ppo))
    print(HEADER)
    base = None
    for label, router in candidates:
        nodes = [SlimServer(BraidBackend(model, s), config, workers=1, name=s.name) for s in shapes]
        cluster = Cluster(nodes, router, fifo_capacity=256)  # type: ignore[arg-type]
        warm = [cluster.submit(image(np.random.default_rng(9))) for _ in range(8)]
        for f in warm:
            f.result(timeout=60)
        power = lambda: float(np.mean([nd.backend.power() for nd in nodes]))  # noqa: E731
        res = open_loop(cluster.submit, image, rate=rate, n_requests=n, max_time=60.0, seed=args.seed, power_w=power)
        cluster.close()
        for nd in nodes:
            nd.close()
        s = res.summary()
        print(fmt_row(label, s))
        if base is None:
            base = s
        assert res.sent == res.completed + res.failed, "an accepted request went missing"
    print(FOOTER)
    if ppo is not None and base is not None:
        print(f"   ppo vs random (in-process braid, one run): mean latency {100 * (s['mean_ms'] / base['mean_ms'] - 1):+.2f}%")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="CI size: under 2 minutes")
    parser.add_argument("--only", choices=("sim", "braid", "both"), default="both")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--load", type=float, default=0.8, help="offered load / the random mix's estimated capacity")
    parser.add_argument("--measure", action="store_true", help="measure the simulator's batch times with braid first")
    parser.add_argument("--paper-router", action="store_true",
                        help="pinned-width PPO routers as in the paper: eq. 1 state, eq. 7 reward, sampled actions")
    parser.add_argument("--eval-seeds", default="2,3", help="more evaluation streams for the ppo vs least-loaded check")
    parser.add_argument("--save-router", help="save the trained latency-heavy PPO router (.npz)")
    parser.add_argument("--load-router", help="use this latency-heavy PPO router instead of training one")
    args = parser.parse_args()
    t0 = time.perf_counter()
    routers = sim_part(args) if args.only in ("sim", "both") else {}
    if args.only in ("braid", "both"):
        braid_part(args, routers)
    print(f"\nslim_serving: done in {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
