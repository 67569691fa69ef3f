"""A serving node: the greedy scheduler driving real instances on worker threads, and a
router front (Cluster) over several nodes.

    node = SlimServer(BraidBackend(model, DEVICE_SHAPES["cpu"]), GreedyConfig(b_max=8))
    logits = node.submit(image, widths=(0.5, 0.5, 0.25, 0.25)).result()   # image [3, 32, 32]
    cluster = Cluster([node, other], RandomRouter(None, group=1, seed=0), fifo_capacity=256)
    future = cluster.submit(image)        # routed: server, width tuple, group from the router
    cluster.close()

A request runs its segments in order on its node; each segment goes through
the node's GreedyScheduler (Algorithm 1), whose batches run on a thread pool.
Errors are per request: a failing batch fails its requests' futures with a
clear error, and an accepted request is never silently dropped (completed +
failed == accepted). A full node or router FIFO raises OverloadedError; the
router holds its FIFO while every live node is full, so callers see a full FIFO.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from .greedy import Dispatch, GreedyConfig, GreedyScheduler, OverloadedError, SegmentRequest
from .router import BlockResult, BoundedFifo, Observation, Router, ServerStats, every_live_server_full


@dataclasses.dataclass
class _Job:
    x: np.ndarray  # the current segment's input, [1, C, H, W]
    widths: tuple[float, ...]
    future: concurrent.futures.Future[np.ndarray]
    t_arr: float


@dataclasses.dataclass
class NodeCounters:
    accepted: int = 0
    rejected: int = 0
    completed: int = 0
    failed: int = 0


class SlimServer:
    """One node: see the module docstring. backend: an InstanceBackend with run(handle, x)."""

    def __init__(self, backend: Any, config: GreedyConfig, workers: int = 2, name: str | None = None) -> None:
        self.backend = backend
        self.name = name or backend.device
        self.config = config
        self.sched = GreedyScheduler(config, backend)
        self.counters = NodeCounters()
        self._cond = threading.Condition()
        self._pool = concurrent.futures.ThreadPoolExecutor(workers, thread_name_prefix=f"slim-{self.name}")
        self._inflight = 0
        self._lat_ewma = 0.0
        self._service = 0.0  # measured run seconds per request (per image x segments / workers), EWMA
        self._workers = workers
        self._closed = False
        self._thread = threading.Thread(target=self._loop, name=f"slim-dispatch-{self.name}", daemon=True)
        self._thread.start()

    def submit(self, image: np.ndarray, widths: Sequence[float]) -> concurrent.futures.Future[np.ndarray]:
        x = np.asarray(image, dtype=np.float32)
        if x.ndim == 3:
            x = x[None]
        if x.ndim != 4 or x.shape[0] != 1:
            raise ValueError(f"one image [C, H, W] or [1, C, H, W] per request, got shape {x.shape}")
        widths = tuple(float(w) for w in widths)
        future: concurrent.futures.Future[np.ndarray] = concurrent.futures.Future()
        with self._cond:
            if self._closed:
                raise RuntimeError(f"node {self.name} is closed")
            if self._inflight >= self.config.max_queue:
                self.counters.rejected += 1
                raise OverloadedError(f"overloaded: node {self.name} holds {self._inflight} requests "
                                      f"(max_queue {self.config.max_queue}); retry later")  # fmt: skip
            self.sched.submit(SegmentRequest(0, widths[0], 1.0, payload=_Job(x, widths, future, time.monotonic())))
            self._inflight += 1
            self.counters.accepted += 1
            self._cond.notify()
        return future

    def stats(self) -> ServerStats:
        with self._cond:
            return ServerStats(self._inflight, self.backend.power(), self.backend.utilisation() or 0.0, self._lat_ewma,
                               service_s=self._service, room=max(0, self.config.max_queue - self._inflight))  # fmt: skip

    def telemetry(self) -> Any:
        with self._cond:
            return self.sched.telemetry()

    def _loop(self) -> None:
        with self._cond:
            while not self._closed:
                self.sched.unload_idle()
                for d in self.sched.dispatch():
                    self._pool.submit(self._run, d)
                deadline = self.sched.next_idle_deadline()
                wait = 0.05 if deadline is None else min(0.05, max(0.001, deadline - time.monotonic()))
                self._cond.wait(wait)

    def _finish(self, job: _Job, error: BaseException | None, y: np.ndarray | None,
                resolved: list[Callable[[], None]]) -> None:
        """Counts the request (under self._cond) and queues its future's completion in `resolved`,
        which the caller runs after releasing the lock: a future's callbacks (a Cluster's) read
        every node's stats, and two nodes finishing at once would otherwise wait on each other."""
        self._inflight -= 1
        if error is None:
            self.counters.completed += 1
            self._lat_ewma = 0.9 * self._lat_ewma + 0.1 * (time.monotonic() - job.t_arr)
            value = y[0]  # type: ignore[index]
            resolved.append(lambda: job.future.set_result(value))
        else:
            self.counters.failed += 1
            resolved.append(lambda: job.future.set_exception(error))

    def _run(self, d: Dispatch) -> None:
        inst = d.instance
        error: BaseException | None = None
        y: np.ndarray | None = None
        t0 = time.monotonic()
        try:
            y = self.backend.run(inst.handle, np.concatenate([r.payload.x for r in d.batch]))
        except BaseException as e:  # noqa: BLE001  (every failure reaches the requests' futures)
            error = RuntimeError(f"segment {inst.segment} at width {inst.width} failed on {self.name}: {e}")
        per_request = (time.monotonic() - t0) / len(d.batch) * len(d.batch[0].payload.widths) / self._workers
        resolved: list[Callable[[], None]] = []
        with self._cond:
            self._service = per_request if self._service == 0.0 else 0.9 * self._service + 0.1 * per_request
            self.sched.complete(d)
            if error is not None:
                self.sched.drop(inst)  # a failed instance is not reused
            for k, r in enumerate(d.batch):
                job: _Job = r.payload
                if error is not None:
                    self._finish(job, error, None, resolved)
                elif r.segment + 1 < len(job.widths):
                    job.x = y[k : k + 1]  # type: ignore[index]
                    self.sched.submit(SegmentRequest(r.segment + 1, job.widths[r.segment + 1], inst.width, job), force=True)
                else:
                    self._finish(job, None, y[k : k + 1], resolved)  # type: ignore[index]
            self._cond.notify()
        for complete in resolved:
            complete()

    def close(self) -> None:
        """Stop; requests still queued fail with a clear error (counted), running ones finish."""
        resolved: list[Callable[[], None]] = []
        with self._cond:
            self._closed = True
            for r in list(self.sched.queue):
                self._finish(r.payload, RuntimeError(f"node {self.name} closed before the request ran"), None, resolved)
            self.sched.queue.clear()
            self._cond.notify()
        for complete in resolved:
            complete()
        self._thread.join()
        self._pool.shutdown(wait=True)


