"""Tests for lab.records (compact records of finished runs)."""

import os

import numpy as np
import tensorflow as tf

from lab import records


class RunRecordsTest(tf.test.TestCase):

  def test_decimals_round_trip_as_round_decimals(self):
    path = os.path.join(self.get_temp_dir(), "d", "x.npz")
    values = np.random.default_rng(0).uniform(-1, 1, 1000)
    big = np.array([12.345678, -40.0])  # Beyond int16 at 4 decimals.
    records.save_decimals(path, {"a": values, "big": big,
                                     "none": np.zeros([0])})
    back = records.load_decimals(path)
    self.assertAllEqual(back["a"], records.round_decimals(values))
    self.assertAllEqual(back["big"], [12.3457, -40.0])
    self.assertEqual(back["none"].shape, (0,))
    # 1,000 scores at 4 decimals: 2 bytes each (int16), and the zip headers.
    self.assertLess(os.path.getsize(path), 3000)

  def test_bools_copy_and_first_with(self):
    root = self.get_temp_dir()
    source = os.path.join(root, "run")
    os.makedirs(source)
    records.write_json(os.path.join(source, "results.json"), {"a": 1})
    record = records.record_dir(os.path.join(root, "records"), "cell", 2)
    self.assertEqual(records.copy_files(
        source, record, ["results.json", "absent.txt"]), ["results.json"])
    self.assertEqual(records.read_json(
        os.path.join(record, "results.json")), {"a": 1})
    self.assertEqual(records.first_with("results.json", None,
                                            os.path.join(root, "x"), record),
                     record)
    self.assertIsNone(records.first_with("other.json", source, record))
    correct = np.arange(100) % 3 == 0
    records.save_bools(os.path.join(record, "p.npz"), {"c": correct})
    with np.load(os.path.join(record, "p.npz")) as saved:
      self.assertAllEqual(saved["c"], correct)
    self.assertEqual(records.size_bytes(record), sum(
        os.path.getsize(os.path.join(record, n)) for n in os.listdir(record)))

  def test_text_jsonl_and_mean(self):
    folder = self.get_temp_dir()
    path = os.path.join(folder, "log.jsonl")
    self.assertIsNone(records.read_text(path))
    self.assertEqual(records.read_jsonl(path), [])
    with open(path, "w") as f:
      f.write('{"step": 1}\n\n{"step": 2, "loss": 0.5}\n')
    self.assertEqual(records.read_jsonl(path),
                     [{"step": 1}, {"step": 2, "loss": 0.5}])
    self.assertEqual(records.read_text(path).count("\n"), 2)
    self.assertEqual(records.mean_present([1.0, None, float("nan"), 3]),
                     2.0)
    self.assertTrue(np.isnan(records.mean_present([None])))

  def test_seeds(self):
    self.assertEqual(records.parse_seeds(["0", "2"]), [0, 2])
    for bad, message in ((["x"], "must be integers"), ([], "is empty")):
      with self.assertRaisesRegex(records.errors.UserError, message):
        records.parse_seeds(bad)

  def test_retrain_specs(self):
    wanted = records.parse_retrain(["msrp_gru_joint", "sick_cnn_logistic"
                                        "/seed2"])
    self.assertTrue(records.asked_for(wanted, "msrp_gru_joint", 5))
    self.assertTrue(records.asked_for(wanted, "sick_cnn_logistic", 2))
    self.assertFalse(records.asked_for(wanted, "sick_cnn_logistic", 1))
    with self.assertRaisesRegex(records.errors.UserError, "--retrain"):
      records.parse_retrain(["a/seedx"])


if __name__ == "__main__":
  tf.test.main()
