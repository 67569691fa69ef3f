"""GreedyScheduler against the paper's Algorithm 1, with a fake clock and a fake backend."""

from __future__ import annotations

from typing import Any

import pytest

from braid_serving.greedy import GreedyConfig, GreedyScheduler, OverloadedError, SegmentRequest

MB = 1 << 20


class FakeClock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


class FakeBackend:
    """Instances cost width * 10 MB; utilisation is whatever the test sets."""

    device = "fake"

    def __init__(self) -> None:
        self.util: float | None = None
        self.loaded: list[tuple[int, float, float]] = []
        self.unloaded: list[tuple[int, float, float]] = []

    def weight_bytes(self, segment: int, width: float, input_width: float) -> int:
        return int(width * 10 * MB)

    def load(self, segment: int, width: float, input_width: float) -> Any:
        self.loaded.append((segment, width, input_width))
        return (segment, width, input_width)

    def unload(self, handle: Any) -> None:
        self.unloaded.append(handle)

    def utilisation(self) -> float | None:
        return self.util


def make(**kw: Any) -> tuple[GreedyScheduler, FakeBackend, FakeClock]:
    backend, clock = FakeBackend(), FakeClock()
    config = GreedyConfig(**{"b_max": 4, "m_max_bytes": 100 * MB, "u_blk": 90.0, "t_idle": 5.0, "q_th": 6, "n_new": 3, **kw})
    return GreedyScheduler(config, backend, clock), backend, clock


def req(seg: int, w: float, w_prev: float = 1.0, tag: Any = None) -> SegmentRequest:
    return SegmentRequest(seg, w, w_prev, payload=tag)


def test_batches_head_key_up_to_b_max_in_fifo_order() -> None:
    sched, backend, _ = make(b_max=3)
    tags = [(0, 0.5), (0, 0.25), (0, 0.5), (1, 0.5), (0, 0.5), (0, 0.5), (0, 0.5)]
    for i, (seg, w) in enumerate(tags):
        sched.submit(req(seg, w, tag=i))
    started = sched.dispatch()
    # Head key (0, 0.5, 1.0): the first 3 matching requests, skipping others (line 6).
    assert [r.payload for r in started[0].batch] == [0, 2, 4]
    assert started[0].instance.segment == 0 and started[0].instance.width == 0.5
    # Then the next head, (0, 0.25), then (1, 0.5), then the remaining (0, 0.5) ones: a second instance.
    assert [[r.payload for r in d.batch] for d in started[1:]] == [[1], [3], [5, 6]]
    assert not sched.queue
    assert backend.loaded == [(0, 0.5, 1.0), (0, 0.25, 1.0), (1, 0.5, 1.0), (0, 0.5, 1.0)]


def test_best_fit_is_the_smallest_free_width_at_least_w_req_on_the_same_input_width() -> None:
    sched, backend, _ = make()
    for w in (1.0, 0.75, 0.25):
        sched._load(1, w, 0.5)
    sched._load(1, 0.5, 1.0)  # right width, wrong input width: never a fit
    sched._load(2, 0.5, 0.5)  # wrong segment
    assert sched.find_free_best_fit(1, 0.5, 0.5).width == 0.75
    assert sched.find_free_best_fit(1, 0.25, 0.5).width == 0.25
    assert sched.find_free_best_fit(1, 1.0, 0.5).width == 1.0
    sched.submit(req(1, 0.5, 0.5, tag="a"))
    sched.submit(req(1, 0.5, 0.5, tag="b"))
    (d,) = sched.dispatch()  # one batch of both, on the 0.75 instance, nothing loaded
    assert d.instance.width == 0.75 and [r.payload for r in d.batch] == ["a", "b"]
    assert len(backend.loaded) == 5
    # 0.75 is busy now: the next best fit is 1.0.
    assert sched.find_free_best_fit(1, 0.5, 0.5).width == 1.0


def test_scale_up_loads_n_new_when_the_key_queue_exceeds_q_th() -> None:
    sched, backend, _ = make(b_max=10, q_th=6, n_new=3)
    for i in range(7):  # 7 queued for the key > q_th
        sched.submit(req(0, 0.5, tag=i))
    (d,) = sched.dispatch()
    assert backend.loaded == [(0, 0.5, 1.0)] * 3  # one scale-up of n_new instances
    assert [r.payload for r in d.batch] == list(range(7))
    assert sum(1 for i in sched.instances if not i.busy) == 2  # ready for the next batches
    for i in range(3):
        sched.submit(req(0, 0.5, tag=i))
    assert len(sched.dispatch()) == 1 and len(backend.loaded) == 3  # a free one is used, none loaded


def test_scale_up_at_or_below_q_th_loads_one() -> None:
    sched, backend, _ = make(b_max=10, q_th=6, n_new=3)
    for i in range(6):  # not above q_th
        sched.submit(req(0, 0.5, tag=i))
    (d,) = sched.dispatch()
    assert backend.loaded == [(0, 0.5, 1.0)] and len(d.batch) == 6


