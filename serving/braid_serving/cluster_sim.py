"""A discrete-event simulator of N heterogeneous servers, each running the greedy scheduler.

    sim = ClusterSim(PAPER_LIKE_CLUSTER, LatencyModel.default())
    result = sim.run(RandomRouter(None, group=4, seed=1), rate=800.0, n_requests=5000, max_time=20.0, seed=1)
    print(result.summary())       # mean / p50 / p99 latency, throughput, energy (simulated), accuracy prior

For offline PPO training (the paper trains its router on the cluster; we train
on this model of it) and for the routing benchmark. Everything it reports is
SIMULATED: a server is a serial device whose batch time is the latency table
(per segment, width and batch; measured braid CPU latencies, see
LatencyModel.default) divided by the server's speed; its power is idle power
plus (max - idle) x the running batch's occupancy, which grows with width and
batch (the paper's Fig. 1 shape); utilisation is its busy share over the last
`window` seconds. Requests run their 4 segments on the server the router chose,
through that server's GreedyScheduler (the same code the real servers use) on
the simulated clock. Energy per request is the paper's E_t = mean server power
x latency (eq. 7). Every accepted request completes or fails, counted.
While every live server is full (its scheduler's max_queue), the router holds
requests in its bounded FIFO instead of sending them to be refused; arrivals
past the FIFO's capacity are rejected ("overloaded"): the backpressure.
"""

from __future__ import annotations

import collections
import dataclasses
import heapq
import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .accuracy import accuracy_prior
from .greedy import Dispatch, GreedyConfig, GreedyScheduler, OverloadedError, SegmentRequest
from .router import BlockResult, Decision, Observation, Router, ServerStats, every_live_server_full

WIDTHS = (1.0, 0.75, 0.5, 0.25)
CHANNELS = (32, 64, 128, 256)  # builtin:slim_resnet's segments (docs/slimmable.md)


def slim_resnet_weight_bytes(segment: int, width: float, input_width: float) -> int:
    """fp32 weight bytes of builtin:slim_resnet's segment at a width (its layer shapes).

    Segment 0: 3x3 stem 3->C and a basic block; segments 1-3: a strided basic
    block with a 1x1 projection; segment 3 adds the 100-class head. GroupNorm
    scale and shift are 2 vectors of C per conv (no conv biases). The serving tests check
    this against braid's segment_weight_bytes when braid is importable.
    """
    c = round(CHANNELS[segment] * width)
    if segment == 0:
        params = 3 * c * 9 + 2 * (c * c * 9) + 2 * 3 * c
    else:
        c_in = round(CHANNELS[segment - 1] * input_width)
        params = c_in * c * 9 + c * c * 9 + c_in * c + 2 * 3 * c
    if segment == 3:
        params += c * 100 + 100
    return 4 * params


@dataclasses.dataclass
class LatencyModel:
    """Seconds to run a batch of one segment at a width on a speed-1 server: fixed + per-image x batch."""

    table: dict[tuple[int, float], tuple[float, float]]
    source: str

    def seconds(self, segment: int, width: float, batch: int) -> float:
        fixed, per_image = self.table[(segment, width)]
        return fixed + per_image * batch

    @classmethod
    def default(cls) -> LatencyModel:
        """Constants measured with braid on the shared 2-core build machine (see DEFAULT_SOURCE)."""
        return cls(dict(DEFAULT_LATENCY), DEFAULT_SOURCE)

    @classmethod
    def measure(cls, model: Any, threads: int = 1, batches: tuple[int, int] = (1, 8), repeats: int = 5,
                **session_options: Any) -> LatencyModel:  # fmt: skip
        """Fit fixed + per-image seconds from braid segment Sessions (uniform widths, median of repeats)."""
        import time

        table: dict[tuple[int, float], tuple[float, float]] = {}
        rng = np.random.default_rng(0)
        for width in model.widths:
            x_by_batch = {b: rng.standard_normal((b, 3, 32, 32)).astype(np.float32) for b in batches}
            for seg in range(model.num_segments):
                sess = model.open_segment(seg, width, input_width=1.0 if seg == 0 else width, threads=threads,
                                          **session_options)  # fmt: skip
                name = sess.get_inputs()[0].name
                times = []
                for b in batches:
                    x = x_by_batch[b]
                    sess.run(None, {name: x})  # warm-up
                    samples = []
                    for _ in range(repeats):
                        t0 = time.perf_counter()
                        sess.run(None, {name: x})
                        samples.append(time.perf_counter() - t0)
                    times.append(float(np.median(samples)))
                    x_by_batch[b] = sess.run(None, {name: x})[0]
                per = max(0.0, (times[1] - times[0]) / (batches[1] - batches[0]))
                table[(seg, width)] = (max(0.0, times[0] - per * batches[0]), per)
        return cls(table, f"measured: braid segment Sessions, threads={threads}")


