"""Raw sentences -> average of word vectors: the in-memory and exported encoder.

The same object evaluates a model during training and becomes the root of its
SavedModel, so what is measured in training is what is served.
"""

import tensorflow as tf

from sentzoo.export import input_limits


def ragged_average(table, ids):
  """Mean of the rows of `table` named by each row of `ids`.

  Computed on the flat ids (no padding to the longest sentence), so a batch
  with one 10,000-token sentence costs its tokens, not batch x 10,000 rows.
  An empty row gives the zero vector, never NaN. Equals
  `MaskedAverage()(SharedEmbedding(...)(padded_ids), mask=padded_ids != 0)`.

  Args:
    table: float [vocabulary, dim] variable or tensor.
    ids: int tf.RaggedTensor [batch, (ids)].

  Returns:
    float [batch, dim].
  """
  rows = tf.gather(table, ids.flat_values)
  sums = tf.math.unsorted_segment_sum(rows, ids.value_rowids(),
                                      num_segments=ids.nrows())
  counts = tf.cast(ids.row_lengths(), sums.dtype)[:, None]
  return sums / tf.maximum(counts, 1.0)


class AveragingSentenceEncoder(tf.Module):
  """A sentence encoder that averages trainable word vectors.

  Follows the Reusable SavedModel API: callable, with `variables` and
  `trainable_variables`, so `hub.load`, `hub.KerasLayer(trainable=True)` and
  `keras.layers.TFSMLayer` all work on the export.

  Every sentence is cut to `max_bytes_per_sentence` bytes before it is
  tokenised and to `max_tokens_per_sentence` tokens after
  (`export.input_limits`), in `__call__` and so in `serving_default`: the
  memory of a call is linear in batch x the caps, whatever the input.

  Args:
    text_to_ids: `inputs.text_to_ids.TextToIds` (tokeniser + vocabulary), or
      any module with its call signature `(sentences, max_bytes,
      max_tokens) -> int ragged [batch, (ids)]`, e.g.
      `inputs.sent2vec_featurizer.Sent2VecFeaturizer`.
    embeddings: float [vocabulary_size, dim] initial word vectors (row 0,
      padding, is never read).
    metadata: JSON-able dict stored with the export (model card); the caps
      are added to it as "input_limits".
    max_bytes_per_sentence, max_tokens_per_sentence: the caps (ints >= 1).
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
                   input_limits.DEFAULT_MAX_TOKENS_PER_SENTENCE)):
    super().__init__(name=name)
    self.max_bytes_per_sentence, self.max_tokens_per_sentence = (
        input_limits.check(max_bytes_per_sentence, max_tokens_per_sentence))
    self.text_to_ids = text_to_ids
    self.embeddings = tf.Variable(embeddings, dtype=tf.float32,
                                  trainable=True, name="embeddings")
    self.variables = [self.embeddings]
    self.trainable_variables = [self.embeddings]
    self.regularization_losses = []
    self.metadata = dict(metadata or {})
    self.metadata["input_limits"] = input_limits.model_card_entry(
        self.max_bytes_per_sentence, self.max_tokens_per_sentence)

  @property
  def dim(self):
    return int(self.embeddings.shape[1])

  @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
  def __call__(self, sentences):
    """float32 [batch, dim] embeddings of tf.string [batch] sentences."""
    ids = self.text_to_ids(sentences, max_bytes=self.max_bytes_per_sentence,
                           max_tokens=self.max_tokens_per_sentence)
    return ragged_average(self.embeddings, ids)

  @tf.function(input_signature=[tf.TensorSpec([None], tf.string,
                                              name="sentences")])
  def serve(self, sentences):
    return {"embeddings": self(sentences)}
