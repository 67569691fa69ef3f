#!/usr/bin/python3
"""The zoo: many architectures exported, run by braid and checked against ONNX Runtime.

Models: scripts/export_torchvision.py's ZOO (torchvision classification and segmentation)
and bench/zoo_models.py's timm architectures, Ultralytics YOLO (detect / segment / pose /
classify, 320x320) and two small non-vision encoders (text, audio); random weights, opset 17.
Missing ONNX files are exported into BUILD/zoo first; models whose exporter (timm,
ultralytics from PyPI) is not installed in the bench venv are listed as SKIP.

--opset N runs the same exports converted to opset N by ONNX's version converter (the
exporter here writes 17; current PyTorch writes 18 and later).

Per model, on one seeded random input in [-1, 1) (YOLO: [0, 1)):
  * PASS / FAIL: every output of `braid run` within --tolerance of ONNX Runtime's
    (max abs error / max |ORT output|), or braid's error message. When a model's random
    weights make it ill-conditioned, ONNX Runtime's default (fused) and unoptimized graphs
    disagree beyond the tolerance themselves; braid then passes if it is within the
    tolerance of the unoptimized one, and the note gives both figures;
  * where each node ran: the op types that ran on a reference kernel (slow path) and every
    fallback braid reported;
  * unless --no-timing: median latency of braid and of ONNX Runtime (CPU EP, sequential,
    same thread count), alternating processes, and their ratio. CPU measurements on this
    machine; the geometric mean of the ratios closes the table.
--markdown FILE writes the same table as Markdown (docs/zoo.md is this script's output).

  bench/zoo.py --build-dir build [--models resnet18 ...] [--threads 2] [--no-timing]
               [--markdown docs/zoo.md]
"""
from __future__ import annotations

import argparse
import collections
import datetime
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "scripts"))
import bench_common  # noqa: E402
import compare_ort  # noqa: E402  (run_measured)
import export_torchvision  # noqa: E402  (ZOO)

import zoo_models  # noqa: E402  (timm, Ultralytics and the non-vision encoders)

ALL_MODELS = export_torchvision.ZOO + zoo_models.TIMM + zoo_models.YOLO + zoo_models.CUSTOM


def model_file(zoo: str, name: str) -> str | None:
    """BUILD/zoo/<name>_op17.onnx, exported when absent; None when its exporter's package
    (timm, ultralytics) is not installed in the bench venv."""
    if name in export_torchvision.ZOO:
        return bench_common.zoo_file(zoo, name, 17)
    path = os.path.join(zoo, f"{name}_op17.onnx")
    if os.path.exists(path):
        return path
    os.makedirs(zoo, exist_ok=True)
    print(f"zoo: exporting {name} to {zoo}", file=sys.stderr, flush=True)
    try:
        zoo_models.export(name, path + ".tmp")
    except ImportError:
        return None
    os.replace(path + ".tmp", path)
    return path


def upgraded_file(path17: str, opset: int) -> str:
    """The opset-17 export converted to `opset` with ONNX's version converter (cached)."""
    path = path17.replace("_op17.onnx", f"_op{opset}.onnx")
    if not os.path.exists(path):
        import onnx
        from onnx import version_converter
        onnx.save(version_converter.convert_version(onnx.load(path17), opset), path)
    return path


def input_for(sess, name: str, batch: int):
    """Seeded random input for the model's first input (symbolic dims -> batch): token ids
    for integer inputs, [0, 1) images for YOLO, else [-1, 1)."""
    import numpy as np
    meta = sess.get_inputs()[0]
    shape = [d if isinstance(d, int) else batch for d in meta.shape]
    rng = np.random.default_rng(0)
    if meta.type == "tensor(int64)":
        return meta.name, rng.integers(0, zoo_models.TEXT_VOCAB, shape, dtype=np.int64)
    low = 0.0 if name.startswith("yolo") else -1.0
    return meta.name, rng.uniform(low, 1, shape).astype(np.float32)


def short_reason(message: str) -> str:
    """braid's error, with a list of unsupported nodes condensed to op counts."""
    ops = collections.Counter(re.findall(r"\(op ([A-Za-z0-9_.:]+)\)", message))
    if "unsupported nodes" in message and ops:
        return "unsupported: " + ", ".join(f"{op} x{n}" for op, n in sorted(ops.items()))
    return message if len(message) <= 300 else message[:300] + "..."


