"""Raw sentences -> average of word vectors: the in-memory and exported encoder.

The same object evaluates a model during training and becomes the root of its
SavedModel, so what is measured in training is what is served.
"""

import tensorflow as tf

from sentzoo.export import input_limits
from sentzoo.export import table_quantization


# Shards of one call's batch (see `AveragingSentenceEncoder.__call__`): one
# per core of the 2-core machine it was measured on (docs/encode_speed.md
# measures the sharded graph, not other counts). The smallest batch that is
# sharded is a choice, not a measurement: a batch of one stays unsharded.
NUM_SHARDS = 2
SHARD_MIN_BATCH = 64


def ragged_mean_of_rows(rows, ids):
  """Mean of `rows` [n, dim] per row of `ids` (n = its number of values).

  `rows[i]` belongs to the ragged row of `ids.flat_values[i]`: rows already
  gathered (and dequantised) for `ids`. Empty rows give zeros, never NaN.
  No padding to the longest sentence: a batch with one 10,000-token sentence
  costs its tokens, not batch x 10,000 rows. Returns float [batch, dim].
  """
  sums = tf.math.unsorted_segment_sum(rows, ids.value_rowids(),
                                      num_segments=ids.nrows())
  counts = tf.cast(ids.row_lengths(), sums.dtype)[:, None]
  return sums / tf.maximum(counts, 1.0)


def owning_the_table(table, build_module):
  """`build_module()` (a module that makes its table from the tf.Variable
  `table`, e.g. a trainer's export of the model in memory), made the one
  owner of the table's buffer: `table` is emptied to [0, d] (a gather from
  it then fails).

  With copy-on-read off the module's table starts out sharing `table`'s
  buffer, but the first gather from a buffer two variables hold copies it
  whole (measured: +1,120 MB for a Sent2Vec table of 300k buckets). A
  distributed table is left as it is.
  """
  if getattr(table, "values", None) or not hasattr(table, "handle"):
    return build_module()
  tf.raw_ops.DisableCopyOnRead(resource=table.handle)
  module = build_module()
  tf.raw_ops.AssignVariableOp(
      resource=table.handle, value=tf.zeros([0] + table.shape.as_list()[1:],
                                            table.dtype),
      validate_shape=False)
  return module


