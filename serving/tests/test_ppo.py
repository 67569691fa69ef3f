"""The PPO router: hand-written gradients against finite differences, learning, save/load."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

from braid_serving.accuracy import PAPER_LABEL, accuracy_prior
from braid_serving.ppo import PPOAgent, PPOConfig, forward, loss_and_grad, mixed_log_prob
from braid_serving.router import (
    LATENCY_HEAVY,
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


@pytest.mark.parametrize("logp_shift", [0.0, 0.5, -0.5])  # ratios inside and outside the clip range
def test_gradient_matches_finite_differences(logp_shift: float) -> None:
    config = PPOConfig(state_dim=5, n_servers=3, n_widths=4, n_groups=2, hidden=6, c_h=0.05)
    agent = PPOAgent(config, seed=1)
    params = {k: v.copy() for k, v in agent.params.items()}
    for k in ("Ws", "Ww", "Wg"):  # non-trivial heads so every term moves
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
