"""Serving instances that are braid segment Sessions (braid.SlimmableModel.open_segment).

    model = braid.SlimmableModel("builtin:slim_resnet")
    backend = BraidBackend(model, DeviceShape("vgpu-orin", devices=("cpu", "vgpu"), vgpu_timing="orin-like"))
    handle = backend.load(segment=1, width=0.5, input_width=0.25)   # a braid.Session
    y = backend.run(handle, x)                                       # x: the previous segment's output

Weight bytes come from segment_weight_bytes (CanLoad's estimate). DeviceShape
makes in-process "devices" differ: braid's cpu or vgpu (vgpu_timing "none" or
"orin-like", a model, never a GPU figure) and a `slowdown` that pads every run
to slowdown x its measured time (a shaped, SIMULATED slower device). There is
no power sensor here: utilisation is the share of wall time runs were active
over the last window.
"""

from __future__ import annotations

import collections
import dataclasses
import threading
import time
from typing import Any

import numpy as np


@dataclasses.dataclass(frozen=True)
class DeviceShape:
    name: str
    devices: tuple[str, ...] = ("cpu",)
    vgpu_timing: str = "none"
    threads: int = 1
    slowdown: float = 1.0  # >= 1: each run padded to slowdown x its time (simulated)
    p_idle_w: float = 10.0  # power model for estimates (no sensor): idle + (max - idle) x utilisation
    p_max_w: float = 60.0

    @property
    def policy(self) -> str:
        return "gpu-only" if any(d != "cpu" for d in self.devices) else "cpu-only"


@dataclasses.dataclass
class _Handle:
    session: Any
    input_name: str
    key: tuple[int, float, float]


class BraidBackend:
    """InstanceBackend (greedy.py) over braid segment Sessions, plus run()."""

    def __init__(self, model: Any, shape: DeviceShape, window: float = 1.0) -> None:
        if shape.slowdown < 1.0:
            raise ValueError(f"slowdown must be >= 1 (a run cannot be made faster), got {shape.slowdown}")
        self.model = model
        self.shape = shape
        self.device = shape.name
        self.window = window
        self._lock = threading.Lock()
        self._busy: collections.deque[tuple[float, float]] = collections.deque(maxlen=4096)
        self._active: dict[int, float] = {}

    def weight_bytes(self, segment: int, width: float, input_width: float) -> int:
        return int(self.model.segment_weight_bytes(segment, width, input_width))

    def load(self, segment: int, width: float, input_width: float) -> _Handle:
        session = self.model.open_segment(
            segment, width, input_width=input_width, devices=list(self.shape.devices), policy=self.shape.policy,
            vgpu_timing=self.shape.vgpu_timing, threads=self.shape.threads,
        )  # fmt: skip
        return _Handle(session, session.get_inputs()[0].name, (segment, width, input_width))

    def unload(self, handle: Any) -> None:
        handle.session = None  # the Session's memory goes with its last reference

    def run(self, handle: _Handle, x: np.ndarray) -> np.ndarray:
        if handle.session is None:
            raise RuntimeError(f"instance {handle.key} on {self.device} was unloaded")
        t0 = time.monotonic()
        token = id(threading.current_thread())
        with self._lock:
            self._active[token] = t0
        try:
            (y,) = handle.session.run(None, {handle.input_name: np.ascontiguousarray(x, dtype=np.float32)})
            if self.shape.slowdown > 1.0:
                time.sleep((time.monotonic() - t0) * (self.shape.slowdown - 1.0))
        finally:
            with self._lock:
                self._active.pop(token, None)
                self._busy.append((t0, time.monotonic()))
        return y

    def utilisation(self) -> float | None:
        """% of the last window some run was active on this device (runs in parallel count once each)."""
        now = time.monotonic()
        lo = now - self.window
        with self._lock:
            busy = sum(max(0.0, e - max(s, lo)) for s, e in self._busy if e > lo)
            busy += sum(now - max(s, lo) for s in self._active.values())
        return min(100.0, 100.0 * busy / self.window)

    def power(self) -> float:
        """Watts, an ESTIMATE from utilisation (no sensor read)."""
        u = (self.utilisation() or 0.0) / 100.0
        return self.shape.p_idle_w + (self.shape.p_max_w - self.shape.p_idle_w) * u


# In-process "different devices" for the benchmark and the Ray cluster (see the module docstring).
DEVICE_SHAPES = {
    "cpu": DeviceShape("cpu", ("cpu",), "none", 1, 1.0, 10.0, 60.0),
    "vgpu": DeviceShape("vgpu", ("cpu", "vgpu"), "none", 1, 1.0, 10.0, 60.0),
    "vgpu-orin-slow": DeviceShape("vgpu-orin-slow", ("cpu", "vgpu"), "orin-like", 1, 2.5, 8.0, 40.0),
}
