"""Tests for common.resources."""

import os
import tempfile

from absl.testing import absltest
import numpy as np

from sentzoo.common import resources


class ResourcesTest(absltest.TestCase):

  def test_status_fields(self):
    with tempfile.NamedTemporaryFile("w", suffix="status", delete=False) as f:
      f.write("Name:\tpython\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\n")
    self.addCleanup(os.remove, f.name)
    self.assertEqual(resources.status_mb("VmHWM", f.name), 200.0)
    self.assertEqual(resources.status_mb("VmRSS", f.name), 100.0)
    self.assertIsNone(resources.status_mb("VmSwap", f.name))
    self.assertIsNone(resources.status_mb("VmRSS", f.name + ".absent"))

  def test_peak_follows_an_allocation(self):
    if resources.current_rss_mb() is None:
      self.skipTest("no /proc/self/status")
    resources.reset_peak_rss()
    before = resources.peak_rss_mb()
    block = np.ones(64 << 20, np.uint8)  # 64 MB, touched
    grown = resources.peak_rss_mb()
    self.assertGreater(grown - before, 50)
    self.assertGreaterEqual(grown, resources.current_rss_mb())
    del block
    if resources.reset_peak_rss():
      self.assertLess(resources.peak_rss_mb(), grown - 50)


if __name__ == "__main__":
  absltest.main()
