"""Tests for the Sent2Vec train step: its hand-written sparse SGD update
equals autodiff of the objective, it keeps NaN away, and the mirrored
replica step on 2 logical CPUs equals the one-device step on the whole
block."""

import os
import subprocess
import sys
import tempfile

import numpy as np
import tensorflow as tf

from sentzoo.inputs import sent2vec_data
from sentzoo.inputs import sent2vec_featurizer
from sentzoo.inputs import vocabulary as vocabulary_lib
from sentzoo.models import sent2vec
from sentzoo.tests import sent2vec_fixtures
from sentzoo.trainers import sent2vec_step
from sentzoo.trainers import training_loop

_WORDS = ["the", "cat", "sat", "on", "mat", "a", "dog", "ran"]
_LINES = ["the cat sat on the mat", "a dog ran", "", "the dog sat on a cat",
          "cat", "zzz unknown words only", "a mat the cat the dog ran on"]
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Runs in a fresh process (logical devices must be set before TensorFlow
# starts): two steps of the one-device step on a 16-line block and of the
# replica step of MirroredStrategy over 2 logical CPUs, each replica on 8
# lines of it, from the same tables; saves the tables (every copy), the
# metrics and the counters to argv[1].
_MIRRORED_SCRIPT = r"""
import sys
import numpy as np
import tensorflow as tf
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(
    cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
from sentzoo.inputs import sent2vec_data, sent2vec_featurizer
from sentzoo.inputs import vocabulary as vocabulary_lib
from sentzoo.models import sent2vec
from sentzoo.tests import sent2vec_fixtures
from sentzoo.trainers import sent2vec_step

words = ["the", "cat", "sat", "on", "mat", "a", "dog", "ran"]
vocabulary = vocabulary_lib.Vocabulary(words, [9, 8, 7, 6, 5, 4, 3, 2])
rng = np.random.default_rng(0)
lines = [" ".join(rng.choice(words + ["zzz"], rng.integers(0, 9)))
         for _ in range(16)]
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
out = {}
for name, ngrams, context, l1 in (("bigram", 2, "remove", 0.0),
                                  ("placeholder_l1", 3, "placeholder", 0.05)):
  featurizer = sent2vec_featurizer.Sent2VecFeaturizer(
      vocabulary, word_ngrams=ngrams, num_buckets=13)
  keep = sent2vec_data.keep_probabilities(vocabulary.counts, 44, 0.05, 1)
  cdf = sent2vec_data.negative_cdf(vocabulary.counts)
  batch = lambda part, first: sent2vec_fixtures.make_batch(
      tf.constant(part), featurizer, keep, cdf, num_negatives=3,
      dropout_k=1, context=context, seed=(3, 0), first_line=first)
  whole = batch(lines, 100)
  halves = [batch(lines[:8], 100), batch(lines[8:], 108)]
  source = rng.normal(size=(9 + 13, 6)).astype(np.float32)
  source[0] = 0
  target = rng.normal(size=(9, 6)).astype(np.float32)
  args = dict(learning_rate=0.1, total_tokens=4 * int(whole["num_tokens"]),
              num_negatives=3, l1_weight=l1)

  model = sent2vec.Sent2Vec(9, 13, embedding_dim=6)
  model.source_embeddings.assign(source)
  model.target_embeddings.assign(target)
  step, counter, tokens, _ = sent2vec_step.make_train_step(model, **args)
  losses = [float(step(whole)["loss"]) for _ in range(2)]
  out[name + "/single_source"] = model.source_embeddings.numpy()
  out[name + "/single_target"] = model.target_embeddings.numpy()
  out[name + "/single_counts"] = [int(counter.numpy()), int(tokens.numpy())]

  with strategy.scope():
    mirrored = sent2vec.Sent2Vec(9, 13, embedding_dim=6)
    mirrored.source_embeddings.assign(source)
    mirrored.target_embeddings.assign(target)
    replica_step, counter, tokens, lr_fn = sent2vec_step.make_train_step(
        mirrored, tables="mirrored", **args)
  per_replica = strategy.experimental_distribute_values_from_function(
      lambda context: halves[context.replica_id_in_sync_group])

  @tf.function
  def run(values):
    metrics = strategy.run(replica_step, args=(values,))
    return {k: strategy.reduce("SUM", v, axis=None)
            for k, v in metrics.items()}

  metrics = [run(per_replica) for _ in range(2)]
  out[name + "/losses"] = [losses, [float(m["loss"]) for m in metrics]]
  out[name + "/targets"] = [int(tf.size(whole["target_ids"])),
                            int(metrics[0]["targets"])]
  out[name + "/mirrored_source"] = [
      v.numpy() for v in mirrored.source_embeddings.value.values]
  out[name + "/mirrored_target"] = [
      v.numpy() for v in mirrored.target_embeddings.value.values]
  out[name + "/mirrored_counts"] = [
      [int(v.numpy()) for v in counter.values],
      [int(v.numpy()) for v in tokens.values]]
np.savez(sys.argv[1], **{k: np.asarray(v) for k, v in out.items()})
"""


def _reference_loss(source, target, batch, num_negatives, group):
  """The objective written plainly from the batch's index lists."""
  ids = batch["source_ids"]
  rows = tf.gather(source, ids)
  sums = tf.math.unsorted_segment_sum(rows, batch["source_row"],
                                      tf.shape(batch["sentence_size"])[0])
  padded = tf.concat([rows, tf.zeros([1, rows.shape[1]])], 0)
  context = (tf.gather(sums, batch["target_row"])
             - tf.reduce_sum(tf.gather(padded, batch["excluded"]), 1)
             + tf.reduce_sum(tf.gather(source, batch["added_ids"]) * tf.cast(
                 batch["added_ids"] > 0, tf.float32)[..., None], 1))
  h = context / batch["context_size"][:, None]
  negatives = batch["negatives"]
  if group > 1:
    negatives = tf.gather(
        negatives, tf.range(tf.size(batch["target_ids"])) // group)
  pos = tf.reduce_sum(h * tf.gather(target, batch["target_ids"]), 1)
  neg = tf.einsum("td,tkd->tk", h, tf.gather(target, negatives))
  return tf.reduce_sum(tf.nn.softplus(-pos)) + tf.reduce_sum(
      batch["negative_weights"] * tf.nn.softplus(neg))


class Sent2VecStepTest(tf.test.TestCase):

  def _setup(self, word_ngrams, context, group):
    vocabulary = vocabulary_lib.Vocabulary(_WORDS, [9, 8, 7, 6, 5, 4, 3, 2])
    featurizer = sent2vec_featurizer.Sent2VecFeaturizer(
        vocabulary, word_ngrams=word_ngrams,
        num_buckets=13 if word_ngrams > 1 else 0)
    keep = sent2vec_data.keep_probabilities(vocabulary.counts, 44, 0.0, 1)
    cdf = sent2vec_data.negative_cdf(vocabulary.counts)
    batch = sent2vec_fixtures.make_batch(
        tf.constant(_LINES), featurizer, keep, cdf, num_negatives=3,
        dropout_k=1, context=context, seed=(3, 4), negative_group=group)
    model = sent2vec.Sent2Vec(vocabulary.size_with_padding,
                              featurizer.num_buckets, embedding_dim=6)
    model(np.zeros([1, 1], np.int32))
    rng = np.random.default_rng(0)
    # Non-zero targets so both tables get gradients; row 0 stays zero.
    model.target_embeddings.assign(
        rng.normal(size=model.target_embeddings.shape).astype(np.float32))
    source = rng.normal(size=model.source_embeddings.shape).astype(np.float32)
    source[0] = 0
    model.source_embeddings.assign(source)
    return model, batch

  def _check_update(self, word_ngrams, context, group):
    model, batch = self._setup(word_ngrams, context, group)
    source0 = tf.constant(model.source_embeddings.numpy())
    target0 = tf.constant(model.target_embeddings.numpy())
    with tf.GradientTape() as tape:
      tape.watch([source0, target0])
      loss = _reference_loss(source0, target0, batch, 3, group)
    grad_source, grad_target = tape.gradient(loss, [source0, target0])
    lr = 0.1
    step, counter, tokens, _ = sent2vec_step.make_train_step(
        model, lr, total_tokens=10**12, num_negatives=3,
        negative_group=group)
    metrics = step(batch)
    self.assertEqual(int(counter.numpy()), 1)
    self.assertEqual(int(tokens.numpy()), int(batch["num_tokens"]))
    self.assertAllClose(
        float(metrics["loss"]) * int(metrics["targets"]), float(loss),
        rtol=1e-4)
    self.assertAllClose(model.source_embeddings.numpy(),
                        source0 - lr * tf.convert_to_tensor(grad_source),
                        atol=1e-5)
    self.assertAllClose(model.target_embeddings.numpy(),
                        target0 - lr * tf.convert_to_tensor(grad_target),
                        atol=1e-5)
    self.assertAllEqual(model.source_embeddings.numpy()[0],
                        np.zeros([6], np.float32))

  def test_unigram_update_is_the_gradient(self):
    self._check_update(1, "remove", 1)

  def test_bigram_update_is_the_gradient(self):
    self._check_update(2, "remove", 1)

  def test_placeholder_trigram_update_is_the_gradient(self):
    self._check_update(3, "placeholder", 1)

  def test_shared_negatives_update_is_the_gradient(self):
    self._check_update(2, "remove", 4)

  def test_multiplicity_cap_and_decay(self):
    model, batch = self._setup(1, "remove", 1)
    step, _, tokens, lr_fn = sent2vec_step.make_train_step(
        model, 0.2, total_tokens=int(batch["num_tokens"]) * 2,
        num_negatives=3, max_multiplicity=1.0, l1_weight=0.01)
    self.assertAllClose(float(lr_fn()), 0.2)
    step(batch)
    self.assertAllClose(float(lr_fn()), 0.1)
    step(batch)
    self.assertAllClose(float(lr_fn()), 0.0)
    self.assertTrue(np.isfinite(model.source_embeddings.numpy()).all())
    del tokens

  def test_l1_soft_thresholding_zeroes_small_updated_values(self):
    model, batch = self._setup(1, "remove", 1)
    before = model.source_embeddings.numpy()
    step, _, _, _ = sent2vec_step.make_train_step(
        model, 0.1, total_tokens=10**12, num_negatives=3, l1_weight=50.0)
    step(batch)
    after = model.source_embeddings.numpy()
    touched = np.unique(batch["source_ids"].numpy())
    untouched = np.setdiff1d(np.arange(after.shape[0]), touched)
    # lr * tau = 5 exceeds every value: touched rows become exactly zero.
    self.assertAllEqual(after[touched], np.zeros_like(after[touched]))
    self.assertAllEqual(after[untouched], before[untouched])
    self.assertAllEqual(
        model.target_embeddings.numpy()[batch["target_ids"].numpy()],
        np.zeros([int(tf.size(batch["target_ids"])), 6]))

  def test_concurrent_step_subtracts_the_same_update(self):
    # One thread: subtracting in place (`concurrent`) gives the write-back
    # step's tables, placeholder rows and L1 included.
    tables = []
    for concurrent in (False, True):
      model, batch = self._setup(3, "placeholder", 1)
      step, counter, _, _ = sent2vec_step.make_train_step(
          model, 0.1, total_tokens=10**12, num_negatives=3, l1_weight=0.01,
          max_multiplicity=2.0, concurrent=concurrent)
      for _ in range(2):
        step(batch)
      self.assertEqual(int(counter.numpy()), 2)
      tables.append((model.source_embeddings.numpy(),
                     model.target_embeddings.numpy()))
    self.assertAllClose(tables[0][0], tables[1][0], atol=1e-6)
    self.assertAllClose(tables[0][1], tables[1][1], atol=1e-6)

  def test_step_threads_apply_every_step(self):
    # Steps at once from 2 threads (Hogwild) on 16 copies of a batch, at a
    # learning rate small enough that the updates barely interact: every
    # step is counted and applied, so the tables end where 16 steps one
    # after another take them (a lost update would be off by a whole step's
    # change, ~1/16 of it).
    tables = []
    for threads in (1, 2):
      model, batch = self._setup(2, "remove", 4)
      before = model.source_embeddings.numpy()
      step, counter, tokens, _ = sent2vec_step.make_train_step(
          model, 1e-4, total_tokens=10**12, num_negatives=3,
          negative_group=4, concurrent=threads > 1)
      dataset = tf.data.Dataset.from_tensors(batch).repeat(16)
      steps = training_loop.multi_step(step, dataset.element_spec,
                                       threads=threads)
      _, done = steps(iter(dataset), tf.constant(16))
      self.assertEqual(int(done), 16)
      self.assertEqual(int(counter.numpy()), 16)
      self.assertEqual(int(tokens.numpy()), 16 * int(batch["num_tokens"]))
      tables.append(model.source_embeddings.numpy() - before)
    change = np.abs(tables[0]).max()
    self.assertGreater(change, 0)
    self.assertAllClose(tables[1], tables[0], atol=change / 100)

  def test_mirrored_replica_step_equals_one_device_step(self):
    path = os.path.join(tempfile.mkdtemp(dir=self.get_temp_dir()), "out.npz")
    env = dict(os.environ, PYTHONPATH=REPO_ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run([sys.executable, "-c", _MIRRORED_SCRIPT, path],
                            cwd=REPO_ROOT, env=env, capture_output=True,
                            text=True, timeout=300)
    self.assertEqual(result.returncode, 0, result.stderr[-3000:])
    out = np.load(path)
    for name in ("bigram", "placeholder_l1"):
      single_source = out[name + "/single_source"]
      single_target = out[name + "/single_target"]
      # Both replicas' copies are identical, and equal one device's tables.
      for copies, single in ((out[name + "/mirrored_source"], single_source),
                             (out[name + "/mirrored_target"], single_target)):
        self.assertAllEqual(copies[0], copies[1])
        self.assertAllClose(copies[0], single, atol=1e-5, rtol=1e-5)
      # The steps did change the tables (and L1 zeroed some values).
      self.assertGreater(np.abs(single_target).sum(), 0)
      single_losses, mirrored_losses = out[name + "/losses"]
      self.assertAllClose(single_losses, mirrored_losses, rtol=1e-5)
      whole_targets, summed_targets = out[name + "/targets"]
      self.assertEqual(whole_targets, summed_targets)
      self.assertGreater(whole_targets, 10)
      steps, tokens = out[name + "/single_counts"]
      self.assertAllEqual(out[name + "/mirrored_counts"],
                          [[steps, steps], [tokens, tokens]])
      self.assertEqual(steps, 2)

  def test_all_unknown_batch_is_a_no_op(self):
    model, _ = self._setup(2, "remove", 4)
    vocabulary = vocabulary_lib.Vocabulary(_WORDS, [9, 8, 7, 6, 5, 4, 3, 2])
    featurizer = sent2vec_featurizer.Sent2VecFeaturizer(
        vocabulary, word_ngrams=2, num_buckets=13)
    batch = sent2vec_fixtures.make_batch(
        tf.constant(["zzz qqq", ""]), featurizer,
        sent2vec_data.keep_probabilities(vocabulary.counts, 44, 0.0, 1),
        sent2vec_data.negative_cdf(vocabulary.counts), num_negatives=3,
        negative_group=4)
    before = model.source_embeddings.numpy()
    step, _, _, _ = sent2vec_step.make_train_step(
        model, 0.1, total_tokens=100, num_negatives=3, negative_group=4,
        max_multiplicity=8.0)
    metrics = step(batch)
    self.assertEqual(float(metrics["loss"]), 0.0)
    self.assertAllEqual(model.source_embeddings.numpy(), before)

  def test_unknown_tables_are_refused(self):
    model, _ = self._setup(1, "remove", 1)
    with self.assertRaisesRegex(ValueError, "tables='replicated'"):
      sent2vec_step.make_train_step(model, 0.1, total_tokens=100,
                                    tables="replicated")


if __name__ == "__main__":
  tf.test.main()
