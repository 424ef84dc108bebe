"""Tests for lab.reports.charagram_results (table layout and conclusions)."""

import collections
import json
import math
import os
import shutil
import subprocess
import time
from unittest import mock

import numpy as np

import tensorflow as tf

from lab import records
from lab.reports import charagram_results

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PairSet = collections.namedtuple("PairSet", ["name", "scores"])


def _fake_run(folder, gold, noise, seed):
  """A finished seed folder: an export and its cached evaluation."""
  export = os.path.join(folder, "export", "1")
  os.makedirs(export)
  open(os.path.join(export, "saved_model.pb"), "wb").close()
  rng = np.random.default_rng(seed)
  sets = {}
  for name, g in gold.items():
    predicted = np.tanh(g / 5 + rng.normal(0, noise, g.size))
    sets[name] = {"pearson": 100 * float(np.corrcoef(predicted, g)[0, 1]),
                  "predicted": [float(x) for x in predicted]}
  with open(os.path.join(folder, charagram_results.EVAL_CACHE), "w") as f:
    json.dump({"export": export, "sets": sets}, f)
  with open(os.path.join(folder, "model_config.json"), "w") as f:
    json.dump({"model_type": "charagram", "variant": "char_cnn",
               "model": {"big": list(range(100))},
               "training": {"num_pairs": 12564, "train_files": ["a.tsv"],
                            "train_format": "human_labels", "min_score": 3.0,
                            "total_steps": 1250, "batch_size": 100,
                            "sampling": "max", "l2": 1e-6}}, f)


