"""The CHARAGRAM-family train steps and input pipeline, shared by the trainer and the benchmark.

`text_batches` are cut into per-replica pieces (one piece on one device)
before `featurize_batches`; `make_train_step` is the per-replica step, whose
negatives come from the whole global batch (the replicas' phrase embeddings
are all-gathered), so that one step equals the one-device step on the
global batch.
"""

import tensorflow as tf


def text_batches(texts1, texts2, batch_size, num_epochs=1, seed=0,
                 shuffle=True):
  """Batches of raw pairs: (texts1, texts2), tf.string [batch_size] each.

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
  return dataset.repeat(num_epochs)


def featurize_batches(dataset, featurizer, max_tokens=None):
  """(texts1, texts2) batches -> (ids1, ids2), int32 RaggedTensors.

  `max_tokens`: each text keeps at most this many tokens (the n-grams of
  the kept ones), so that one long line cannot blow up a batch that
  charCNN / charLSTM pad to their longest row; None: no cap.
  """
  dataset = dataset.map(
      lambda a, b: (featurizer(a, max_tokens=max_tokens),
                    featurizer(b, max_tokens=max_tokens)),
      num_parallel_calls=1)
  return dataset.prefetch(2)


def l2_penalty(variables):
  """0.5 * sum of squared entries of `variables` (the reference's L2)."""
  return 0.5 * tf.add_n([tf.reduce_sum(tf.square(v)) for v in variables])


def make_train_step(model, optimizer, loss_fn, l2=0.0):
  """The per-replica optimizer step on a batch (ids1, ids2).

  loss = ParaphraseMarginLoss(g(x1), g(x2)) + l2 * 0.5 * sum ||theta||^2.
  Each replica gets a consecutive slice of the global batch (in replica
  order). Its phrase embeddings are all-gathered (`ReplicaContext.
  all_gather`, whose gradient sums the replicas' upstream gradients and
  hands each replica its own rows), and every replica evaluates `loss_fn`
  on the whole global batch: MAX and MIX negatives are chosen among all
  2 x global batch phrases, and MIX's random draws (same op seed, same
  shapes on every replica) are the one device's. The replica's loss is its
  own pairs' loss_i averaged over the global batch
  (`tf.nn.compute_average_loss`) plus the penalty / replicas; summed over
  replicas (the optimizer sums the gradients, the loop the metrics) that is
  the one-device loss on the global batch, and so is the gradient. On one
  device it is the one-device step.

  Returns:
    batch -> {"loss", "margin_loss"}: this replica's shares.
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
