#!/usr/bin/env python3
"""Helpers of bench/gpu_check.sh: output comparison, ONNX exports, PyTorch
latency on the same GPU, and the latency table.

  gpu_check.py compare REF_DIR GOT_DIR [--rel 1e-4]
  gpu_check.py export OUT_DIR [--models resnet50,mobilenet_v2,...]
  gpu_check.py torch-latency MODEL --batch B [--iterations N] [--compile]
  gpu_check.py table RESULTS.jsonl
  gpu_check.py profile OUT.json [--cpu-only]

`compare` passes when, for every output, max|got - ref| <= rel * max|ref|
(the error relative to the output's scale: fp32 kernels that sum in another
order differ by rounding, element by element, near zero). `export` and
`torch-latency` need PyTorch (and torchvision for the torchvision models);
what is missing is said, never faked. Every figure `table` prints comes from
a run on the GPU named in its first line.
"""
from __future__ import annotations

import argparse
import inspect
import json
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np

TORCHVISION_MODELS = ("resnet50", "mobilenet_v2", "efficientnet_b0", "vit_b_16")


def compare_arrays(ref: np.ndarray, got: np.ndarray) -> float:
    """max|got - ref| / max|ref| (inf on a shape mismatch or a non-finite value)."""
    if ref.shape != got.shape:
        return math.inf
    ref64 = ref.astype(np.float64)
    got64 = got.astype(np.float64)
    if not np.all(np.isfinite(got64)):
        return math.inf
    scale = float(np.max(np.abs(ref64))) if ref64.size else 0.0
    err = float(np.max(np.abs(got64 - ref64))) if ref64.size else 0.0
    return err / scale if scale > 0 else err


def compare_dirs(ref_dir: Path, got_dir: Path, rel: float) -> tuple[bool, list[str]]:
    lines: list[str] = []
    ok = True
    refs = sorted(ref_dir.glob("*.npy"))
    if not refs:
        return False, [f"no outputs in {ref_dir}"]
    for ref_path in refs:
        got_path = got_dir / ref_path.name
        if not got_path.exists():
            ok = False
            lines.append(f"{ref_path.stem}: missing in {got_dir}")
            continue
        err = compare_arrays(np.load(ref_path), np.load(got_path))
        passed = err <= rel
        ok = ok and passed
        lines.append(f"{ref_path.stem}: max error / max|ref| = {err:.3g} "
                     f"({'ok' if passed else 'FAIL'}, limit {rel:g})")
    return ok, lines


def median_ms(run: Callable[[], None], sync: Callable[[], None], iterations: int,
              warmup: int = 5) -> float:
    for _ in range(warmup):
        run()
    sync()
    times: list[float] = []
    for _ in range(iterations):
        start = time.perf_counter()
        run()
        sync()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def torchvision_model(name: str) -> Any:
    import torch
    import torchvision  # noqa: F401  (the error names it when missing)
    from torchvision import models

    torch.manual_seed(0)
    return getattr(models, name)(weights=None).eval()


def export(out_dir: Path, names: Iterable[str]) -> list[str]:
    import torch

    out_dir.mkdir(parents=True, exist_ok=True)
    notes: list[str] = []
    for name in names:
        target = out_dir / f"{name}.onnx"
        try:
            if name == "yolov8n":
                from ultralytics import YOLO  # random weights from the yaml: no download

                model = YOLO("yolov8n.yaml").model.eval()
            else:
                model = torchvision_model(name)
            example = torch.randn(1, 3, 224, 224) if name != "yolov8n" else torch.randn(1, 3, 640, 640)
            # The TorchScript exporter: opset 17 (braid reads 7-17; the dynamo
            # exporter, the default of newer PyTorch, writes 18 and later).
            legacy = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}
            torch.onnx.export(model, (example,), str(target), opset_version=17,
                              input_names=["input"], output_names=["output"],
                              dynamic_axes={"input": {0: "N"}, "output": {0: "N"}}, **legacy)
            notes.append(f"{name}: exported to {target}")
        except Exception as e:  # a missing package or exporter error: said, not hidden
            notes.append(f"{name}: not exported: {type(e).__name__}: {e}")
    return notes


def torch_latency(name: str, batch: int, iterations: int, compile_too: bool) -> dict[str, Any]:
    import torch

    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    result: dict[str, Any] = {"model": name, "batch": batch, "device": torch.cuda.get_device_name(0)}
    model = torchvision_model(name).cuda()
    x = torch.randn(batch, 3, 224, 224, device="cuda")
    sync = torch.cuda.synchronize
    with torch.inference_mode():
        eager = median_ms(lambda: model(x), sync, iterations)
        model_cl = model.to(memory_format=torch.channels_last)
        x_cl = x.to(memory_format=torch.channels_last)
        eager_cl = median_ms(lambda: model_cl(x_cl), sync, iterations)
        result["eager_ms"] = min(eager, eager_cl)
        result["eager_layout"] = "channels_last" if eager_cl < eager else "nchw"
        if compile_too:  # compiling takes tens of seconds a model
            try:
                compiled = torch.compile(model)
                result["compile_ms"] = median_ms(lambda: compiled(x), sync, iterations, warmup=3)
            except Exception as e:
                result["compile_error"] = f"{type(e).__name__}: {e}"[:200]
    return result


