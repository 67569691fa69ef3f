"""The Slim Scheduler paper's factored PPO router policy, in numpy (section III-B, eqs. 1-13).

    agent = PPOAgent(PPOConfig(state_dim=14, n_servers=3, n_widths=8, n_groups=4), seed=0)
    a_srv, a_w, a_g, logp, value, eps = agent.act(state)          # sampled, eps-mixed server head
    agent.update(states, actions, logp_old, eps, rewards)         # K epochs of the clipped surrogate
    agent.save("router.npz"); agent = PPOAgent.load("router.npz")

A shared two-layer tanh MLP gives server / width / group logits and a value
(eq. 3); the policy is a product of categoricals (eq. 4); the server head is
mixed with a uniform eps_t (eq. 5) and that mixture is the likelihood PPO uses
(eq. 6). One-step returns R_t = r_t, advantages R_t - V_old(s_t) normalised
(eq. 8); loss -L_clip + c_v L_V - c_H H (eqs. 10-13) with eps_clip 0.2, c_v
0.5, K = 3 epochs, global gradient-norm clipping, Adam. Gradients are written
out by hand (tests/test_ppo.py checks them against finite differences).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import numpy as np

Params = dict[str, np.ndarray]


@dataclasses.dataclass(frozen=True)
class PPOConfig:
    state_dim: int
    n_servers: int
    n_widths: int
    n_groups: int
    hidden: int = 64
    clip: float = 0.2  # eps in eq. 10
    c_v: float = 0.5
    c_h: float = 0.01  # entropy weight (a hyperparameter in the paper)
    epochs: int = 3  # K
    minibatch: int = 128
    lr: float = 1e-3
    max_grad_norm: float = 0.5
    eps_max: float = 0.3  # server-head exploration, eq. 5
    eps_min: float = 0.02
    eps_decay_steps: int = 5000  # T_dec
    server_features: int = 0  # > 0: the state ends with that many features per server, and each
    # server's logit adds u . (its features), u shared by all servers (not in the paper)


def _softmax(logits: np.ndarray) -> np.ndarray:
    z = logits - logits.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def _entropy(p: np.ndarray) -> np.ndarray:
    return -(p * np.log(np.clip(p, 1e-12, None))).sum(axis=-1)


def init_params(config: PPOConfig, rng: np.random.Generator) -> Params:
    def dense(n_in: int, n_out: int, scale: float) -> np.ndarray:
        return rng.normal(0.0, scale / np.sqrt(n_in), size=(n_in, n_out))

    h = config.hidden
    return {
        "W1": dense(config.state_dim, h, 1.0), "b1": np.zeros(h),
        "W2": dense(h, h, 1.0), "b2": np.zeros(h),
        "Ws": dense(h, config.n_servers, 0.01), "bs": np.zeros(config.n_servers),
        "Ww": dense(h, config.n_widths, 0.01), "bw": np.zeros(config.n_widths),
        "Wg": dense(h, config.n_groups, 0.01), "bg": np.zeros(config.n_groups),
        "Wv": dense(h, 1, 0.1), "bv": np.zeros(1),
    } | ({"u": np.zeros(config.server_features)} if config.server_features else {})  # fmt: skip


def _server_slices(states: np.ndarray, n_servers: int, per_server: int) -> np.ndarray:
    """[n, n_servers, per_server]: the per-server features at the end of each state."""
    return states[:, states.shape[1] - n_servers * per_server :].reshape(len(states), n_servers, per_server)


def forward(params: Params, states: np.ndarray) -> dict[str, np.ndarray]:
    h1 = np.tanh(states @ params["W1"] + params["b1"])
    h2 = np.tanh(h1 @ params["W2"] + params["b2"])
    ls = h2 @ params["Ws"] + params["bs"]
    if "u" in params:  # the shared per-server score: linear in each server's own features
        ls = ls + _server_slices(states, ls.shape[1], params["u"].size) @ params["u"]
    return {
        "h1": h1, "h2": h2,
        "ls": ls,
        "lw": h2 @ params["Ww"] + params["bw"],
        "lg": h2 @ params["Wg"] + params["bg"],
        "v": (h2 @ params["Wv"] + params["bv"])[:, 0],
    }  # fmt: skip


def mixed_log_prob(
    out: dict[str, np.ndarray], actions: np.ndarray, eps: np.ndarray
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Eq. 6: log of the eps-mixed server prob plus the width and group log probs."""
    n = actions.shape[0]
    rows = np.arange(n)
    ps, pw, pg = _softmax(out["ls"]), _softmax(out["lw"]), _softmax(out["lg"])
    n_srv = ps.shape[1]
    mixed = (1.0 - eps) * ps[rows, actions[:, 0]] + eps / n_srv
    logp = np.log(mixed) + np.log(pw[rows, actions[:, 1]]) + np.log(pg[rows, actions[:, 2]])
    return logp, {"ps": ps, "pw": pw, "pg": pg, "mixed": mixed}


