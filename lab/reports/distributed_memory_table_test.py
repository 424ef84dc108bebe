"""Tests of lab/reports/distributed_memory_table.py (standard library only)."""

import unittest

from lab.reports import distributed_memory_table


class ParameterServerMemoryTest(unittest.TestCase):

  def test_shards_hold_their_share_of_the_rows(self):
    # 1,000 x 16 source rows and 42 target rows over 2 ps: 500 + 21 rows
    # of 64 bytes per ps; over 3 ps the largest shards have 334 and 14.
    sizes = distributed_memory_table.parameter_server_memory(
        1000, 42, 16, 2, block_rows=10)
    self.assertEqual(sizes, {"source": 64000, "target": 2688,
                             "per_ps": (500 + 21) * 64, "worker": 640,
                             "mirrored_replica": 66688})
    self.assertEqual(distributed_memory_table.parameter_server_memory(
        1000, 42, 16, 3)["per_ps"], (334 + 14) * 64)

  def test_the_paper_models_table(self):
    table = distributed_memory_table.part(None).split("\n")
    # Wikipedia uni: 5e9 bytes / (8 x 600) = 1.04M words; 2 ps hold half.
    self.assertIn("| Wikipedia uni | 600 | 1.04M | 0.00M | 5,000 MB | "
                  "5,000 MB | 2,500 MB | 1,250 MB | 625 MB |", table[2])


if __name__ == "__main__":
  unittest.main()
