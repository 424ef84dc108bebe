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


def make_train_step(model, optimizer, num_negatives, jit_compile=True,
                    apply_in_xla=True):
  """One optimizer step on a batch of groups int32 [batch, 3 + n, length].

  The loss is the paper's: cross-entropy between the softmax over cosines
  and (1/|S+|, ..., 0, ...), averaged over the batch. Under XLA a few
  distinct batch lengths (see `siamese_cbow_data`) compile once each.
  `apply_in_xla=False` applies the update outside the compiled loss and
  gradient, for optimizers whose sparse update XLA cannot compile.
  """
  target = siamese_cbow.target_distribution(siamese_cbow_data.NUM_POSITIVES,
                                            num_negatives)[None]

  def loss_and_gradients(ids):
    with tf.GradientTape() as tape:
      loss = tf.reduce_mean(_per_group_loss(model, ids, target))
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

  @tf.function(reduce_retracing=True)
  def train_step_outside_xla(ids):
    loss, gradients = compiled(ids)
    optimizer.apply(gradients, model.trainable_variables)
    return {"loss": loss}

  return train_step_outside_xla


def make_replica_step(model, optimizer, num_negatives, global_batch_size,
                      jit_compile=True):
  """The per-replica step for `training_loop.run(..., strategy=...)`.

  Each replica gets int32 [global_batch_size / replicas, 3 + n, length]. Its
  loss is sum of its groups' losses / `global_batch_size`
  (`tf.nn.compute_average_loss`), so the sum over replicas is the global
  batch's mean loss, and its gradient (IndexedSlices of the looked-up rows)
  is summed over replicas by the optimizer. The loss and gradient are
  computed under XLA (no collective inside); `optimizer.apply` runs outside
  it, in the replica context, where it all-reduces the gradients and updates
  the mirrored table (plain SGD touches only the looked-up rows).

  Returns:
    ids -> {"loss": this replica's share of the global mean loss}.
  """
  target = siamese_cbow.target_distribution(siamese_cbow_data.NUM_POSITIVES,
                                            num_negatives)[None]

  @tf.function(jit_compile=jit_compile, reduce_retracing=True)
  def loss_and_gradients(ids):
    with tf.GradientTape() as tape:
      loss = tf.nn.compute_average_loss(
          _per_group_loss(model, ids, target),
          global_batch_size=global_batch_size)
    return loss, tape.gradient(loss, model.trainable_variables)

  def replica_step(ids):
    loss, gradients = loss_and_gradients(ids)
    optimizer.apply(gradients, model.trainable_variables)
    return {"loss": loss}

  return replica_step
