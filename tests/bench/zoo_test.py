"""bench/zoo.py's bookkeeping: error messages condensed, the summary's counts, geometric mean
and worst case, and the Markdown table docs/zoo.md is written as.

  python3 tests/bench/zoo_test.py
"""
from __future__ import annotations

import argparse
import math
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import zoo  # noqa: E402

ROWS = [
    {"model": "resnet18", "status": "PASS", "error": 9.2e-7, "ops": 49, "braid_ms": 8.0,
     "ort_ms": 10.0, "ratio": 0.8, "reference_ops": {}, "fallbacks": 0},
    {"model": "yolov8n", "status": "PASS", "error": 6.4e-8, "ops": 416, "braid_ms": 6.0,
     "ort_ms": 5.0, "ratio": 1.2, "reference_ops": {"Slice": 18}, "fallbacks": 2},
    {"model": "swin_t", "status": "FAIL", "ops": 6290, "reason": "unsupported: Mod x54"},
]


class ZooTest(unittest.TestCase):
    def test_unsupported_node_lists_become_op_counts(self) -> None:
        message = ("model.onnx: 3 unsupported nodes: node 'a' (op Mod), node 'b' (op Mod), "
                   "node 'c' (op Einsum)")
        self.assertEqual(zoo.short_reason(message), "unsupported: Einsum x1, Mod x2")
        self.assertEqual(zoo.short_reason("short error"), "short error")
        self.assertTrue(zoo.short_reason("x" * 500).endswith("..."))

    def test_summary_counts_passes_and_reports_geomean_and_worst(self) -> None:
        lines = zoo.summary(ROWS, timing=True, tolerance=1e-4)
        self.assertIn("2 of 3 models", lines[0])
        self.assertIn(f"{math.sqrt(0.8 * 1.2):.3f}", lines[1])
        self.assertIn("worst 1.20 (yolov8n)", lines[1])
        self.assertIn("1 models run some node on a reference kernel: yolov8n", lines[2])

    def test_rows_show_reference_ops_fallbacks_and_reasons(self) -> None:
        cells = zoo.format_rows(ROWS, timing=True)
        self.assertEqual(cells[0][:7], ["resnet18", "PASS", "9.2e-07", "49", "8.00", "10.00", "0.80"])
        self.assertEqual(cells[1][7:], ["Slice x18", "2 fallbacks"])
        self.assertEqual(cells[2][1], "FAIL")
        self.assertEqual(cells[2][-1], "unsupported: Mod x54")
        self.assertEqual(len(zoo.format_rows(ROWS, timing=False)[0]), 6)

    def test_markdown_has_the_command_the_summary_and_one_row_per_model(self) -> None:
        args = argparse.Namespace(threads=2, opset=21, markdown="docs/zoo.md", tolerance=1e-4)
        header = ["model", "status", "error", "ONNX nodes", "braid ms", "ORT ms", "braid/ORT",
                  "reference kernels", "note"]
        with tempfile.NamedTemporaryFile("r", suffix=".md") as f:
            zoo.write_markdown(f.name, ROWS, True, args, header)
            text = f.read()
        self.assertIn("--threads 2 --opset 21 --markdown docs/zoo.md", text)
        self.assertIn("opset 21", text)
        self.assertIn("- 2 of 3 models", text)
        table = [line for line in text.splitlines() if line.startswith("| ")]
        self.assertEqual(len(table), 1 + len(ROWS))  # header + rows
        self.assertTrue(all(line.count("|") == len(header) + 1 for line in table))

    def test_every_zoo_model_is_listed_once(self) -> None:
        models = zoo.ALL_MODELS
        self.assertEqual(len(models), len(set(models)))
        self.assertGreaterEqual(len(models), 100)
        for family in (zoo.zoo_models.TIMM, zoo.zoo_models.YOLO, zoo.zoo_models.CUSTOM):
            self.assertTrue(set(family) <= set(models))


if __name__ == "__main__":
    unittest.main()
