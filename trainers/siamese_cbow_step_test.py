"""Tests for trainers.siamese_cbow_step: the update against a hand-derived gradient."""

import gzip
import os

import keras
import numpy as np
import tensorflow as tf

from sentzoo.inputs import siamese_cbow_data
from sentzoo.inputs import text_to_ids as text_to_ids_lib
from sentzoo.inputs import tokenizer as tokenizer_lib
from sentzoo.inputs import vocabulary as vocabulary_lib
from sentzoo.models import siamese_cbow
from sentzoo.trainers import lazy_optimizers
from sentzoo.trainers import siamese_cbow_step
from sentzoo.trainers import training_loop

VOCAB, DIM, NEGATIVES = 25, 5, 2


def _numpy_loss_and_gradient(table, ids, num_positives):
  """The paper's loss and its gradient with respect to W, derived by hand.

  s_k = mean of W[id] over the non-zero ids of sentence k; u_k = s_k / |s_k|;
  c_k = u_0 . u_k (k >= 1); p = softmax(c); L = -sum_k t_k log p_k with
  t = (1/|S+|, ..., 0, ...), averaged over the batch. Then
  dL/dc_k = (p_k - t_k) / B, du/ds = (I - u u^T) / |s|, and every real id
  occurrence of sentence k receives dL/ds_k / n_k.
  """
  table = table.astype(np.float64)
  batch, members, _ = ids.shape
  target = np.zeros(members - 1)
  target[:num_positives] = 1.0 / num_positives
  gradient = np.zeros_like(table)
  total = 0.0
  for b in range(batch):
    counts = (ids[b] != 0).sum(axis=1)
    sums = np.stack([table[row[row != 0]].sum(axis=0) for row in ids[b]])
    averages = sums / np.maximum(counts, 1)[:, None]
    norms = np.linalg.norm(averages, axis=1)
    unit = averages / norms[:, None]
    cosines = unit[1:] @ unit[0]
    p = np.exp(cosines - cosines.max())
    p /= p.sum()
    total += -(target * np.log(p)).sum()
    d_cos = (p - target) / batch
    d_unit = np.zeros_like(unit)
    d_unit[0] = d_cos @ unit[1:]
    d_unit[1:] = d_cos[:, None] * unit[0]
    for k, row in enumerate(ids[b]):
      u = unit[k]
      d_average = (d_unit[k] - u * (u @ d_unit[k])) / norms[k]
      for i in row[row != 0]:
        gradient[i] += d_average / counts[k]
  return total / batch, gradient


def _ids(rng, batch=3, length=6):
  ids = rng.integers(1, VOCAB - 3, size=(batch, 3 + NEGATIVES, length))
  lengths = rng.integers(1, length + 1, size=ids.shape[:2])
  ids[np.arange(length)[None, None] >= lengths[..., None]] = 0
  ids[0, 1, :3] = [7, 7, 7]  # A repeated word counts once per occurrence.
  return ids.astype(np.int32)


