"""braid.SlimmableModel (docs/slimmable.md) against braid.Session on the whole model."""
from __future__ import annotations

import numpy as np
import pytest

import braid

SLIM = "builtin:slim_resnet"


def cifar_image(batch: int = 2, seed: int = 3) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((batch, 3, 32, 32)).astype(np.float32)


def run_chain(model: braid.SlimmableModel, widths: list[float], x: np.ndarray) -> np.ndarray:
    previous = 1.0
    for segment, width in enumerate(widths):
        session = model.open_segment(segment, width, input_width=previous, threads=1)
        (x,) = session.run(None, {session.get_inputs()[0].name: x})
        previous = width
    return x


def test_segments_at_full_width_give_the_whole_model() -> None:
    model = braid.SlimmableModel(SLIM)
    assert model.num_segments == 4
    assert model.widths == [1.0, 0.75, 0.5, 0.25]
    x = cifar_image()
    (want,) = braid.Session(SLIM, threads=1).run(None, {"input": x})
    got = run_chain(model, [1.0] * 4, x)
    assert got.shape == want.shape == (2, 100)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_narrower_widths_hand_on_fewer_channels_and_cost_fewer_weights() -> None:
    model = braid.SlimmableModel(SLIM)
    first = model.open_segment(0, 0.25)
    (h,) = first.run(None, {"input": cifar_image(1)})
    assert h.shape == (1, 8, 32, 32)
    assert model.segment_weight_bytes(2, 0.25, 0.25) * 8 < model.segment_weight_bytes(2, 1.0, 1.0)
    logits = run_chain(model, [0.25, 0.5, 0.75, 1.0], cifar_image(1))
    assert logits.shape == (1, 100) and np.all(np.isfinite(logits))


def test_bad_requests_raise_braid_errors() -> None:
    model = braid.SlimmableModel(SLIM)
    with pytest.raises(braid.InvalidArgumentError, match="out of range"):
        model.open_segment(4, 1.0)
    with pytest.raises(braid.InvalidArgumentError, match="not one of the model's widths"):
        model.open_segment(1, 0.3)
    with pytest.raises(braid.NotFoundError, match="not slimmable"):
        braid.SlimmableModel("builtin:tiny_cnn")
    with pytest.raises(TypeError):
        model.open_segment(0, 1.0, threads="two")  # type: ignore[arg-type]
