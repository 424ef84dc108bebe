"""Exporter for the CHARAGRAM family: CHARAGRAM, PARAGRAM-PHRASE, charCNN, charLSTM.

A model directory written by `trainers/charagram.py` has model_config.json
with "model_type": "charagram", "variant" (one of VARIANTS), the Keras model
config, and the featuriser config; the vocabulary is `ngrams.txt` (n-gram or
character variants) or `vocab.txt` (PARAGRAM-PHRASE words). The export is a
`FeaturizedEncoder`, core ops only; serving_default: `sentences` tf.string
[batch] -> `embeddings` float32 [batch, dim].

`quantize` ("float16" or "int8"; `export.table_quantization`) applies to
PARAGRAM-PHRASE only, the one variant that averages the rows of a table: its
quantised export is an `AveragingSentenceEncoder` over the word table (the
same function: mean of the known words' vectors, linear, no bias), for
inference only. CHARAGRAM sums its n-gram rows and applies h(b + sum), and
charCNN / charLSTM run a network over small character tables; their exports
are not quantised (a UserError says so).
"""

import os

import tensorflow as tf

from sentzoo.common import errors
from sentzoo.common import model_dir as model_dir_lib
from sentzoo.export import averaging_encoder
from sentzoo.export import featurized_encoder
from sentzoo.export import model_card
from sentzoo.inputs import char_ngrams
from sentzoo.inputs import text_to_ids as text_to_ids_lib
from sentzoo.inputs import tokenizer as tokenizer_lib
from sentzoo.inputs import vocabulary as vocabulary_lib
from sentzoo.models import char_cnn
from sentzoo.models import char_lstm
from sentzoo.models import charagram
from sentzoo.models import model_specs
from sentzoo.models import paragram_phrase

VARIANTS = {
    "charagram": charagram.Charagram,
    "paragram_phrase": paragram_phrase.ParagramPhrase,
    "char_cnn": char_cnn.CharCNN,
    "char_lstm": char_lstm.CharLSTM,
}
DESCRIPTIONS = {
    "charagram": "h(b + sum of character n-gram vectors); text padded with a "
                 "space on each side, lower-cased, tokens joined by spaces",
    "paragram_phrase": "mean of word vectors (unknown words dropped)",
    "char_cnn": "character CNN, max-over-time pooling, dense layer",
    "char_lstm": "character LSTM, last hidden state",
}


def featurizer_config(featurizer):
  """What model_config.json stores to rebuild a featuriser."""
  if isinstance(featurizer, char_ngrams.CharNgramFeaturizer):
    return {"kind": "char_ngrams", **featurizer.get_config()}
  return {"kind": "words", "tokenizer": featurizer.tokenizer.get_config()}


def load_featurizer(model_dir, config):
  """Rebuilds the featuriser of `featurizer_config` from `model_dir`."""
  config = dict(config)
  kind = config.pop("kind")
  if kind == "words":
    vocabulary = vocabulary_lib.Vocabulary.load(
        os.path.join(model_dir, model_dir_lib.VOCABULARY_FILE))
    return text_to_ids_lib.TextToIds(
        vocabulary, tokenizer_lib.Tokenizer.from_config(config["tokenizer"]))
  vocabulary = None
  if not config.get("num_buckets"):
    vocabulary = vocabulary_lib.Vocabulary.load(
        char_ngrams.vocabulary_path(model_dir))
  return char_ngrams.CharNgramFeaturizer.from_config(config, vocabulary)


def build_model(variant, model_config):
  """The Keras model of `variant` from its config, with its weights built."""
  model = VARIANTS[variant].from_config(model_config)
  model(tf.ragged.constant([[1], []], dtype=tf.int32))
  return model


def build_module(model_dir, config, *, quantize="none", **input_caps):
  """Restores the latest checkpoint of a CHARAGRAM-family model directory.

  `input_caps`: max_bytes_per_sentence and max_tokens_per_sentence
  (`export.input_limits`; character n-grams come from the kept tokens).
  `quantize`: "none", or for paragram_phrase also "float16" / "int8" (see
  the module docstring).
  """
  variant = config["variant"]
  if quantize != "none" and variant != "paragram_phrase":
    raise errors.UserError(
        f"--quantize={quantize}: a {variant} export cannot be quantised "
        "(of the CHARAGRAM family only paragram_phrase averages the rows "
        "of a table)")
  featurizer = load_featurizer(model_dir, config["featurizer"])
  model = build_model(variant, config["model"])
  checkpoint = model_dir_lib.restore_latest(model_dir, model=model)
  dim = int(model.embedding_dim)
  card = model_card.base_model_card(
      model_specs.CHARAGRAM, config, checkpoint,
      model_card.encoder_signature(dim))
  card.update({
      "variant": variant,
      "embedding_dim": dim,
      "featurizer": {**config["featurizer"],
                     "description": DESCRIPTIONS[variant]},
      "num_feature_ids": int(getattr(featurizer, "num_ids",
                                     getattr(featurizer, "vocabulary_size",
                                             0))),
  })
  if quantize != "none":
    return averaging_encoder.AveragingSentenceEncoder(
        featurizer, model.word_embedding.embeddings.numpy(), card,
        quantize=quantize, **input_caps)
  return featurized_encoder.FeaturizedEncoder(featurizer, model, card,
                                              **input_caps)
