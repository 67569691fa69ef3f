"""The accuracy prior of a per-segment width tuple: the Slim Scheduler paper's figures.

    from braid_serving.accuracy import accuracy_prior, PAPER_LABEL
    accuracy_prior((0.25, 0.25, 0.25, 0.25))   # 0.703 (paper Table I)
    accuracy_prior((1.0, 1.0, 0.5, 0.5))       # nearest tabulated tuple's figure

These are the paper's CIFAR-100 Top-1 figures for its trained SlimResNet
(Tables I and II), NOT measured on braid: builtin:slim_resnet has seeded random
weights, so its outputs are no predictions. The router uses the table as a
prior, the way the paper's reward does (eq. 7, nearest-neighbour fallback).
"""

from __future__ import annotations

from collections.abc import Sequence

PAPER_LABEL = "paper's CIFAR-100 Top-1 (Slim Scheduler Tables I-II), not measured on braid"

# Table I: uniform widths (w1 = w2 = w3 = w4) -> Top-1 %.
PAPER_UNIFORM: dict[float, float] = {0.25: 70.30, 0.50: 72.99, 0.75: 74.93, 1.00: 76.43}

# Table II: mixed per-segment widths -> Top-1 %.
PAPER_MIXED: dict[tuple[float, float, float, float], float] = {
    (1.00, 0.75, 0.50, 0.25): 71.35,
    (0.75, 1.00, 0.25, 0.50): 72.33,
    (0.50, 0.25, 1.00, 0.75): 74.53,
    (0.25, 0.50, 0.75, 1.00): 75.33,
}


def paper_table() -> dict[tuple[float, ...], float]:
    """Every tabulated width tuple -> Top-1 % (Tables I and II)."""
    table: dict[tuple[float, ...], float] = {(w, w, w, w): acc for w, acc in PAPER_UNIFORM.items()}
    table.update(PAPER_MIXED)
    return table


def accuracy_prior(widths: Sequence[float]) -> float:
    """The prior in [0, 1] for a 4-segment width tuple: exact entry, else nearest (L2) one.

    Ties go to the lower accuracy (a prior should not flatter an untabulated tuple).
    """
    key = tuple(float(w) for w in widths)
    if len(key) != 4:
        raise ValueError(f"the paper's table covers 4 segments, got a width tuple of {len(key)}: {key}")
    if any(not 0.0 < w <= 1.0 for w in key):
        raise ValueError(f"widths must be in (0, 1], got {key}")
    table = paper_table()
    if key in table:
        return table[key] / 100.0
    best = min(table.items(), key=lambda kv: (sum((a - b) ** 2 for a, b in zip(kv[0], key)), kv[1]))
    return best[1] / 100.0
