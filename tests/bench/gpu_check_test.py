"""bench/gpu_check.py's CPU-side logic: output comparison, the latency
table, and the device profile it writes (loaded by `braid plan`).

  python3 tests/bench/gpu_check_test.py [BRAID_BINARY]
"""
from __future__ import annotations

import json
import math
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import gpu_check  # noqa: E402

BRAID: str | None = None


class CompareTest(unittest.TestCase):
    def setUp(self) -> None:
        self.ref = np.random.default_rng(1).standard_normal((4, 1000)).astype(np.float32)

    def test_rounding_differences_pass_and_real_errors_fail(self) -> None:
        scale = float(np.max(np.abs(self.ref)))
        nudged = self.ref + np.float32(1e-6 * scale)
        self.assertLess(gpu_check.compare_arrays(self.ref, nudged), 1e-4)
        wrong = self.ref.copy()
        wrong[2, 17] += np.float32(1e-3 * scale)
        self.assertAlmostEqual(gpu_check.compare_arrays(self.ref, wrong), 1e-3, delta=1e-5)

    def test_shape_mismatch_and_non_finite_values_fail(self) -> None:
        self.assertEqual(gpu_check.compare_arrays(self.ref, self.ref[:, :999]), math.inf)
        bad = self.ref.copy()
        bad[0, 0] = np.nan
        self.assertEqual(gpu_check.compare_arrays(self.ref, bad), math.inf)

    def test_directories_compare_every_output_and_report_a_missing_one(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            ref_dir, got_dir = Path(d, "ref"), Path(d, "got")
            ref_dir.mkdir()
            got_dir.mkdir()
            np.save(ref_dir / "logits.npy", self.ref)
            np.save(ref_dir / "boxes.npy", self.ref[:2])
            np.save(got_dir / "logits.npy", self.ref)
            ok, lines = gpu_check.compare_dirs(ref_dir, got_dir, 1e-4)
            self.assertFalse(ok)
            self.assertTrue(any("boxes: missing" in line for line in lines), lines)
            np.save(got_dir / "boxes.npy", self.ref[:2] * np.float32(1.01))
            ok, lines = gpu_check.compare_dirs(ref_dir, got_dir, 1e-4)
            self.assertFalse(ok)
            np.save(got_dir / "boxes.npy", self.ref[:2])
            ok, lines = gpu_check.compare_dirs(ref_dir, got_dir, 1e-4)
            self.assertTrue(ok, lines)


class TableTest(unittest.TestCase):
    def test_ratios_and_geomean_per_batch(self) -> None:
        rows = [
            {"model": "a", "batch": 1, "braid_gpu_only_ms": 2.0, "eager_ms": 1.0},
            {"model": "b", "batch": 1, "braid_gpu_only_ms": 1.0, "eager_ms": 2.0,
             "braid_best_mixed_ms": 0.8, "braid_best_mixed_policy": "heft"},
            {"model": "a", "batch": 8, "braid_gpu_only_ms": 3.0},
        ]
        text = gpu_check.table(rows)
        self.assertIn("| a | 1 | 2.000 | - (-) | 1.000 | - | 2.000 |", text)
        self.assertIn("| b | 1 | 1.000 | 0.800 (heft) | 2.000 | - | 0.500 |", text)
        self.assertIn("geomean gpu-only / eager at batch 1: 1.000 over 2 models", text)
        self.assertNotIn("at batch 8", text)  # no eager figure there: no ratio


class ProfileTest(unittest.TestCase):
    def test_the_written_profile_loads_in_braid_and_places_work_on_the_gpu(self) -> None:
        gpu = {"name": "Test GPU", "sms": 132, "peak_gflops": 50000.0,
               "memory_bandwidth_gbps": 3000.0, "launch_us": 4.0, "h2d_gbps": 50.0,
               "d2h_gbps": 50.0, "h2d_latency_us": 8.0, "d2h_latency_us": 9.0}
        profile = gpu_check.device_profile("test", {"peak_gflops": 100.0,
                                                    "memory_bandwidth_gbps": 20.0}, gpu)
        self.assertEqual([d["name"] for d in profile["devices"]], ["cpu", "cuda:0"])
        for device in profile["devices"]:
            for field in ("peak_gflops", "memory_bandwidth_gbps"):
                self.assertIn("measured", device["sources"][field])
        if BRAID is None:
            self.skipTest("no braid binary given")
        with tempfile.TemporaryDirectory() as d:
            path = Path(d, "p.json")
            path.write_text(json.dumps(profile))
            out = subprocess.run([BRAID, "plan", "builtin:resnet18", "--profile", str(path),
                                  "--policy", "gpu-only", "--json"], capture_output=True,
                                 text=True, check=True).stdout
            plan = json.loads(out)["plan"]
            self.assertTrue(all(n["device"] == "cuda:0" for n in plan["nodes"]), out[:400])


if __name__ == "__main__":
    if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
        BRAID = sys.argv.pop(1)
    unittest.main()