class NodeLike(Protocol):
    name: str

    def submit(self, image: np.ndarray, widths: Sequence[float]) -> concurrent.futures.Future[np.ndarray]: ...

    def stats(self) -> ServerStats: ...


@dataclasses.dataclass
class ClusterCounters:
    accepted: int = 0
    rejected: int = 0  # the router FIFO was full: OverloadedError to the caller
    completed: int = 0
    failed: int = 0
    retried: int = 0  # requests sent to another node after theirs failed


@dataclasses.dataclass
class _Pending:
    image: np.ndarray
    future: concurrent.futures.Future[tuple[np.ndarray, tuple[float, ...], int]]
    t_arr: float
    tries: int = 0


class Cluster:
    """The router over nodes: a bounded FIFO, a routing thread taking blocks of `group` requests.

    A request whose node fails it is retried (`retries` times) on the nodes
    still up (the failing one is skipped for `cooldown` s), else its future
    fails with the error.
    Futures resolve to (logits, widths, node index).
    """

    def __init__(self, nodes: Sequence[NodeLike], router: Router, fifo_capacity: int = 256, period: float = 0.002,
                 retries: int = 2, cooldown: float = 2.0) -> None:  # fmt: skip
        self.nodes = list(nodes)
        self.cooldown = cooldown  # a node that failed a request is skipped this long (Serve restarts replicas)
        self._down_until = [0.0] * len(self.nodes)
        self.router = router
        self.fifo = BoundedFifo(fifo_capacity)
        self.period = period
        self.retries = retries
        self.counters = ClusterCounters()
        self._cond = threading.Condition()
        self._router_lock = threading.Lock()  # decide() and feedback() come from different threads
        self._closed = False
        self._thread = threading.Thread(target=self._loop, name="slim-router", daemon=True)
        self._thread.start()

    def submit(self, image: np.ndarray) -> concurrent.futures.Future[tuple[np.ndarray, tuple[float, ...], int]]:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        with self._cond:
            try:
                self.fifo.push(_Pending(np.asarray(image, dtype=np.float32), future, time.monotonic()))
            except OverloadedError:
                self.counters.rejected += 1
                raise
            self.counters.accepted += 1
            self._cond.notify()
        return future

    def _alive(self, i: int) -> bool:
        return time.monotonic() >= self._down_until[i]

    def observe(self) -> Observation:
        stats = []
        for i, n in enumerate(self.nodes):
            try:
                s = n.stats() if self._alive(i) else ServerStats(0, 0.0, 0.0, alive=False)
            except Exception:  # noqa: BLE001  (a node that cannot answer is down to the router)
                self._down_until[i] = time.monotonic() + self.cooldown
                s = ServerStats(0, 0.0, 0.0)
            s.alive = self._alive(i)
            stats.append(s)
        return Observation(len(self.fifo), self.counters.completed, stats)

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self.fifo and not self._closed:
                    self._cond.wait()
                if self._closed and not self.fifo:
                    return
            time.sleep(self.period)  # let a block's worth of arrivals gather
            while True:
                with self._cond:
                    if not self.fifo:
                        break
                obs = self.observe()
                if every_live_server_full(obs) and not self._closed:
                    time.sleep(self.period)  # every live node is full: hold the FIFO (backpressure)
                    continue
                try:
                    with self._router_lock:
                        decision = self.router.decide(obs)
                except RuntimeError as e:  # no live node
                    with self._cond:
                        for p in self.fifo.pop_block(len(self.fifo)):
                            self._fail(p, e)
                    break
                if not self._alive(decision.server):
                    continue  # it went down after observe(): decide again on fresh telemetry
                with self._cond:
                    block = self.fifo.pop_block(decision.group)
                self._send(block, decision)

    def _send(self, block: list[_Pending], decision: Any) -> None:
        node = self.nodes[decision.server]
        state = {"left": len(block), "lat": 0.0, "failed": 0}
        lock = threading.Lock()

        def done(p: _Pending, f: concurrent.futures.Future[np.ndarray]) -> None:
            error = f.exception()
            if error is not None and p.tries < self.retries and len(self.nodes) > 1:
                p.tries += 1
                if not isinstance(error, OverloadedError):
                    self._down_until[decision.server] = time.monotonic() + self.cooldown  # route around it
                with self._cond:
                    self.counters.retried += 1
                    self.fifo.items.appendleft(p)  # retried before newer requests
                    self._cond.notify()
            elif error is not None:
                self._fail(p, error)
            else:
                with self._cond:
                    self.counters.completed += 1
                p.future.set_result((f.result(), decision.widths, decision.server))
            with lock:
                state["left"] -= 1
                if error is None:
                    state["lat"] += time.monotonic() - p.t_arr
                else:
                    state["failed"] += 1
                finished = state["left"] == 0
            if finished:
                ok = len(block) - state["failed"]
                obs = self.observe()
                power = float(np.mean([s.power_w for s in obs.servers]))
                lat = state["lat"] / ok if ok else 0.0
                with self._router_lock:
                    self.router.feedback(decision, BlockResult(lat, power * lat, decision.widths,
                                                               [s.utilisation for s in obs.servers], state["failed"]))  # fmt: skip

        for p in block:
            try:
                f = node.submit(p.image, decision.widths)
            except Exception as e:  # noqa: BLE001  (overloaded or dead node: the same path as a failed run)
                f = concurrent.futures.Future()
                f.set_exception(e)
            f.add_done_callback(lambda f, p=p: done(p, f))

    def _fail(self, p: _Pending, error: BaseException) -> None:
        with self._cond:
            self.counters.failed += 1
        p.future.set_exception(error)

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify()
        self._thread.join()
