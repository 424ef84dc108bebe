"""Sent2Vec training holds each table once (issue 17, memory).

The train step reads table rows only (no ReadVariableOp of a table), and a
resumed run restores its checkpoint into the tables in place: measured in a
fresh trainer process (`lab.benchmarks.table_memory`'s phase probe) on a
200k x 128 source table (102 MB), the resident memory grows by less than
half a table during the restore and during the steps after it. Before the
in-place restore, the restore alone added two tables (+204 MB here).
"""

import gzip
import json
import os
import random
import subprocess
import sys

import numpy as np
import tensorflow as tf

from sentzoo.inputs import sent2vec_data
from sentzoo.inputs import sent2vec_featurizer
from sentzoo.inputs import vocabulary as vocabulary_lib
from sentzoo.models import sent2vec
from sentzoo.tests import sent2vec_fixtures
from sentzoo.tests import trainer_fixtures
from sentzoo.trainers import checkpoint_restore
from sentzoo.trainers import sent2vec_step

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMEOUT_S = 300
BUCKETS, DIM = 200000, 128
# What may touch a table's handle in the step: row reads and row writes.
_ROW_OPS = {"ResourceGather", "ResourceScatterUpdate", "ResourceScatterSub"}


def _write_corpus(data_dir):
  rng = random.Random(0)
  folder = os.path.join(data_dir, "gutenberg")
  os.makedirs(folder, exist_ok=True)
  lines = [" ".join(f"t{t}w{rng.randrange(10)}"
                    for _ in range(rng.randint(3, 8))) + " ."
           for t in [rng.randrange(4) for _ in range(400)]]
  with gzip.open(os.path.join(folder, "part01.txt.gz"), "wt") as f:
    f.write("\n".join(lines) + "\n")


class Sent2VecMemoryTest(tf.test.TestCase):

  def test_train_step_reads_rows_not_whole_tables(self):
    words = ["the", "cat", "sat", "on", "mat", "a", "dog", "ran"]
    vocabulary = vocabulary_lib.Vocabulary(words, [9, 8, 7, 6, 5, 4, 3, 2])
    featurizer = sent2vec_featurizer.Sent2VecFeaturizer(
        vocabulary, word_ngrams=2, num_buckets=13)
    batch = sent2vec_fixtures.make_batch(
        tf.constant(["the cat sat on the mat", "a dog ran"]), featurizer,
        sent2vec_data.keep_probabilities(vocabulary.counts, 44, 0.05, 1),
        sent2vec_data.negative_cdf(vocabulary.counts), num_negatives=3,
        dropout_k=1, seed=(3, 0))
    spec = tf.nest.map_structure(tf.TensorSpec.from_tensor, batch)
    model = sent2vec.Sent2Vec(9, 13, embedding_dim=6)
    step, _, _, _ = sent2vec_step.make_train_step(
        model, 0.1, total_tokens=100, num_negatives=3, negative_group=4,
        max_multiplicity=8.0, element_spec=spec)
    graph = step.get_concrete_function(spec).graph
    tables = {id(model.source_embeddings.value.handle),
              id(model.target_embeddings.value.handle)}
    inside = [internal for external, internal in graph.captures
              if id(external) in tables]
    self.assertLen(inside, 2)
    names = {t.name for t in inside}
    users = [op.type for op in graph.get_operations()
             if any(t.name in names for t in op.inputs)]
    self.assertTrue(users)
    self.assertEqual(set(users) - _ROW_OPS, set(), users)

  def test_restore_in_place_equals_the_checkpoint(self):
    model = sent2vec.Sent2Vec(50, 40000, embedding_dim=256)  # 41 MB source.
    model(tf.zeros([1, 1], tf.int32))
    step = tf.Variable(7, dtype=tf.int64)
    path = tf.train.Checkpoint(model=model, step=step).save(
        os.path.join(self.get_temp_dir(), "ckpt"))
    saved = model.source_embeddings.numpy()
    saved_target = np.random.default_rng(0).normal(
        size=(50, 256)).astype(np.float32)
    model.target_embeddings.assign(saved_target)
    path = tf.train.Checkpoint(model=model, step=step).save(
        os.path.join(self.get_temp_dir(), "ckpt"))
    fresh = sent2vec.Sent2Vec(50, 40000, embedding_dim=256)
    fresh(tf.zeros([1, 1], tf.int32))
    fresh_step = tf.Variable(0, dtype=tf.int64)
    items = {"model": fresh, "step": fresh_step}
    _, large = checkpoint_restore.split_large_variables(items)
    self.assertEqual(list(large),
                     ["model/source_embeddings/.ATTRIBUTES/VARIABLE_VALUE"])
    status = checkpoint_restore.restore(tf.train.Checkpoint(**items), items,
                                        path, chunk_bytes=1 << 20)
    status.assert_existing_objects_matched()
    self.assertAllEqual(fresh.source_embeddings.numpy(), saved)
    self.assertAllEqual(fresh.target_embeddings.numpy(), saved_target)
    self.assertEqual(int(fresh_step.numpy()), 7)

  def test_resume_grows_memory_by_less_than_half_a_table(self):
    data_dir = os.path.join(self.get_temp_dir(), "data")
    _write_corpus(data_dir)
    model_dir = os.path.join(self.get_temp_dir(), "run")
    args = [f"--data_dir={data_dir}", f"--model_dir={model_dir}",
            f"--embedding_dim={DIM}", "--word_ngrams=2",
            f"--num_buckets={BUCKETS}", "--min_count=1",
            "--min_count_label=1", "--sample=1e-2", "--block_lines=20",
            "--checkpoint_every_steps=4", "--log_every_steps=4",
            "--noexport", "--steps_per_call=4"]
    fresh = subprocess.run(
        [sys.executable, "-m", "trainers.sent2vec", *args,
         "--train_steps=8"], cwd=REPO_ROOT, env=trainer_fixtures.child_env(),
        capture_output=True, text=True, timeout=TIMEOUT_S)
    self.assertEqual(fresh.returncode, 0, fresh.stderr[-3000:])
    phase_log = os.path.join(self.get_temp_dir(), "phases.json")
    resumed = subprocess.run(
        [sys.executable, "-m", "lab.benchmarks.table_memory",
         f"--phase_log={phase_log}",
         "--trainer_argv=" + json.dumps(args + ["--train_steps=16"])],
        cwd=REPO_ROOT, env=trainer_fixtures.child_env(), capture_output=True,
        text=True, timeout=TIMEOUT_S)
    self.assertEqual(resumed.returncode, 0, resumed.stderr[-3000:])
    self.assertIn("resumed from", resumed.stdout)
    with open(phase_log) as f:
      record = json.load(f)
    if not record["resets"]:
      self.skipTest("the peak RSS cannot be reset here (/proc/self/"
                    "clear_refs)")
    phases = record["phases"]
    table_mb = (BUCKETS + 41) * DIM * 4 / 2**20
    before = phases["token cache, input pipeline, train step"]["end_mb"]
    restore = phases["checkpoint restore (resumed run)"]["peak_mb"] - before
    steps = max(phases[name]["peak_mb"] for name in
                ("training steps", "checkpoint saves")) - before
    message = (f"table {table_mb:.0f} MB; RSS growth: restore "
               f"{restore:.0f} MB, restore + steps {steps:.0f} MB")
    self.assertLess(restore, 0.5 * table_mb, message)
    self.assertLess(steps, 0.5 * table_mb, message)


if __name__ == "__main__":
  tf.test.main()