def loss_and_grad(
    params: Params,
    config: PPOConfig,
    states: np.ndarray,
    actions: np.ndarray,
    logp_old: np.ndarray,
    eps: np.ndarray,
    returns: np.ndarray,
    advantages: np.ndarray,
) -> tuple[float, Params, dict[str, float]]:
    """J = -L_clip + c_v L_V - c_H H (eq. 13) over a batch, and dJ/dparams."""
    n = states.shape[0]
    rows = np.arange(n)
    out = forward(params, states)
    logp, p = mixed_log_prob(out, actions, eps)
    ratio = np.exp(logp - logp_old)
    clipped = np.clip(ratio, 1.0 - config.clip, 1.0 + config.clip)
    unclipped_term, clipped_term = ratio * advantages, clipped * advantages
    surr = np.minimum(unclipped_term, clipped_term)
    l_clip = surr.mean()
    l_v = 0.5 * ((returns - out["v"]) ** 2).mean()
    h_s, h_w, h_g = _entropy(p["ps"]), _entropy(p["pw"]), _entropy(p["pg"])
    ent = (h_s + h_w + h_g).mean()
    loss = -l_clip + config.c_v * l_v - config.c_h * ent

    # d(-L_clip)/d logp: the unclipped branch carries the gradient when it is the minimum.
    active = unclipped_term <= clipped_term
    d_logp = -(advantages * ratio * active) / n
    ps, pw, pg = p["ps"], p["pw"], p["pg"]

    def d_logsoftmax(prob: np.ndarray, a: np.ndarray) -> np.ndarray:
        g = -prob.copy()
        g[rows, a] += 1.0
        return g

    # d log((1-eps) p_a + eps/N) / d ls_j = (1-eps) p_a (delta_aj - p_j) / mixed
    a_s = actions[:, 0]
    d_ls = d_logp[:, None] * ((1.0 - eps) * ps[rows, a_s] / p["mixed"])[:, None] * d_logsoftmax(ps, a_s)
    d_lw = d_logp[:, None] * d_logsoftmax(pw, actions[:, 1])
    d_lg = d_logp[:, None] * d_logsoftmax(pg, actions[:, 2])

    # -c_H * dH/dl, dH/dl_j = -p_j (log p_j + H)
    def d_neg_entropy(prob: np.ndarray, h: np.ndarray) -> np.ndarray:
        return config.c_h / n * prob * (np.log(np.clip(prob, 1e-12, None)) + h[:, None])

    d_ls += d_neg_entropy(ps, h_s)
    d_lw += d_neg_entropy(pw, h_w)
    d_lg += d_neg_entropy(pg, h_g)
    d_v = config.c_v * (out["v"] - returns) / n

    h1, h2 = out["h1"], out["h2"]
    grads: Params = {
        "Ws": h2.T @ d_ls, "bs": d_ls.sum(0),
        "Ww": h2.T @ d_lw, "bw": d_lw.sum(0),
        "Wg": h2.T @ d_lg, "bg": d_lg.sum(0),
        "Wv": h2.T @ d_v[:, None], "bv": np.array([d_v.sum()]),
    }  # fmt: skip
    if "u" in params:
        grads["u"] = np.einsum("nsf,ns->f", _server_slices(states, d_ls.shape[1], params["u"].size), d_ls)
    d_h2 = d_ls @ params["Ws"].T + d_lw @ params["Ww"].T + d_lg @ params["Wg"].T + d_v[:, None] @ params["Wv"].T
    d_z2 = d_h2 * (1.0 - h2**2)
    grads["W2"], grads["b2"] = h1.T @ d_z2, d_z2.sum(0)
    d_z1 = (d_z2 @ params["W2"].T) * (1.0 - h1**2)
    grads["W1"], grads["b1"] = states.T @ d_z1, d_z1.sum(0)
    info = {"loss": float(loss), "l_clip": float(l_clip), "l_v": float(l_v), "entropy": float(ent),
            "clip_frac": float((np.abs(ratio - 1.0) > config.clip).mean())}  # fmt: skip
    return float(loss), grads, info


