"""Tests of lab/reports/continued_training.py on model directories it writes."""

import io
import json
import os
import shutil
import tempfile
from contextlib import redirect_stderr, redirect_stdout

from absl.testing import absltest

from lab.reports import continued_training


def _write_run(root, name, dev, steps=100, init_from=None,
               corpus=("part02.txt.gz", "part03.txt.gz")):
  model_dir = os.path.join(root, name)
  os.makedirs(model_dir)
  training = {"corpus_files": list(corpus)}
  if init_from:
    training["init_from"] = init_from
  files = {
      "model_config.json": {"model_type": "sent2vec", "training": training,
                            "vocabulary": {"size": 1234, "sha256": "x"}},
      "finished.json": {"step": steps, "export_path": "e", "flags": {}},
      "sts_results.json": {
          "model": "Sent2Vec", "missing": [],
          "sets": {"STSB.dev": {"num_pairs": 1500, "pearson": dev},
                   "SICK.test": {"num_pairs": 4927, "pearson": dev - 1}},
          "aggregates": {"STS.mean": {"label": "mean", "members": [],
                                      "pearson": dev - 2}}}}
  for filename, content in files.items():
    with open(os.path.join(model_dir, filename), "w") as f:
      json.dump(content, f)
  return model_dir


class ContinuedTrainingTest(absltest.TestCase):

  def setUp(self):
    super().setUp()
    self.root = tempfile.mkdtemp()
    self.addCleanup(shutil.rmtree, self.root, ignore_errors=True)
    self.scratch = _write_run(self.root, "scratch", 30.0)
    self.continued = _write_run(self.root, "continued", 33.5,
                                init_from="/somewhere/part01_model")
    self.other_steps = _write_run(self.root, "short", 20.0, steps=50)

  def test_table_and_comparison_of_equal_steps_only(self):
    runs = [continued_training.read_run("scratch", self.scratch),
            continued_training.read_run("continued", self.continued),
            continued_training.read_run("short", self.other_steps)]
    text = continued_training.table(runs)
    self.assertIn("| continued (`continued`) | `part01_model` | part02, "
                  "part03 | 100 | 1,234 | 33.50 | 32.50 | 31.50 |", text)
    self.assertIn("| scratch (`scratch`) | scratch |", text)
    sentences = continued_training.comparisons(runs)
    self.assertLen(sentences, 1)
    self.assertIn("STS-B dev 33.50 against 30.00, +3.50 points", sentences[0])
    self.assertIn("is met", sentences[0])

  def test_a_lower_continued_run_says_missed(self):
    worse = _write_run(self.root, "worse", 29.0, init_from="/x/m")
    runs = [continued_training.read_run("scratch", self.scratch),
            continued_training.read_run("worse", worse)]
    self.assertIn("-1.00 points", continued_training.comparisons(runs)[0])
    self.assertIn("is missed", continued_training.comparisons(runs)[0])

  def test_an_export_source_is_named_with_its_model_directory(self):
    run = _write_run(self.root, "from_export", 31.0,
                     init_from="/somewhere/part01_model/export/1")
    self.assertEqual(continued_training.read_run("e", run)["init_from"],
                     "part01_model/export/1")

  def test_main_records_the_section_without_machine_paths(self):
    record = os.path.join(self.root, "records", "results.md")
    out = io.StringIO()
    with redirect_stdout(out):
      code = continued_training.main([
          "scratch=" + self.scratch, "continued=" + self.continued,
          "--record=" + record])
    self.assertEqual(code, 0)
    self.assertIn("+3.50 points", out.getvalue())
    with open(record) as f:
      text = f.read()
    self.assertTrue(text.startswith("## Results\n"), text[:20])
    self.assertIn("+3.50 points", text)
    self.assertNotIn(self.root, text)

  def test_a_folder_without_a_finished_run_is_an_error(self):
    err = io.StringIO()
    with redirect_stderr(err):
      code = continued_training.main(["x=" + self.root])
    self.assertEqual(code, 2)
    self.assertTrue(err.getvalue().startswith("error: "))
    with redirect_stderr(io.StringIO()):
      self.assertEqual(continued_training.main(["no_label"]), 2)


if __name__ == "__main__":
  absltest.main()