def cpu_figures(seconds: float = 0.5) -> dict[str, float]:
    """This host's CPU, measured with numpy: fp32 GEMM GFLOP/s and copy GB/s."""
    a = np.random.default_rng(0).standard_normal((1024, 1024), dtype=np.float32)
    flops, start = 0.0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        a @ a
        flops += 2.0 * 1024 ** 3
    gflops = flops / (time.perf_counter() - start) / 1e9
    src = np.ones(64 << 20 >> 2, dtype=np.float32)  # 64 MiB: past the caches
    dst = np.empty_like(src)
    copies, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        np.copyto(dst, src)
        copies += 1
    gbps = 2.0 * src.nbytes * copies / (time.perf_counter() - start) / 1e9
    return {"peak_gflops": gflops, "memory_bandwidth_gbps": gbps}


def device_profile(name: str, cpu: dict[str, float], gpu: dict[str, Any] | None) -> dict[str, Any]:
    """A braid device profile (docs/scheduler.md) from measured figures.

    Every figure is a measurement by this script (numpy on the CPU, PyTorch
    on the GPU), not by `braid calibrate`, and its source says so."""
    import os

    cores = os.cpu_count() or 1
    cpu_src = "measured: gpu_check.py (numpy, this host)"
    devices: list[dict[str, Any]] = [{
        "name": "cpu", "kind": "cpu", "description": f"host CPU, {cores} logical cores",
        "compute_units": cores, "peak_gflops": round(cpu["peak_gflops"], 1),
        "memory_bandwidth_gbps": round(cpu["memory_bandwidth_gbps"], 1), "launch_overhead_us": 2,
        "sources": {"peak_gflops": cpu_src + ": 1024^3 fp32 GEMM",
                    "memory_bandwidth_gbps": cpu_src + ": 64 MiB copy, bytes read + written",
                    "launch_overhead_us": "estimate: braid CPU executor dispatch per op"},
    }]
    links: list[dict[str, Any]] = []
    if gpu is not None:
        gpu_src = f"measured: gpu_check.py (PyTorch on {gpu['name']})"
        devices.append({
            "name": "cuda:0", "kind": "gpu", "description": gpu["name"],
            "compute_units": gpu["sms"], "peak_gflops": round(gpu["peak_gflops"], 1),
            "memory_bandwidth_gbps": round(gpu["memory_bandwidth_gbps"], 1),
            "launch_overhead_us": round(gpu["launch_us"], 2),
            "sources": {"peak_gflops": gpu_src + ": 8192^3 fp32 GEMM, TF32 off",
                        "memory_bandwidth_gbps": gpu_src + ": 1 GiB device copy, read + written",
                        "launch_overhead_us": gpu_src + ": empty-kernel launch"},
        })
        for direction, key in (("cpu", "h2d"), ("cuda:0", "d2h")):
            links.append({
                "from": direction, "to": "cuda:0" if direction == "cpu" else "cpu",
                "latency_us": round(gpu[key + "_latency_us"], 2),
                "bandwidth_gbps": round(gpu[key + "_gbps"], 1), "mapped": False, "copy_engines": 1,
                "sources": {"latency_us": gpu_src + f": 4-byte pinned {key} copy",
                            "bandwidth_gbps": gpu_src + f": 256 MiB pinned {key} copy"},
            })
    return {"name": name, "description": "measured by bench/gpu_check.py" +
            (f" on {gpu['name']}" if gpu else " (CPU only)"), "origin": "measured",
            "devices": devices, "links": links}


