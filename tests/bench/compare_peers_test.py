"""bench/compare_peers.py's bookkeeping: the ratio to the faster peer, the summary per
(load, threads, batch) and the table rows.

  python3 tests/bench/compare_peers_test.py
"""
from __future__ import annotations

import math
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import compare_peers  # noqa: E402

PEERS = ["ort", "openvino"]


def row(model: str, braid: float, ort: float, ov: float, load: bool = False, threads: int = 2,
        batch: int = 1, rss: tuple = (50, 60, 70)) -> dict:
    return {"model": model, "load": load, "threads": threads, "batch": batch, "braid_ms": braid,
            "ort_ms": ort, "openvino_ms": ov, "ratio": braid / min(ort, ov),
            "braid_rss_mb": rss[0], "ort_rss_mb": rss[1], "openvino_rss_mb": rss[2]}


class ComparePeersTest(unittest.TestCase):
    def test_summary_per_configuration(self) -> None:
        rows = [row("a", 8.0, 10.0, 9.0), row("b", 12.0, 10.0, 11.0, rss=(90, 60, 70)),
                row("c", 5.0, 4.0, 6.0, load=True)]
        lines = compare_peers.summarize(rows, PEERS)
        self.assertEqual(len(lines), 2)  # idle 2x1, loaded 2x1
        idle = lines[0]
        self.assertTrue(idle.startswith("idle, 2 thread(s), batch 1"))
        self.assertIn(f"{math.sqrt((8 / 9) * (12 / 10)):.3f} over 2 models", idle)
        self.assertIn("worst 1.20 (b)", idle)
        self.assertIn("1 above 1.15x: b", idle)
        self.assertIn("at or below both peers' on 1 of 2", idle)
        self.assertTrue(lines[1].startswith("loaded"))

    def test_rows_and_errors(self) -> None:
        cells = compare_peers.format_row(row("a", 8.0, 10.0, 9.0), PEERS)
        self.assertEqual(cells, ["a", "idle", "2", "1", "8.00", "10.00", "9.00", "0.89", "50", "60",
                                 "70"])
        failed = {"model": "x", "load": True, "threads": 1, "batch": 8, "error": "braid exit 2: no"}
        self.assertEqual(compare_peers.format_row(failed, PEERS)[-1], "braid exit 2: no")
        # Errors are not summarised as measurements.
        self.assertEqual(compare_peers.summarize([failed], PEERS), [])


if __name__ == "__main__":
    unittest.main()
