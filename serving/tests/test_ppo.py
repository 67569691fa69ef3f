"""The PPO router: hand-written gradients against finite differences, learning, save/load."""

from __future__ import annotations

import dataclasses
import pathlib

import numpy as np
import pytest

from braid_serving.accuracy import PAPER_LABEL, accuracy_prior
from braid_serving.ppo import PPOAgent, PPOConfig, forward, loss_and_grad, mixed_log_prob
from braid_serving.router import (
    LATENCY_HEAVY,
    TAIL_AWARE,
    BlockResult,
    Observation,
    PPORouter,
    RewardWeights,
    ServerStats,
    featurize,
)


def tiny_batch(config: PPOConfig, n: int, seed: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    states = rng.standard_normal((n, config.state_dim))
    actions = np.stack([rng.integers(0, k, n) for k in (config.n_servers, config.n_widths, config.n_groups)], 1)
    eps = rng.uniform(0.0, 0.5, n)
    returns = rng.standard_normal(n)
    advantages = rng.standard_normal(n)
    return states, actions, eps, returns, advantages


@pytest.mark.parametrize("server_features", [0, 1])  # 1: the shared per-server score u
@pytest.mark.parametrize("logp_shift", [0.0, 0.5, -0.5])  # ratios inside and outside the clip range
def test_gradient_matches_finite_differences(logp_shift: float, server_features: int) -> None:
    config = PPOConfig(state_dim=5, n_servers=3, n_widths=4, n_groups=2, hidden=6, c_h=0.05,
                       server_features=server_features)  # fmt: skip
    agent = PPOAgent(config, seed=1)
    params = {k: v.copy() for k, v in agent.params.items()}
    assert ("u" in params) == bool(server_features)
    for k in ("Ws", "Ww", "Wg", "u")[: 3 + bool(server_features)]:  # non-trivial heads so every term moves
        params[k] = np.random.default_rng(2).normal(0, 0.5, params[k].shape)
    states, actions, eps, returns, adv = tiny_batch(config, 7, seed=3)
    logp, _ = mixed_log_prob(forward(params, states), actions, eps)
    logp_old = logp + logp_shift * np.random.default_rng(4).uniform(0.2, 1.0, len(logp))
    _, grads, _ = loss_and_grad(params, config, states, actions, logp_old, eps, returns, adv)
    h = 1e-6
    for name, value in params.items():
        flat = value.reshape(-1)
        for j in range(0, flat.size, max(1, flat.size // 7)):
            old = flat[j]
            flat[j] = old + h
            up, _, _ = loss_and_grad(params, config, states, actions, logp_old, eps, returns, adv)
            flat[j] = old - h
            down, _, _ = loss_and_grad(params, config, states, actions, logp_old, eps, returns, adv)
            flat[j] = old
            numeric = (up - down) / (2 * h)
            assert grads[name].reshape(-1)[j] == pytest.approx(numeric, rel=1e-4, abs=1e-7), (name, j)


def test_mixed_server_likelihood_is_eq5() -> None:
    config = PPOConfig(state_dim=3, n_servers=4, n_widths=1, n_groups=1, hidden=4)
    agent = PPOAgent(config, seed=0)
    agent.params["Ws"] = np.random.default_rng(0).normal(0, 1, agent.params["Ws"].shape)
    state = np.ones((1, 3))
    out = forward(agent.params, state)
    p = np.exp(out["ls"][0]) / np.exp(out["ls"][0]).sum()
    logp, _ = mixed_log_prob(out, np.array([[2, 0, 0]]), np.array([0.3]))
    assert logp[0] == pytest.approx(np.log(0.7 * p[2] + 0.3 / 4))


def test_epsilon_schedule_decays_linearly_to_eps_min() -> None:
    agent = PPOAgent(PPOConfig(state_dim=2, n_servers=2, n_widths=1, n_groups=1, eps_max=0.5, eps_min=0.1,
                               eps_decay_steps=100))  # fmt: skip
    assert agent.epsilon() == pytest.approx(0.5)
    agent.steps = 50
    assert agent.epsilon() == pytest.approx(0.3)
    agent.steps = 1000
    assert agent.epsilon() == pytest.approx(0.1)


def test_learns_a_contextual_bandit() -> None:
    """Reward 1 for server = argmax of the state's first 3 features and width 2, else 0."""
    config = PPOConfig(state_dim=4, n_servers=3, n_widths=4, n_groups=2, hidden=32, lr=3e-3, c_h=0.001,
                       eps_decay_steps=2000)  # fmt: skip
    agent = PPOAgent(config, seed=0)
    rng = np.random.default_rng(5)

    def reward(state: np.ndarray, a: tuple[int, int, int]) -> float:
        return float(a[0] == int(state[:3].argmax())) + float(a[1] == 2)

    def score(mode: str) -> float:
        states = rng.uniform(0, 1, (300, 4))
        return float(np.mean([reward(s, agent.act(s, mode)[:3]) for s in states]))

    before = score("sample")
    for _ in range(40):
        states = rng.uniform(0, 1, (256, 4))
        acts = [agent.act(s) for s in states]
        rewards = [reward(s, a[:3]) for s, a in zip(states, acts)]
        agent.update(states, np.array([a[:3] for a in acts]), np.array([a[3] for a in acts]),
                     np.array([a[5] for a in acts]), np.array(rewards))  # fmt: skip
    after = score("greedy")
    assert before < 1.0  # random: about 1/3 + 1/4
    assert after > 1.8, (before, after)


def test_save_and_load_round_trip(tmp_path: pathlib.Path) -> None:
    router = PPORouter(n_servers=2, seed=3)
    obs = Observation(3, 10, [ServerStats(1, 50.0, 20.0, 0.01), ServerStats(4, 120.0, 80.0, 0.05)])
    path = str(tmp_path / "router.npz")
    router.save(path)
    loaded = PPORouter.load(path)
    state = featurize(obs)
    for a, b in zip(router.agent.probabilities(state), loaded.agent.probabilities(state)):
        np.testing.assert_array_equal(a, b)
    (tmp_path / "bad.npz").write_bytes(b"not a file")
    with pytest.raises(Exception):
        PPORouter.load(str(tmp_path / "bad.npz"))


def test_reward_is_eq7_with_the_paper_prior() -> None:
    w = RewardWeights(alpha=2.0, beta=3.0, gamma=0.5, delta=4.0, bonus=0.25, fail_penalty=0.0)
    r = BlockResult(latency_s=0.1, energy_j=2.0, widths=(0.25,) * 4, utilisations=[20.0, 60.0])
    assert w.reward(r) == pytest.approx(2.0 * 0.703 - 0.3 - 1.0 - 4.0 * 0.04 + 0.25)
    assert "paper" in PAPER_LABEL and "not measured" in PAPER_LABEL
    assert LATENCY_HEAVY.beta > 0


def test_accuracy_prior_tables_and_nearest_neighbour() -> None:
    assert accuracy_prior((1.0, 1.0, 1.0, 1.0)) == pytest.approx(0.7643)
    assert accuracy_prior((0.5, 0.25, 1.0, 0.75)) == pytest.approx(0.7453)
    assert accuracy_prior((1.0, 1.0, 1.0, 0.75)) == pytest.approx(0.7643)  # nearest: uniform 1.0
    with pytest.raises(ValueError, match="4 segments"):
        accuracy_prior((1.0, 1.0))
    with pytest.raises(ValueError, match="widths"):
        accuracy_prior((1.0, 1.0, 1.0, 1.5))


def _random_obs(rng: np.random.Generator) -> Observation:
    return Observation(0, 0, [ServerStats(int(rng.integers(0, 20)), 0.0, 0.0, 0.0, service_s=float(rng.uniform(1e-4, 2e-3)))
                              for _ in range(3)])  # fmt: skip


def test_expected_wait_features_and_the_paper_state() -> None:
    obs = Observation(3, 10, [ServerStats(4, 50.0, 20.0, 0.01, service_s=1e-3), ServerStats(4, 50.0, 20.0, 0.01)])
    paper, wait = featurize(obs, expected_wait=False), featurize(obs)
    assert paper.shape == (2 + 4 * 2,) and wait.shape == (2 + 6 * 2,)
    np.testing.assert_array_equal(wait[2:6], paper[2:6])
    assert wait[6] == pytest.approx(np.log1p(1e4 * 4 * 1e-3)) and wait[12] == 0.0  # same queue, other speed
    assert PPORouter(2).agent.config.server_features == 6
    assert PPORouter(2, expected_wait=False).agent.config.state_dim == 10


def test_the_expected_wait_state_learns_the_fastest_completion() -> None:
    """Reward 1 for the server with the least (queue + 1) x service_s: the queue alone cannot tell."""
    rng = np.random.default_rng(0)

    def score(expected_wait: bool) -> float:
        router = PPORouter(3, widths=[(0.5,) * 4], groups=[1], seed=0, expected_wait=expected_wait, lr=3e-3)
        agent = router.agent
        for _ in range(30):
            obs = [_random_obs(rng) for _ in range(256)]
            states = np.stack([featurize(o, expected_wait) for o in obs])
            acts = [agent.act(s) for s in states]
            best = [min(range(3), key=lambda i: (o.servers[i].queue + 1) * o.servers[i].service_s) for o in obs]
            agent.update(states, np.array([a[:3] for a in acts]), np.array([a[3] for a in acts]),
                         np.array([a[5] for a in acts]), np.array([float(a[0] == b) for a, b in zip(acts, best)]))  # fmt: skip
        test = [_random_obs(rng) for _ in range(300)]
        router.training, router.eval_mode = False, "greedy"
        picks = [router.decide(o).server for o in test]
        best = [min(range(3), key=lambda i: (o.servers[i].queue + 1) * o.servers[i].service_s) for o in test]
        return float(np.mean([p == b for p, b in zip(picks, best)]))

    with_wait, paper = score(True), score(False)
    assert with_wait > 0.85, (with_wait, paper)
    assert paper < with_wait - 0.2, (paper, with_wait)


def test_tail_term_is_not_in_eq7_unless_asked() -> None:
    r = BlockResult(latency_s=0.1, energy_j=0.0, widths=(0.25,) * 4, utilisations=[], failed=1, max_latency_s=0.4)
    paper = RewardWeights(fail_penalty=1.0)
    assert paper.tail == 0.0 and paper.reward(r) == pytest.approx(0.703 - 0.1 - 1.0)
    tail = dataclasses.replace(paper, tail=200.0)
    assert tail.reward(r) == pytest.approx(paper.reward(r) - 200.0 * 0.4)
    assert TAIL_AWARE.tail > 0 and TAIL_AWARE.fail_penalty > LATENCY_HEAVY.fail_penalty
    assert (TAIL_AWARE.alpha, TAIL_AWARE.beta, TAIL_AWARE.gamma) == (LATENCY_HEAVY.alpha, LATENCY_HEAVY.beta, LATENCY_HEAVY.gamma)


def test_a_paper_state_router_file_still_loads(tmp_path: pathlib.Path) -> None:
    for expected_wait in (False, True):
        path = str(tmp_path / f"r{expected_wait}.npz")
        PPORouter(3, seed=1, expected_wait=expected_wait).save(path)
        loaded = PPORouter.load(path)
        assert loaded.expected_wait is expected_wait
        assert loaded.decide(_random_obs(np.random.default_rng(1))).server in (0, 1, 2)


def test_a_full_or_dead_server_gets_no_block_and_the_redirect_is_counted() -> None:
    """Server 0 is full and server 2 dead: every decision lands on server 1 (room left) or, when
    nothing has room, on the least-loaded live server (whose refusal is the backpressure)."""
    router = PPORouter(3, seed=4)
    router.training = False
    full = ServerStats(queue=3, power_w=10.0, utilisation=50.0, room=0)
    roomy = ServerStats(queue=40, power_w=10.0, utilisation=90.0, room=100)
    dead = ServerStats(queue=0, power_w=0.0, utilisation=0.0, alive=False)
    obs = Observation(fifo=16, done=0, servers=[full, roomy, dead])
    picked = {router.decide(obs).server for _ in range(200)}
    assert picked == {1}
    assert 0 < router.redirected <= 200  # the untrained policy picks 0 or 2 some of the time
    # Room for one request: every block goes there, shrunk to one request.
    small = dataclasses.replace(roomy, room=1)
    for _ in range(100):
        d = router.decide(Observation(16, 0, [full, small, dead]))
        assert (d.server, d.group) == (1, 1), d
    # No room anywhere: the least-loaded live server (it refuses: the backpressure).
    assert {router.decide(Observation(16, 0, [full, dataclasses.replace(roomy, room=0), dead])).server
            for _ in range(50)} == {0}
    # Unknown room (-1) always fits; with the block clipped to the FIFO (1 request) room 1 fits too.
    unknown = dataclasses.replace(roomy, room=-1)
    assert {router.decide(Observation(16, 0, [full, unknown, dead])).server for _ in range(50)} == {1}
    assert {router.decide(Observation(1, 0, [full, small, dead])).server for _ in range(50)} == {1}