def gpu_figures() -> dict[str, Any]:
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    props = torch.cuda.get_device_properties(0)
    sync = torch.cuda.synchronize
    n = 8192
    a = torch.randn(n, n, device="cuda")
    gemm_ms = median_ms(lambda: a @ a, sync, 10, warmup=2)
    big = torch.empty(1 << 28, device="cuda")  # 1 GiB
    other = torch.empty_like(big)
    copy_ms = median_ms(lambda: other.copy_(big), sync, 10, warmup=2)
    tiny = torch.empty(1, device="cuda")
    launch_ms = median_ms(lambda: tiny.add_(1), sync, 200, warmup=20)
    out: dict[str, Any] = {"name": props.name, "sms": props.multi_processor_count,
                           "peak_gflops": 2.0 * n ** 3 / (gemm_ms * 1e-3) / 1e9,
                           "memory_bandwidth_gbps": 2.0 * big.numel() * 4 / (copy_ms * 1e-3) / 1e9,
                           "launch_us": launch_ms * 1e3}
    host = torch.empty(1 << 26, pin_memory=True)  # 256 MiB
    dev = torch.empty(1 << 26, device="cuda")
    host1 = torch.empty(1, pin_memory=True)
    dev1 = torch.empty(1, device="cuda")
    for key, dst, src, d1, s1 in (("h2d", dev, host, dev1, host1), ("d2h", host, dev, host1, dev1)):
        ms = median_ms(lambda: dst.copy_(src, non_blocking=True), sync, 10, warmup=2)
        out[key + "_gbps"] = host.numel() * 4 / (ms * 1e-3) / 1e9
        out[key + "_latency_us"] = median_ms(lambda: d1.copy_(s1, non_blocking=True), sync, 100) * 1e3
    return out


def table(rows: list[dict[str, Any]]) -> str:
    """Markdown: one row per (model, batch); ratios braid / PyTorch eager."""
    by_key: dict[tuple[str, int], dict[str, Any]] = {}
    for r in rows:
        by_key.setdefault((r["model"], int(r["batch"])), {}).update(r)
    lines = ["| model | batch | braid gpu-only ms | braid best mixed ms (policy) | "
             "PyTorch eager ms | torch.compile ms | gpu-only / eager |",
             "|---|---|---|---|---|---|---|"]
    ratios: dict[int, list[float]] = {}

    def fmt(v: Any) -> str:
        return f"{v:.3f}" if isinstance(v, (int, float)) else "-"

    for (model, batch), r in sorted(by_key.items()):
        gpu = r.get("braid_gpu_only_ms")
        eager = r.get("eager_ms")
        ratio = gpu / eager if isinstance(gpu, float) and isinstance(eager, float) and eager > 0 else None
        if ratio is not None:
            ratios.setdefault(batch, []).append(ratio)
        mixed = f"{fmt(r.get('braid_best_mixed_ms'))} ({r.get('braid_best_mixed_policy', '-')})"
        lines.append(f"| {model} | {batch} | {fmt(gpu)} | {mixed} | {fmt(eager)} | "
                     f"{fmt(r.get('compile_ms'))} | {fmt(ratio)} |")
    for batch, values in sorted(ratios.items()):
        geo = math.exp(sum(math.log(v) for v in values) / len(values))
        lines.append(f"\ngeomean gpu-only / eager at batch {batch}: {geo:.3f} over {len(values)} models")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("compare")
    c.add_argument("ref_dir", type=Path)
    c.add_argument("got_dir", type=Path)
    c.add_argument("--rel", type=float, default=1e-4)
    e = sub.add_parser("export")
    e.add_argument("out_dir", type=Path)
    e.add_argument("--models", default=",".join(TORCHVISION_MODELS + ("yolov8n",)))
    t = sub.add_parser("torch-latency")
    t.add_argument("model")
    t.add_argument("--batch", type=int, default=1)
    t.add_argument("--iterations", type=int, default=30)
    t.add_argument("--compile", action="store_true", help="also torch.compile (slow to build)")
    tb = sub.add_parser("table")
    tb.add_argument("results", type=Path)
    pr = sub.add_parser("profile")
    pr.add_argument("out", type=Path)
    pr.add_argument("--cpu-only", action="store_true")
    args = parser.parse_args(argv)

    if args.command == "profile":
        gpu = None if args.cpu_only else gpu_figures()
        name = "gpu-check-" + ("cpu" if gpu is None else gpu["name"].replace(" ", "-").lower())
        args.out.write_text(json.dumps(device_profile(name, cpu_figures(), gpu), indent=2) + "\n")
        print(f"wrote {args.out} (measured by gpu_check.py, not by braid calibrate)")
        return 0

    if args.command == "compare":
        ok, lines = compare_dirs(args.ref_dir, args.got_dir, args.rel)
        print("\n".join(lines))
        return 0 if ok else 1
    if args.command == "export":
        notes = export(args.out_dir, args.models.split(","))
        print("\n".join(notes))
        # yolov8n needs ultralytics, which a machine may lack; the rest must export.
        failed = [n for n in notes if "not exported" in n and not n.startswith("yolov8n")]
        return 1 if failed else 0
    if args.command == "torch-latency":
        print(json.dumps(torch_latency(args.model, args.batch, args.iterations, args.compile)))
        return 0
    rows = [json.loads(line) for line in args.results.read_text().splitlines() if line.strip()]
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
