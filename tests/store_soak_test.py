"""A short store soak: nothing lost, nothing left, on this code."""

import os

import tensorflow as tf

from sentzoo.tests import store_soak
from sentzoo.tests import zoo_test_util


class StoreSoakTest(tf.test.TestCase):

  def test_a_short_soak_loses_nothing_and_leaves_nothing(self):
    root = self.get_temp_dir()
    export_dir = zoo_test_util.make_export(os.path.join(root, "model"))
    counts = store_soak.soak(export_dir, os.path.join(root, "home"),
                             rounds=4, workers=5, kill_probability=0.5,
                             seed=1, log=lambda _: None)
    self.assertEqual(counts["commands"], 20)
    self.assertGreater(counts["installed"], 0)
    self.assertGreater(counts["killed"], 0)
    for key in ("lost", "false_installed", "damaged", "leftovers"):
      self.assertEqual(counts[key], 0, counts)


if __name__ == "__main__":
  tf.test.main()