class CharagramResultsTest(tf.test.TestCase):

  def test_rows_means_and_paper_columns(self):
    sets = ["STS2012.MSRpar", "STS2012.MSRvid", "STS2013.FNWN", "SICK.test",
            "Twitter2015.test"]
    scores = {"STS2012.MSRpar": 40.0, "STS2012.MSRvid": 60.0,
              "STS2013.FNWN": 20.0, "SICK.test": 70.0,
              "Twitter2015.test": 50.0}
    text, values = charagram_results.format_markdown([("run A", scores)],
                                                     sets, ["STS2013.SMT"])
    self.assertAlmostEqual(values["run A"]["STS2012.mean"], 50.0)
    self.assertAlmostEqual(values["run A"]["STS2013.mean"], 20.0)
    self.assertAlmostEqual(values["run A"]["all.mean"], 48.0)
    self.assertIn("| **Average** (5 sets) | 48.0 |", text)
    # Paper CHARAGRAM-PHRASE over the same 5 sets: (59.7+79.6+42.3+70+53.6)/5.
    self.assertIn("61.0 |", text.split("**Average**")[1].split("\n")[0])
    self.assertIn("Missing sets (not in the data): STS2013.SMT", text)

  def test_max_or_mix_is_chosen_on_dev_not_on_test(self):
    averages = {"CHARAGRAM-PHRASE MAX": 60.0, "CHARAGRAM-PHRASE MIX": 61.0,
                "PARAGRAM-PHRASE MAX": 55.0, "charCNN MAX": 50.0,
                "charLSTM MAX": 52.0}
    # MIX is better on test, MAX on dev: MAX is chosen.
    dev = {"CHARAGRAM-PHRASE MAX": 70.0, "CHARAGRAM-PHRASE MIX": 69.0}
    groups = {"CHARAGRAM-PHRASE": {"max": "CHARAGRAM-PHRASE MAX",
                                   "mix": "CHARAGRAM-PHRASE MIX"},
              "PARAGRAM-PHRASE": {"max": "PARAGRAM-PHRASE MAX"},
              "charCNN": {"max": "charCNN MAX"},
              "charLSTM": {"max": "charLSTM MAX"}}
    best, lines = charagram_results.choose_sampling(averages, dev, groups)
    self.assertEqual(best["CHARAGRAM-PHRASE"], "CHARAGRAM-PHRASE MAX")
    self.assertEqual(best["charCNN"], "charCNN MAX")
    self.assertEqual(lines, [
        "- CHARAGRAM-PHRASE: MAX 60.0, MIX 61.0 on the test Average; STS-B "
        "dev MAX 70.0, MIX 69.0 -> MAX is chosen."])
    dev["CHARAGRAM-PHRASE MIX"] = 71.0
    best, _ = charagram_results.choose_sampling(averages, dev, groups)
    self.assertEqual(best["CHARAGRAM-PHRASE"], "CHARAGRAM-PHRASE MIX")
    # Without a dev score for one of them, no choice is made.
    dev["CHARAGRAM-PHRASE MIX"] = math.nan
    best, lines = charagram_results.choose_sampling(averages, dev, groups)
    self.assertNotIn("CHARAGRAM-PHRASE", best)
    self.assertIn("not chosen, no STS-B dev score for CHARAGRAM-PHRASE MIX",
                  lines[0])

  def test_ordering(self):
    averages = {"CHARAGRAM-PHRASE MIX": 61.0, "PARAGRAM-PHRASE MAX": 55.0,
                "charCNN MAX": 50.0, "charLSTM MAX": 52.0}
    best = {m.rpartition(" ")[0]: m for m in averages}
    lines = charagram_results.ordering_lines(averages, best)
    self.assertIn("CHARAGRAM-PHRASE (61.0) > PARAGRAM-PHRASE (55.0) > "
                  "charLSTM (52.0) > charCNN (50.0).", lines[0])
    self.assertIn("order CHARAGRAM-PHRASE > PARAGRAM-PHRASE > charCNN > "
                  "charLSTM? no", lines[-1])
    averages["charLSTM MAX"] = 40.0
    self.assertIn("charLSTM? yes",
                  charagram_results.ordering_lines(averages, best)[-1])

  def test_nan_scores_are_dashes(self):
    text, values = charagram_results.format_markdown(
        [("r", {"SICK.test": math.nan})], ["SICK.test"])
    self.assertTrue(math.isnan(values["r"]["all.mean"]))
    self.assertIn("| SICK.test | – |", text)

  def test_claims_from_paired_tests(self):
    rng = np.random.default_rng(0)
    gold = {"A": rng.uniform(0, 5, 120), "B": rng.uniform(0, 5, 90)}
    def run(noise, seeds=(0, 1, 2)):
      out = {}
      for k in seeds:
        predicted = {n: g + rng.normal(0, noise, g.size)
                     for n, g in gold.items()}
        average = 100 * np.mean([np.corrcoef(predicted[n], g)[0, 1]
                                 for n, g in gold.items()])
        out[k] = {"average": average, "predicted": predicted}
      return out
    runs = {"CHARAGRAM-PHRASE MAX": run(0.5), "PARAGRAM-PHRASE MAX": run(2.0),
            "charCNN MIX": run(2.0), "charLSTM MAX": run(6.0)}
    best = {m.rpartition(" ")[0]: m for m in runs}
    lines = charagram_results.claim_lines(runs, best, gold, num_samples=200)
    self.assertTrue(lines[0].startswith(
        "- CHARAGRAM-PHRASE > PARAGRAM-PHRASE: holds +"), lines[0])
    self.assertIn("t-test over 3 seeds", lines[0])
    # PARAGRAM-PHRASE and charCNN are the same model: not separable.
    self.assertEqual(lines[-1], "- The paper's ordering CHARAGRAM-PHRASE > "
                     "PARAGRAM-PHRASE > charCNN > charLSTM (each step tested "
                     "as above): not distinguishable at p<0.05.")
    runs["charLSTM MAX"] = run(0.1)
    lines = charagram_results.claim_lines(runs, best, gold, num_samples=200)
    self.assertIn("- CHARAGRAM-PHRASE > charLSTM: does not hold", lines[2])
    self.assertTrue(lines[-1].endswith(": does not hold."))

  def test_runs_list_names_every_source_of_pairs(self):
    folder = self.get_temp_dir()
    with open(os.path.join(folder, "model_config.json"), "w") as f:
      json.dump({"model_type": "charagram", "variant": "charagram",
                 "training": {"num_pairs": 198826, "train_files": ["a.tsv"],
                              "train_format": "human_labels",
                              "min_score": 3.0,
                              "lexicon_files": ["lexicon.txt.gz"],
                              "task_paraphrases": ["msrp", "sick"],
                              "total_steps": 3976, "batch_size": 100,
                              "sampling": "max", "l2": 1e-6}}, f)
    line = charagram_results._training_line("run", folder)
    self.assertIn("198826 pairs of a.tsv (format human_labels, min score 3.0)"
                  " + word pairs of lexicon.txt.gz (format lexicon)"
                  " + task paraphrases of msrp, sick, 3976 steps", line)

  def test_seed_sources(self):
    root = self.get_temp_dir()
    for k in (0, 2):
      os.makedirs(os.path.join(root, "run", f"seed{k}", "export", "1"))
    os.makedirs(os.path.join(root, "single", "export"))
    self.assertEqual(sorted(charagram_results.seed_sources(
        os.path.join(root, "run"), [0, 1, 2])), [0, 2])
    self.assertEqual(charagram_results.seed_sources(
        os.path.join(root, "run"), [1]), {})
    self.assertEqual(charagram_results.seed_sources(
        os.path.join(root, "single"), [0, 1]),
                     {None: (os.path.join(root, "single"), None, False)})

  def test_records_give_the_same_page(self):
    root = os.path.join(self.get_temp_dir(), "recorded")
    rng = np.random.default_rng(1)
    pair_sets = [PairSet("STS2012.MSRpar", rng.uniform(0, 5, 300)),
                 PairSet("SICK.test", rng.uniform(0, 5, 200))]
    dev_set = PairSet("STSB.dev", rng.uniform(0, 5, 100))
    gold = {p.name: p.scores for p in pair_sets}
    runs = [("CHARAGRAM-PHRASE MAX", os.path.join(root, "runs", "phrase")),
            ("charCNN MAX", os.path.join(root, "runs", "cnn")),
            ("charCNN MIX", os.path.join(root, "runs", "cnn_mix"))]
    for i, (_, model_dir) in enumerate(runs):
      for k in (0, 1):
        _fake_run(os.path.join(model_dir, f"seed{k}"),
                  {**gold, dev_set.name: dev_set.scores}, 0.3 + i, k)
    # docs/run_charagram.sh writes each seed's training wall seconds.
    for k, seconds in ((0, "90"), (1, "150\n")):
      with open(os.path.join(runs[1][1], f"seed{k}", "wall_seconds"),
                "w") as f:
        f.write(seconds)
    records_dir = os.path.join(root, "records")
    from_runs = charagram_results.page_text(runs, [0, 1, 2], pair_sets, [],
                                            records_dir, bootstrap_samples=50,
                                            dev_set=dev_set)
    # The dev row is outside the Average; charCNN MAX (less noise) is
    # chosen on it.
    self.assertIn("| STSB.dev (chooses MAX or MIX; not in the Average) |",
                  from_runs)
    self.assertIn("| **Average** (2 sets) |", from_runs)
    self.assertRegex(from_runs, r"- charCNN: MAX [0-9.]+, MIX [0-9.]+ on the "
                     r"test Average; STS-B dev MAX [0-9.]+, MIX [0-9.]+ -> "
                     "MAX is chosen.")
    self.assertIn("vs charCNN MAX;", from_runs.split("CHARAGRAM-PHRASE > "
                                                     "charCNN:")[1])
    self.assertIn("dev", records.read_json(
        os.path.join(records_dir, "cnn", "seed0", "pearson.json")))
    record = os.path.join(records_dir, "cnn", "seed1")
    self.assertCountEqual(os.listdir(record), [
        "pearson.json", "predicted.npz", "model_config.json",
        "wall_seconds"])
    self.assertNotIn("model", records.read_json(
        os.path.join(record, "model_config.json")))
    # 500 per-pair scores at 4 decimals: about 1 KB of int16, compressed.
    self.assertLess(records.size_bytes(record), 3000)
    # A fresh machine: no run folders, the page comes from the records.
    shutil.rmtree(os.path.join(root, "runs"))
    self.assertEqual(
        charagram_results.seed_sources(runs[1][1], [0, 1, 2], records_dir),
        {k: (os.path.join(runs[1][1], f"seed{k}"),
             os.path.join(records_dir, "cnn", f"seed{k}"), True)
         for k in (0, 1)})
    from_records = charagram_results.page_text(
        runs, [0, 1, 2], pair_sets, [], records_dir, bootstrap_samples=50,
        dev_set=dev_set)
    self.assertEqual(from_records, from_runs)
    self.assertIn("- charCNN MAX (seeds 0, 1): `" + runs[1][1] + "/seed0`: "
                  "char_cnn, 12564 pairs", from_records)
    self.assertIn("CHARAGRAM-PHRASE > charCNN:", from_records)
    self.assertIn("1250 steps of 100, sampling max, L2 1e-06, init random; "
                  "training wall time per seed 1.5 / 2.5 min\n", from_records)
    self.assertIn("Training wall time of the runs above: 4.0 min in all, "
                  "over the 2 trained seeds", from_records)

  def test_cache_evaluates_only_the_sets_it_lacks(self):
    folder = os.path.join(self.get_temp_dir(), "cached", "seed0")
    os.makedirs(folder)
    rng = np.random.default_rng(2)
    test_set = PairSet("SICK.test", rng.uniform(0, 5, 50))
    dev_set = PairSet("STSB.dev", rng.uniform(0, 5, 40))
    _fake_run(folder, {test_set.name: test_set.scores}, 0.3, 0)
    asked = []
    def fake_evaluate(encoder, pair_sets, missing, model_name):
      asked.append([p.name for p in pair_sets])
      return mock.Mock(sets={p.name: mock.Mock(
          pearson=42.0, predicted=np.full(p.scores.size, 0.5))
                             for p in pair_sets})
    with mock.patch.object(charagram_results.encoder_lib, "load_encoder"), \
         mock.patch.object(charagram_results.sts, "evaluate_pair_sets",
                           side_effect=fake_evaluate):
      first = charagram_results._evaluate_cached(folder, [test_set], [], "r",
                                                 dev_set)
      again = charagram_results._evaluate_cached(folder, [test_set], [], "r",
                                                 dev_set)
    self.assertEqual(asked, [["STSB.dev"]])
    self.assertEqual(first["dev"], 42.0)
    self.assertEqual(again["dev"], 42.0)
    self.assertNotEqual(first["scores"]["SICK.test"], 42.0)
    self.assertEqual(list(first["predicted"]), ["SICK.test"])

  def test_record_is_rewritten_only_when_it_changes(self):
    folder = os.path.join(self.get_temp_dir(), "rewrite", "seed0")
    record = os.path.join(self.get_temp_dir(), "rewrite_record")
    os.makedirs(folder)
    evaluated = {"scores": {"A": 50.123456789}, "export": "e",
                 "predicted": {"A": np.array([0.123456, -0.99999, 1.0])}}
    self.assertTrue(charagram_results.write_record(record, folder, evaluated))
    self.assertFalse(charagram_results.write_record(record, folder,
                                                    evaluated))
    self.assertIsNone(charagram_results.read_record(record, ["A"])["dev"])
    # A dev score evaluated later is added to pearson.json alone.
    predicted_path = os.path.join(record, "predicted.npz")
    with open(predicted_path, "rb") as f:
      predicted_bytes = f.read()
    self.assertTrue(charagram_results.write_record(
        record, folder, {**evaluated, "dev": 61.5}))
    self.assertFalse(charagram_results.write_record(
        record, folder, {**evaluated, "dev": 61.5}))
    with open(predicted_path, "rb") as f:
      self.assertEqual(f.read(), predicted_bytes)
    self.assertEqual(charagram_results.read_record(record, ["A"])["dev"],
                     61.5)
    # Wall seconds written after the record was are added to it.
    with open(os.path.join(folder, "wall_seconds"), "w") as f:
      f.write("61")
    self.assertFalse(charagram_results.write_record(record, folder,
                                                    evaluated))
    self.assertEqual(records.wall_seconds(record), 61.0)
    with open(os.path.join(folder, "wall_seconds"), "w") as f:
      f.write("soon")
    with self.assertRaisesRegex(charagram_results.errors.DataFormatError,
                                "not a number of seconds"):
      records.wall_seconds(folder)
    back = charagram_results.read_record(record, ["A"])
    self.assertEqual(back["scores"], {"A": 50.123456789})
    self.assertAllEqual(back["predicted"]["A"], [0.1235, -1.0, 1.0])
    self.assertAllEqual(back["predicted"]["A"], records.round_decimals(
        evaluated["predicted"]["A"]))
    with self.assertRaisesRegex(charagram_results.errors.UserError, "lacks"):
      charagram_results.read_record(record, ["A", "B"])


