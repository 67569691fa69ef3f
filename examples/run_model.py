#!/usr/bin/env python3
"""Runs a model with the braid Python package and prints its placement and latency.

    python3 examples/run_model.py [MODEL] [--threads T] [--frames N]
    python3 examples/run_model.py builtin:tiny_cnn --frames 20

MODEL is an .onnx or .braid file or builtin:NAME (default builtin:tiny_cnn). Every input
gets random data of its dtype and shape (symbolic dims = 1), reused frame after frame, as a
camera loop reuses its buffer.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import braid


def random_input(info: braid.TensorInfo, rng: np.random.Generator) -> np.ndarray:
    shape = [d if isinstance(d, int) else 1 for d in info.shape]
    if info.type.startswith("float"):
        return rng.standard_normal(shape).astype(info.type)
    return rng.integers(0, 2, size=shape).astype(info.type)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", default="builtin:tiny_cnn")
    parser.add_argument("--threads", type=int, default=0, help="CPU threads (0 = all cores)")
    parser.add_argument("--frames", type=int, default=10)
    args = parser.parse_args()

    try:
        session = braid.Session(args.model, threads=args.threads)
    except braid.Error as error:
        print(f"run_model.py: {error}")
        return 2
    rng = np.random.default_rng(0)
    feed = {info.name: random_input(info, rng) for info in session.get_inputs()}
    latencies = []
    for _ in range(max(1, args.frames)):
        start = time.perf_counter()
        outputs = session.run(None, feed)
        latencies.append((time.perf_counter() - start) * 1e3)
    for info, value in zip(session.get_outputs(), outputs):
        print(f"output {info.name} {list(value.shape)} {value.dtype}")
    for p in session.placements():
        why = f" (fallback: {p.reason})" if p.fallback else ""
        print(f"  {p.node:<24} {p.op_type:<14} {p.device:<5} {p.implementation}{why}")
    first, rest = latencies[0], sorted(latencies[1:]) or [latencies[0]]
    print(f"{len(latencies)} frames: first {first:.2f} ms (plans and allocates), "
          f"then median {rest[len(rest) // 2]:.2f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
