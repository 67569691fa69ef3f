"""The per-server greedy segment-slim scheduler: the Slim Scheduler paper's Algorithm 1.

    sched = GreedyScheduler(GreedyConfig(b_max=8, m_max_bytes=64 << 20), backend, clock=time.monotonic)
    sched.submit(SegmentRequest(segment=0, w_req=0.5, w_prev=1.0, payload=image))
    for d in sched.dispatch():            # batches started on instances (lines 5-12)
        outputs = run(d.instance, d.batch)
        sched.complete(d)                 # instance free again, t_last updated
    sched.unload_idle()                   # UnloaderLoop (lines 23-27)
    sched.telemetry()                     # utilisation, memory, per-segment queues, latency percentiles

This is the state machine only: it never sleeps nor runs a model, so the same
code drives the discrete-event simulator (cluster_sim.py), the threaded
in-process server (server.py) and the Ray Serve node (ray_app.py), and unit
tests drive it with a fake clock and a fake backend. Not thread-safe: the
caller holds one lock around it.
"""

from __future__ import annotations

import collections
import dataclasses
import time
from collections.abc import Callable
from typing import Any, Protocol

Key = tuple[int, float, float]  # (segment, w_req, w_prev)


class OverloadedError(RuntimeError):
    """The bounded queue is full: back off and retry later (backpressure, not an unbounded queue)."""


class InstanceBackend(Protocol):
    """What loads and unloads segment instances on one device."""

    device: str

    def weight_bytes(self, segment: int, width: float, input_width: float) -> int:
        """Bytes an instance of (segment, width, input_width) holds (CanLoad's estimate)."""
        ...

    def load(self, segment: int, width: float, input_width: float) -> Any:
        """Open an instance; returns the handle the runner uses."""
        ...

    def unload(self, handle: Any) -> None:
        """Release an instance's memory."""
        ...

    def utilisation(self) -> float | None:
        """The latest device utilisation sample in %, None when there is none (line 19)."""
        ...


@dataclasses.dataclass(frozen=True)
class GreedyConfig:
    """Algorithm 1's knobs (r, the arrival rate, belongs to the load, not here)."""

    b_max: int = 8  # batch limit
    m_max_bytes: int = 256 << 20  # memory cap for loaded instances
    u_blk: float = 95.0  # utilisation block threshold (%): no scale-up at or above it
    t_idle: float = 5.0  # seconds an idle instance stays loaded
    q_th: int = 16  # scale trigger: queued requests of one key above this load n_new at once
    n_new: int = 2  # scale cap: instances loaded in one scale-up
    widths: tuple[float, ...] = (1.0, 0.75, 0.5, 0.25)  # the slimming set W
    max_queue: int = 4096  # backpressure bound on queued requests
    latency_window: int = 2048  # completions kept for the percentiles

    def __post_init__(self) -> None:
        if self.b_max < 1 or self.n_new < 1 or self.q_th < 0 or self.max_queue < 1:
            raise ValueError(f"b_max, n_new, max_queue must be >= 1 and q_th >= 0: {self}")
        if self.m_max_bytes <= 0 or self.t_idle < 0 or not 0 < self.u_blk <= 100:
            raise ValueError(f"m_max_bytes > 0, t_idle >= 0, 0 < u_blk <= 100 required: {self}")
        if not self.widths or any(not 0 < w <= 1 for w in self.widths):
            raise ValueError(f"widths must be in (0, 1]: {self.widths}")


@dataclasses.dataclass
class SegmentRequest:
    """q_t(seg, w_req, t_enq, w_prev): one request's next segment."""

    segment: int
    w_req: float
    w_prev: float
    payload: Any = None
    t_enq: float = 0.0  # set by submit

    @property
    def key(self) -> Key:
        return (self.segment, self.w_req, self.w_prev)


@dataclasses.dataclass
class Instance:
    """i_s(seg, w, device, busy, t_last): a loaded segment at a width on an input width."""

    segment: int
    width: float
    input_width: float
    device: str
    nbytes: int
    handle: Any
    busy: bool = False
    t_last: float = 0.0
    id: int = 0  # per scheduler, in load order


@dataclasses.dataclass
class Dispatch:
    """A batch started on an instance (line 12): run it, then call complete()."""

    instance: Instance
    batch: list[SegmentRequest]
    t_start: float


@dataclasses.dataclass
class Telemetry:
    utilisation: float | None  # % (the backend's sample, else the instances' busy share)
    memory_bytes: int  # loaded instances
    memory_cap_bytes: int
    queue_sizes: dict[int, int]  # segment -> queued requests
    queued: int
    running: int  # requests in started batches
    instances: int
    latency_p50: float | None  # seconds from enqueue to completion of a segment batch
    latency_p95: float | None
    latency_p99: float | None
    loads: int
    unloads: int
    batches: int
    requeues: int


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    rank = min(len(ordered) - 1, max(0, int(round(q / 100.0 * (len(ordered) - 1)))))
    return ordered[rank]


