"""The Siamese CBOW train step, shared by the trainer and the benchmark."""

import keras
import tensorflow as tf

from sentzoo.inputs import siamese_cbow_data
from sentzoo.models import siamese_cbow
from sentzoo.trainers import lazy_optimizers

# The trainer's --optimizer choices: each updates only the looked-up rows.
# The lazy ones deduplicate rows with tf.unique, which XLA cannot compile, so
# their update runs outside the compiled step (`make_train_step`'s
# apply_in_xla=False); SGD's can run inside it.
OPTIMIZERS = {"sgd": keras.optimizers.SGD,
              "adagrad": lazy_optimizers.LazyAdagrad,
              "adadelta": lazy_optimizers.LazyAdadelta}


def _per_group_loss(probabilities, target):
  """Cross-entropy between the softmax over cosines (the model's output,
  [batch, members - 1]) and the target: [batch]."""
  return keras.losses.categorical_crossentropy(
      tf.broadcast_to(target, tf.shape(probabilities)), probabilities)


def _global_batch_mean(per_group):
  """`tf.nn.compute_average_loss(per_group)` without its Assert ops (XLA
  drops them with a console warning at every compilation)."""
  replicas = tf.distribute.get_replica_context().num_replicas_in_sync
  return tf.math.divide_no_nan(
      tf.reduce_sum(per_group),
      tf.cast(tf.shape(per_group)[0] * replicas, per_group.dtype))


# The step's flat ids are padded to a multiple of this many: one XLA
# compilation per multiple (the best flagfile's batches of 100 groups hold
# 1.4k-15.6k real ids, 9.0k on average: ~15 shapes, ~6% padding).
TOKEN_MULTIPLE = 1024


def pad_tokens(flat_ids, sentence, num_sentences,
               token_multiple=TOKEN_MULTIPLE):
  """Flat ids and their sentences padded to a multiple of `token_multiple`
  with id 0 of sentence `num_sentences` (one past the last, which
  `sentence_averages` drops)."""
  padding = (-tf.shape(flat_ids)[0]) % token_multiple
  return (tf.pad(flat_ids, [[0, padding]]),
          tf.pad(sentence, [[0, padding]], constant_values=num_sentences))


def flat_sentences(ids, token_multiple=TOKEN_MULTIPLE):
  """(flat_ids, sentence) of dense groups ids int32 [batch, members,
  length]: the real (non-0) ids, and batch * members + member of each,
  padded (`pad_tokens`) to a multiple of `token_multiple`."""
  shape = tf.shape(ids)
  rows = shape[0] * shape[1]
  ids = tf.reshape(ids, [rows, shape[2]])
  real = ids > 0
  flat_ids = tf.boolean_mask(ids, real)
  sentence = tf.repeat(tf.range(rows),
                       tf.reduce_sum(tf.cast(real, tf.int32), axis=1))
  return pad_tokens(flat_ids, sentence, rows, token_multiple)


def sentence_averages(model, flat_ids, sentence, num_sentences):
  """The model's sentence embeddings (`encode`: the average of the rows of
  the sentence's real ids, 0 for none) from `flat_sentences`' output:
  float32 [num_sentences, d]. The padding ids' sentence is dropped."""
  vectors = model.embedding(flat_ids)
  sums = tf.math.unsorted_segment_sum(vectors, sentence, num_sentences + 1)
  counts = tf.math.unsorted_segment_sum(
      tf.ones_like(sentence, vectors.dtype), sentence, num_sentences + 1)
  return sums[:-1] / tf.maximum(counts[:-1], 1.0)[:, None]


def make_train_step(model, optimizer, num_negatives, jit_compile=True,
                    apply_in_xla=True, token_multiple=TOKEN_MULTIPLE):
  """The per-replica optimizer step on a batch of `group_dataset`: dense
  groups [batch, 3 + n, length] ("by_length") or a "consecutive" batch's
  dict of flat ids, their sentences and the groups' members.

  The loss is the paper's cross-entropy between the softmax over cosines
  and (1/|S+|, ..., 0, ...), averaged over the global batch. The step
  computes on the real ids only (padding is most of a padded batch's
  positions): listed outside XLA, padded to a multiple of `token_multiple`
  (one compilation each), their rows averaged by sentence and the table's
  gradient `tf.IndexedSlices` of those rows. `apply_in_xla=False` applies
  the update outside the compiled part: for the lazy optimizers, and for
  several replicas (`optimizer.apply` all-reduces in the replica context).
  """
  target = siamese_cbow.target_distribution(siamese_cbow_data.NUM_POSITIVES,
                                            num_negatives)[None]

  def loss_and_gradients(flat_ids, sentence, group_members):
    with tf.GradientTape() as tape:
      averages = sentence_averages(model, flat_ids, sentence,
                                   tf.size(group_members))
      loss = _global_batch_mean(_per_group_loss(
          model.score(tf.gather(averages, group_members)), target))
    return loss, tape.gradient(loss, model.trainable_variables)

  def listed_sentences(batch):
    """(flat ids, their sentences, the groups' members) of a batch."""
    if isinstance(batch, dict):
      return pad_tokens(batch["flat_ids"], batch["sentence"],
                        tf.size(batch["members"]), token_multiple) + (
                            batch["members"],)
    flat_ids, sentence = flat_sentences(batch, token_multiple)
    shape = tf.shape(batch)
    return flat_ids, sentence, tf.reshape(tf.range(shape[0] * shape[1]),
                                          shape[:2])

  if apply_in_xla:
    @tf.function(jit_compile=jit_compile, reduce_retracing=True)
    def compiled_step(flat_ids, sentence, group_members):
      loss, gradients = loss_and_gradients(flat_ids, sentence, group_members)
      optimizer.apply(gradients, model.trainable_variables)
      return loss

    @tf.function(reduce_retracing=True)
    def train_step(batch):
      return {"loss": compiled_step(*listed_sentences(batch))}
    return train_step

  compiled = tf.function(loss_and_gradients, jit_compile=jit_compile,
                         reduce_retracing=True)

  # Not a tf.function: a replica's `optimizer.apply` must be traced in the
  # function that calls `strategy.run` (the loop's), not in a nested one.
  def train_step_outside_xla(batch):
    loss, gradients = compiled(*listed_sentences(batch))
    optimizer.apply(gradients, model.trainable_variables)
    return {"loss": loss}

  return train_step_outside_xla


def make_dense_train_step(model, optimizer, num_negatives, jit_compile=True):
  """The padded step, through the model's `call` on the padded
  groups: the reference the tests and the profile compare
  `make_train_step` with. SGD only."""
  target = siamese_cbow.target_distribution(siamese_cbow_data.NUM_POSITIVES,
                                            num_negatives)[None]

  @tf.function(jit_compile=jit_compile, reduce_retracing=True)
  def train_step(ids):
    with tf.GradientTape() as tape:
      loss = _global_batch_mean(_per_group_loss(model(ids, training=True),
                                                target))
    gradients = tape.gradient(loss, model.trainable_variables)
    optimizer.apply(gradients, model.trainable_variables)
    return {"loss": loss}

  return train_step
