"""Raw strings -> featuriser -> Keras model -> embeddings: the CHARAGRAM family's encoder.

The same object evaluates a model during training (it wraps the live model,
so it always sees the current weights) and becomes the root of the
SavedModel, so training-time and serving-time featurisation are one code
path (`inputs.char_ngrams.CharNgramFeaturizer` or `inputs.text_to_ids`).
"""

import tensorflow as tf

from sentzoo.export import input_limits


class _Untracked:
  """Holds an object out of sight of SavedModel tracking.

  A Keras 3 model tracked by a tf.Module makes `tf.saved_model.save` trace
  the model's own default signature with float inputs, which fails for id
  inputs; the encoder's functions capture the model's variables, which are
  saved through the `variables` list instead.
  """

  def __init__(self, value):
    self.value = value


class FeaturizedEncoder(tf.Module):
  """A sentence encoder: `featurizer(sentences)` -> ragged ids -> `model`.

  Follows the Reusable SavedModel API: callable on tf.string [batch], with
  `variables` and `trainable_variables` as plain lists (see
  export/averaging_encoder.py), a `serve` function for `serving_default`,
  and a `metadata` dict (the model card).

  Every sentence is cut to the caps (`export.input_limits`; n-grams come
  from the kept tokens) in `__call__`, and so in `serving_default`.

  Args:
    featurizer: a tf.Module mapping (tf.string [batch], max_bytes=,
      max_tokens=) to an int tf.RaggedTensor [batch, (ids)] with core ops
      only (`inputs.char_ngrams.CharNgramFeaturizer`,
      `inputs.text_to_ids.TextToIds`).
    model: a built Keras model mapping those ids to float [batch, dim].
    metadata: JSON-able model card; the caps are added as "input_limits".
    max_bytes_per_sentence, max_tokens_per_sentence: the caps (ints >= 1).
  """

  variables = None
  trainable_variables = None

  def __init__(self, featurizer, model, metadata=None, name=None, *,
               max_bytes_per_sentence=(
                   input_limits.DEFAULT_MAX_BYTES_PER_SENTENCE),
               max_tokens_per_sentence=(
                   input_limits.DEFAULT_MAX_TOKENS_PER_SENTENCE)):
    super().__init__(name=name)
    self.max_bytes_per_sentence, self.max_tokens_per_sentence = (
        input_limits.check(max_bytes_per_sentence, max_tokens_per_sentence))
    if not model.weights:
      raise ValueError("build the model (call it once) before wrapping it: "
                       "the encoder lists its variables")
    self.featurizer = featurizer
    self._model = _Untracked(model)
    self.variables = [v.value if hasattr(v, "value") else v
                      for v in model.weights]
    self.trainable_variables = [v.value if hasattr(v, "value") else v
                                for v in model.trainable_weights]
    self.regularization_losses = []
    self.metadata = dict(metadata or {})
    self.metadata["input_limits"] = input_limits.model_card_entry(
        self.max_bytes_per_sentence, self.max_tokens_per_sentence)

  @property
  def model(self):
    """The wrapped Keras model (absent from a loaded SavedModel)."""
    return self._model.value

  @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
  def __call__(self, sentences):
    """float32 [batch, dim] embeddings of tf.string [batch] sentences."""
    sentences = input_limits.checked_batch(sentences)
    ids = self.featurizer(sentences, max_bytes=self.max_bytes_per_sentence,
                          max_tokens=self.max_tokens_per_sentence)
    return tf.cast(self.model(ids, training=False), tf.float32)

  @tf.function(input_signature=[tf.TensorSpec([None], tf.string,
                                              name="sentences")])
  def serve(self, sentences):
    return {"embeddings": self(sentences)}
