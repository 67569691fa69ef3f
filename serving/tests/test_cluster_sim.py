"""The cluster simulator: conservation, backpressure, a killed server, the baselines' rules."""

from __future__ import annotations

import dataclasses

import pytest

from braid_serving.cluster_sim import (
    PAPER_LIKE_CLUSTER,
    ClusterSim,
    LatencyModel,
    ServerSpec,
    slim_resnet_weight_bytes,
)
from braid_serving.greedy import GreedyConfig
from braid_serving.router import (
    UNIFORM,
    LeastLoadedRouter,
    Observation,
    PPORouter,
    RandomRouter,
    RoundRobinRouter,
    ServerStats,
)


def conserved(res) -> None:  # type: ignore[no-untyped-def]
    assert res.generated == res.accepted + res.rejected
    assert res.accepted == res.completed + res.failed
    assert len(res.latencies_s) == res.completed == len(res.accuracy)
    assert sum(res.failures.values()) == res.failed


@pytest.mark.parametrize("router", [RandomRouter(None, 4, 1), RoundRobinRouter(None, 2, 1),
                                    LeastLoadedRouter(UNIFORM[0.5], 8, 1), PPORouter(3, seed=0)])  # fmt: skip
def test_every_accepted_request_completes_or_fails(router) -> None:  # type: ignore[no-untyped-def]
    sim = ClusterSim(PAPER_LIKE_CLUSTER, LatencyModel.default())
    res = sim.run(router, rate=1500.0, n_requests=1500, max_time=5.0, seed=2)
    conserved(res)
    assert res.generated == 1500 and res.completed > 0
    assert min(res.latencies_s) > 0


def test_overload_is_refused_at_the_bounded_fifo_not_queued_forever() -> None:
    slow = [ServerSpec("slow", speed=0.01)]
    sim = ClusterSim(slow, LatencyModel.default(), fifo_capacity=50,
                     greedy=GreedyConfig(max_queue=40, t_idle=1.0))  # fmt: skip
    res = sim.run(RandomRouter(UNIFORM[1.0], 8, 0), rate=20000.0, n_requests=3000, max_time=1.0, seed=0)
    conserved(res)
    # The full server makes the router hold its FIFO, whose overflow is refused at the door.
    assert res.held > 0 and res.rejected > 0
    assert res.completed > 0


def test_while_every_server_is_full_requests_wait_in_the_fifo_not_fail() -> None:
    """Blocks of one to the least-loaded server never meet a full one: the overload is refused
    at the FIFO (rejected) and no accepted request fails."""
    sim = ClusterSim(PAPER_LIKE_CLUSTER, LatencyModel.default(), fifo_capacity=200,
                     greedy=GreedyConfig(max_queue=30, t_idle=1.0))  # fmt: skip
    res = sim.run(LeastLoadedRouter(UNIFORM[1.0], 1, 0), rate=20000.0, n_requests=3000, max_time=1.0, seed=4)
    conserved(res)
    assert res.held > 0 and res.rejected > 0
    assert res.failed == 0 and res.completed == res.accepted


def test_a_killed_server_loses_no_accepted_request() -> None:
    sim = ClusterSim(PAPER_LIKE_CLUSTER, LatencyModel.default())
    res = sim.run(RoundRobinRouter(UNIFORM[1.0], 4, 0), rate=1000.0, n_requests=3000, max_time=5.0, seed=3,
                  kill=(1, 0.5))  # fmt: skip
    conserved(res)
    assert res.retried > 0 and res.failed == 0 and res.completed == res.accepted


def test_same_seed_same_result_and_heterogeneous_speeds_matter() -> None:
    sim = ClusterSim(PAPER_LIKE_CLUSTER, LatencyModel.default())
    a = sim.run(RandomRouter(UNIFORM[0.5], 4, 7), rate=1000.0, n_requests=800, max_time=5.0, seed=5)
    b = sim.run(RandomRouter(UNIFORM[0.5], 4, 7), rate=1000.0, n_requests=800, max_time=5.0, seed=5)
    assert a.latencies_s == b.latencies_s
    fast = sim.run(RoundRobinRouter(UNIFORM[1.0], 1, 0), rate=100.0, n_requests=200, max_time=5.0, seed=1)
    one_slow = ClusterSim([dataclasses.replace(s, speed=0.1) for s in PAPER_LIKE_CLUSTER], LatencyModel.default())
    slow = one_slow.run(RoundRobinRouter(UNIFORM[1.0], 1, 0), rate=100.0, n_requests=200, max_time=5.0, seed=1)
    assert sum(slow.latencies_s) > 2 * sum(fast.latencies_s)  # 10x slower batches, plus the same routing delay


def test_least_loaded_and_round_robin_rules() -> None:
    obs = Observation(0, 0, [ServerStats(5, 0, 0), ServerStats(2, 0, 0), ServerStats(2, 0, 0, alive=True),
                             ServerStats(0, 0, 0, alive=False)])  # fmt: skip
    assert LeastLoadedRouter(None, 1, 0).decide(obs).server == 1
    rr = RoundRobinRouter(UNIFORM[1.0], 1, 0)
    assert [rr.decide(obs).server for _ in range(4)] == [0, 1, 2, 0]
    assert {RandomRouter(None, 1, s).decide(obs).server for s in range(40)} == {0, 1, 2}


def test_weight_bytes_model_matches_slim_resnet_parameter_count() -> None:
    total = sum(slim_resnet_weight_bytes(s, 1.0, 1.0) for s in range(4)) / 4
    assert 1.2e6 < total < 1.3e6  # docs/slimmable.md: 1.25 M parameters
    assert slim_resnet_weight_bytes(3, 0.25, 0.25) < slim_resnet_weight_bytes(3, 0.25, 1.0) < slim_resnet_weight_bytes(3, 1.0, 1.0)


def test_the_simulator_reports_measured_service_time_and_the_block_tail() -> None:
    """service_s per server follows its speed (the expected-wait feature's input); max_latency_s >= the mean."""
    seen: list = []  # type: ignore[type-arg]

    class Spy(LeastLoadedRouter):
        def decide(self, obs):  # type: ignore[no-untyped-def]
            seen.append([s.service_s for s in obs.servers])
            return super().decide(obs)

        def feedback(self, decision, result):  # type: ignore[no-untyped-def]
            assert result.max_latency_s >= result.latency_s > 0.0

    sim = ClusterSim(PAPER_LIKE_CLUSTER, LatencyModel.default())
    conserved(sim.run(Spy(UNIFORM[0.5], 1, 1), rate=2000.0, n_requests=1000, max_time=5.0, seed=3))
    fast, _, slow = seen[-1]
    assert slow / fast == pytest.approx(1.0 / PAPER_LIKE_CLUSTER[2].speed, rel=0.5)
