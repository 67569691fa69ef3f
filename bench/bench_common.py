"""Shared pieces of the bench scripts: the venv, the zoo of ONNX exports, braid.

Nothing here is a dependency of the library. The scripts run under the venv
that bench/python_env.sh creates under the build folder (onnxruntime, onnx,
numpy from PyPI; Debian's torch/torchvision stay importable).
"""
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def ensure_venv(build_dir):
    """Re-executes the calling script under the bench venv unless onnxruntime imports."""
    try:
        import numpy  # noqa: F401
        import onnxruntime  # noqa: F401
        return
    except ImportError:
        pass
    if os.environ.get("BRAID_BENCH_REEXEC"):
        sys.exit("bench: onnxruntime still not importable inside the venv")
    python = subprocess.run(
        [os.path.join(REPO, "bench", "python_env.sh"), build_dir],
        check=True, stdout=subprocess.PIPE, text=True).stdout.strip()
    env = dict(os.environ, BRAID_BENCH_REEXEC="1")
    os.execve(python, [python] + sys.argv, env)


def zoo_file(zoo_dir, model, opset):
    """Path of <model>_op<opset>.onnx, exporting it with torchvision when absent."""
    path = os.path.join(zoo_dir, f"{model}_op{opset}.onnx")
    if not os.path.exists(path):
        print(f"bench: exporting {model} (opset {opset}) to {zoo_dir}", file=sys.stderr, flush=True)
        subprocess.run(["/usr/bin/python3", os.path.join(REPO, "scripts", "export_torchvision.py"),
                        "--out", zoo_dir, "--opsets", str(opset), "--models", model], check=True)
    return path


def ort_session(path, threads):
    """ONNX Runtime's CPU EP as the benches compare with: `threads` intra-op threads,
    one inter-op thread, sequential execution."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def openvino_request(path, threads, input_name, shape, precision="f32"):
    """OpenVINO's CPU plugin as the benches compare with: `threads` inference threads, one
    stream, latency hint, `precision` (f32 unless asked: OpenVINO picks bf16 by itself on
    CPUs that have it) where the model is float (a QDQ model's quantized parts still run
    int8: OpenVINO's low-precision transformations). `input_name` and `shape` may also be
    a dict of every input's shape (input_name None). Returns an infer request."""
    import openvino as ov
    core = ov.Core()
    core.set_property("CPU", {"INFERENCE_NUM_THREADS": threads, "NUM_STREAMS": 1,
                              "PERFORMANCE_HINT": "LATENCY",
                              "INFERENCE_PRECISION_HINT": precision})
    model = core.read_model(path)
    model.reshape({name: list(dims) for name, dims in shape.items()} if input_name is None
                  else {input_name: list(shape)})
    return core.compile_model(model, "CPU").create_infer_request()


def have_openvino():
    try:
        import openvino  # noqa: F401
        return True
    except ImportError:
        return False


def timed_ms(run, iterations, warmup):
    """Calls run() `warmup` times untimed, then returns `iterations` wall times in ms."""
    import time
    for _ in range(warmup):
        run()
    ms = []
    for _ in range(iterations):
        start = time.perf_counter()
        run()
        ms.append((time.perf_counter() - start) * 1e3)
    return ms


def geomean(values):
    import math
    return math.exp(sum(math.log(v) for v in values) / len(values))


def default_braid(build_dir):
    return os.path.join(build_dir, "tools", "braid")


def default_zoo(build_dir):
    return os.path.join(build_dir, "zoo")
