"""Batches and the train step of the hybrid siamese matcher (trainer and benchmark)."""

import math

import tensorflow as tf

from sentzoo.models import hybrid_siamese


def pair_dataset(ids_a, ids_b, labels, batch_size, max_length,
                 pad_multiple=10, shuffle_seed=None, repeat=False):
  """((ids_a [b, L], ids_b [b, L']), labels [b]) batches padded as the
  export pads (`hybrid_siamese.pad_ids`); shuffled anew every epoch unless
  `shuffle_seed` is None; an epoch's last batch may be smaller."""
  dataset = tf.data.Dataset.from_tensor_slices(
      (ids_a, ids_b, tf.cast(labels, tf.int32)))
  if shuffle_seed is not None:
    dataset = dataset.shuffle(len(labels), seed=shuffle_seed,
                              reshuffle_each_iteration=True)
  dataset = dataset.batch(batch_size)
  dataset = dataset.map(lambda a, b, y: (
      (hybrid_siamese.pad_ids(a, max_length, pad_multiple),
       hybrid_siamese.pad_ids(b, max_length, pad_multiple)), y))
  if repeat:
    dataset = dataset.repeat()
  return dataset.prefetch(2)


def steps_per_epoch(num_pairs, batch_size):
  return max(1, math.ceil(num_pairs / batch_size))


def replica_pieces(dataset, num_pieces, first=0, count=None):
  """Pieces first .. first + count - 1 of every batch cut into `num_pieces`:
  piece k is rows [k * b // num_pieces, (k + 1) * b // num_pieces), so the
  smaller last batch of an epoch gives sizes differing by one."""
  count = num_pieces - first if count is None else count
  if num_pieces == 1:
    return dataset

  def cut(*batch):
    size = tf.shape(tf.nest.flatten(batch)[0])[0]

    def piece(j):
      k = tf.cast(j, tf.int32) + first
      begin, end = k * size // num_pieces, (k + 1) * size // num_pieces
      return tf.nest.map_structure(lambda t: t[begin:end], batch)

    return tf.data.Dataset.range(count).map(piece)

  return dataset.flat_map(cut)


def make_train_step(model, optimizer, mode, margin=1.0, contrastive_weight=1.0,
                    train_embeddings=True, jit_compile=False,
                    apply_in_xla=True):
  """The per-replica optimizer step on ((ids_a, ids_b), labels).

  A replica's losses are its mean losses x n_r / N (N: the all-reduced
  pairs of the global batch, so the smaller last batch counts right); their
  sum over replicas is the one-device step's. `apply_in_xla` (one device)
  compiles the update with the loss; else `optimizer.apply` runs outside
  XLA, where it all-reduces the gradients. Every replica needs n_r >= 1.
  Returns batch -> {"loss", "contrastive_loss", "logistic_loss"}, with the
  trained variables as its `variables` attribute.
  """
  variables = [v for v in model.trainable_variables
               if train_embeddings or v is not model.embedding.embeddings]

  def losses_and_gradients(batch, share):
    (ids_a, ids_b), labels = batch
    with tf.GradientTape() as tape:
      outputs = model((ids_a, ids_b), training=True)
      losses = [share * value for value in hybrid_siamese.loss(
          outputs, labels, mode, margin, contrastive_weight)]
    return losses, tape.gradient(losses[0], variables)

  if not apply_in_xla:
    losses_and_gradients = tf.function(
        losses_and_gradients, jit_compile=jit_compile, reduce_retracing=True)

  def train_step(batch):
    _, labels = batch
    context = tf.distribute.get_replica_context()
    pairs = tf.cast(tf.shape(labels)[0], tf.float32)
    total_pairs = context.all_reduce(tf.distribute.ReduceOp.SUM, pairs)
    (total, lc, ll), gradients = losses_and_gradients(
        batch, pairs / total_pairs)
    optimizer.apply(gradients, variables)
    return {"loss": total, "contrastive_loss": lc, "logistic_loss": ll}

  if apply_in_xla:
    train_step = tf.function(train_step, jit_compile=jit_compile,
                             reduce_retracing=True)
  train_step.variables = variables
  return train_step
