"""An open-loop Poisson load generator (bounded count and time, in-process or loopback only).

    result = open_loop(cluster.submit, make_input, rate=200.0, n_requests=500, max_time=10.0, seed=0)
    print(result.summary())

submit(x) returns a concurrent.futures.Future (or raises OverloadedError, counted
as rejected); arrivals never wait for answers (open loop), so an overloaded
server shows as queueing and rejections, not as a slower client.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import math
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from .accuracy import accuracy_prior
from .greedy import OverloadedError


@dataclasses.dataclass
class LoadResult:
    sent: int = 0
    rejected: int = 0  # OverloadedError at submit
    completed: int = 0
    failed: int = 0
    latencies_s: list[float] = dataclasses.field(default_factory=list)
    accuracy: list[float] = dataclasses.field(default_factory=list)
    energy_j: list[float] = dataclasses.field(default_factory=list)
    errors: dict[str, int] = dataclasses.field(default_factory=dict)
    wall_s: float = 0.0

    def summary(self) -> dict[str, float]:
        lat = np.asarray(self.latencies_s) if self.latencies_s else np.asarray([math.nan])
        return {
            "mean_ms": float(lat.mean() * 1e3),
            "std_ms": float(lat.std() * 1e3),
            "p50_ms": float(np.percentile(lat, 50) * 1e3),
            "p99_ms": float(np.percentile(lat, 99) * 1e3),
            "throughput_rps": self.completed / self.wall_s if self.wall_s > 0 else math.nan,
            "energy_j": float(np.mean(self.energy_j)) if self.energy_j else math.nan,
            "energy_std_j": float(np.std(self.energy_j)) if self.energy_j else math.nan,
            "accuracy_prior": float(np.mean(self.accuracy)) if self.accuracy else math.nan,
            "completed": self.completed,
            "rejected": self.rejected,
            "failed": self.failed,
        }


def open_loop(
    submit: Callable[[np.ndarray], concurrent.futures.Future[Any]],
    make_input: Callable[[np.random.Generator], np.ndarray],
    rate: float,
    n_requests: int,
    max_time: float,
    seed: int = 0,
    power_w: Callable[[], float] | None = None,
    timeout: float = 120.0,
) -> LoadResult:
    """Sends up to n_requests Poisson arrivals within max_time, then waits for every answer.

    A future's result may be (output, widths, node) (Cluster) for the accuracy
    prior; energy per request is an ESTIMATE, power_w() x latency (paper's E_t).
    """
    rng = np.random.default_rng(seed)
    result = LoadResult()
    lock = threading.Lock()
    pending: list[concurrent.futures.Future[Any]] = []
    t0 = time.monotonic()
    t_next = 0.0
    closed = [False]  # after the timeout, late answers are not counted twice

    def on_done(f: concurrent.futures.Future[Any], t_sent: float) -> None:
        lat = time.monotonic() - t_sent
        error = f.exception()
        with lock:
            if closed[0]:
                return
            if error is not None:
                result.failed += 1
                name = type(error).__name__
                result.errors[name] = result.errors.get(name, 0) + 1
                return
            result.completed += 1
            result.latencies_s.append(lat)
            value = f.result()
            if isinstance(value, tuple) and len(value) == 3:
                result.accuracy.append(accuracy_prior(value[1]))
            if power_w is not None:
                result.energy_j.append(power_w() * lat)

    while result.sent + result.rejected < n_requests:
        t_next += float(rng.exponential(1.0 / rate))
        if t_next > max_time:
            break
        delay = t0 + t_next - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        x = make_input(rng)
        t_sent = time.monotonic()
        try:
            f = submit(x)
        except OverloadedError:
            result.rejected += 1
            continue
        result.sent += 1
        f.add_done_callback(lambda f, t=t_sent: on_done(f, t))
        pending.append(f)
    concurrent.futures.wait(pending, timeout=timeout)
    result.wall_s = time.monotonic() - t0
    with lock:
        closed[0] = True
        unanswered = result.sent - result.completed - result.failed
        if unanswered:
            result.failed += unanswered
            result.errors["no answer within timeout"] = unanswered
    return result