def test_scale_up_stops_at_m_max() -> None:
    sched, backend, _ = make(b_max=10, q_th=1, n_new=3, m_max_bytes=25 * MB)
    for i in range(5):
        sched.submit(req(0, 1.0, tag=i))
    (d,) = sched.dispatch()
    assert len(backend.loaded) == 2 and sched.memory_used() == 20 * MB  # the third would pass 25 MB


def test_can_load_respects_m_max() -> None:
    sched, backend, _ = make(m_max_bytes=25 * MB, b_max=1, q_th=100)
    for i in range(4):
        sched.submit(req(0, 1.0, tag=i))  # 10 MB each: two fit in 25 MB
    started = sched.dispatch()
    assert len(started) == 2 and sched.memory_used() == 20 * MB
    assert [r.payload for r in sched.queue] == [2, 3]  # requeued at the front, order kept
    assert sched.requeues == 1
    assert not sched.can_load(0, 1.0, 1.0)
    assert sched.can_load(0, 0.5, 1.0)  # 5 MB more still fits


def test_can_load_respects_the_utilisation_block() -> None:
    sched, backend, _ = make()
    backend.util = 90.0  # at U_blk: blocked (u >= U_blk)
    sched.submit(req(0, 0.5, tag="x"))
    assert sched.dispatch() == []
    assert backend.loaded == [] and [r.payload for r in sched.queue] == ["x"]
    backend.util = 89.9
    (d,) = sched.dispatch()
    assert d.batch[0].payload == "x"
    backend.util = None  # no sample: not blocked (line 20)
    assert sched.can_load(0, 0.5, 1.0)


def test_requeue_keeps_the_blocked_batch_at_the_front_and_stops() -> None:
    sched, backend, _ = make(m_max_bytes=10 * MB, b_max=2)
    sched.submit(req(0, 1.0, tag="a"))
    (first,) = sched.dispatch()  # loads the only instance that fits
    for tag, w in (("b", 1.0), ("c", 0.25), ("d", 1.0), ("e", 1.0)):
        sched.submit(req(0, w, tag=tag))
    # Head "b" needs a free >=1.0 instance: busy, and nothing more fits -> requeued; "c" waits behind it
    # (head of line, as the algorithm's `continue` re-peeks the same head).
    assert sched.dispatch() == []
    assert [r.payload for r in sched.queue] == ["b", "d", "c", "e"]
    sched.complete(first)
    (d,) = sched.dispatch()[:1]
    assert [r.payload for r in d.batch] == ["b", "d"]


def test_idle_unload_after_t_idle_only_for_free_instances() -> None:
    sched, backend, clock = make(t_idle=5.0)
    sched.submit(req(0, 0.5))
    sched.submit(req(1, 0.5))
    d0, d1 = sched.dispatch()
    clock.t = 2.0
    sched.complete(d0)  # t_last = 2
    clock.t = 6.9
    assert sched.unload_idle() == []  # 4.9 s idle; d1's instance is busy
    clock.t = 7.0
    gone = sched.unload_idle()
    assert [(i.segment, i.width) for i in gone] == [(0, 0.5)]
    assert backend.unloaded == [(0, 0.5, 1.0)]
    clock.t = 100.0
    assert sched.unload_idle() == []  # busy instances stay however long
    sched.complete(d1)
    assert sched.unload_idle() == [] and sched.next_idle_deadline() == 105.0
    clock.t = 105.0
    assert len(sched.unload_idle()) == 1 and sched.memory_used() == 0


def test_telemetry_counts_queues_memory_and_latency_percentiles() -> None:
    sched, backend, clock = make(b_max=10, q_th=100)
    for i in range(10):
        clock.t = i * 0.1
        sched.submit(req(0, 0.5))
    sched.submit(req(2, 0.25))
    t = sched.telemetry()
    assert t.queue_sizes == {0: 10, 2: 1} and t.queued == 11 and t.memory_bytes == 0
    started = sched.dispatch()
    clock.t = 2.0
    sched.complete(started[0])  # latencies 2.0 - 0.1 * i
    t = sched.telemetry()
    assert t.memory_bytes == int(7.5 * MB) and t.instances == 2 and t.running == 1
    assert t.latency_p50 == pytest.approx(1.5, abs=0.051) and t.latency_p99 == pytest.approx(2.0)
    assert t.utilisation == 50.0  # no backend sample: share of busy instances


def test_backpressure_refuses_new_requests_but_never_an_accepted_ones_next_segment() -> None:
    sched, _, _ = make(max_queue=2)
    sched.submit(req(0, 0.5))
    sched.submit(req(0, 0.5))
    with pytest.raises(OverloadedError, match="overloaded"):
        sched.submit(req(0, 0.5))
    sched.submit(req(1, 0.5, 0.5), force=True)
    assert len(sched.queue) == 3


def test_bad_input_is_a_clear_error() -> None:
    sched, _, _ = make()
    with pytest.raises(ValueError, match="slimming set"):
        sched.submit(req(0, 0.3))
    with pytest.raises(ValueError):
        GreedyConfig(b_max=0)
    with pytest.raises(ValueError):
        GreedyConfig(u_blk=0)
