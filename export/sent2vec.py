"""Exporter for Sent2Vec: mean of unigram and hashed n-gram source vectors.

serving_default: `sentences` tf.string [batch] -> `embeddings` float32
[batch, dim]. The graph runs `inputs.sent2vec_featurizer.Sent2VecFeaturizer`
(the tokeniser, vocabulary lookup and n-gram hash of training; core ops
only) and averages the source table's rows (`export.averaging_encoder`).
`quantize` ("none", "float16" or "int8"; `export.table_quantization`)
stores the source table compactly, for inference only.
"""

import os

import tensorflow as tf

from sentzoo.common import errors
from sentzoo.common import model_dir as model_dir_lib
from sentzoo.export import averaging_encoder
from sentzoo.export import model_card
from sentzoo.inputs import sent2vec_featurizer
from sentzoo.inputs import tokenizer as tokenizer_lib
from sentzoo.inputs import vocabulary as vocabulary_lib
from sentzoo.models import model_specs


def make_featurizer(vocabulary, config):
  """The featurizer a model directory's config describes."""
  return sent2vec_featurizer.Sent2VecFeaturizer(
      vocabulary, tokenizer_lib.Tokenizer.from_config(config["tokenizer"]),
      word_ngrams=config["featurizer"]["word_ngrams"],
      num_buckets=config["model"]["num_buckets"])


def build_module(model_dir, config, *, quantize="none", **input_caps):
  """Restores the latest checkpoint of a Sent2Vec model directory.

  Only the source table is read (straight from the checkpoint), so a
  5.9 GB uni+bi table is held twice at most while the module is built.
  `input_caps`: max_bytes_per_sentence and max_tokens_per_sentence
  (`export.input_limits`; n-grams are formed from the kept tokens).
  """
  vocabulary = vocabulary_lib.Vocabulary.load(
      os.path.join(model_dir, model_dir_lib.VOCABULARY_FILE))
  checkpoint = tf.train.latest_checkpoint(
      os.path.join(model_dir, model_dir_lib.CHECKPOINT_SUBDIR))
  if checkpoint is None:
    raise errors.UserError(f"no checkpoint in {model_dir!r}: train first")
  reader = tf.train.load_checkpoint(checkpoint)
  names = [n for n in reader.get_variable_to_shape_map()
           if n.startswith("model/") and "source_embeddings" in n
           and "OPTIMIZER" not in n]
  if len(names) != 1:
    raise errors.UserError(f"{checkpoint!r} is not a Sent2Vec checkpoint")
  table = reader.get_tensor(names[0])
  featurizer = make_featurizer(vocabulary, config)
  return _module(config, featurizer, table, checkpoint, len(vocabulary),
                 quantize, input_caps)


def module_from_model(config, model, featurizer, step, *, quantize="none",
                      **input_caps):
  """The same module from a trained model in memory (the trainer's export)."""
  return _module(config, featurizer, model.source_embeddings.value,
                 f"ckpt-{step}", featurizer.vocabulary_size - 1, quantize,
                 input_caps)


def _module(config, featurizer, table, checkpoint, vocabulary_size, quantize,
            input_caps):
  dim = int(table.shape[1])
  card = model_card.base_model_card(
      model_specs.SENT2VEC, config, checkpoint,
      model_card.encoder_signature(dim))
  card.update({
      "embedding_dim": dim,
      "vocabulary_size": vocabulary_size,
      "word_ngrams": featurizer.word_ngrams,
      "num_buckets": featurizer.num_buckets,
      "tokenization": {**config.get("tokenizer", {}),
                       "description": "lower-case; tokens \\w+ and single "
                                      "punctuation characters; unknown words "
                                      "dropped before n-grams are formed; "
                                      "n-gram id = V + 1 + hash mod buckets; "
                                      "sentence = mean of the source vectors "
                                      "of its unigrams and n-grams (zero if "
                                      "none)"},
  })
  return averaging_encoder.AveragingSentenceEncoder(
      featurizer, table, card, quantize=quantize, **input_caps)