# Printed by `PYTHONPATH=build/python:serving python3 -m braid_serving.cluster_sim --measure`
# (cpu, 1 thread, batches 1 and 8, medians of 5) on the shared 2-core build machine.
DEFAULT_SOURCE = "braid builtin:slim_resnet segment latencies measured on the 2-core build machine (cpu, 1 thread)"
DEFAULT_LATENCY: dict[tuple[int, float], tuple[float, float]] = {
    (0, 1.0): (0.0, 3.37e-04), (1, 1.0): (2.16e-06, 2.08e-04), (2, 1.0): (4.92e-06, 1.51e-04), (3, 1.0): (6.95e-06, 1.44e-04),
    (0, 0.75): (2.69e-07, 2.77e-04), (1, 0.75): (6.56e-06, 1.43e-04), (2, 0.75): (5.84e-06, 9.31e-05), (3, 0.75): (1.41e-05, 8.37e-05),
    (0, 0.5): (0.0, 1.31e-04), (1, 0.5): (4.54e-06, 7.07e-05), (2, 0.5): (5.70e-06, 4.92e-05), (3, 0.5): (1.16e-05, 3.34e-05),
    (0, 0.25): (4.25e-06, 6.67e-05), (1, 0.25): (5.59e-06, 2.79e-05), (2, 0.25): (5.01e-06, 1.83e-05), (3, 0.25): (7.13e-06, 1.18e-05),
}  # fmt: skip


@dataclasses.dataclass(frozen=True)
class ServerSpec:
    name: str
    speed: float = 1.0  # batch time = latency table / speed
    p_idle_w: float = 20.0
    p_max_w: float = 250.0
    m_max_bytes: int = 256 << 20


# The paper's cluster in shape: two RTX 2080 Ti and a GTX 980 Ti (~0.42x the FP32
# throughput). Simulated servers, not those GPUs.
PAPER_LIKE_CLUSTER = (
    ServerSpec("sim-2080ti-a", 1.0, 20.0, 250.0),
    ServerSpec("sim-2080ti-b", 1.0, 20.0, 250.0),
    ServerSpec("sim-980ti", 0.42, 15.0, 250.0),
)


def occupancy(width: float, batch: int, b_max: int) -> float:
    """Share of the device a batch keeps busy: grows with batch and width (paper Fig. 1's shape)."""
    return min(1.0, 0.2 + 0.8 * width * min(batch, b_max) / b_max)


class _SimDevice:
    """One server's device: runs batches one at a time; utilisation and power over a window."""

    def __init__(self, spec: ServerSpec, clock: Callable[[], float], window: float) -> None:
        self.spec = spec
        self.device = spec.name
        self.clock = clock
        self.window = window
        self.free_at = 0.0
        self.busy: collections.deque[tuple[float, float, float]] = collections.deque()  # (start, end, watts)
        self.alive = True

    def _trim(self, now: float) -> None:
        while self.busy and self.busy[0][1] < now - self.window:
            self.busy.popleft()

    def _overlap(self, now: float, weight: Callable[[float], float]) -> float:
        self._trim(now)
        lo = now - self.window
        return sum(max(0.0, min(e, now) - max(s, lo)) * weight(w) for s, e, w in self.busy)

    def _span(self, now: float) -> float:
        return min(self.window, now) if now > 0 else self.window  # the device's life so far

    def utilisation(self) -> float | None:
        """Busy share of the last window, counting queued work as busy (a GPU with kernels queued reads ~100%)."""
        now = self.clock()
        backlog = max(0.0, self.free_at - now)
        return 100.0 * min(1.0, (self._overlap(now, lambda w: 1.0) + backlog) / self._span(now))

    def power(self) -> float:
        now = self.clock()
        extra = self._overlap(now, lambda w: w - self.spec.p_idle_w) / self._span(now)
        return self.spec.p_idle_w + extra

    # InstanceBackend: loading is free in the model; memory is what GreedyScheduler counts.
    def weight_bytes(self, segment: int, width: float, input_width: float) -> int:
        return slim_resnet_weight_bytes(segment, width, input_width)

    def load(self, segment: int, width: float, input_width: float) -> Any:
        return (segment, width, input_width)

    def unload(self, handle: Any) -> None:
        del handle


