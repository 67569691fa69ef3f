"""The Python package against the C++ API (the `braid` CLI), ONNX Runtime and bad input.

Run against an installed package (scripts/check_python.sh: `pip install .` into a fresh
venv, then pytest), or the build tree (PYTHONPATH=BUILD/python with -DBRAID_PYTHON=ON).

  BRAID_CLI=build/tools/braid BRAID_ZOO_DIR=build-test/zoo python -m pytest tests/python

Without BRAID_CLI (the C++ comparison) or BRAID_ZOO_DIR (the ONNX Runtime comparison on
exported torchvision models) those tests are skipped and say why.
"""
from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import braid

TINY = "builtin:tiny_cnn"
# Relative to max |reference| (bench/zoo.py's tolerance against ONNX Runtime).
ORT_TOLERANCE = 1e-4
# The CLI may be another build (e.g. CI's sanitizer build at -O2): same kernels,
# possibly different floating-point contraction in braid's own loops.
CLI_TOLERANCE = 1e-5


def relative_error(got: np.ndarray, want: np.ndarray) -> float:
    scale = float(np.max(np.abs(want)))
    return float(np.max(np.abs(got.astype(np.float64) - want))) / max(scale, 1e-30)


def image(batch: int = 1, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((batch, 3, 224, 224)).astype(np.float32)


@pytest.fixture(scope="module")
def tiny() -> braid.Session:
    return braid.Session(TINY, threads=1)


def test_describes_inputs_and_outputs_like_onnxruntime(tiny: braid.Session) -> None:
    (inp,) = tiny.get_inputs()
    (out,) = tiny.get_outputs()
    assert (inp.name, inp.type, inp.shape) == ("input", "float32", ["N", 3, 224, 224])
    assert (out.name, out.type, out.shape) == ("output", "float32", ["N", 1000])


def test_run_returns_new_arrays_per_output(tiny: braid.Session) -> None:
    x = image(2)
    (first,) = tiny.run(None, {"input": x})
    (named,) = tiny.run(["output"], {"input": x})
    assert first.shape == (2, 1000) and first.dtype == np.float32
    np.testing.assert_array_equal(first, named)
    assert np.std(first) > 0
    # A later run with another input must not change an array already returned.
    kept = first.copy()
    tiny.run(None, {"input": image(2, seed=1)})
    np.testing.assert_array_equal(first, kept)


def test_outputs_equal_the_cpp_api(tmp_path: Path) -> None:
    cli = os.environ.get("BRAID_CLI", "")
    if not cli:
        pytest.skip("set BRAID_CLI to a built `braid` program to compare with the C++ API")
    x = image(1, seed=3)
    np.save(tmp_path / "x.npy", x)
    subprocess.run([cli, "run", TINY, "--threads", "1", "--input", f"input={tmp_path / 'x.npy'}",
                    "--output-dir", str(tmp_path)], check=True, capture_output=True, timeout=300)
    want = np.load(tmp_path / "output.npy")
    (got,) = braid.Session(TINY, threads=1).run(None, {"input": x})
    assert got.shape == want.shape
    assert relative_error(got, want) <= CLI_TOLERANCE


ZOO_MODELS = ["resnet18", "mobilenet_v3_small"]


@pytest.mark.parametrize("model", ZOO_MODELS)
def test_zoo_model_matches_onnxruntime(model: str) -> None:
    zoo = os.environ.get("BRAID_ZOO_DIR", "")
    if not zoo:
        pytest.skip("set BRAID_ZOO_DIR (scripts/test.sh exports the torchvision zoo)")
    ort = pytest.importorskip("onnxruntime")
    path = Path(zoo) / f"{model}_op17.onnx"
    assert path.exists(), f"{path} missing from the exported zoo"
    x = image(1, seed=7)
    want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"input": x})
    got = braid.Session(str(path), threads=2).run(None, {"input": x})
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        assert relative_error(g, w) <= ORT_TOLERANCE


