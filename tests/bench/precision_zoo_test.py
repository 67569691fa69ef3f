"""bench/precision_zoo.py's comparison (error relative to the f32 output's largest magnitude,
cosine, top-1 agreement of the first output) and its reading of convert's summary.

  python3 tests/bench/precision_zoo_test.py
"""
from __future__ import annotations

import math
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import precision_zoo  # noqa: E402


class AgreementTest(unittest.TestCase):
    def test_error_cosine_and_top1(self) -> None:
        want = [[1.0, -4.0, 2.0], [0.5]]
        got = [[1.5, -4.0, 2.0], [0.5]]
        error, cosine, top1 = precision_zoo.agreement(want, got)
        self.assertAlmostEqual(error, 0.5 / 4.0)
        dot = 1.5 + 16 + 4 + 0.25
        self.assertAlmostEqual(cosine, dot / math.sqrt(21.25 * 22.5))
        self.assertTrue(top1)  # index 2 in both

    def test_top1_differs_and_identical_outputs(self) -> None:
        _, _, top1 = precision_zoo.agreement([[1.0, 2.0]], [[3.0, 2.0]])
        self.assertFalse(top1)
        error, cosine, top1 = precision_zoo.agreement([[0.3, -0.7]], [[0.3, -0.7]])
        self.assertEqual(error, 0.0)
        self.assertAlmostEqual(cosine, 1.0)
        self.assertTrue(top1)

    def test_sizes_must_match(self) -> None:
        with self.assertRaises(ValueError):
            precision_zoo.agreement([[1.0, 2.0]], [[1.0]])


class ConversionCountsTest(unittest.TestCase):
    def test_int8_and_bf16_summaries(self) -> None:
        int8 = ("int8: calibrated (min-max) on 8 runs of random N(0,1) values for input; 21 nodes "
                "quantized (40 activations), 21 int8 ops and 0 activation table lookups after "
                "folding; 2 kept f32\n")
        self.assertEqual(precision_zoo.conversion_counts("int8", int8), (21, 2))
        bf16 = ("bf16: 53 Conv / MatMul / Gemm nodes compute in bf16 (inputs and weights rounded "
                "to bfloat16, f32 sums and outputs; the file keeps f32 weights); 0 kept f32\n")
        self.assertEqual(precision_zoo.conversion_counts("bf16", bf16), (53, 0))
        self.assertIsNone(precision_zoo.conversion_counts("bf16", int8))


if __name__ == "__main__":
    unittest.main()
