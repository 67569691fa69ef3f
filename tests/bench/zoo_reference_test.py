"""CI's zoo subset: the torchvision models scripts/export_torchvision.py exports (random
weights, opset 17) run in braid on PyTorch's random input and must match PyTorch's own output
within 1e-4 of max |PyTorch| (bench/zoo.py's tolerance against ONNX Runtime).

  BRAID_ZOO_DIR=build-test/zoo python3 tests/bench/zoo_reference_test.py BUILD/tools/braid

Without BRAID_ZOO_DIR (scripts/test.sh sets it) the test is skipped and says why.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

TOLERANCE = 1e-4
OPSET = 17
BRAID = ""


def relative_error(got: np.ndarray, want: np.ndarray) -> float:
    scale = float(np.max(np.abs(want)))
    return float(np.max(np.abs(got.astype(np.float64) - want))) / max(scale, 1e-30)


class ZooReferenceTest(unittest.TestCase):
    def test_error_is_relative_to_the_largest_reference_value(self) -> None:
        want = np.array([10.0, -20.0, 5.0])
        self.assertAlmostEqual(relative_error(want + [0, 0.002, 0], want), 1e-4)
        self.assertEqual(relative_error(want, want), 0.0)

    def test_every_exported_model_matches_pytorch(self) -> None:
        zoo_dir = os.environ.get("BRAID_ZOO_DIR", "")
        if not zoo_dir:
            self.skipTest("set BRAID_ZOO_DIR; scripts/test.sh exports the zoo")
        with open(os.path.join(zoo_dir, "manifest.json")) as f:
            manifest = json.load(f)
        entries = {file: e for file, e in manifest.items()
                   if e.get("opset") == OPSET and "output_npy" in e}
        self.assertTrue(entries, f"no opset-{OPSET} model with a PyTorch output in {zoo_dir}")
        failures = []
        for file, entry in sorted(entries.items()):
            with self.subTest(model=entry["model"]), tempfile.TemporaryDirectory() as out:
                x = os.path.join(zoo_dir, entry["input_npy"])
                run = subprocess.run(
                    [BRAID, "run", os.path.join(zoo_dir, file), "--input", f"input={x}",
                     "--output-dir", out, "--iterations", "1", "--warmup", "0", "--json"],
                    capture_output=True, text=True, timeout=600)
                if run.returncode != 0:
                    failures.append(f"{file}: braid run exited {run.returncode}: "
                                    f"{run.stderr.strip()[-400:]}")
                    continue
                got = np.load(os.path.join(out, "output.npy"))
                want = np.load(os.path.join(zoo_dir, entry["output_npy"]))
                if got.shape != want.shape:
                    failures.append(f"{file}: shape {got.shape}, PyTorch {want.shape}")
                    continue
                error = relative_error(got, want)
                print(f"zoo_reference: {file}: max |braid - PyTorch| / max |PyTorch| = "
                      f"{error:.2e}", flush=True)
                if not error <= TOLERANCE:
                    failures.append(f"{file}: error {error:.2e} > {TOLERANCE}")
        self.assertEqual(failures, [])


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: zoo_reference_test.py BRAID_BINARY [unittest args]")
    BRAID = sys.argv.pop(1)
    unittest.main()