@dataclasses.dataclass
class _Request:
    id: int
    t_arr: float
    block: _Block | None = None
    energy_j: float = 0.0
    failed: str | None = None


@dataclasses.dataclass
class _Block:
    decision: Decision
    server: int
    requests: list[_Request]
    t_route: float
    finished: int = 0
    latency_sum: float = 0.0
    energy_sum: float = 0.0
    failed: int = 0
    latency_max: float = 0.0


@dataclasses.dataclass
class SimResult:
    router: str
    generated: int
    accepted: int
    rejected: int  # refused by the bounded router FIFO ("overloaded")
    completed: int
    failed: int
    latencies_s: list[float]
    energies_j: list[float]
    accuracy: list[float]
    util_var: list[float]
    makespan_s: float
    widths_used: collections.Counter[tuple[float, ...]]
    servers_used: collections.Counter[int]
    failures: collections.Counter[str]
    retried: int = 0  # requests re-routed after their server died (then completed or failed)
    held: int = 0  # routing ticks that held the FIFO because every live server was full

    def summary(self) -> dict[str, float]:
        lat = np.asarray(self.latencies_s) if self.latencies_s else np.asarray([math.nan])
        en = np.asarray(self.energies_j) if self.energies_j else np.asarray([math.nan])
        return {
            "mean_ms": float(lat.mean() * 1e3),
            "std_ms": float(lat.std() * 1e3),
            "p50_ms": float(np.percentile(lat, 50) * 1e3),
            "p99_ms": float(np.percentile(lat, 99) * 1e3),
            "throughput_rps": self.completed / self.makespan_s if self.makespan_s > 0 else math.nan,
            "energy_j": float(en.mean()),
            "energy_std_j": float(en.std()),
            "accuracy_prior": float(np.mean(self.accuracy)) if self.accuracy else math.nan,
            "util_var": float(np.mean(self.util_var)) if self.util_var else math.nan,
            "completed": self.completed,
            "rejected": self.rejected,
            "failed": self.failed,
            "retried": self.retried,
            "held": self.held,
        }


