"""Tests for lab.reports.siamese_cbow_ablation."""

import json
import os
import tempfile

import tensorflow as tf

from lab.reports import siamese_cbow_ablation
from sentzoo.common import errors

_SETS = ("STS2014.images", "STS2014.headlines", "STS2015.belief")


def _write_run(runs_dir, name, flags, pearsons, dev, ranking, steps,
               seconds=90):
  folder = os.path.join(runs_dir, name)
  os.makedirs(folder)
  with open(os.path.join(folder, "flags.txt"), "w") as f:
    f.write("\n".join(flags) + "\n")
  sets = {s: {"num_pairs": 10, "pearson": p, "spearman": p}
          for s, p in zip(_SETS, pearsons)}
  mean = sum(pearsons) / len(pearsons)
  with open(os.path.join(folder, "sts_results.json"), "w") as f:
    json.dump({"model": name, "sets": sets, "missing": [], "aggregates": {
        "STS.mean": {"label": "mean", "members": list(_SETS),
                     "pearson": mean, "spearman": mean}}}, f)
  with open(os.path.join(folder, "eval_log.jsonl"), "w") as f:
    f.write(json.dumps({"step": 1, "stsb_dev_pearson": 1.0}) + "\n")
    f.write(json.dumps({"step": steps, "stsb_dev_pearson": dev,
                        "neighbour_ranking": ranking}) + "\n")
  with open(os.path.join(folder, "train_log.jsonl"), "w") as f:
    f.write(json.dumps({"step": steps, "loss": 1.3}) + "\n")
  with open(os.path.join(folder, "wall_seconds"), "w") as f:
    f.write(f"{seconds}\n")


class SiameseCbowAblationTest(tf.test.TestCase):

  def setUp(self):
    super().setUp()
    self.runs_dir = tempfile.mkdtemp(dir=self.get_temp_dir())
    base = ["--learning_rate=0.0001", "--nokeep_punctuation",
            "--model_dir=runs/x", "--data_dir=d"]
    _write_run(self.runs_dir, "paper", base, [50, 60, 70], 54.0, 0.70, 100)
    _write_run(self.runs_dir, "fast",
               ["--learning_rate=0.01", "--keep_punctuation",
                "--model_dir=runs/y", "--data_dir=d", "--newer_flag=1"],
               [40, 65, 75], 55.5, 0.72, 100, seconds=600)
    reference = os.path.join(self.runs_dir, "w2v.md")
    with open(reference, "w") as f:
      f.write("| set | pairs | CBOW Pearson | skip-gram Pearson |\n"
              "|---|---:|---:|---:|\n"
              "| STS2014.images | 10 | 45.0 | 55.0 |\n"
              "| STS2014.headlines | 10 | 62.0 | 50.0 |\n"
              "| STS2015.belief | 10 | 72.0 | 71.0 |\n")
    self.reference = f"w2v={reference}"

  def test_table_settings_selection_and_wins(self):
    best = siamese_cbow_ablation.run([
        "ablation", f"--runs_dir={self.runs_dir}", "--runs=paper,fast",
        f"--reference={self.reference}"])
    self.assertEqual(best.name, "fast")  # Highest STS-B dev, not test.
    paper, fast = (siamese_cbow_ablation.load_run(self.runs_dir, n)
                   for n in ("paper", "fast"))
    self.assertEqual(siamese_cbow_ablation.setting(fast, paper),
                     "--keep_punctuation --learning_rate=0.01")
    self.assertEqual(siamese_cbow_ablation.setting(paper, paper),
                     "(paper flagfile)")
    # paper beats max(CBOW, skip-gram) on images only; fast on 3 of 3.
    self.assertEqual(siamese_cbow_ablation.sets_beaten(paper, {
        "a": {"STS2014.images": (45.0, None), "STS2014.headlines":
              (62.0, None), "STS2015.belief": (72.0, None)}}), (1, 3))
    table = siamese_cbow_ablation.format_table(
        [paper, fast], paper, {"w2v CBOW": {s: (45.0, None) for s in _SETS}})
    self.assertIn("| **fast** | --keep_punctuation "
                  "--learning_rate=0.01 | 60.00 |", table)
    self.assertIn("| 55.50 | 0.7200 | 2/3 | 100 | 10.0 |", table)

  def test_the_runners_flags_name_the_row_when_present(self):
    with open(os.path.join(self.runs_dir, "fast", "ablation_flags.txt"),
              "w") as f:
      f.write("--learning_rate=1e-2 --keep_punctuation\n")
    paper, fast = (siamese_cbow_ablation.load_run(self.runs_dir, n)
                   for n in ("paper", "fast"))
    self.assertEqual(siamese_cbow_ablation.setting(fast, paper),
                     "--learning_rate=1e-2 --keep_punctuation")

  def test_unfinished_runs_are_listed_as_such(self):
    os.makedirs(os.path.join(self.runs_dir, "running"))  # No results yet.
    self.assertIsNone(siamese_cbow_ablation.load_run(self.runs_dir,
                                                     "running"))
    text, best, _ = siamese_cbow_ablation.report_text(
        self.runs_dir, ["paper", "running", "missing"])
    self.assertEqual(best.name, "paper")
    self.assertIn("| missing | no finished run recorded yet", text)
    paper = siamese_cbow_ablation.load_run(self.runs_dir, "paper")
    table = siamese_cbow_ablation.format_table([paper], paper, {},
                                               ["running"])
    self.assertIn("| running | no finished run recorded yet", table)

  def test_dev_curve_plot_from_the_records(self):
    _write_run(self.runs_dir, "untrained", ["--train_steps=1"], [1, 2, 3],
               53.0, 0.6, 1)
    curves = siamese_cbow_ablation.dev_curves(self.runs_dir,
                                              ["paper", "fast", "absent"])
    self.assertEqual(curves, {"paper": [(1, 1.0), (100, 54.0)],
                              "fast": [(1, 1.0), (100, 55.5)]})
    png = os.path.join(self.runs_dir, "dev.png")
    caption = siamese_cbow_ablation.plot_dev_curves(curves, 53.0, png)
    with open(png, "rb") as f:
      self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
    self.assertIn("before training (53.00)", caption)
    self.assertIn("At the last step: paper 54.00; fast 55.50.", caption)

  def test_base_run_must_have_finished(self):
    with self.assertRaisesRegex(errors.UserError, "--base=paper"):
      siamese_cbow_ablation.run(["ablation", f"--runs_dir={self.runs_dir}",
                                 "--runs=fast"])

if __name__ == "__main__":
  tf.test.main()
