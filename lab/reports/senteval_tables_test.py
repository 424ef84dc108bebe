"""Tests for lab.reports.senteval_tables: the tables and the command."""

import io
import os

import tensorflow as tf

from lab.reports import senteval_tables
from lab import senteval
from sentzoo.common import errors
from sentzoo.tests import senteval_fixtures
from sentzoo.tests import test_util


class CommandTest(tf.test.TestCase):

  def setUp(self):
    super().setUp()
    self.data_dir = test_util.make_tempdir(self)
    senteval_fixtures.write_senteval_fixture(self.data_dir)

  def test_cli_on_a_saved_model(self):
    export_dir = test_util.save_hash_bag_encoder(
        test_util.HashBagEncoder(num_buckets=64, dim=16),
        os.path.join(test_util.make_tempdir(self), "exp", "1"))
    out = io.StringIO()
    result = senteval_tables.run(
        ["senteval", f"--model={os.path.dirname(export_dir)}",
         f"--data_dir={self.data_dir}", "--tasks=CR,TREC,MSRP",
         "--outer_folds=2", "--inner_folds=2", "--l2_grid=0.01,1",
         "--names=hashbag"], out=out)
    text = out.getvalue()
    self.assertIn("| hashbag |", text)
    self.assertIn("Sent2Vec uni. (paper, Table 1)", text)
    self.assertIn("Seconds per task", text)
    self.assertEqual(list(result["results"][0]), ["CR", "TREC", "MSRP"])
    self.assertEqual(result["config"].outer_folds, 2)
    self.assertIn("(Acc / F1)", result["markdown"])
    with self.assertRaises(errors.UserError):
      senteval_tables.run(["senteval", f"--data_dir={self.data_dir}"])
    with self.assertRaises(errors.UserError):
      senteval_tables.run(["senteval", f"--model={export_dir}",
                           f"--data_dir={self.data_dir}", "--l2_grid=x"])


class TableTest(tf.test.TestCase):

  def test_table_layout_and_paper_rows(self):
    rows = senteval_tables.paper_rows(["Sent2Vec uni."])
    rows.append(("mine", {"MR": senteval.TaskResult("MR", 70.04),
                          "MSRP": senteval.TaskResult("MSRP", 71.0, f1=80.5)}))
    text = senteval_tables.format_transfer_table(rows)
    self.assertIn("| Sent2Vec uni. (paper, Table 1) | 72.2 / 80.3 | 75.1 | "
                  "80.2 | 90.6 | 86.3 | 83.8 | 81.4 |", text)
    self.assertIn("| mine | 71.0 / 80.5 | 70.0 |  |  |  |  |  |", text)
    self.assertNotIn("**", text)  # no test, so no "better" mark
    times = senteval_tables.format_time_table([("mine", {
        "MR": senteval.TaskResult("MR", 70.0, encode_seconds=1.0,
                                  classifier_seconds=2.5)})])
    self.assertIn("| mine | 3.5 (1.0) |", times)
    self.assertIn("| 3.5 |", times)


if __name__ == "__main__":
  tf.test.main()
