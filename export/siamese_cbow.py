"""Exporter for Siamese CBOW: word-vector averaging over the trained table.

serving_default: `sentences` tf.string [batch] -> `embeddings` float32
[batch, dim]. `quantize` ("none", "float16" or "int8";
`export.table_quantization`) stores the word table compactly, for inference
only.
"""

import os

import tensorflow as tf

from sentzoo.common import model_dir as model_dir_lib
from sentzoo.export import averaging_encoder
from sentzoo.export import model_card
from sentzoo.inputs import text_to_ids as text_to_ids_lib
from sentzoo.inputs import tokenizer as tokenizer_lib
from sentzoo.inputs import vocabulary as vocabulary_lib
from sentzoo.models import model_specs
from sentzoo.models import siamese_cbow


def make_encoder(vocabulary, tokenizer, model, metadata, *, quantize="none",
                 live=False, lookup_table=None, **input_caps):
  """An `AveragingSentenceEncoder` with the model's current word vectors
  (`live`: the model's table itself, not a copy, so the encoder follows
  training without a second table in memory; `lookup_table`: the
  vocabulary's word -> id table of the training input, shared likewise).

  No training truncation (`max_length`): an exported encoder averages every
  known word of a sentence's first max_tokens_per_sentence tokens
  (`input_caps`, `export.input_limits`).
  """
  return averaging_encoder.AveragingSentenceEncoder(
      text_to_ids_lib.TextToIds(vocabulary, tokenizer, table=lookup_table),
      model.embedding.embeddings.value if live
      else model.embedding.embeddings.numpy(), metadata, quantize=quantize,
      follow=live, **input_caps)


def build_module(model_dir, config, *, quantize="none", **input_caps):
  """Restores the latest checkpoint of a Siamese CBOW model directory.

  `input_caps`: max_bytes_per_sentence and max_tokens_per_sentence
  (`export.input_limits`), recorded in the model card.
  """
  vocabulary = vocabulary_lib.Vocabulary.load(
      os.path.join(model_dir, model_dir_lib.VOCABULARY_FILE))
  tokenizer = tokenizer_lib.Tokenizer.from_config(config["tokenizer"])
  model = siamese_cbow.SiameseCBOW.from_config(config["model"])
  model(tf.zeros([1, 3, 1], tf.int32))
  checkpoint = model_dir_lib.restore_latest(model_dir, model=model)
  dim = model.embedding_dim
  card = model_card.base_model_card(
      model_specs.SIAMESE_CBOW, config, checkpoint,
      model_card.encoder_signature(dim))
  card.update({
      "embedding_dim": dim,
      "vocabulary_size": len(vocabulary),
      "tokenization": {**config.get("tokenizer", {}),
                       "description": "lower-case; tokens \\w+ and single "
                                      "punctuation characters; unknown words "
                                      "dropped; sentence = mean of word "
                                      "vectors (zero if none known)"},
  })
  return make_encoder(vocabulary, tokenizer, model, card, quantize=quantize,
                      **input_caps)