class GreedyScheduler:
    """Algorithm 1 for one server; see the module docstring."""

    def __init__(
        self, config: GreedyConfig, backend: InstanceBackend, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.config = config
        self.backend = backend
        self.clock = clock
        self.queue: collections.deque[SegmentRequest] = collections.deque()
        self.instances: list[Instance] = []
        self._latencies: collections.deque[float] = collections.deque(maxlen=config.latency_window)
        self.loads = 0
        self.unloads = 0
        self.batches = 0
        self.requeues = 0
        self._running = 0

    # -- queue -----------------------------------------------------------------------------
    def submit(self, request: SegmentRequest, *, force: bool = False) -> None:
        """Enqueue at the tail (FIFO). OverloadedError when max_queue requests wait.

        force: a request already accepted (its next segment) is never refused,
        so an accepted request is never dropped half-way.
        """
        if not force and len(self.queue) >= self.config.max_queue:
            raise OverloadedError(
                f"overloaded: {len(self.queue)} requests queued on {self.backend.device} "
                f"(max_queue {self.config.max_queue}); retry later"
            )
        if request.w_req not in self.config.widths:
            raise ValueError(f"width {request.w_req} is not in the slimming set {self.config.widths}")
        request.t_enq = self.clock()
        self.queue.append(request)

    def memory_used(self) -> int:
        return sum(i.nbytes for i in self.instances)

    # -- Algorithm 1 -----------------------------------------------------------------------
    def find_free_best_fit(self, segment: int, w_req: float, w_prev: float) -> Instance | None:
        """Line 13-14: a free instance of `segment` on input width w_prev, smallest width >= w_req."""
        best: Instance | None = None
        for inst in self.instances:
            if inst.busy or inst.segment != segment or inst.input_width != w_prev or inst.width < w_req:
                continue
            if best is None or inst.width < best.width:
                best = inst
        return best

    def can_load(self, segment: int, width: float, w_prev: float) -> bool:
        """Lines 15-22: the instance's bytes fit under M_max and the latest utilisation is below U_blk."""
        nbytes = self.backend.weight_bytes(segment, width, w_prev)
        if self.memory_used() + nbytes > self.config.m_max_bytes:
            return False
        u = self.backend.utilisation()
        return not (u is not None and u >= self.config.u_blk)

    def _load(self, segment: int, width: float, w_prev: float) -> Instance:
        nbytes = self.backend.weight_bytes(segment, width, w_prev)
        handle = self.backend.load(segment, width, w_prev)
        inst = Instance(segment, width, w_prev, self.backend.device, nbytes, handle, t_last=self.clock(), id=self.loads)
        self.instances.append(inst)
        self.loads += 1
        return inst

    def _scale_up(self, key: Key) -> Instance | None:
        """Line 9 with the scale rule: load 1 instance, or up to n_new when the key's queue > Q_th.

        Each instance is checked by CanLoad before it loads; the first is returned for the batch.
        """
        segment, w_req, w_prev = key
        pending = sum(1 for r in self.queue if r.key == key)
        wanted = self.config.n_new if pending > self.config.q_th else 1
        first: Instance | None = None
        for _ in range(wanted):
            if not self.can_load(segment, w_req, w_prev):
                break
            inst = self._load(segment, w_req, w_prev)
            first = first or inst
        return first

    def dispatch(self) -> list[Dispatch]:
        """Lines 5-12, repeated while the head's batch finds an instance.

        Stops when the queue is empty or the head's batch is requeued to the
        front (line 11): nothing changes until an instance frees up, time passes
        or an instance unloads, so the caller calls dispatch() again then.
        """
        started: list[Dispatch] = []
        while self.queue:
            key = self.queue[0].key
            batch: list[SegmentRequest] = []
            rest: collections.deque[SegmentRequest] = collections.deque()
            for r in self.queue:  # line 6: up to B_max requests with the head's key, FIFO order
                if len(batch) < self.config.b_max and r.key == key:
                    batch.append(r)
                else:
                    rest.append(r)
            self.queue = rest
            inst = self.find_free_best_fit(*key)
            if inst is None:
                self.queue.extendleft(reversed(batch))  # counted before loading: pending includes B
                inst = self._scale_up(key)
                if inst is None:
                    self.requeues += 1
                    return started  # line 11: B stays at the front
                for _ in batch:
                    self.queue.popleft()
            inst.busy = True
            self.batches += 1
            self._running += len(batch)
            started.append(Dispatch(inst, batch, self.clock()))
        return started

    def complete(self, dispatch: Dispatch) -> None:
        """Line 12's end: the instance is free, t_last = now; the batch's latencies are recorded."""
        now = self.clock()
        dispatch.instance.busy = False
        dispatch.instance.t_last = now
        self._running -= len(dispatch.batch)
        for r in dispatch.batch:
            self._latencies.append(now - r.t_enq)

    def unload_idle(self) -> list[Instance]:
        """Lines 23-27: unload every non-busy instance idle for t_idle or longer."""
        now = self.clock()
        gone = [i for i in self.instances if not i.busy and now - i.t_last >= self.config.t_idle]
        for inst in gone:
            self.instances.remove(inst)
            self.backend.unload(inst.handle)
            self.unloads += 1
        return gone

    def drop(self, instance: Instance) -> None:
        """Forget a failed instance (its device lost it): no unload call."""
        if instance in self.instances:
            self.instances.remove(instance)

    def next_idle_deadline(self) -> float | None:
        """When the next idle instance becomes unloadable (for timed loops)."""
        idle = [i.t_last + self.config.t_idle for i in self.instances if not i.busy]
        return min(idle) if idle else None

    def telemetry(self) -> Telemetry:
        sizes: dict[int, int] = {}
        for r in self.queue:
            sizes[r.segment] = sizes.get(r.segment, 0) + 1
        util = self.backend.utilisation()
        if util is None and self.instances:
            util = 100.0 * sum(1 for i in self.instances if i.busy) / len(self.instances)
        lat = list(self._latencies)
        return Telemetry(
            utilisation=util,
            memory_bytes=self.memory_used(),
            memory_cap_bytes=self.config.m_max_bytes,
            queue_sizes=sizes,
            queued=len(self.queue),
            running=self._running,
            instances=len(self.instances),
            latency_p50=_percentile(lat, 50),
            latency_p95=_percentile(lat, 95),
            latency_p99=_percentile(lat, 99),
            loads=self.loads,
            unloads=self.unloads,
            batches=self.batches,
            requeues=self.requeues,
        )
