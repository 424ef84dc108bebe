"""The Sent2Vec train step: negative sampling with sparse SGD on touched rows.

Gradients are written out by hand (they are short) and applied with
`scatter_sub` on the rows a batch touches, so a step costs O(source entries +
targets x (1 + k)) rows whatever the table sizes (a 2M-bucket x 700 table is
5.6 GB; a dense update of it per step would dominate everything).

For a target t of sentence S with context C_t (see `inputs.sent2vec_data`),
h_t = (sum_{r in C_t} v_r) / |C_t| and the loss is
  log(1 + exp(-u_t . h_t)) + sum_neg log(1 + exp(u_n . h_t)).
All targets of a sentence share the sentence's source rows: h_t is the
sentence sum minus the excluded rows (plus placeholder n-grams), so the
gradient reaching a source row is the sentence's summed context gradient
minus the targets that exclude it. The C++ code applies the same gradient
(scaled by 1/|C_t|) one target at a time, with learning rate
lr0 * (1 - tokens_seen / (epochs * corpus tokens)); here a batch of targets
is applied at once with the same schedule, and `max_multiplicity` damps rows
that a batch names many times (summed at once, they diverge at lr 0.2).
"""

import tensorflow as tf


def _variable(weight):
  """The tf.Variable behind a Keras 3 weight (scatter ops need it)."""
  return getattr(weight, "value", weight)


