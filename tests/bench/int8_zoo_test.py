"""bench/int8_zoo.py's comparison: error relative to the f32 output's largest magnitude,
cosine, top-1 agreement of the first output.

  python3 tests/bench/int8_zoo_test.py
"""
from __future__ import annotations

import math
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import int8_zoo  # noqa: E402


class AgreementTest(unittest.TestCase):
    def test_error_cosine_and_top1(self) -> None:
        want = [[1.0, -4.0, 2.0], [0.5]]
        got = [[1.5, -4.0, 2.0], [0.5]]
        error, cosine, top1 = int8_zoo.agreement(want, got)
        self.assertAlmostEqual(error, 0.5 / 4.0)
        dot = 1.5 + 16 + 4 + 0.25
        self.assertAlmostEqual(cosine, dot / math.sqrt(21.25 * 22.5))
        self.assertTrue(top1)  # index 2 in both

    def test_top1_differs_and_identical_outputs(self) -> None:
        _, _, top1 = int8_zoo.agreement([[1.0, 2.0]], [[3.0, 2.0]])
        self.assertFalse(top1)
        error, cosine, top1 = int8_zoo.agreement([[0.3, -0.7]], [[0.3, -0.7]])
        self.assertEqual(error, 0.0)
        self.assertAlmostEqual(cosine, 1.0)
        self.assertTrue(top1)

    def test_sizes_must_match(self) -> None:
        with self.assertRaises(ValueError):
            int8_zoo.agreement([[1.0, 2.0]], [[1.0]])


if __name__ == "__main__":
    unittest.main()
