"""braid: run ONNX and .braid models on the CPU and GPU, placed operator by operator.

    import numpy as np
    import braid

    session = braid.Session("model.onnx", threads=2)          # .onnx, .braid or builtin:NAME
    print(session.get_inputs())                               # [<braid.TensorInfo input: f32[N,3,224,224]>]
    (logits,) = session.run(None, {"input": np.random.rand(1, 3, 224, 224).astype(np.float32)})
    for p in session.placements():                            # where each node ran, and why
        print(p.node, p.device, p.implementation)

Like onnxruntime.InferenceSession: ``run(output_names, input_feed)`` returns a
list of new arrays (None or [] = every output, in the model's order). Inputs
of the model's dtype in C order are read in place (no copy); other memory
layouts are copied first. A wrong dtype is a TypeError, a wrong shape a
ValueError (braid.InvalidArgumentError), each naming the input and what the
model expects. The GIL is released while the model runs; threads may share a
session (runs take turns) or use one each (runs overlap).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypedDict, Unpack

from . import _braid
from ._braid import Placement, TensorInfo
from ._errors import (
    DataLossError,
    Error,
    FailedPreconditionError,
    InternalError,
    InvalidArgumentError,
    NotFoundError,
    OutOfRangeError,
    ResourceExhaustedError,
    UnavailableError,
    UnimplementedError,
)

__version__: str = _braid.version()

__all__ = [
    "Session",
    "SlimmableModel",
    "TensorInfo",
    "Placement",
    "Error",
    "InvalidArgumentError",
    "NotFoundError",
    "UnimplementedError",
    "OutOfRangeError",
    "DataLossError",
    "FailedPreconditionError",
    "ResourceExhaustedError",
    "UnavailableError",
    "InternalError",
]




class SessionKwargs(TypedDict, total=False):
    """Session's keyword arguments (braid::SessionOptions; see Session)."""

    devices: str | Sequence[str]
    policy: str
    threads: int
    fuse: bool
    plan_file: str | None
    trace: bool
    pin_threads: bool
    vgpu_timing: str
    policy_settings: Mapping[str, Any] | None
    profile: str | None
    sparse_kernels: bool
    sparse_crossover: str | None
    adapt: bool
    adapt_threads: bool


def _session_options(
    *,
    devices: str | Sequence[str] = ("cpu",),
    policy: str = "cpu-only",
    threads: int = 0,
    fuse: bool = True,
    plan_file: str | None = None,
    trace: bool = False,
    pin_threads: bool = False,
    vgpu_timing: str = "none",
    policy_settings: Mapping[str, Any] | None = None,
    profile: str | None = None,
    sparse_kernels: bool = True,
    sparse_crossover: str | None = None,
    adapt: bool = False,
    adapt_threads: bool = True,
) -> _braid.SessionOptions:
    """braid::SessionOptions from Session's keyword arguments (checked here)."""
    if isinstance(devices, str):
        device_list = [d.strip() for d in devices.split(",") if d.strip()]
    else:
        device_list = [str(d) for d in devices]
    if not isinstance(threads, int) or isinstance(threads, bool):
        raise TypeError(f"threads must be an int, got {type(threads).__name__}")
    if threads < 0:
        raise InvalidArgumentError(f"threads must be >= 0 (0 = all cores), got {threads}")
    options = _braid.SessionOptions()
    options.num_threads = threads
    options.devices = device_list
    options.policy = policy
    options.fuse = fuse
    options.plan_file = plan_file or ""
    options.trace = trace
    options.pin_threads = pin_threads
    options.vgpu_timing = vgpu_timing
    options.policy_settings = {str(k): str(v) for k, v in (policy_settings or {}).items()}
    options.profile = profile or ""
    options.sparse_kernels = sparse_kernels
    options.sparse_crossover = sparse_crossover or ""
    options.adapt = adapt
    options.adapt_threads = adapt_threads
    return options


