"""The CHARAGRAM-family train step and input pipeline (trainer and benchmark)."""

import tensorflow as tf


def text_batches(texts1, texts2, batch_size, num_epochs=1, seed=0,
                 shuffle=True):
  """(texts1, texts2) batches, shuffled anew each epoch; an epoch's last
  incomplete batch is dropped (the in-batch negatives need a full batch)."""
  dataset = tf.data.Dataset.from_tensor_slices(
      (tf.constant(list(texts1), tf.string),
       tf.constant(list(texts2), tf.string)))
  if shuffle:
    dataset = dataset.shuffle(len(texts1), seed=seed,
                              reshuffle_each_iteration=True)
  dataset = dataset.batch(batch_size, drop_remainder=True)
  return dataset.repeat(num_epochs)


def featurize_batches(dataset, featurizer, max_tokens=None):
  """(texts1, texts2) batches -> ragged (ids1, ids2); `max_tokens` keeps one
  long line from blowing up a batch that charCNN / charLSTM pad."""
  dataset = dataset.map(
      lambda a, b: (featurizer(a, max_tokens=max_tokens),
                    featurizer(b, max_tokens=max_tokens)),
      num_parallel_calls=1)
  return dataset.prefetch(2)


def l2_penalty(variables):
  """0.5 * sum of squared entries of `variables` (the reference's L2)."""
  return 0.5 * tf.add_n([tf.reduce_sum(tf.square(v)) for v in variables])


def make_train_step(model, optimizer, loss_fn, l2=0.0):
  """The per-replica optimizer step on a batch (ids1, ids2):
  loss = ParaphraseMarginLoss(g(x1), g(x2)) + l2 * 0.5 * sum ||theta||^2.

  The replicas' phrase embeddings are all-gathered, so every replica
  chooses MAX / MIX negatives among the whole global batch (MIX's draws
  are the one device's: same op seed and shapes); its loss is its own
  pairs' share of the global mean plus penalty / replicas, so the sum over
  replicas, and its gradient, is the one-device step's. Returns
  batch -> {"loss", "margin_loss"}, this replica's shares.
  """
  variables = model.trainable_variables

  def train_step(batch):
    ids1, ids2 = batch
    context = tf.distribute.get_replica_context()
    replicas = context.num_replicas_in_sync
    with tf.GradientTape() as tape:
      embeddings1 = model(ids1, training=True)
      embeddings2 = model(ids2, training=True)
      local = tf.shape(embeddings1)[0]
      first = context.replica_id_in_sync_group * local
      all1, all2 = context.all_gather([embeddings1, embeddings2], axis=0)
      _, details = loss_fn(all1, all2)
      margin_loss = tf.nn.compute_average_loss(
          details["per_pair_loss"][first:first + local])
      penalty = (l2 * l2_penalty(variables) / replicas if l2
                 else tf.constant(0.0))
      loss = margin_loss + penalty
    gradients = tape.gradient(loss, variables)
    optimizer.apply(gradients, variables)
    return {"loss": loss, "margin_loss": margin_loss}

  return train_step
