"""The Siamese CBOW train step, shared by the trainer and the benchmark."""

import keras
import tensorflow as tf

from sentzoo.inputs import siamese_cbow_data
from sentzoo.models import siamese_cbow
from sentzoo.trainers import lazy_optimizers

# The trainer's --optimizer choices: each updates only the looked-up rows.
OPTIMIZERS = {"sgd": keras.optimizers.SGD,
              "adagrad": lazy_optimizers.LazyAdagrad,
              "adadelta": lazy_optimizers.LazyAdadelta}


def make_optimizer(name, learning_rate):
  """(optimizer, whether its update can run inside the XLA-compiled step).

  The lazy optimizers deduplicate rows with tf.unique, which XLA cannot
  compile, so their update runs outside it (see `make_train_step`).
  """
  return OPTIMIZERS[name](learning_rate=learning_rate), name == "sgd"


def _per_group_loss(model, ids, target):
  """Cross-entropy between the softmax over cosines and the target: [batch]."""
  probabilities = model(ids, training=True)
  return keras.losses.categorical_crossentropy(
      tf.broadcast_to(target, tf.shape(probabilities)), probabilities)


def _global_batch_mean(per_group):
  """`tf.nn.compute_average_loss(per_group)`: sum / (batch x replicas), with
  the same ops, without its checks of the batch size (Assert ops, which XLA
  drops with a warning line on the console at every compilation)."""
  replicas = tf.distribute.get_replica_context().num_replicas_in_sync
  return tf.math.divide_no_nan(
      tf.reduce_sum(per_group),
      tf.cast(tf.shape(per_group)[0] * replicas, per_group.dtype))


def make_train_step(model, optimizer, num_negatives, jit_compile=True,
                    apply_in_xla=True):
  """The per-replica optimizer step on groups int32 [batch, 3 + n, length].

  The loss is the paper's: cross-entropy between the softmax over cosines
  and (1/|S+|, ..., 0, ...), averaged over the global batch
  (`_global_batch_mean`: this replica's sum / (its batch x replicas), so
  the replicas' losses and gradients sum to the global batch's mean; on
  one device the plain mean). Under XLA a few distinct batch lengths (see
  `siamese_cbow_data`) compile once each.
  `apply_in_xla=False` applies the update outside the compiled loss and
  gradient: for optimizers whose sparse update XLA cannot compile, and
  under a strategy of several replicas, where `optimizer.apply` all-reduces
  the gradients (no collective inside XLA) in the replica context.
  """
  target = siamese_cbow.target_distribution(siamese_cbow_data.NUM_POSITIVES,
                                            num_negatives)[None]

  def loss_and_gradients(ids):
    with tf.GradientTape() as tape:
      loss = _global_batch_mean(_per_group_loss(model, ids, target))
    return loss, tape.gradient(loss, model.trainable_variables)

  if apply_in_xla:
    @tf.function(jit_compile=jit_compile, reduce_retracing=True)
    def train_step(ids):
      loss, gradients = loss_and_gradients(ids)
      optimizer.apply(gradients, model.trainable_variables)
      return {"loss": loss}
    return train_step

  compiled = tf.function(loss_and_gradients, jit_compile=jit_compile,
                         reduce_retracing=True)

  # Not a tf.function: a replica's `optimizer.apply` must be traced in the
  # function that calls `strategy.run` (the loop's), not in a nested one.
  def train_step_outside_xla(ids):
    loss, gradients = compiled(ids)
    optimizer.apply(gradients, model.trainable_variables)
    return {"loss": loss}

  return train_step_outside_xla
