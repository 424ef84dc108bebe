"""The Sent2Vec train step: negative sampling with sparse SGD on touched rows.

Gradients are written out by hand and applied to the rows a batch touches
only, so a step costs O(source entries + targets x (1 + k)) rows whatever
the table size (a dense update of a 5.6 GB 2M-bucket table per step would
dominate everything).

For a target t of sentence S with context C_t (`inputs.sent2vec_data`),
h_t = (sum_{r in C_t} v_r) / |C_t| and the loss is
  log(1 + exp(-u_t . h_t)) + sum_neg log(1 + exp(u_n . h_t)).
All targets of a sentence share its source rows: h_t is the sentence sum
minus the excluded rows (plus placeholder n-grams). The C++ code applies
the gradient one target at a time with learning rate
lr0 * (1 - tokens_seen / (epochs * corpus tokens)); here a batch of targets
is applied at once with the same schedule, and `max_multiplicity` damps
rows that a batch names many times (summed at once, they diverge at
lr 0.2).
"""

import tensorflow as tf


def batch_updates(batch, source, target, num_negatives, negative_group,
                  max_multiplicity, source_cap, scale, gather_rows=tf.gather):
  """Loss and scaled gradients of one batch, as the touched rows of each table.

  `scale` (the learning rate) multiplies every gradient, folded into the
  per-row factors so that it costs no extra pass over the rows; `source_cap`
  is the resolved max_source_multiplicity; `gather_rows` reads table rows
  (`gather_sharded_rows` for a ShardedVariable).

  Returns:
    dict: "loss_sum" [], "num_targets" [], "target" and "source"
    `tf.IndexedSlices` (the SGD updates to subtract, one per distinct row,
    caps applied), "added" (the placeholder n-gram rows' updates, ids may
    repeat; or None), and "target_rows" / "source_rows" (those rows as read
    at the start of the step).
  """
  # Every [rows, d] op is a pass over ~1,000 rows of 700 floats that costs
  # about as much as the arithmetic of a small block's step, so per-target
  # factors (1 / |C_t|, signs, the learning rate, the caps) are applied to
  # the [T] or [T, k] coefficients, or once per output row.
  source_row = batch["source_row"]
  num_rows = tf.shape(batch["sentence_size"])[0]
  dim = int(source.shape[1])
  target_row = batch["target_row"]
  added_ids = batch["added_ids"]
  inverse_size = 1.0 / batch["context_size"]  # [T]

  unique_ids = batch["unique_ids"]
  excluded_unique = batch["excluded_unique"]
  num_unique = tf.shape(unique_ids)[0]
  # Each distinct row is read once. The sums over rows named by index are
  # SparseSegmentSums (all segments here are sorted), which do not
  # materialise the gathered [entries, d] as a gather then a segment sum
  # does: on the same cached uni+bi book blocks, one step loop on 2 CPU
  # cores did 0-10% more words per CPU-second with them.
  unique_rows = gather_rows(source, unique_ids)
  sentence_sum = tf.sparse.segment_sum(
      unique_rows, batch["source_unique"], source_row)
  if excluded_unique.shape[1] == 1:
    excluded_sum = tf.gather(unique_rows, excluded_unique[:, 0])
  else:
    # Rows of excluded_unique are padded with num_unique (no row).
    flat = tf.reshape(excluded_unique, [-1])
    named = flat < num_unique
    excluded_sum = tf.sparse.segment_sum(
        unique_rows, tf.boolean_mask(flat, named),
        tf.boolean_mask(tf.range(tf.size(flat)) // excluded_unique.shape[1],
                        named),
        num_segments=tf.shape(excluded_unique)[0])
  context = tf.gather(sentence_sum, target_row) - excluded_sum
  has_added = added_ids.shape[1] != 0
  if has_added:
    # Row 0 (the placeholder) is zero and never updated.
    context += tf.reduce_sum(gather_rows(source, added_ids), axis=1)
  h = context * inverse_size[:, None]

  target_ids = batch["target_ids"]
  negatives = batch["negatives"]
  neg_weights = batch["negative_weights"]
  num_targets = tf.shape(target_ids)[0]
  # Every distinct target-table row is read once; out_index maps the rows
  # of concat([targets, flat negatives]) to them.
  out_unique_ids = batch["out_unique_ids"]
  out_index = tf.gather(batch["out_grad_segment"],
                        tf.math.invert_permutation(batch["out_grad_index"]))
  out_rows = gather_rows(target, out_unique_ids)
  positive = tf.gather(out_rows, out_index[:num_targets])
  negative_index = tf.reshape(out_index[num_targets:], tf.shape(negatives))
  pos_scores = tf.reduce_sum(h * positive, axis=1)
  if negative_group > 1:
    # Groups of g consecutive targets share k negative rows (dense matmuls).
    num_groups = tf.shape(negatives)[0]
    pad = num_groups * negative_group - num_targets

    def to_groups(x, n):  # [T, n] -> [G, g, n]
      return tf.reshape(tf.pad(x, [[0, pad], [0, 0]]),
                        [num_groups, negative_group, n])

    def from_groups(x, n):  # [G, g, n] -> [T, n]
      return tf.reshape(x, [-1, n])[:num_targets]

    h_groups = to_groups(h, dim)
    negative_rows = tf.gather(out_rows, negative_index)  # [G, k, d]
    neg_scores = from_groups(
        tf.matmul(h_groups, negative_rows, transpose_b=True), num_negatives)
  else:
    negative_rows = tf.gather(out_rows, negative_index)  # [T, k, d]
    neg_scores = tf.einsum("td,tkd->tk", h, negative_rows)
  losses = (tf.nn.softplus(-pos_scores)
            + tf.reduce_sum(neg_weights * tf.nn.softplus(neg_scores), 1))
  grad_pos = tf.sigmoid(pos_scores) - 1.0  # dL/d(score) [T]
  grad_neg = tf.sigmoid(neg_scores) * neg_weights  # [T, k]

  # Target table: dL/du = dL/d(score) x h, summed per distinct row. Each
  # summed row belongs to one distinct row, so that row's factor (the
  # learning rate and its multiplicity cap) scales its coefficients; for
  # shared negatives, the group's g coefficients that the matmul sums.
  row_factor = tf.gather(
      _row_factor(scale, max_multiplicity, batch["out_counts"]), out_index)
  pos_out = grad_pos * row_factor[:num_targets]
  neg_factor = tf.reshape(row_factor[num_targets:], tf.shape(negatives))
  if negative_group > 1:
    neg_groups = to_groups(grad_neg, num_negatives) * neg_factor[:, None, :]
    grad_negative_rows = tf.reshape(
        tf.matmul(neg_groups, h_groups, transpose_a=True), [-1, dim])
  else:
    grad_negative_rows = tf.reshape(
        (grad_neg * neg_factor)[:, :, None] * h[:, None, :], [-1, dim])
  grad_out = tf.sparse.segment_sum(
      tf.concat([pos_out[:, None] * h, grad_negative_rows], 0),
      batch["out_grad_index"], batch["out_grad_segment"])

  # Source table: the context gradient dL/dh / |C_t|, negated (one [T, d]
  # pass fewer: the excluded rows take it with a minus sign).
  minus_pos = -grad_pos * inverse_size
  minus_neg = -grad_neg * inverse_size[:, None]
  minus_grad_context = minus_pos[:, None] * positive
  if negative_group > 1:
    minus_grad_context += from_groups(
        tf.matmul(to_groups(minus_neg, num_negatives), negative_rows), dim)
  else:
    minus_grad_context += tf.einsum("tk,tkd->td", minus_neg, negative_rows)
  # target_row is sorted and names every sentence (a batch keeps only
  # sentences with a target); grad_index counts on num_rows of them.
  grad_sentence = -tf.math.segment_sum(minus_grad_context, target_row)
  tf.debugging.assert_equal(tf.shape(grad_sentence)[0], num_rows,
                            "a sentence of the batch has no target")
  # Per distinct row: its entries' sentence gradients minus the gradients
  # of the targets that exclude it, one sorted segment sum.
  grad_unique = tf.sparse.segment_sum(
      tf.concat([grad_sentence, minus_grad_context], 0), batch["grad_index"],
      batch["grad_segment"])

  grad_unique *= _row_factor(scale, source_cap,
                             batch["unique_counts"])[:, None]
  added = None
  if has_added:
    width = tf.shape(added_ids)[1]
    mask = tf.cast(tf.reshape(added_ids, [-1]) > 0, tf.float32)[:, None]
    added = tf.IndexedSlices(
        tf.repeat(minus_grad_context, width, axis=0) * (-scale * mask),
        tf.reshape(added_ids, [-1]))
  return {"loss_sum": tf.reduce_sum(losses),
          "num_targets": num_targets,
          "target": tf.IndexedSlices(grad_out, out_unique_ids),
          "source": tf.IndexedSlices(grad_unique, unique_ids),
          "added": added,
          "target_rows": out_rows,
          "source_rows": unique_rows}