class AveragingSentenceEncoder(tf.Module):
  """A sentence encoder that averages word vectors.

  Follows the Reusable SavedModel API: callable, with `variables` and
  `trainable_variables`, so `hub.load`, `hub.KerasLayer(trainable=True)` and
  `keras.layers.TFSMLayer` all work on the export.

  The table is stored as `quantize` says (`export.table_quantization`):
  * "none": `embeddings`, float32 [vocabulary_size, dim], trainable: the
    only entry of `trainable_variables`.
  * "float16": `embeddings_float16`, float16 [vocabulary_size, dim].
  * "int8": `embeddings_int8`, int8 [vocabulary_size, dim], and
    `embedding_row_scales`, float32 [vocabulary_size]; row r is
    `embeddings_int8[r] * embedding_row_scales[r]`.
  A quantised encoder is for inference only: its `trainable_variables` is
  empty (an int8 or float16 table cannot be fine-tuned; fine-tune the
  float32 export), and it has no `embeddings` attribute, so code that reads
  an export's float table (`--word_vectors`) refuses it instead of reading
  int8 values as vectors. Only the rows a call gathers are cast to float32
  (and scaled); the output is float32 [batch, dim] in every mode.

  Every sentence is cut to the caps (`export.input_limits`) in `__call__`,
  and so in `serving_default`.

  Args:
    text_to_ids: `inputs.text_to_ids.TextToIds` (tokeniser + vocabulary), or
      any module with its call signature `(sentences, max_bytes,
      max_tokens) -> int ragged [batch, (ids)]`, e.g.
      `inputs.sent2vec_featurizer.Sent2VecFeaturizer`.
    embeddings: float [vocabulary_size, dim] initial word vectors (row 0,
      padding, is never read), or the filled list of
      `table_quantization.table_variables` of `quantize`, used as it is
      (an import fills them from a file, a chunk at a time).
    metadata: JSON-able dict stored with the export (model card); the caps
      are added to it as "input_limits".
    max_bytes_per_sentence, max_tokens_per_sentence: the caps (ints >= 1).
    quantize: one of `table_quantization.MODES`; recorded in the metadata
      as "quantization".
    follow: `embeddings` is a `tf.Variable` (quantize "none") that the
      encoder reads itself instead of copying: it follows the variable (a
      trainer's evaluation of the table it trains, without a second table).
  """

  # tf.Module computes `variables` and `trainable_variables` as properties,
  # which tf.saved_model.save does not write; the Reusable SavedModel API
  # needs them as saved attributes, so they are plain lists set below.
  variables = None
  trainable_variables = None

  def __init__(self, text_to_ids, embeddings, metadata=None, name=None, *,
               max_bytes_per_sentence=(
                   input_limits.DEFAULT_MAX_BYTES_PER_SENTENCE),
               max_tokens_per_sentence=(
                   input_limits.DEFAULT_MAX_TOKENS_PER_SENTENCE),
               quantize="none", follow=False):
    super().__init__(name=name)
    self.max_bytes_per_sentence, self.max_tokens_per_sentence = (
        input_limits.check(max_bytes_per_sentence, max_tokens_per_sentence))
    self.quantization_mode = table_quantization.check_mode(quantize)
    self.text_to_ids = text_to_ids
    if follow and (quantize != "none" or
                   not isinstance(embeddings, tf.Variable)):
      raise ValueError("follow=True reads a float32 tf.Variable as it is")
    self.follow = follow
    if follow:
      variables = [embeddings]
    elif isinstance(embeddings, list):
      variables = embeddings
    else:
      variables = table_quantization.stored_table(embeddings, quantize)
    if quantize == "none":
      self.embeddings, = variables
      self.trainable_variables = list(variables)
    elif quantize == "float16":
      self.embeddings_float16, = variables
      self.trainable_variables = []
    else:
      self.embeddings_int8, self.embedding_row_scales = variables
      self.trainable_variables = []
    self.variables = list(variables)
    self.regularization_losses = []
    num_rows, dim = (int(d) for d in self.variables[0].shape)
    self.metadata = dict(metadata or {})
    self.metadata["input_limits"] = input_limits.model_card_entry(
        self.max_bytes_per_sentence, self.max_tokens_per_sentence)
    self.metadata["quantization"] = table_quantization.model_card_entry(
        quantize, num_rows, dim)

  @property
  def dim(self):
    return int(self.variables[0].shape[1])

  def gather_rows(self, ids):
    """float32 [n, dim] table rows of int ids [n], dequantised if stored so."""
    if self.quantization_mode == "float16":
      return table_quantization.gather_float16_rows(self.embeddings_float16,
                                                    ids)
    if self.quantization_mode == "int8":
      return table_quantization.gather_int8_rows(
          self.embeddings_int8, self.embedding_row_scales, ids)
    return tf.gather(self.embeddings, ids)

  def mean_rows(self, ids):
    """float32 [batch, dim]: the mean table row of each row of ragged `ids`.

    The float32 table takes one fused op (gather, sum and divide in one pass,
    no [ids, dim] intermediate; `tf.sparse.segment_mean`), which
    encodes about twice as fast as `ragged_mean_of_rows`; a quantised
    table's rows are dequantised after the gather, so it keeps that path.
    Empty rows give zeros in both.
    """
    if self.quantization_mode == "none":
      table, rows = self.embeddings, ids.flat_values
      if self.follow:
        # Sparse updates put a trained table in TensorFlow's copy-on-read
        # mode, where segment_mean's dense read copies all of it (110 MB for
        # Siamese CBOW's). Its gathered rows (a sparse read) are summed in
        # the same order, by the same op: the same bits.
        table = tf.gather(table, rows)
        rows = tf.range(tf.size(rows, out_type=rows.dtype))
      return tf.sparse.segment_mean(table, rows, ids.value_rowids(),
                                    num_segments=ids.nrows())
    return ragged_mean_of_rows(self.gather_rows(ids.flat_values), ids)

  def embed(self, sentences):
    """float32 [batch, dim] embeddings of tf.string [batch], in one shard."""
    ids = self.text_to_ids(sentences, max_bytes=self.max_bytes_per_sentence,
                           max_tokens=self.max_tokens_per_sentence)
    return self.mean_rows(ids)

  # Every branch is a tf.cond or a Python one: traced without AutoGraph's
  # conversion of the tokeniser and featurizer's code, which was 12 of the 16
  # s of a trainer's first call (a profile under load).
  @tf.function(input_signature=[tf.TensorSpec([None], tf.string)],
               autograph=False)
  def __call__(self, sentences):
    """float32 [batch, dim] embeddings of tf.string [batch] sentences.

    A batch of at least `SHARD_MIN_BATCH` sentences is cut into
    `NUM_SHARDS` consecutive parts that the graph encodes independently,
    so TensorFlow's inter-op threads run them on different cores (string
    ops use one core each). Row i of the output is sentence i either way.
    """
    sentences = input_limits.checked_batch(sentences)
    size = tf.size(sentences)

    def sharded():
      bounds = [size * i // NUM_SHARDS for i in range(NUM_SHARDS + 1)]
      return tf.concat([self.embed(sentences[start:end])
                        for start, end in zip(bounds[:-1], bounds[1:])],
                       axis=0)

    return tf.cond(size >= SHARD_MIN_BATCH, sharded,
                   lambda: self.embed(sentences))

  @tf.function(input_signature=[tf.TensorSpec([None], tf.string,
                                              name="sentences")],
               autograph=False)
  def serve(self, sentences):
    return {"embeddings": self(sentences)}
