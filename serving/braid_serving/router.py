"""Routers above the per-server greedy schedulers: random (the paper's baseline),
round-robin, least-loaded and the PPO router, behind one interface.

    router = PPORouter(n_servers=3, widths=WIDTH_CHOICES, groups=(1, 2, 4, 8), weights=RewardWeights())
    d = router.decide(obs)                 # Decision(server, widths, group)
    ...                                    # the block of d.group requests runs on d.server at d.widths
    router.feedback(d, BlockResult(...))   # PPO learns online from telemetry (others ignore it)

Observation is the paper's state (eq. 1): the global FIFO length, the
completed count and per server its queue, power and utilisation, plus its
recent latency (telemetry the issue lists). The reward (eq. 7) is
alpha * accuracy prior - beta * latency - gamma * energy - delta * Var(U/100) + bonus.
"""

from __future__ import annotations

import collections
import dataclasses
import math
import random
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from .accuracy import accuracy_prior, paper_table
from .greedy import OverloadedError
from .ppo import PPOAgent, PPOConfig

# The width tuples a router picks from: the 8 the paper tabulates (Tables I-II).
WIDTH_CHOICES: tuple[tuple[float, ...], ...] = tuple(sorted(paper_table(), key=lambda w: (-sum(w), w)))
UNIFORM: dict[float, tuple[float, ...]] = {w: (w, w, w, w) for w in (1.0, 0.75, 0.5, 0.25)}


@dataclasses.dataclass
class ServerStats:
    queue: int  # requests waiting or running on the server
    power_w: float
    utilisation: float  # %
    latency_s: float = 0.0  # recent mean end-to-end latency
    alive: bool = True
    service_s: float = 0.0  # measured device seconds per request (EWMA); queue x service_s = expected wait
    room: int = -1  # requests it still accepts before refusing them ("overloaded"); -1: unbounded or unknown


def has_room(s: ServerStats, n: int) -> bool:
    """True when the server accepts n more requests (always, when its room is unknown)."""
    return s.room < 0 or s.room >= n


@dataclasses.dataclass
class Observation:
    fifo: int  # requests waiting for a routing decision
    done: int  # requests completed so far
    servers: list[ServerStats]


@dataclasses.dataclass
class Decision:
    server: int
    widths: tuple[float, ...]
    group: int
    token: Any = None  # the router's own bookkeeping (PPO: the transition)


@dataclasses.dataclass
class BlockResult:
    latency_s: float  # mean end-to-end latency of the block's requests
    energy_j: float  # E_t = mean server power x latency (paper, eq. 7)
    widths: tuple[float, ...]
    utilisations: list[float]  # % per server when the block finished
    failed: int = 0
    max_latency_s: float = 0.0  # the block's worst end-to-end latency (the tail term's input)


@dataclasses.dataclass(frozen=True)
class RewardWeights:
    alpha: float = 1.0
    beta: float = 1.0  # per second
    gamma: float = 0.0  # per joule
    delta: float = 0.0
    bonus: float = 0.0
    fail_penalty: float = 1.0  # per failed request of the block (part of the bonus term b_t)
    tail: float = 0.0  # per second of the block's worst latency: NOT in eq. 7 (0 = the paper's form)

    def reward(self, r: BlockResult) -> float:
        util = np.asarray(r.utilisations, dtype=np.float64) / 100.0
        imbalance = float(util.var()) if util.size else 0.0
        return (
            self.alpha * accuracy_prior(r.widths)
            - self.beta * r.latency_s
            - self.gamma * r.energy_j
            - self.delta * imbalance
            + self.bonus
            - self.fail_penalty * r.failed
            - self.tail * r.max_latency_s
        )


# Latency-heavy (the paper's Table IV regime) and balanced (Table V) weightings.
LATENCY_HEAVY = RewardWeights(alpha=1.0, beta=200.0, gamma=0.5, delta=1.0)
BALANCED = RewardWeights(alpha=1.0, beta=2.0, gamma=0.01, delta=1.0)
# Latency-heavy plus the tail term (the block's worst latency, 200/s) and a failed request costing
# 1000 (5 s of latency, not 1): NOT eq. 7; the pinned-width routers of the trade-off table use it.
TAIL_AWARE = dataclasses.replace(LATENCY_HEAVY, tail=200.0, fail_penalty=1000.0)


class Router(Protocol):
    name: str

    def decide(self, obs: Observation) -> Decision: ...

    def feedback(self, decision: Decision, result: BlockResult) -> None: ...


