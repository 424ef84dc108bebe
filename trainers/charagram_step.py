"""The CHARAGRAM-family train step and input pipeline, shared by the trainer and the benchmark."""

import tensorflow as tf


def pair_dataset(texts1, texts2, featurizer, batch_size, num_epochs=1,
                 seed=0, shuffle=True):
  """Batches of featurised pairs: (ids1, ids2), int32 RaggedTensors [B, (ids)].

  Pairs are shuffled anew in each epoch; the last incomplete batch of an
  epoch is dropped (the in-batch negatives need a full batch).
  """
  dataset = tf.data.Dataset.from_tensor_slices(
      (tf.constant(list(texts1), tf.string),
       tf.constant(list(texts2), tf.string)))
  if shuffle:
    dataset = dataset.shuffle(len(texts1), seed=seed,
                              reshuffle_each_iteration=True)
  dataset = dataset.batch(batch_size, drop_remainder=True)
  dataset = dataset.repeat(num_epochs)
  dataset = dataset.map(lambda a, b: (featurizer(a), featurizer(b)),
                        num_parallel_calls=1)
  return dataset.prefetch(2)


def l2_penalty(variables):
  """0.5 * sum of squared entries of `variables` (the reference's L2)."""
  return 0.5 * tf.add_n([tf.reduce_sum(tf.square(v)) for v in variables])


def make_train_step(model, optimizer, loss_fn, l2=0.0, input_signature=None):
  """One optimizer step on a batch (ids1, ids2).

  loss = ParaphraseMarginLoss(g(x1), g(x2)) + l2 * 0.5 * sum ||theta||^2.
  """

  @tf.function(input_signature=input_signature, reduce_retracing=True)
  def train_step(ids1, ids2):
    with tf.GradientTape() as tape:
      embeddings1 = model(ids1, training=True)
      embeddings2 = model(ids2, training=True)
      margin_loss, _ = loss_fn(embeddings1, embeddings2)
      penalty = (l2 * l2_penalty(model.trainable_variables) if l2
                 else tf.constant(0.0))
      loss = margin_loss + penalty
    gradients = tape.gradient(loss, model.trainable_variables)
    optimizer.apply(gradients, model.trainable_variables)
    return {"loss": loss, "margin_loss": margin_loss}

  return lambda batch: train_step(*batch)