class PPOAgent:
    """The policy, its Adam state and the eps_t schedule."""

    def __init__(self, config: PPOConfig, seed: int = 0) -> None:
        self.config = config
        self.rng = np.random.default_rng(seed)
        self.params = init_params(config, self.rng)
        self._m = {k: np.zeros_like(v) for k, v in self.params.items()}
        self._s = {k: np.zeros_like(v) for k, v in self.params.items()}
        self._adam_t = 0
        self.steps = 0  # decisions taken: t in eps_t

    def epsilon(self) -> float:
        c = self.config
        return max(c.eps_min, c.eps_max + self.steps / c.eps_decay_steps * (c.eps_min - c.eps_max))

    def act(self, state: np.ndarray, mode: str = "explore") -> tuple[int, int, int, float, float, float]:
        """(server, width, group, log prob under the mixture, value, eps used).

        mode: "explore" samples with the eps_t-mixed server head (training),
        "sample" samples the learned policy (eps 0), "greedy" takes each head's argmax.
        """
        out = forward(self.params, state[None, :])
        ps, pw, pg = _softmax(out["ls"])[0], _softmax(out["lw"])[0], _softmax(out["lg"])[0]
        if mode == "greedy":
            eps = 0.0
            a = (int(ps.argmax()), int(pw.argmax()), int(pg.argmax()))
        elif mode in ("explore", "sample"):
            eps = self.epsilon() if mode == "explore" else 0.0
            self.steps += mode == "explore"
            mixed = (1.0 - eps) * ps + eps / len(ps)
            a = (
                int(self.rng.choice(len(ps), p=mixed / mixed.sum())),
                int(self.rng.choice(len(pw), p=pw)),
                int(self.rng.choice(len(pg), p=pg)),
            )
        else:
            raise ValueError(f"mode must be explore, sample or greedy, got {mode!r}")
        logp, _ = mixed_log_prob(out, np.array([a]), np.array([eps]))
        return a[0], a[1], a[2], float(logp[0]), float(out["v"][0]), eps

    def probabilities(self, state: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        out = forward(self.params, state[None, :])
        return _softmax(out["ls"])[0], _softmax(out["lw"])[0], _softmax(out["lg"])[0]

    def _adam(self, grads: Params) -> None:
        norm = np.sqrt(sum(float((g**2).sum()) for g in grads.values()))
        scale = min(1.0, self.config.max_grad_norm / (norm + 1e-12))  # gradient-norm clipping
        self._adam_t += 1
        b1, b2, lr = 0.9, 0.999, self.config.lr
        for k, g in grads.items():
            g = g * scale
            self._m[k] = b1 * self._m[k] + (1 - b1) * g
            self._s[k] = b2 * self._s[k] + (1 - b2) * g * g
            m_hat = self._m[k] / (1 - b1**self._adam_t)
            s_hat = self._s[k] / (1 - b2**self._adam_t)
            self.params[k] -= lr * m_hat / (np.sqrt(s_hat) + 1e-8)

    def update(
        self,
        states: np.ndarray,
        actions: np.ndarray,
        logp_old: np.ndarray,
        eps: np.ndarray,
        rewards: np.ndarray,
    ) -> dict[str, float]:
        """K epochs of minibatch PPO on one-step transitions (R_t = r_t)."""
        states = np.asarray(states, dtype=np.float64)
        actions = np.asarray(actions, dtype=np.int64)
        returns = np.asarray(rewards, dtype=np.float64)
        values_old = forward(self.params, states)["v"]
        adv = returns - values_old
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)  # eq. 8
        n = states.shape[0]
        info: dict[str, float] = {}
        for _ in range(self.config.epochs):
            order = self.rng.permutation(n)
            for start in range(0, n, self.config.minibatch):
                idx = order[start : start + self.config.minibatch]
                _, grads, info = loss_and_grad(
                    self.params, self.config, states[idx], actions[idx], np.asarray(logp_old)[idx],
                    np.asarray(eps)[idx], returns[idx], adv[idx],
                )  # fmt: skip
                self._adam(grads)
        return info

    def save(self, path: str) -> None:
        meta = json.dumps({"config": dataclasses.asdict(self.config), "steps": self.steps})
        np.savez(path, __meta__=np.array(meta), **self.params)

    @classmethod
    def load(cls, path: str) -> PPOAgent:
        with np.load(path, allow_pickle=False) as data:
            meta: dict[str, Any] = json.loads(str(data["__meta__"]))
            agent = cls(PPOConfig(**meta["config"]))
            for k in agent.params:
                if data[k].shape != agent.params[k].shape:
                    raise ValueError(f"{path}: parameter {k} has shape {data[k].shape}, expected {agent.params[k].shape}")
                agent.params[k] = data[k].astype(np.float64)
            agent.steps = int(meta["steps"])
        return agent