def _alive(obs: Observation) -> list[int]:
    alive = [i for i, s in enumerate(obs.servers) if s.alive]
    if not alive:
        raise RuntimeError("no server is alive")
    return alive


def every_live_server_full(obs: Observation) -> bool:
    """True when some server is alive and none of the live ones accepts a request: the router
    holds its FIFO then (the simulator and Cluster both)."""
    live = [s for s in obs.servers if s.alive]
    return bool(live) and not any(has_room(s, 1) for s in live)


def least_loaded_with_room(obs: Observation, block: int) -> int:
    """The live server with the fewest requests among those with room for the block (ties: lowest
    index); when none has, the live one with the most room (callers shrink the block to it); when
    none has any, the least-loaded live one (it refuses: the backpressure)."""
    alive = _alive(obs)
    fits = [i for i in alive if has_room(obs.servers[i], block)]
    if fits:
        return min(fits, key=lambda i: (obs.servers[i].queue, i))
    some = [i for i in alive if obs.servers[i].room > 0]
    if some:
        return max(some, key=lambda i: (obs.servers[i].room, -obs.servers[i].queue, -i))
    return min(alive, key=lambda i: (obs.servers[i].queue, i))


def fitted_group(s: ServerStats, group: int) -> int:
    """The block size the server can take: `group`, or its room when smaller (at least 1)."""
    return group if s.room < 0 else max(1, min(group, s.room))


class _Fixed:
    """Width and group policy shared by the baselines: a fixed tuple, or random per block."""

    def __init__(self, widths: tuple[float, ...] | None, group: int, seed: int) -> None:
        self.widths = widths
        self.group = group
        self.rng = random.Random(seed)

    def pick_widths(self) -> tuple[float, ...]:
        return self.widths if self.widths is not None else self.rng.choice(WIDTH_CHOICES)

    def feedback(self, decision: Decision, result: BlockResult) -> None:
        del decision, result


class RandomRouter(_Fixed):
    """The paper's baseline: a uniformly random server (and width tuple when widths is None)."""

    name = "random"

    def decide(self, obs: Observation) -> Decision:
        return Decision(self.rng.choice(_alive(obs)), self.pick_widths(), self.group)


class RoundRobinRouter(_Fixed):
    name = "round-robin"

    def __init__(self, widths: tuple[float, ...] | None, group: int, seed: int) -> None:
        super().__init__(widths, group, seed)
        self._next = 0

    def decide(self, obs: Observation) -> Decision:
        alive = _alive(obs)
        n = len(obs.servers)
        for k in range(n):
            i = (self._next + k) % n
            if i in alive:
                self._next = i + 1
                return Decision(i, self.pick_widths(), self.group)
        raise AssertionError("unreachable")


class LeastLoadedRouter(_Fixed):
    """The server with the fewest requests waiting or running (ties: lowest index), skipping
    servers without room for the block."""

    name = "least-loaded"

    def decide(self, obs: Observation) -> Decision:
        best = least_loaded_with_room(obs, max(1, min(self.group, obs.fifo)))
        return Decision(best, self.pick_widths(), fitted_group(obs.servers[best], self.group))


PAPER_FEATURES = 4  # per server in eq. 1's state (+ recent latency)
WAIT_FEATURES = 6  # and the expected wait and measured service time per request


def featurize(obs: Observation, expected_wait: bool = True, p_ref_w: float = 250.0) -> np.ndarray:
    """Eq. 1's state vector, scaled to O(1) (log of counts, power / p_ref, U / 100).

    expected_wait adds per server log(queue x service_s) and log(service_s): the
    time its held requests need at its measured speed (not in the paper's state).
    """
    feats = [math.log1p(obs.fifo) / 4.0, math.log1p(obs.done) / 10.0]
    for s in obs.servers:
        feats += [
            math.log1p(s.queue) / 4.0,
            s.power_w / p_ref_w,
            s.utilisation / 100.0,
            math.log1p(1000.0 * s.latency_s) / 6.0,
        ]
        if expected_wait:
            feats += [math.log1p(1e4 * s.queue * s.service_s), math.log1p(1e4 * s.service_s)]
    return np.asarray(feats, dtype=np.float64)


@dataclasses.dataclass
class _Transition:
    state: np.ndarray
    action: tuple[int, int, int]
    logp: float
    eps: float