class SiameseCbowStepTest(tf.test.TestCase):

  def setUp(self):
    super().setUp()
    keras.utils.set_random_seed(3)
    self.ids = _ids(np.random.default_rng(1))
    self.model = siamese_cbow.SiameseCBOW(VOCAB, DIM, init_stddev=0.5)
    self.model(self.ids)

  def _step(self, optimizer, jit_compile, apply_in_xla=True,
            concurrent=False):
    optimizer.build(self.model.trainable_variables)
    step = siamese_cbow_step.make_train_step(
        self.model, optimizer, NEGATIVES, jit_compile=jit_compile,
        apply_in_xla=apply_in_xla, concurrent=concurrent)
    before = self.model.embedding.embeddings.numpy()
    loss = step(tf.constant(self.ids))["loss"].numpy()
    return before, loss, self.model.embedding.embeddings.numpy()

  def test_sgd_update_is_the_hand_derived_gradient(self):
    for jit_compile, concurrent in ((False, False), (True, False),
                                    (True, True)):
      with self.subTest(jit_compile=jit_compile, concurrent=concurrent):
        self.model.embedding.embeddings.assign(
            np.random.default_rng(2).normal(size=(VOCAB, DIM)))
        before, loss, after = self._step(
            keras.optimizers.SGD(learning_rate=1.0), jit_compile,
            concurrent=concurrent)
        expected_loss, gradient = _numpy_loss_and_gradient(before, self.ids,
                                                           2)
        self.assertAllClose(loss, expected_loss, rtol=1e-5)
        self.assertAllClose(before - after, gradient, atol=1e-6, rtol=1e-4)

  def test_consecutive_batch_is_its_dense_groups_listed_once(self):
    # The groups of self.ids with shared sentences: group 1's centre is
    # group 0's next sentence, and group 0's centre group 1's previous one.
    ids = self.ids.copy()
    ids[1, 0], ids[0, 2], ids[1, 1] = ids[0, 2], ids[1, 0], ids[0, 0]
    rows, members = np.unique(ids.reshape(-1, ids.shape[2]), axis=0,
                              return_inverse=True)
    members = members.reshape(ids.shape[:2]).astype(np.int32)
    self.assertLess(len(rows), members.size)
    real = rows != 0
    batch = {"flat_ids": tf.constant(rows[real]),
             "sentence": tf.constant(np.nonzero(real)[0].astype(np.int32)),
             "members": tf.constant(members)}
    for apply_in_xla in (True, False):
      with self.subTest(apply_in_xla=apply_in_xla):
        self.model.embedding.embeddings.assign(
            np.random.default_rng(2).normal(size=(VOCAB, DIM)))
        optimizer = keras.optimizers.SGD(learning_rate=1.0)
        optimizer.build(self.model.trainable_variables)
        step = siamese_cbow_step.make_train_step(
            self.model, optimizer, NEGATIVES, apply_in_xla=apply_in_xla)
        before = self.model.embedding.embeddings.numpy()
        loss = step(batch)["loss"].numpy()
        expected_loss, gradient = _numpy_loss_and_gradient(before, ids, 2)
        self.assertAllClose(loss, expected_loss, rtol=1e-5)
        self.assertAllClose(before - self.model.embedding.embeddings.numpy(),
                            gradient, atol=1e-6, rtol=1e-4)

  def test_concurrent_steps_apply_every_update(self):
    # Steps at once from 2 threads (Hogwild) on copies of one batch, at a
    # learning rate small enough that the updates add up: the table moves
    # by the sum of the steps' updates, none lost, and the optimizer counts
    # every step.
    learning_rate, steps = 1e-3, 16
    before = self.model.embedding.embeddings.numpy()
    _, gradient = _numpy_loss_and_gradient(before, self.ids, 2)
    optimizer = keras.optimizers.SGD(learning_rate=learning_rate)
    optimizer.build(self.model.trainable_variables)
    step = siamese_cbow_step.make_train_step(self.model, optimizer, NEGATIVES,
                                             concurrent=True)
    dataset = tf.data.Dataset.from_tensors(tf.constant(self.ids)).repeat(
        steps)
    run_steps = training_loop.multi_step(step, dataset.element_spec,
                                         threads=2)
    _, done = run_steps(iter(dataset), tf.constant(steps))
    self.assertEqual(int(done), steps)
    self.assertEqual(int(optimizer.iterations), steps)
    self.assertAllClose(before - self.model.embedding.embeddings.numpy(),
                        steps * learning_rate * gradient, rtol=0.02,
                        atol=1e-6)

  def test_padding_and_unused_rows_do_not_move(self):
    before, _, after = self._step(keras.optimizers.SGD(learning_rate=1.0),
                                  jit_compile=True)
    used = np.unique(self.ids[self.ids != 0])
    unused = np.setdiff1d(np.arange(VOCAB), used)
    self.assertIn(0, unused)
    self.assertGreater(len(unused), 1)
    self.assertAllEqual(before[unused], after[unused])
    self.assertTrue((np.abs(before[used] - after[used]).sum(axis=1) > 0).all())

  def test_target_puts_mass_on_the_neighbours_only(self):
    # Moving a negative onto the centre raises the loss; moving a neighbour
    # onto it lowers the loss.
    table = self.model.embedding.embeddings.numpy()
    base, _ = _numpy_loss_and_gradient(table, self.ids, 2)
    for member, lower in ((1, True), (3, False)):
      ids = self.ids.copy()
      ids[:, member] = ids[:, 0]
      loss, _ = _numpy_loss_and_gradient(table, ids, 2)
      self.assertEqual(loss < base, lower, f"member {member}")

  def test_lazy_adagrad_outside_xla_is_adagrad_on_the_looked_up_rows(self):
    optimizer = lazy_optimizers.LazyAdagrad(learning_rate=0.1)
    before, _, after = self._step(optimizer, jit_compile=True,
                                  apply_in_xla=False)
    _, gradient = _numpy_loss_and_gradient(before, self.ids, 2)
    accumulator = optimizer.initial_accumulator_value + gradient ** 2
    expected = before - 0.1 * gradient / np.sqrt(accumulator
                                                 + optimizer.epsilon)
    self.assertAllClose(after, expected, atol=1e-6)

  def test_flat_sentences_skips_padding_and_pads_to_the_multiple(self):
    ids = tf.constant([[[5, 3, 5, 0], [0, 0, 0, 0]],
                       [[7, 0, 0, 0], [3, 3, 9, 8]]])
    flat_ids, sentence = siamese_cbow_step.flat_sentences(ids,
                                                          token_multiple=4)
    self.assertAllEqual(flat_ids, [5, 3, 5, 7, 3, 3, 9, 8])
    # Sentence 1 (all padding) has no id.
    self.assertAllEqual(sentence, [0, 0, 0, 2, 3, 3, 3, 3])
    flat_ids, sentence = siamese_cbow_step.flat_sentences(ids,
                                                          token_multiple=5)
    self.assertAllEqual(flat_ids, [5, 3, 5, 7, 3, 3, 9, 8, 0, 0])
    self.assertAllEqual(sentence, [0, 0, 0, 2, 3, 3, 3, 3, 4, 4])

  def test_sentence_averages_are_the_models_encode(self):
    flat_ids, sentence = siamese_cbow_step.flat_sentences(
        tf.constant(self.ids), token_multiple=16)
    averages = siamese_cbow_step.sentence_averages(
        self.model, flat_ids, sentence, self.ids.shape[0] * self.ids.shape[1])
    self.assertAllClose(
        tf.reshape(averages, [*self.ids.shape[:2], DIM]),
        self.model.encode(tf.constant(self.ids)), atol=1e-6)

  def test_all_padding_sentences_give_the_padded_steps_loss_and_update(self):
    ids = self.ids.copy()
    ids[0, 3] = 0  # A negative with no word.
    ids[1] = 0  # A whole group of padding.
    initial = self.model.embedding.embeddings.numpy()
    results = []
    for make_step in (siamese_cbow_step.make_dense_train_step,
                      siamese_cbow_step.make_train_step):
      self.model.embedding.embeddings.assign(initial)
      optimizer = keras.optimizers.SGD(learning_rate=1.0)
      optimizer.build(self.model.trainable_variables)
      step = make_step(self.model, optimizer, NEGATIVES)
      loss = step(tf.constant(ids))["loss"].numpy()
      results.append((loss, self.model.embedding.embeddings.numpy()))
    (dense_loss, dense_table), (loss, table) = results
    self.assertTrue(np.isfinite(loss))
    self.assertAllClose(loss, dense_loss, rtol=1e-6)
    self.assertTrue(np.isfinite(table).all())
    self.assertAllClose(table, dense_table, atol=1e-7)
    self.assertAllEqual(table[0], initial[0])  # The padding row.
    self.assertGreater(np.abs(table - initial).max(), 1e-3)