class Session:
    """An opened model (braid::Session): bind inputs, run, read outputs.

    Args mirror braid::SessionOptions (include/braid/braid.h):
      model: a .braid file, an .onnx file (converted in memory) or "builtin:NAME".
      devices: "cpu", "vgpu", "cuda" or "cuda:K"; a list or a comma-separated str.
      policy: the placement policy ("cpu-only", "gpu-only", "threshold", "sparoa", ...).
      threads: intra-op CPU threads; 0 = all cores.
      plan_file: a plan JSON (`braid plan --save`, Session.save_plan); wins over policy.
      trace: record a per-step timeline on every run (write_trace).
      policy_settings: {"POLICY.KEY": "value"}, e.g. {"threshold.intensity": "8"}.
      profile: a device profile name or .json file for the cost-model policies.
      The rest (fuse, pin_threads, vgpu_timing, sparse_kernels, sparse_crossover,
      adapt, adapt_threads) are as documented in braid.h.
    """

    def __init__(self, model: str, **options: Unpack[SessionKwargs]) -> None:
        self._model = str(model)
        self._session = _braid._Session(self._model, _session_options(**options))

    @classmethod
    def _wrap(cls, native: Any, label: str) -> Session:
        session = cls.__new__(cls)
        session._model = label
        session._session = native
        return session

    def get_inputs(self) -> list[TensorInfo]:
        """What each input expects: name, type ("float32", ...) and shape (str for symbolic dims)."""
        return self._session.get_inputs()

    def get_outputs(self) -> list[TensorInfo]:
        """What each output produces, as get_inputs."""
        return self._session.get_outputs()

    def run(self, output_names: Sequence[str] | None, input_feed: Mapping[str, Any]) -> list[Any]:
        """Runs the model on `input_feed` ({name: numpy.ndarray}); returns the named outputs."""
        if not isinstance(input_feed, Mapping):
            raise TypeError(f"input_feed must be a dict of name -> numpy.ndarray, got {type(input_feed).__name__}")
        names = None if output_names is None else [str(n) for n in output_names]
        return self._session.run(names, dict(input_feed))

    def placements(self) -> list[Placement]:
        """After the first run: each node's device and implementation; fallbacks say why."""
        return self._session.placements()

    def notices(self) -> list[str]:
        """What the session decided on its own (re-plans, thread changes, fallbacks)."""
        return self._session.notices()

    def write_trace(self, path: str) -> None:
        """Writes the last run's timeline as Chrome trace JSON (needs trace=True)."""
        self._session.write_trace(str(path))

    def save_plan(self, path: str) -> None:
        """Writes the plan the last run ran as plan JSON; Session(model, plan_file=path) replays it."""
        self._session.save_plan(str(path))

    @property
    def planned_peak_bytes(self) -> int:
        """Planned peak bytes of intermediate tensors (after the first run)."""
        return self._session.planned_peak_bytes

    def __repr__(self) -> str:
        return f"<braid.Session {self._model}>"


class SlimmableModel:
    """A slimmable model (docs/slimmable.md): segments that each run at a width.

        model = braid.SlimmableModel("builtin:slim_resnet")   # or a .braid / .onnx
        first = model.open_segment(0, width=0.5)             # a braid.Session
        second = model.open_segment(1, width=0.25, input_width=0.5)
        (h,) = first.run(None, {"input": image})
        (logits_or_next,) = second.run(None, {second.get_inputs()[0].name: h})

    open_segment takes Session's keyword arguments (devices, threads, ...).
    """

    def __init__(self, model: str) -> None:
        self._model = str(model)
        self._native = _braid._SlimmableModel(self._model)

    @property
    def num_segments(self) -> int:
        return self._native.num_segments

    @property
    def widths(self) -> list[float]:
        """The widths every segment may run at, descending (the first is 1)."""
        return list(self._native.widths)

    def open_segment(
        self, segment: int, width: float, input_width: float = 1.0, **options: Unpack[SessionKwargs]
    ) -> Session:
        """A Session running `segment` at `width` on the previous segment's output at `input_width`."""
        native = self._native.open_segment(segment, float(width), float(input_width), _session_options(**options))
        return Session._wrap(native, f"{self._model} segment {segment} @ {width}")

    def segment_weight_bytes(self, segment: int, width: float, input_width: float = 1.0) -> int:
        """Bytes of weights a Session of that segment holds."""
        return self._native.segment_weight_bytes(segment, float(width), float(input_width))

    def __repr__(self) -> str:
        return f"<braid.SlimmableModel {self._model}: {self.num_segments} segments, widths {self.widths}>"