def make_train_step(model, learning_rate, total_tokens, num_negatives=10,
                    negative_group=1, l1_weight=0.0, max_multiplicity=0.0,
                    max_source_multiplicity=None, jit_compile=False):
  """Returns (train_step(batch) -> metrics, step_counter, tokens_seen).

  Args:
    model: a built `models.sent2vec.Sent2Vec`.
    learning_rate: lr0, decayed linearly to 0 over `total_tokens`.
    total_tokens: tokens of the whole run (epochs x corpus tokens).
    num_negatives: k, negatives per target.
    negative_group: g, targets sharing one draw of k negatives (the batch's
      layout, `inputs.sent2vec_data.make_batch`); 1: independent draws.
    l1_weight: tau of the paper's Appendix B: L1 soft-thresholding of the
      updated source and target rows (0: off, as in the C++ code).
    max_multiplicity: M > 0 caps how many summed contributions a row takes
      per step: a row named c times gets each contribution scaled by
      min(1, M / c). The C++ code applies them one after another, each seeing
      the last, which keeps frequent rows stable; a batch sums them at once,
      and at lr 0.2 a row named hundreds of times overshoots and diverges.
      0: plain summed SGD.
    max_source_multiplicity: the same cap for source rows, whose entries
      each carry a context gradient already divided by |C_t| (None: same as
      max_multiplicity; 0: no cap).
    jit_compile: compile with XLA (batches vary in size, so each new shape
      compiles; off by default).
  """
  source = _variable(model.source_embeddings)
  target = _variable(model.target_embeddings)
  step_counter = tf.Variable(0, dtype=tf.int64, trainable=False, name="step")
  tokens_seen = tf.Variable(0, dtype=tf.int64, trainable=False,
                            name="tokens_seen")
  lr0 = float(learning_rate)
  source_cap = float(max_multiplicity if max_source_multiplicity is None
                     else max_source_multiplicity)
  total = float(max(total_tokens, 1))

  def current_learning_rate():
    progress = tf.cast(tokens_seen, tf.float32) / total
    return lr0 * tf.maximum(0.0, 1.0 - progress)

  @tf.function(jit_compile=jit_compile, reduce_retracing=True)
  def train_step(batch):
    lr = current_learning_rate()
    source_row = batch["source_row"]
    num_rows = tf.shape(batch["sentence_size"])[0]
    dim = int(source.shape[1])
    target_row = batch["target_row"]
    added_ids = batch["added_ids"]
    context_size = batch["context_size"][:, None]

    unique_ids = batch["unique_ids"]
    excluded_unique = batch["excluded_unique"]
    num_unique = tf.shape(unique_ids)[0]
    # Each distinct row is read once; SparseSegmentSum gathers and sums.
    unique_rows = tf.gather(source, unique_ids)
    sentence_sum = tf.sparse.segment_sum(
        unique_rows, batch["source_unique"], source_row,
        num_segments=num_rows)
    if excluded_unique.shape[1] == 1:
      excluded_sum = tf.gather(unique_rows, excluded_unique[:, 0])
    else:
      padded = tf.concat([unique_rows, tf.zeros([1, dim])], 0)
      excluded_sum = tf.reduce_sum(tf.gather(padded, excluded_unique), 1)
    context = tf.gather(sentence_sum, target_row) - excluded_sum
    has_added = added_ids.shape[1] != 0
    if has_added:
      # Row 0 (the placeholder) is zero and never updated.
      context += tf.reduce_sum(tf.gather(source, added_ids), axis=1)
    h = context / context_size

    target_ids = batch["target_ids"]
    negatives = batch["negatives"]
    neg_weights = batch["negative_weights"]
    num_targets = tf.shape(target_ids)[0]
    positive = tf.gather(target, target_ids)
    pos_scores = tf.reduce_sum(h * positive, axis=1)
    if negative_group > 1:
      # Groups of g consecutive targets share k negative rows (dense matmuls).
      num_groups = tf.shape(negatives)[0]
      pad = num_groups * negative_group - num_targets
      h_groups = tf.reshape(tf.pad(h, [[0, pad], [0, 0]]),
                            [num_groups, negative_group, dim])
      negative_rows = tf.gather(target, negatives)  # [G, k, d]
      neg_scores = tf.reshape(
          tf.matmul(h_groups, negative_rows, transpose_b=True),
          [-1, num_negatives])[:num_targets]
    else:
      negative_rows = tf.gather(target, negatives)  # [T, k, d]
      neg_scores = tf.einsum("td,tkd->tk", h, negative_rows)
    losses = (tf.nn.softplus(-pos_scores)
              + tf.reduce_sum(neg_weights * tf.nn.softplus(neg_scores), 1))
    grad_pos = tf.sigmoid(pos_scores) - 1.0  # [T]
    grad_neg = tf.sigmoid(neg_scores) * neg_weights  # [T, k]

    grad_h = grad_pos[:, None] * positive
    if negative_group > 1:
      grad_neg_groups = tf.reshape(tf.pad(grad_neg, [[0, pad], [0, 0]]),
                                   [num_groups, negative_group, num_negatives])
      grad_h += tf.reshape(tf.matmul(grad_neg_groups, negative_rows),
                           [-1, dim])[:num_targets]
      grad_negative_rows = tf.reshape(
          tf.matmul(grad_neg_groups, h_groups, transpose_a=True), [-1, dim])
    else:
      grad_h += tf.einsum("tk,tkd->td", grad_neg, negative_rows)
      grad_negative_rows = tf.reshape(
          grad_neg[:, :, None] * h[:, None, :], [-1, dim])
    out_unique_ids = batch["out_unique_ids"]
    grad_out = tf.sparse.segment_sum(
        tf.concat([grad_pos[:, None] * h, grad_negative_rows], 0),
        batch["out_grad_index"], batch["out_grad_segment"],
        num_segments=tf.shape(out_unique_ids)[0])

    grad_context = grad_h / context_size
    grad_sentence = tf.math.unsorted_segment_sum(grad_context, target_row,
                                                 num_rows)
    # Per distinct row: its entries' sentence gradients minus the gradients
    # of the targets that exclude it, one sorted segment sum.
    grad_unique = tf.sparse.segment_sum(
        tf.concat([grad_sentence, -grad_context], 0), batch["grad_index"],
        batch["grad_segment"], num_segments=num_unique)

    if max_multiplicity > 0:
      grad_out *= tf.minimum(
          1.0, max_multiplicity / batch["out_counts"])[:, None]
    if source_cap > 0:
      grad_unique *= tf.minimum(
          1.0, source_cap / batch["unique_counts"])[:, None]
    target.scatter_sub(tf.IndexedSlices(lr * grad_out, out_unique_ids))
    source.scatter_sub(tf.IndexedSlices(lr * grad_unique, unique_ids))
    if has_added:
      width = tf.shape(added_ids)[1]
      mask = tf.cast(tf.reshape(added_ids, [-1]) > 0, tf.float32)[:, None]
      source.scatter_sub(tf.IndexedSlices(
          lr * tf.repeat(grad_context, width, axis=0) * mask,
          tf.reshape(added_ids, [-1])))
    if l1_weight > 0:
      # Appendix B: L1 on every updated source and target vector, applied
      # as a proximal (soft-thresholding) step.
      for table, ids in ((source, unique_ids), (target, out_unique_ids)):
        values = tf.gather(table, ids)
        shrunk = tf.sign(values) * tf.nn.relu(tf.abs(values) - lr * l1_weight)
        table.scatter_update(tf.IndexedSlices(shrunk, ids))
    tokens_seen.assign_add(batch["num_tokens"])
    step_counter.assign_add(1)
    return {"loss": tf.math.divide_no_nan(
                tf.reduce_sum(losses), tf.cast(num_targets, tf.float32)),
            "targets": num_targets}

  return train_step, step_counter, tokens_seen, current_learning_rate