def _row_factor(scale, cap, counts):
  """[rows] factors scale x min(1, cap / count); scale alone when cap = 0."""
  if cap > 0:
    return scale * tf.minimum(1.0, cap / counts)
  return scale * tf.ones_like(counts)


def _shrink(values, threshold):
  """Appendix B: L1 on the updated rows, as a proximal step."""
  return tf.sign(values) * tf.nn.relu(tf.abs(values) - threshold)


def _soft_threshold(table, ids, threshold, gather_rows=tf.gather):
  table.scatter_update(tf.IndexedSlices(
      _shrink(gather_rows(table, ids), threshold), ids))


def gather_sharded_rows(table, ids):
  """Rows `ids` (int [...]) of a ShardedVariable: each shard gathers its own
  on its parameter server, so only the named rows travel (`tf.gather` takes
  1-D ids only, and converting the table concatenates it whole)."""
  return tf.nn.embedding_lookup(table, ids)


def _write_back(table, rows, update, threshold=None):
  """table[ids] = rows - update (rows: table[ids] read earlier in the step).
  On CPU `scatter_sub` costs several times a `scatter_update` of the same
  rows (docs/design_measurements.md)."""
  new_rows = rows - update.values
  if threshold is not None:
    new_rows = _shrink(new_rows, threshold)
  table.scatter_update(tf.IndexedSlices(new_rows, update.indices))


