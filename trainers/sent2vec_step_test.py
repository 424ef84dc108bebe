"""Tests for the Sent2Vec train step: its hand-written sparse SGD update
equals autodiff of the objective, and it keeps NaN away."""

import numpy as np
import tensorflow as tf

from inputs import sent2vec_data
from inputs import sent2vec_featurizer
from inputs import vocabulary as vocabulary_lib
from models import sent2vec
from trainers import sent2vec_step

_WORDS = ["the", "cat", "sat", "on", "mat", "a", "dog", "ran"]
_LINES = ["the cat sat on the mat", "a dog ran", "", "the dog sat on a cat",
          "cat", "zzz unknown words only", "a mat the cat the dog ran on"]


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
    batch = sent2vec_data.make_batch(
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

  def test_all_unknown_batch_is_a_no_op(self):
    model, _ = self._setup(2, "remove", 4)
    vocabulary = vocabulary_lib.Vocabulary(_WORDS, [9, 8, 7, 6, 5, 4, 3, 2])
    featurizer = sent2vec_featurizer.Sent2VecFeaturizer(
        vocabulary, word_ngrams=2, num_buckets=13)
    batch = sent2vec_data.make_batch(
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


if __name__ == "__main__":
  tf.test.main()