def _real_batches(count):
  """`count` batches of the trainer's pipeline on the first book lines of
  the real corpus part01 (vocabulary from those lines, min count 2), or None
  without ../shared/data."""
  data_dir = os.environ.get("SENTZOO_DATA_DIR") or os.path.join(
      os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "..",
      "shared", "data")
  part = os.path.join(data_dir, "gutenberg", "part01.txt.gz")
  if not os.path.exists(part):
    return None
  lines = []
  with gzip.open(part, "rt", encoding="utf-8") as f:
    for line in f:
      lines.append(line.rstrip("\n"))
      if len(lines) == 20000:
        break
  corpus = os.path.join(tf.compat.v1.test.get_temp_dir(), "part01.txt")
  with open(corpus, "w", encoding="utf-8") as f:
    f.write("\n".join(lines) + "\n")
  tokenizer = tokenizer_lib.Tokenizer(keep_punctuation=False)
  vocabulary = vocabulary_lib.build_vocabulary([corpus], tokenizer,
                                               min_count=2)
  to_ids = text_to_ids_lib.TextToIds(vocabulary, tokenizer, max_length=50)
  dataset = siamese_cbow_data.group_dataset(
      siamese_cbow_data.line_mixes([corpus], to_ids), batch_size=100,
      num_negatives=NEGATIVES,
      max_length=50, negatives="nearby", seed=5)
  return vocabulary.size_with_padding, [
      b.numpy() for b in dataset.take(count)]


class SiameseCbowStepOnRealBatchesTest(tf.test.TestCase):
  """The step against the one before issue 34 (padded, XLA), on book text."""

  def test_same_losses_and_table_as_the_padded_step(self):
    real = _real_batches(6)
    if real is None:
      self.skipTest("no ../shared/data (SENTZOO_DATA_DIR)")
    vocab_size, batches = real
    self.assertGreater(np.mean([(b == 0).mean() for b in batches]), 0.2)
    tables, losses = [], []
    for make_step in (siamese_cbow_step.make_dense_train_step,
                      siamese_cbow_step.make_train_step):
      keras.utils.set_random_seed(7)
      model = siamese_cbow.SiameseCBOW(vocab_size, 300, init_stddev=0.01)
      model(tf.constant(batches[0][:1]))
      # The best flagfile's rate is 1e-3; 1.0 makes the rows move enough
      # that a wrong gradient would show.
      optimizer = keras.optimizers.SGD(learning_rate=1.0)
      optimizer.build(model.trainable_variables)
      step = make_step(model, optimizer, NEGATIVES)
      initial = model.embedding.embeddings.numpy()
      losses.append([float(step(tf.constant(b))["loss"]) for b in batches])
      tables.append(model.embedding.embeddings.numpy())
      self.assertGreater(np.abs(tables[-1] - initial).max(), 1e-3)
    self.assertAllClose(losses[0], losses[1], rtol=1e-5)
    self.assertAllClose(tables[0], tables[1], atol=1e-7, rtol=1e-4)


if __name__ == "__main__":
  tf.test.main()