def nms_model(path: Path, center_point_box: int, max_per_class: int) -> None:
    """NonMaxSuppression over boxes [N, 50, 4] and scores [N, 3, 50] (N symbolic)."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    node = helper.make_node("NonMaxSuppression",
                            ["boxes", "scores", "max_per_class", "iou", "score_threshold"],
                            ["selected"], center_point_box=center_point_box)
    graph = helper.make_graph(
        [node], "nms",
        [helper.make_tensor_value_info("boxes", TensorProto.FLOAT, ["N", 50, 4]),
         helper.make_tensor_value_info("scores", TensorProto.FLOAT, ["N", 3, 50])],
        [helper.make_tensor_value_info("selected", TensorProto.INT64, ["selected", 3])],
        [helper.make_tensor("max_per_class", TensorProto.INT64, [1], [max_per_class]),
         helper.make_tensor("iou", TensorProto.FLOAT, [1], [0.45]),
         helper.make_tensor("score_threshold", TensorProto.FLOAT, [1], [0.25])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))


@pytest.mark.parametrize("center_point_box", [0, 1])
def test_non_max_suppression_matches_onnxruntime(tmp_path: Path, center_point_box: int) -> None:
    """Random clustered boxes: the same rows as ONNX Runtime, whose count changes per run."""
    ort = pytest.importorskip("onnxruntime")
    path = tmp_path / "nms.onnx"
    nms_model(path, center_point_box, max_per_class=10)
    session = braid.Session(str(path), threads=1)
    (out,) = session.get_outputs()
    assert (out.type, out.shape) == ("int64", ["rows?", 3])
    reference = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    counts = set()
    for seed, (batch, scale) in enumerate([(1, 1.0), (2, 0.5), (3, 1.0), (1, 0.3)]):
        rng = np.random.default_rng(seed)
        # Four clusters of similar boxes: some classes fill up, others lose boxes to overlap.
        centers = rng.uniform(0.45, 0.55, (batch, 50, 2)) + rng.integers(0, 4, (batch, 50, 1)) * 0.5
        sizes = rng.uniform(0.15, 0.3, (batch, 50, 2))
        if center_point_box:
            boxes = np.concatenate([centers, sizes], axis=2)
        else:  # corners (y1, x1, y2, x2), some given in the other diagonal order
            boxes = np.concatenate([centers - sizes / 2, centers + sizes / 2], axis=2)
            boxes[:, ::3] = boxes[:, ::3][..., [2, 3, 0, 1]]
        inputs = {"boxes": boxes.astype(np.float32),
                  "scores": (scale * rng.uniform(0, 1, (batch, 3, 50))).astype(np.float32)}
        (want,) = reference.run(None, inputs)
        (got,) = session.run(None, inputs)
        assert got.dtype == np.int64 and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
        counts.add(got.shape[0])
    assert len(counts) >= 3, f"the inputs should select different numbers of boxes: {counts}"


def test_non_contiguous_inputs_are_copied_and_give_the_same_outputs(tiny: braid.Session) -> None:
    x = image(2, seed=5)
    (want,) = tiny.run(None, {"input": x})
    fortran = np.asfortranarray(x)
    strided = np.concatenate([x, x], axis=3)[:, :, :, ::2]  # every other column: a view
    np.testing.assert_array_equal(strided, np.concatenate([x, x], axis=3)[:, :, :, ::2])
    for layout in (fortran, np.ascontiguousarray(np.concatenate([x, x], axis=3))[..., :224]):
        assert not layout.flags["C_CONTIGUOUS"]
        (got,) = tiny.run(None, {"input": layout})
        np.testing.assert_array_equal(got, want)


def test_wrong_dtype_is_a_type_error_naming_the_input(tiny: braid.Session) -> None:
    with pytest.raises(TypeError, match=r"input 'input' must be float32.*got float64"):
        tiny.run(None, {"input": image().astype(np.float64)})
    with pytest.raises(TypeError, match=r"input 'input' must be a numpy.ndarray"):
        tiny.run(None, {"input": [[1.0, 2.0]]})


def test_wrong_shape_is_a_value_error_saying_what_the_model_expects(tiny: braid.Session) -> None:
    with pytest.raises(ValueError, match=r"f32\[N,3,224,224\].*f32\[1,3,100,224\]") as info:
        tiny.run(None, {"input": image()[:, :, :100]})
    assert isinstance(info.value, braid.InvalidArgumentError)
    with pytest.raises(ValueError, match=r"no input 'image'.*input: f32\[N,3,224,224\]"):
        tiny.run(None, {"image": image()})
    with pytest.raises(ValueError, match=r"input 'input' \(input: f32\[N,3,224,224\]\) is missing"):
        tiny.run(None, {})


def test_errors_carry_braids_messages() -> None:
    with pytest.raises(braid.NotFoundError, match="cannot open file") as missing:
        braid.Session("/nonexistent/model.onnx")
    assert isinstance(missing.value, LookupError)
    with pytest.raises(braid.InvalidArgumentError, match="no-such-policy"):
        braid.Session(TINY, policy="no-such-policy")
    with pytest.raises(braid.InvalidArgumentError, match="threshold.no_such_key"):
        braid.Session(TINY, policy="threshold", policy_settings={"threshold.no_such_key": 1})
    with pytest.raises(TypeError):
        braid.Session(TINY, threads="2")  # type: ignore[arg-type]
    session = braid.Session(TINY, threads=1)
    with pytest.raises(braid.NotFoundError, match="logits"):
        session.run(["logits"], {"input": image()})
    with pytest.raises(braid.FailedPreconditionError):
        session.write_trace("/tmp/never-written.json")


def test_placements_on_a_mixed_plan_and_the_trace(tmp_path: Path) -> None:
    session = braid.Session(TINY, devices="cpu,vgpu", policy="gpu-only", threads=1, trace=True)
    session.run(None, {"input": image()})
    placements = session.placements()
    assert placements, "no placement after a run"
    assert {p.device for p in placements} == {"vgpu"}
    assert all(p.implementation for p in placements)
    assert session.planned_peak_bytes > 0
    trace = tmp_path / "trace.json"
    session.write_trace(str(trace))
    events = json.loads(trace.read_text())["traceEvents"]
    assert any(e.get("name") == placements[0].node for e in events)


def test_a_saved_plan_replays_the_placement(tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    session = braid.Session(TINY, devices=["cpu", "vgpu"], policy="threshold", threads=1,
                            policy_settings={"threshold.intensity": 10})
    with pytest.raises(braid.FailedPreconditionError):
        session.save_plan(str(plan))  # no run yet, so no plan
    x = image()
    (want,) = session.run(None, {"input": x})
    session.save_plan(str(plan))
    placed = [(p.node, p.device) for p in session.placements()]
    assert {d for _, d in placed} == {"cpu", "vgpu"}, "the threshold should split this model"
    replay = braid.Session(TINY, devices=["cpu", "vgpu"], plan_file=str(plan), threads=1)
    (got,) = replay.run(None, {"input": x})
    assert [(p.node, p.device) for p in replay.placements()] == placed
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5 * float(np.max(np.abs(want))))


def test_version_is_the_librarys() -> None:
    assert braid.__version__.count(".") == 2


def test_the_gil_is_released_while_braid_runs() -> None:
    session = braid.Session("builtin:mobilenet_v2", threads=1)
    session.run(None, {"input": image(2)})  # plans and allocates: not timed
    started = time.perf_counter()
    session.run(None, {"input": image(2)})
    per_image = (time.perf_counter() - started) / 2
    x = image(min(64, max(2, int(0.4 / per_image) + 1)))  # a run of about 0.4 s
    times: dict[str, float] = {}

    def run() -> None:
        times["start"] = time.perf_counter()
        session.run(None, {"input": x})
        times["end"] = time.perf_counter()

    worker = threading.Thread(target=run)
    worker.start()
    time.sleep(0.05)
    # Needs the GIL: if run() held it, this line would only execute after braid returned.
    woke = time.perf_counter()
    worker.join()
    assert times["end"] - times["start"] > 0.15, "the run was too short to tell"
    assert woke < times["end"] - 0.05, "the main thread waited for the whole run: GIL held"


def test_threads_sharing_a_session_get_their_own_results() -> None:
    session = braid.Session(TINY, threads=1)
    inputs = [image(1, seed=s) for s in range(4)]
    want = [session.run(None, {"input": x})[0] for x in inputs]
    got: dict[int, list[np.ndarray]] = {i: [] for i in range(4)}

    def worker(i: int) -> None:
        for _ in range(5):
            got[i].append(session.run(None, {"input": inputs[i]})[0])

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(4):
        assert len(got[i]) == 5
        for result in got[i]:
            np.testing.assert_array_equal(result, want[i])
