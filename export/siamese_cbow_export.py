"""Exporter for Siamese CBOW: word-vector averaging over the trained table.

`quantize` ("none", "float16" or "int8"; `export.table_quantization`)
stores the word table compactly: a quantised export is for inference only
(no trainable variables) and records the mode in its model card under
"quantization".
"""

import os

import tensorflow as tf

from sentzoo.common import model_dir as model_dir_lib
from sentzoo.export import averaging_encoder
from sentzoo.export import input_limits
from sentzoo.export import model_card
from sentzoo.inputs import text_to_ids as text_to_ids_lib
from sentzoo.inputs import tokenizer as tokenizer_lib
from sentzoo.inputs import vocabulary as vocabulary_lib
from sentzoo.models import model_specs
from sentzoo.models import siamese_cbow



def make_encoder(vocabulary, tokenizer, model, metadata, *,
                 max_bytes_per_sentence=(
                     input_limits.DEFAULT_MAX_BYTES_PER_SENTENCE),
                 max_tokens_per_sentence=(
                     input_limits.DEFAULT_MAX_TOKENS_PER_SENTENCE),
                 quantize="none", live=False):
  """An `AveragingSentenceEncoder` with the model's current word vectors
  (`live`: the model's table itself, not a copy, so the encoder follows
  training without a second table in memory).

  No training truncation (`max_length`): an exported encoder averages every
  known word of a sentence's first `max_tokens_per_sentence` tokens (of its
  first `max_bytes_per_sentence` bytes; `export.input_limits`). `quantize`:
  how the table is stored (`export.table_quantization.MODES`).
  """
  return averaging_encoder.AveragingSentenceEncoder(
      text_to_ids_lib.TextToIds(vocabulary, tokenizer),
      model.embedding.embeddings.value if live
      else model.embedding.embeddings.numpy(), metadata,
      max_bytes_per_sentence=max_bytes_per_sentence,
      max_tokens_per_sentence=max_tokens_per_sentence, quantize=quantize,
      follow=live)


def build_module(model_dir, config, *,
                 max_bytes_per_sentence=(
                     input_limits.DEFAULT_MAX_BYTES_PER_SENTENCE),
                 max_tokens_per_sentence=(
                     input_limits.DEFAULT_MAX_TOKENS_PER_SENTENCE),
                 quantize="none"):
  """Restores the latest checkpoint of a Siamese CBOW model directory.

  `max_bytes_per_sentence`, `max_tokens_per_sentence`: the export's caps on
  each input sentence (`export.input_limits`), recorded in the model card.
  `quantize`: how the table is stored (`export.table_quantization.MODES`;
  not "none": inference only).
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
      {"inputs": {"sentences": "tf.string [batch]"},
       "outputs": {"embeddings": f"float32 [batch, {dim}]"}})
  card.update({
      "embedding_dim": dim,
      "vocabulary_size": len(vocabulary),
      "tokenization": {**config.get("tokenizer", {}),
                       "description": "lower-case; tokens \\w+ and single "
                                      "punctuation characters; unknown words "
                                      "dropped; sentence = mean of word "
                                      "vectors (zero if none known)"},
  })
  return make_encoder(vocabulary, tokenizer, model, card,
                      max_bytes_per_sentence=max_bytes_per_sentence,
                      max_tokens_per_sentence=max_tokens_per_sentence,
                      quantize=quantize)