class PPORouter:
    """The factored PPO router (ppo.py); learns online from BlockResults unless frozen.

    widths: the width-head's choices (one tuple pins the width: the router
    then learns server and group only, for comparisons at equal accuracy prior).
    """

    name = "ppo"

    def __init__(
        self,
        n_servers: int,
        widths: Sequence[tuple[float, ...]] = WIDTH_CHOICES,
        groups: Sequence[int] = (1, 2, 4, 8),
        weights: RewardWeights = LATENCY_HEAVY,
        seed: int = 0,
        update_every: int = 512,
        agent: PPOAgent | None = None,
        expected_wait: bool = True,
        **config: Any,
    ) -> None:
        self.widths = [tuple(w) for w in widths]
        per_server = WAIT_FEATURES if expected_wait else PAPER_FEATURES
        if agent is not None:  # a saved agent's state size says which features it was trained on
            expected_wait = agent.config.state_dim == 2 + WAIT_FEATURES * n_servers
            per_server = WAIT_FEATURES if expected_wait else PAPER_FEATURES
        self.expected_wait = expected_wait
        self.groups = list(groups)
        self.weights = weights
        self.update_every = update_every
        self.agent = agent or PPOAgent(
            PPOConfig(state_dim=2 + per_server * n_servers, n_servers=n_servers, n_widths=len(self.widths),
                      server_features=per_server if expected_wait else 0,
                      n_groups=len(self.groups), **config),
            seed=seed,
        )  # fmt: skip
        c = self.agent.config
        if c.state_dim != 2 + per_server * n_servers:
            raise ValueError(f"agent state size {c.state_dim} fits neither feature set for {n_servers} servers")
        if (c.n_servers, c.n_widths, c.n_groups) != (n_servers, len(self.widths), len(self.groups)):
            raise ValueError(f"agent heads {(c.n_servers, c.n_widths, c.n_groups)} do not match the router")
        self.redirected = 0  # decisions for a dead or full server sent to the least-loaded one with room
        self.training = True  # False: a frozen policy acting in eval_mode
        self.eval_mode = "sample"
        self._buffer: list[tuple[_Transition, float]] = []
        self.updates = 0
        self.last_info: dict[str, float] = {}

    def decide(self, obs: Observation) -> Decision:
        state = featurize(obs, self.expected_wait)
        srv, w, g, logp, _, eps = self.agent.act(state, "explore" if self.training else self.eval_mode)
        alive = _alive(obs)
        block = max(1, min(self.groups[g], obs.fifo))
        if srv not in alive or not has_room(obs.servers[srv], block):
            # A dead server, or one that would refuse the block ("overloaded"): the least-loaded
            # live one with room, else the least-loaded live one (backpressure). Not learned from:
            # the action taken is not the one sampled.
            srv = least_loaded_with_room(obs, block)
            self.redirected += 1
            return Decision(srv, self.widths[w], fitted_group(obs.servers[srv], self.groups[g]), None)
        token = _Transition(state, (srv, w, g), logp, eps) if self.training else None
        return Decision(srv, self.widths[w], self.groups[g], token)

    def feedback(self, decision: Decision, result: BlockResult) -> None:
        if not self.training or decision.token is None:
            return
        self._buffer.append((decision.token, self.weights.reward(result)))
        if len(self._buffer) >= self.update_every:
            self.flush()

    def flush(self) -> None:
        """Run a PPO update on the transitions collected so far."""
        if len(self._buffer) < 8:
            return
        tr = [t for t, _ in self._buffer]
        self.last_info = self.agent.update(
            np.stack([t.state for t in tr]),
            np.asarray([t.action for t in tr]),
            np.asarray([t.logp for t in tr]),
            np.asarray([t.eps for t in tr]),
            np.asarray([r for _, r in self._buffer]),
        )
        self.updates += 1
        self._buffer.clear()

    def save(self, path: str) -> None:
        self.agent.save(path)

    @classmethod
    def load(cls, path: str, widths: Sequence[tuple[float, ...]] = WIDTH_CHOICES,
             groups: Sequence[int] = (1, 2, 4, 8), weights: RewardWeights = LATENCY_HEAVY) -> PPORouter:  # fmt: skip
        agent = PPOAgent.load(path)
        return cls(agent.config.n_servers, widths, groups, weights, agent=agent)


class BoundedFifo:
    """The router's global FIFO with backpressure: push raises OverloadedError when full."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be >= 1, got {capacity}")
        self.capacity = capacity
        self.items: collections.deque[Any] = collections.deque()

    def push(self, item: Any) -> None:
        if len(self.items) >= self.capacity:
            raise OverloadedError(f"overloaded: {len(self.items)} requests await routing (capacity {self.capacity}); retry later")
        self.items.append(item)

    def pop_block(self, n: int) -> list[Any]:
        return [self.items.popleft() for _ in range(min(n, len(self.items)))]

    def __len__(self) -> int:
        return len(self.items)
