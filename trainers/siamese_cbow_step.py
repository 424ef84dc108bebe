"""The Siamese CBOW train step, shared by the trainer and the benchmark."""

import keras
import tensorflow as tf

from inputs import siamese_cbow_data
from models import siamese_cbow


def make_train_step(model, optimizer, num_negatives, jit_compile=True):
  """One SGD step on a batch of groups int32 [batch, 3 + n, length].

  The loss is the paper's: cross-entropy between the softmax over cosines
  and (1/|S+|, ..., 0, ...), averaged over the batch. Under XLA a few
  distinct batch lengths (see `siamese_cbow_data`) compile once each.
  """
  target = siamese_cbow.target_distribution(siamese_cbow_data.NUM_POSITIVES,
                                            num_negatives)[None]

  @tf.function(jit_compile=jit_compile, reduce_retracing=True)
  def train_step(ids):
    with tf.GradientTape() as tape:
      probabilities = model(ids, training=True)
      loss = keras.losses.categorical_crossentropy(
          tf.broadcast_to(target, tf.shape(probabilities)), probabilities)
      loss = tf.reduce_mean(loss)
    gradients = tape.gradient(loss, model.trainable_variables)
    optimizer.apply(gradients, model.trainable_variables)
    return {"loss": loss}

  return train_step