def _write_back_updates(source, target, updates, threshold, source_rows,
                        target_rows):
  """`_write_back` of both tables, then the placeholder n-gram updates
  (repeated ids, maybe among the written rows) subtracted and
  soft-thresholded."""
  _write_back(target, target_rows, updates["target"], threshold)
  if updates["added"] is None:
    _write_back(source, source_rows, updates["source"], threshold)
  else:
    _write_back(source, source_rows, updates["source"])
    source.scatter_sub(updates["added"])
    if threshold is not None:
      _soft_threshold(source, updates["source"].indices, threshold)


def _subtract(source, target, updates, threshold=None, gather_rows=tf.gather):
  """Subtracts the updates in place (`scatter_sub`: concurrent and repeated
  updates of a row add up), then soft-thresholds the updated rows."""
  target.scatter_sub(updates["target"])
  source.scatter_sub(updates["source"])
  if updates["added"] is not None:
    source.scatter_sub(updates["added"])
  if threshold is not None:
    _soft_threshold(target, updates["target"].indices, threshold, gather_rows)
    _soft_threshold(source, updates["source"].indices, threshold, gather_rows)


def _all_reduce(updates, num_targets, num_tokens, device):
  """(updates, targets, tokens) summed over the replicas (the updates'
  IndexedSlices gathered), in the replica context."""
  names = [name for name in ("target", "source", "added")
           if updates[name] is not None]
  # A dense value is all-reduced to its own device, which must be named
  # (MultiWorkerMirroredStrategy leaves it empty on one local CPU). The
  # counts travel as float64 (exact below 2^53; every collective
  # implementation, NCCL included, reduces it).
  with tf.device(device):
    counts = tf.cast(tf.stack([tf.cast(num_targets, tf.int64), num_tokens]),
                     tf.float64)
  reduced = tf.distribute.get_replica_context().all_reduce(
      tf.distribute.ReduceOp.SUM, [updates[name] for name in names] + [counts])
  global_targets, global_tokens = tf.unstack(
      tf.cast(tf.round(reduced[-1]), tf.int64))
  summed = {"added": None}
  summed.update(zip(names, reduced))
  return summed, global_targets, global_tokens


TABLES = ("one_device", "mirrored", "sharded")


