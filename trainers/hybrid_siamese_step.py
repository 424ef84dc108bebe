"""Batches and the train step of the hybrid siamese matcher (trainer and benchmark)."""

import math

import tensorflow as tf

from models import hybrid_siamese


def pad_batch(ids, max_length, pad_multiple=10):
  """`models.hybrid_siamese.pad_ids` (the featurisation the export runs)."""
  return hybrid_siamese.pad_ids(ids, max_length, pad_multiple)


def pair_dataset(ids_a, ids_b, labels, batch_size, max_length,
                 pad_multiple=10, shuffle_seed=None, repeat=False):
  """tf.data of ((ids_a [b, L], ids_b [b, L']), labels [b]) batches.

  Args:
    ids_a, ids_b: int32 RaggedTensor [n, (ids)].
    labels: int [n].
    shuffle_seed: shuffle all n pairs again every epoch (None: keep order).
    repeat: repeat forever (epochs end on batch boundaries: the last batch
      of an epoch may be smaller).
  """
  dataset = tf.data.Dataset.from_tensor_slices(
      (ids_a, ids_b, tf.cast(labels, tf.int32)))
  if shuffle_seed is not None:
    dataset = dataset.shuffle(len(labels), seed=shuffle_seed,
                              reshuffle_each_iteration=True)
  dataset = dataset.batch(batch_size)
  dataset = dataset.map(lambda a, b, y: (
      (pad_batch(a, max_length, pad_multiple),
       pad_batch(b, max_length, pad_multiple)), y))
  if repeat:
    dataset = dataset.repeat()
  return dataset.prefetch(2)


def steps_per_epoch(num_pairs, batch_size):
  return max(1, math.ceil(num_pairs / batch_size))


def make_train_step(model, optimizer, mode, margin=1.0, contrastive_weight=1.0,
                    train_embeddings=True, jit_compile=False):
  """One optimizer step on ((ids_a, ids_b), labels); returns the losses."""
  variables = [v for v in model.trainable_variables
               if train_embeddings or v is not model.embedding.embeddings]

  @tf.function(jit_compile=jit_compile, reduce_retracing=True)
  def train_step(batch):
    (ids_a, ids_b), labels = batch
    with tf.GradientTape() as tape:
      outputs = model((ids_a, ids_b), training=True)
      total, lc, ll = hybrid_siamese.loss(outputs, labels, mode, margin,
                                          contrastive_weight)
    gradients = tape.gradient(total, variables)
    optimizer.apply(gradients, variables)
    return {"loss": total, "contrastive_loss": lc, "logistic_loss": ll}

  train_step.variables = variables
  return train_step