class RunnerTest(tf.test.TestCase):
  """docs/run_charagram.sh with a fake Python: recorded runs are skipped."""

  def _runner(self, root, *names):
    fake = os.path.join(root, "fake_python")
    with open(fake, "w") as f:
      f.write("""#!/bin/sh
echo "$*" >> "$FAKE_LOG"
for a; do case $a in
  --model_dir=*) mkdir -p "${a#--model_dir=}/export/1";;
  --run=*) run=$(basename "${a#*=*=}");;
  --seeds=*) seed=${a#--seeds=};;
  --records_dir=*) records=${a#--records_dir=};;
esac; done
if [ -n "$records" ]; then
  mkdir -p "$records/$run/seed$seed" && touch "$records/$run/seed$seed/pearson.json"
fi
""")
    os.chmod(fake, 0o755)
    env = dict(os.environ, PY=fake, FAKE_LOG=os.path.join(root, "log"),
               RUNS=os.path.join(root, "runs"),
               RECORDS=os.path.join(root, "records"), SEEDS="0")
    result = subprocess.run(
        ["bash", "docs/run_charagram.sh", *names], cwd=REPO_ROOT, env=env,
        capture_output=True, text=True, timeout=120)
    self.assertEqual(result.returncode, 0, result.stderr)
    with open(os.path.join(root, "log")) as f:
      log = f.read().splitlines()
    os.remove(os.path.join(root, "log"))
    return result.stdout, log

  def test_recorded_run_is_skipped_unless_named(self):
    root = os.path.join(self.get_temp_dir(), "runner")
    os.makedirs(os.path.join(root, "records", "char_cnn_max", "seed0"))
    open(os.path.join(root, "records", "char_cnn_max", "seed0",
                      "pearson.json"), "w").close()
    out, log = self._runner(root)
    self.assertIn("char_cnn_max seed 0: recorded in", out)
    names = subprocess.run(
        ["bash", "docs/run_charagram.sh", "--list"], cwd=REPO_ROOT,
        capture_output=True, text=True, check=True).stdout.split()
    self.assertIn("char_cnn_max", names)
    # Every run but the recorded one is trained, and then recorded.
    trained = [line for line in log if "-m trainers.charagram" in line]
    self.assertLen(trained, len(names) - 1)
    self.assertFalse(any("char_cnn_max" in line for line in trained))
    recorded = [line for line in log if "--record_only" in line]
    self.assertLen(recorded, len(names) - 1)
    self.assertIn(f"--run=char_cnn_mix={root}/runs/char_cnn_mix --seeds=0 "
                  f"--records_dir={root}/records", "\n".join(recorded))
    # Named: trained again (and recorded again).
    out, log = self._runner(root, "char_cnn_max")
    self.assertLen(log, 2)
    self.assertIn("-m trainers.charagram", log[0])
    self.assertIn("--model_dir=" + os.path.join(
        root, "runs", "char_cnn_max", "seed0"), log[0])
    # A finished, unrecorded run is recorded, not trained.
    shutil.rmtree(os.path.join(root, "records", "char_lstm_max"))
    out, log = self._runner(root)
    self.assertIn("char_lstm_max seed 0: done", out)
    self.assertLen(log, 1)
    self.assertIn("--run=char_lstm_max=", log[0])

  def test_interrupted_runner_keeps_the_wall_time_it_ran(self):
    # Stopped mid-run (kill), the runner still adds the seconds the trainer
    # ran to the run's wall_seconds, as it does after a whole run.
    root = os.path.join(self.get_temp_dir(), "interrupted")
    os.makedirs(root)
    fake = os.path.join(root, "slow_python")
    with open(fake, "w") as f:
      f.write("#!/bin/sh\ntouch \"$STARTED\"\nsleep 3\nexit 75\n")
    os.chmod(fake, 0o755)
    started = os.path.join(root, "started")
    env = dict(os.environ, PY=fake, STARTED=started,
               RUNS=os.path.join(root, "runs"),
               RECORDS=os.path.join(root, "records"), SEEDS="0")
    runner = subprocess.Popen(
        ["bash", "docs/run_charagram.sh", "char_cnn_max", "char_lstm_max"],
        cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    for _ in range(200):
      if os.path.exists(started):
        break
      time.sleep(0.05)
    runner.terminate()
    runner.communicate(timeout=60)
    self.assertEqual(runner.returncode, 130)
    with open(os.path.join(root, "runs", "char_cnn_max", "seed0",
                           "wall_seconds")) as f:
      self.assertGreaterEqual(int(f.read()), 2)
    # The runner stopped: the second run was not started.
    self.assertFalse(os.path.exists(os.path.join(root, "runs",
                                                 "char_lstm_max")))


if __name__ == "__main__":
  tf.test.main()