def check(braid: str, path: str, name: str, threads: int, tolerance: float, tmp: str) -> dict:
    """Runs path once in braid and in ORT on the same input; returns the row's facts."""
    import numpy as np
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    input_name, x = input_for(sess, name, 1)
    refs = sess.run(None, {input_name: x})
    x_path = os.path.join(tmp, f"{name}.npy")
    np.save(x_path, x)
    out_dir = os.path.join(tmp, name)
    run = subprocess.run([braid, "run", path, "--input", f"{input_name}={x_path}",
                          "--output-dir", out_dir, "--iterations", "1", "--warmup", "0",
                          "--threads", str(threads), "--json"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    row: dict = {"model": name, "ops": None}
    try:
        import onnx
        row["ops"] = len(onnx.load(path, load_external_data=False).graph.node)
    except ImportError:
        pass
    if run.returncode != 0:
        lines = run.stderr.strip().splitlines()
        row.update(status="FAIL", reason=short_reason(lines[-1] if lines else f"exit {run.returncode}"))
        return row
    report = json.loads(run.stdout)
    row["reference_ops"] = dict(collections.Counter(
        n["op"] for n in report["nodes"] if n["implementation"] == "reference"))
    row["fallbacks"] = len(report.get("fallbacks", []))
    got = []
    for meta, ref in zip(sess.get_outputs(), refs):
        got.append(np.load(os.path.join(out_dir, f"{meta.name}.npy")))
        if got[-1].shape != ref.shape:
            row.update(status="FAIL", reason=f"{meta.name}: shape {got[-1].shape} vs ORT {ref.shape}")
            return row
    row["error"] = max_error(got, refs)
    row["status"] = "PASS" if row["error"] <= tolerance else "FAIL"
    if row["status"] == "FAIL":
        # Random weights can make a model ill-conditioned: then ONNX Runtime's own fused
        # (default) and unfused graphs disagree too. Judge against the unfused one, which
        # computes the graph as written, and say so.
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        plain = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"]).run(
            None, {input_name: x})
        unfused, spread = max_error(got, plain), max_error(refs, plain)
        if unfused <= tolerance:
            row["status"] = "PASS"
            row["reason"] = (f"{unfused:.1e} against ONNX Runtime without graph optimizations; "
                             f"its default and unoptimized outputs differ by {spread:.1e}")
        else:
            row["reason"] = f"error {row['error']:.2e} above {tolerance}"
    return row


def max_error(got: list, refs: list) -> float:
    """Largest max |got - ref| / max |ref| over the outputs."""
    import numpy as np
    worst = 0.0
    for g, ref in zip(got, refs):
        scale = float(np.max(np.abs(ref)))
        err = float(np.max(np.abs(g.astype(np.float64) - ref.astype(np.float64))))
        worst = max(worst, err / scale if scale > 0 else err)
    return worst


def time_pair(braid: str, path: str, name: str, threads: int, rounds: int,
              iterations: int, warmup: int) -> tuple[float, float]:
    """Median latency (ms) of braid and ORT, alternating processes round by round."""
    b_ms, o_ms = [], []
    for _ in range(rounds):
        out, err, code, _ = compare_ort.run_measured(
            [braid, "run", path, "--json", "--threads", str(threads),
             "--iterations", str(iterations), "--warmup", str(warmup)])
        if code != 0:
            raise RuntimeError(f"braid exit {code}: {err.strip()[-200:]}")
        b_ms.append(json.loads(out)["latency_ms"]["median"])
        # compare_peers.py's timed ONNX Runtime child, at batch 1.
        out, err, code, _ = compare_ort.run_measured(
            [sys.executable, os.path.join(HERE, "compare_peers.py"), "--child", "ort", path, name,
             str(threads), "1", str(iterations), str(warmup)])
        if code != 0:
            raise RuntimeError(f"ORT exit {code}: {err.strip()[-200:]}")
        o_ms.append(json.loads(out)["median"])
    return statistics.median(b_ms), statistics.median(o_ms)


def format_rows(rows: list[dict], timing: bool) -> list[list[str]]:
    table = []
    for r in rows:
        cells = [r["model"], r["status"], f"{r['error']:.1e}" if "error" in r else "",
                 str(r["ops"] or "")]
        if timing:
            cells += [f"{r['braid_ms']:.2f}" if "braid_ms" in r else "",
                      f"{r['ort_ms']:.2f}" if "ort_ms" in r else "",
                      f"{r['ratio']:.2f}" if "ratio" in r else ""]
        slow = ", ".join(f"{op} x{n}" for op, n in sorted(r.get("reference_ops", {}).items()))
        note = r.get("reason", "")
        if r.get("fallbacks"):
            note = (note + "; " if note else "") + f"{r['fallbacks']} fallbacks"
        table.append(cells + [slow, note])
    return table


def summary(rows: list[dict], timing: bool, tolerance: float) -> list[str]:
    passed = sum(r["status"] == "PASS" for r in rows)
    lines = [f"{passed} of {len(rows)} models run and match ONNX Runtime within {tolerance} "
             "(max abs error / max |ORT output|)."]
    ratios = [r["ratio"] for r in rows if "ratio" in r]
    if timing and ratios:
        worst = max((r for r in rows if "ratio" in r), key=lambda r: r["ratio"])
        lines.append(f"Latency braid / ONNX Runtime: geometric mean {bench_common.geomean(ratios):.3f} over "
                     f"{len(ratios)} models, worst {worst['ratio']:.2f} ({worst['model']}); "
                     "below 1 means braid is faster.")
    slow = sorted(r["model"] for r in rows if r.get("reference_ops"))
    lines.append(f"{len(slow)} models run some node on a reference kernel: "
                 f"{', '.join(slow) if slow else 'none'}.")
    return lines


def write_markdown(path: str, rows: list[dict], timing: bool, args, header: list[str]) -> None:
    with open(path, "w") as f:
        f.write("# The zoo\n\n")
        f.write("Generated by `bench/zoo.py` (do not edit by hand): "
                f"`bench/zoo.py --build-dir BUILD --threads {args.threads}"
                f"{'' if args.opset == 17 else f' --opset {args.opset}'}"
                f"{'' if timing else ' --no-timing'} --markdown {args.markdown}`.\n\n")
        f.write(f"Host: {platform.machine()}, {os.cpu_count()} cores, "
                f"{datetime.date.today().isoformat()}; CPU only, {args.threads} threads, "
                f"batch 1. Random weights and inputs; opset {args.opset}. \"Reference kernels\" lists the "
                "op types that ran on braid's portable reference kernels (no oneDNN or braid CPU "
                "kernel took them; Slice and Gather there are strided copies at memory speed).\n\n")
        for line in summary(rows, timing, args.tolerance):
            f.write(f"- {line}\n")
        f.write("\n| " + " | ".join(header) + " |\n")
        f.write("|" + "---|" * len(header) + "\n")
        for cells in format_rows(rows, timing):
            f.write("| " + " | ".join(cells) + " |\n")


def main() -> int:
    all_models = ALL_MODELS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--braid", help="the braid binary (default BUILD/tools/braid)")
    parser.add_argument("--zoo", help="folder of <model>_op17.onnx (default BUILD/zoo)")
    parser.add_argument("--models", nargs="+", choices=all_models, default=all_models)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--opset", type=int, default=17,
                        help="run the exports converted to this opset (ONNX's version converter)")
    parser.add_argument("--tolerance", type=float, default=1e-4)
    parser.add_argument("--no-timing", action="store_true", help="check outputs only")
    parser.add_argument("--rounds", type=int, default=2, help="alternating braid/ORT pairs")
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--markdown", help="also write the table here (Markdown)")
    parser.add_argument("--json-out", help="also write the rows here")
    args = parser.parse_args()
    build_dir = os.path.abspath(args.build_dir)
    bench_common.ensure_venv(build_dir)
    braid = args.braid or bench_common.default_braid(build_dir)
    zoo = args.zoo or bench_common.default_zoo(build_dir)
    timing = not args.no_timing

    header = ["model", "status", "error", "ONNX nodes"]
    if timing:
        header += ["braid ms", "ORT ms", "braid/ORT"]
    header += ["reference kernels", "note"]
    print(" | ".join(header), flush=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="braid_zoo_") as tmp:
        for i, name in enumerate(args.models, 1):
            try:
                path = model_file(zoo, name)
                if path is not None and args.opset != 17:
                    path = upgraded_file(path, args.opset)
            except Exception as e:  # noqa: BLE001  (an exporter's failure is a row, not a stop)
                path, reason = None, f"export failed: {type(e).__name__}: {str(e)[:200]}"
            else:
                reason = "its exporter (timm / ultralytics) is not installed in the bench venv"
            if path is None:
                rows.append({"model": name, "status": "SKIP", "ops": None, "reason": reason})
            else:
                row = check(braid, path, name, args.threads, args.tolerance, tmp)
                if timing and row["status"] == "PASS":
                    row["braid_ms"], row["ort_ms"] = time_pair(
                        braid, path, name, args.threads, args.rounds, args.iterations,
                        args.warmup)
                    row["ratio"] = row["braid_ms"] / row["ort_ms"]
                rows.append(row)
            print(f"[{i}/{len(args.models)}] " + " | ".join(format_rows(rows[-1:], timing)[0]),
                  flush=True)
    print()
    for line in summary(rows, timing, args.tolerance):
        print(line)
    if args.markdown:
        write_markdown(args.markdown, rows, timing, args, header)
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(rows, f, indent=1)
    return 1 if any(r["status"] == "FAIL" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