def make_train_step(model, learning_rate, total_tokens, num_negatives=10,
                    negative_group=1, l1_weight=0.0, max_multiplicity=0.0,
                    max_source_multiplicity=None, jit_compile=False,
                    element_spec=None, concurrent=False,
                    tables="one_device"):
  """Returns (train_step(batch) -> metrics, step_counter, tokens_seen,
  learning_rate_fn); call it under the model's strategy scope (the counters
  are created here).

  Args:
    model: a built `models.sent2vec.Sent2Vec`.
    learning_rate: lr0, decayed linearly to 0 over `total_tokens` (epochs x
      corpus tokens).
    num_negatives: k, negatives per target.
    negative_group: g, targets sharing one draw of k negatives.
    l1_weight: the paper's Appendix B L1 soft-thresholding (0: off).
    max_multiplicity: M > 0 scales the contributions to a row named c times
      by min(1, M / c): the C++ code applies them one after another, a
      batch sums them, and at lr 0.2 a row named hundreds of times
      overshoots. 0: plain summed SGD.
    max_source_multiplicity: the same cap for source rows (None: M).
    jit_compile: compile with XLA (each new batch shape compiles). Mirrored
      tables: the updates only; sharded: never (remote reads and writes).
    element_spec: the batches' structure: the step is traced once for it
      (a call costs ~0.6 ms instead of the ~8-12 ms `reduce_retracing`
      spends relaxing ~25 shapes). Not for mirrored tables.
    concurrent: one device, steps running at once (Hogwild): each step
      reads its rows again and writes them back minus its update under a
      lock (a `tf.CriticalSection`), so that two steps' updates of a shared
      row both count; cheaper on CPU than `scatter_sub` (`_write_back`).
    tables: how a step applies its updates:
      - "one_device": writes back the rows read minus the update.
      - "mirrored": the per-replica step; the replicas' updates and counts
        are all-reduced and every replica subtracts the same sum from its
        copy, so the copies stay identical and a step equals one device's
        on the whole block (up to summation order) when g = 1 and M = 0.
      - "sharded": ShardedVariables on parameter servers; a worker gathers
        the named rows and subtracts its update in place, so that
        concurrent steps' updates add up (asynchronous SGD).

  Returns:
    the step (a tf.function except with mirrored tables), whose metrics are
    "loss" (the replica's summed target losses / the global number of
    targets, so that their sum is the global mean), "targets", and with
    sharded tables the "learning_rate" the step applied (later reads of
    the counter see other steps).
  """
  if tables not in TABLES:
    raise ValueError(f"tables={tables!r}: one of {TABLES}")
  source = model.source_embeddings.value  # The tf.Variable (scatter ops).
  target = model.target_embeddings.value
  step_counter = tf.Variable(0, dtype=tf.int64, trainable=False, name="step")
  tokens_seen = tf.Variable(0, dtype=tf.int64, trainable=False,
                            name="tokens_seen")
  lr0 = float(learning_rate)
  source_cap = float(max_multiplicity if max_source_multiplicity is None
                     else max_source_multiplicity)
  total = float(max(total_tokens, 1))
  gather_rows = gather_sharded_rows if tables == "sharded" else tf.gather
  tables_lock = tf.CriticalSection(name="tables") if concurrent else None

  def current_learning_rate():
    progress = tf.cast(tokens_seen, tf.float32) / total
    return lr0 * tf.maximum(0.0, 1.0 - progress)

  def compute(batch, lr):
    return batch_updates(batch, source, target, num_negatives,
                         negative_group, max_multiplicity, source_cap,
                         scale=lr, gather_rows=gather_rows)

  if tables == "mirrored" and jit_compile:
    compute = tf.function(compute, jit_compile=True, reduce_retracing=True)

  def train_step(batch):
    lr = current_learning_rate()
    updates = compute(batch, lr)
    threshold = lr * l1_weight if l1_weight > 0 else None
    num_targets = updates["num_targets"]
    all_targets, all_tokens = num_targets, batch["num_tokens"]
    if tables == "mirrored":
      subtracted, all_targets, all_tokens = _all_reduce(
          updates, num_targets, all_tokens, tokens_seen.device)
      _subtract(source, target, subtracted, threshold)
    elif tables == "sharded":
      _subtract(source, target, updates, threshold, gather_sharded_rows)
    elif concurrent:
      # Another step may have written these rows since this one read them.
      def write_back_current_rows():
        _write_back_updates(
            source, target, updates, threshold,
            tf.gather(source, updates["source"].indices),
            tf.gather(target, updates["target"].indices))
        return tf.constant(0)

      tables_lock.execute(write_back_current_rows,
                          exclusive_resource_access=False)
    else:
      _write_back_updates(source, target, updates, threshold,
                          updates["source_rows"], updates["target_rows"])
    tokens_seen.assign_add(all_tokens)
    step_counter.assign_add(1)
    metrics = {"loss": tf.math.divide_no_nan(
                   updates["loss_sum"], tf.cast(all_targets, tf.float32)),
               "targets": num_targets}
    if tables == "sharded":
      metrics["learning_rate"] = lr
    return metrics

  if tables != "mirrored":
    trace = (dict(reduce_retracing=True) if element_spec is None
             else dict(input_signature=[element_spec]))
    train_step = tf.function(
        train_step, jit_compile=jit_compile and tables == "one_device",
        **trace)
  return train_step, step_counter, tokens_seen, current_learning_rate