class ClusterSim:
    """See the module docstring. One instance may run many episodes (router state carries over)."""

    def __init__(
        self,
        servers: Sequence[ServerSpec],
        latency: LatencyModel,
        greedy: GreedyConfig | None = None,
        router_period: float = 0.002,
        fifo_capacity: int = 2048,
        window: float = 0.1,
    ) -> None:
        self.specs = list(servers)
        self.latency = latency
        self.greedy = greedy or GreedyConfig(b_max=8, t_idle=1.0, q_th=16, n_new=2, max_queue=1024)
        self.router_period = router_period
        self.fifo_capacity = fifo_capacity
        self.window = window

    def run(
        self,
        router: Router,
        rate: float,
        n_requests: int,
        max_time: float,
        seed: int = 0,
        kill: tuple[int, float] | None = None,
    ) -> SimResult:
        """Poisson arrivals at `rate`/s until n_requests or max_time; runs until every accepted one ends.

        kill=(server, t): that server dies at time t; its queued and running
        requests go back to the front of the router FIFO and are routed
        again (counted in `retried`; they then complete or fail like any other).
        """
        rng = np.random.default_rng(seed)
        now = 0.0
        clock = lambda: now  # noqa: E731  (the schedulers' injectable clock)
        devices = [_SimDevice(s, clock, self.window) for s in self.specs]
        scheds = [
            GreedyScheduler(dataclasses.replace(self.greedy, m_max_bytes=s.m_max_bytes), d, clock)
            for s, d in zip(self.specs, devices)
        ]
        events: list[tuple[float, int, str, Any]] = []
        seq = itertools.count()

        def push(t: float, kind: str, data: Any = None) -> None:
            heapq.heappush(events, (t, next(seq), kind, data))

        fifo: collections.deque[_Request] = collections.deque()
        outstanding = [0] * len(self.specs)
        lat_ewma = [0.0] * len(self.specs)
        service = [0.0] * len(self.specs)  # measured device seconds per request (segment batch time / batch x segments)
        result = SimResult(router.name, 0, 0, 0, 0, 0, [], [], [], [], 0.0,
                           collections.Counter(), collections.Counter(), collections.Counter())  # fmt: skip
        tick_pending = False
        live_requests: dict[int, _Request] = {}

        def observe() -> Observation:
            return Observation(len(fifo), result.completed, [
                ServerStats(outstanding[i], devices[i].power(), devices[i].utilisation() or 0.0, lat_ewma[i],
                            devices[i].alive, service[i],
                            max(0, self.greedy.max_queue - len(scheds[i].queue)))  # forced next segments may overfill
                for i in range(len(devices))
            ])  # fmt: skip

        def finish_request(req: _Request, failed: str | None, count: bool = True) -> None:
            blk = req.block
            assert blk is not None
            live_requests.pop(req.id, None)
            outstanding[blk.server] -= 1
            blk.finished += 1
            if failed is None:
                lat = now - req.t_arr
                energy = float(np.mean([d.power() for d in devices])) * lat  # paper's E_t
                result.completed += 1
                result.latencies_s.append(lat)
                result.energies_j.append(energy)
                result.accuracy.append(accuracy_prior(blk.decision.widths))
                lat_ewma[blk.server] = 0.9 * lat_ewma[blk.server] + 0.1 * lat
                blk.latency_sum += lat
                blk.latency_max = max(blk.latency_max, lat)
                blk.energy_sum += energy
            else:
                if count:
                    result.failed += 1
                    result.failures[failed] += 1
                blk.failed += 1
            if blk.finished == len(blk.requests):
                ok = len(blk.requests) - blk.failed
                utils = [d.utilisation() or 0.0 for d in devices]
                result.util_var.append(float(np.var(np.asarray(utils) / 100.0)))
                router.feedback(blk.decision, BlockResult(
                    blk.latency_sum / ok if ok else 0.0, blk.energy_sum / ok if ok else 0.0,
                    blk.decision.widths, utils, blk.failed, blk.latency_max))  # fmt: skip

        def pump(i: int) -> None:
            if not devices[i].alive:
                return
            for d in scheds[i].dispatch():
                start_batch(i, d)

        def start_batch(i: int, d: Dispatch) -> None:
            dev, inst = devices[i], d.instance
            n = len(d.batch)
            secs = self.latency.seconds(inst.segment, inst.width, n) / dev.spec.speed
            start = max(now, dev.free_at)
            end = start + secs
            dev.free_at = end
            per_request = secs / n * len(CHANNELS)  # every request runs all 4 segments here
            service[i] = per_request if service[i] == 0.0 else 0.9 * service[i] + 0.1 * per_request
            watts = dev.spec.p_idle_w + (dev.spec.p_max_w - dev.spec.p_idle_w) * occupancy(inst.width, n, self.greedy.b_max)
            dev.busy.append((start, end, watts))
            push(end, "done", (i, d))

        def route() -> None:
            while fifo:
                obs = observe()
                if every_live_server_full(obs):
                    result.held += 1  # every live server is full: hold (a completion routes again)
                    return
                decision = router.decide(obs)
                block = [fifo.popleft() for _ in range(min(decision.group, len(fifo)))]
                blk = _Block(decision, decision.server, block, now)
                result.widths_used[decision.widths] += len(block)
                result.servers_used[decision.server] += len(block)
                for req in block:
                    req.block = blk
                    outstanding[decision.server] += 1
                    try:
                        scheds[decision.server].submit(SegmentRequest(0, decision.widths[0], 1.0, payload=req))
                    except OverloadedError:
                        finish_request(req, "server overloaded")
                pump(decision.server)

        def kill_server(i: int) -> None:
            devices[i].alive = False
            lost = [r.payload for r in scheds[i].queue]
            scheds[i].queue.clear()
            retry = [r for r in live_requests.values() if r.block is not None and r.block.server == i]
            for req in retry:
                if req not in lost:
                    lost.append(req)
            for req in lost:  # retried: back to the front of the router FIFO, original arrival time
                assert req.block is not None
                finish_request(req, "retried", count=False)  # the block's router sees a failure
                result.retried += 1
                fresh = _Request(req.id, req.t_arr)
                live_requests[fresh.id] = fresh
                fifo.appendleft(fresh)

        t_next = float(rng.exponential(1.0 / rate))
        if n_requests > 0:
            push(t_next, "arrive")
        if kill is not None:
            push(kill[1], "kill", kill[0])
        for i in range(len(devices)):
            push(self.greedy.t_idle / 2, "unload", i)
        horizon = max_time * 20 + 10.0
        arrivals_done = n_requests == 0
        while events:
            now, _, kind, data = heapq.heappop(events)
            if now > horizon:
                break
            if kind == "arrive":
                result.generated += 1
                if len(fifo) >= self.fifo_capacity:
                    result.rejected += 1  # backpressure: "overloaded", never queued
                else:
                    req = _Request(result.generated, now)
                    live_requests[req.id] = req
                    fifo.append(req)
                    result.accepted += 1
                    if not tick_pending:
                        tick_pending = True
                        push(now + self.router_period, "route")
                t_next = now + float(rng.exponential(1.0 / rate))
                if result.generated < n_requests and t_next <= max_time:
                    push(t_next, "arrive")
                else:
                    arrivals_done = True
            elif kind == "route":
                tick_pending = False
                route()
            elif kind == "done":
                i, d = data
                scheds[i].complete(d)
                if devices[i].alive:
                    inst = d.instance
                    for r in d.batch:
                        req: _Request = r.payload
                        if req.id not in live_requests or live_requests[req.id] is not req:
                            continue  # re-routed after a kill
                        if r.segment + 1 < len(req.block.decision.widths):  # type: ignore[union-attr]
                            nxt = SegmentRequest(r.segment + 1, req.block.decision.widths[r.segment + 1],  # type: ignore[union-attr]
                                                 inst.width, payload=req)  # fmt: skip
                            scheds[i].submit(nxt, force=True)
                        else:
                            finish_request(req, None)
                    pump(i)
                if fifo and not tick_pending:  # requests held while every server was full
                    tick_pending = True
                    push(now + self.router_period, "route")
            elif kind == "unload":
                scheds[data].unload_idle()
                pump(data)
                if not (arrivals_done and not live_requests):
                    push(now + self.greedy.t_idle / 2, "unload", data)
            elif kind == "kill":
                kill_server(data)
                if fifo and not tick_pending:
                    tick_pending = True
                    push(now, "route")
            if arrivals_done and not live_requests:
                break
        for req in list(live_requests.values()):  # past the horizon: counted, never lost
            if req.block is None:
                req.block = _Block(Decision(0, (1.0,) * 4, 1), 0, [req], now)
                outstanding[0] += 1
            finish_request(req, "unfinished at the horizon")
        result.makespan_s = now
        return result


def estimate_capacity(servers: Sequence[ServerSpec], latency: LatencyModel, widths: Sequence[tuple[float, ...]],
                      batch: int) -> float:  # fmt: skip
    """Requests/s the cluster sustains at the mean of `widths`' batch costs (a load-setting aid)."""
    per_req = float(np.mean([sum(latency.seconds(s, w[s], batch) for s in range(4)) / batch for w in widths]))
    return sum(s.speed for s in servers) / per_req


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="Print the latency table the simulator uses")
    parser.add_argument("--measure", action="store_true", help="measure it with braid (import braid)")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    if args.measure:
        import braid

        m = LatencyModel.measure(braid.SlimmableModel("builtin:slim_resnet"), threads=args.threads)
    else:
        m = LatencyModel.default()
    print(f"# {m.source}")
    for (seg, w), (fixed, per) in sorted(m.table.items(), key=lambda kv: (-kv[0][1], kv[0][0])):
        print(f"    ({seg}, {w}): ({fixed:.2e}, {per:.2e}),")
