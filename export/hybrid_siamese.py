r"""Exporter for the hybrid siamese matcher: the pair classifier, or the encoder.

`python -m export.export_model --model_dir=M --export_dir=E` (the shared
path) exports the pair classifier: `serving_default` takes `sentences_a` and
`sentences_b` (tf.string [batch]) and returns `probability` (float32
[batch], the MLP's match probability), `distance` (float32 [batch], the
Euclidean distance of the encodings) and `match` (bool [batch], the trained
mode's decision). The module is also callable as a sentence encoder
(`module(sentences) -> float32 [batch, dim]`) and has an `encode`
tf.function.

The encoder alone, with `serving_default`: `sentences` -> `embeddings`:

  python -m export.hybrid_siamese --model_dir=M --export_dir=E \
      --encoder_only

Weights: the best dev epoch (`<model_dir>/best/`) when the trainer wrote
one, else the newest checkpoint. Tokenisation is `inputs.text_to_ids` (core
ops only) with the training truncation (`max_length`), after the export's
caps on each input sentence (`--max_bytes_per_sentence`,
`--max_tokens_per_sentence`; `export.input_limits`).
"""

import os

from absl import flags
import tensorflow as tf

from sentzoo.common import cli
from sentzoo.common import errors
from sentzoo.common import model_dir as model_dir_lib
from sentzoo.export import input_limits
from sentzoo.export import model_card
from sentzoo.export import saved_model_writer
from sentzoo.inputs import text_to_ids as text_to_ids_lib
from sentzoo.inputs import tokenizer as tokenizer_lib
from sentzoo.inputs import vocabulary as vocabulary_lib
from sentzoo.models import hybrid_siamese
from sentzoo.models import model_specs

BEST_SUBDIR = "best"


class HybridSiameseEncoder(tf.Module):
  """Raw sentences -> encodings f(s) of a trained hybrid siamese model.

  Reusable SavedModel API: callable, `variables` / `trainable_variables` as
  plain lists. Empty and all-unknown sentences encode to the zero vector.
  Each sentence is cut to `max_bytes_per_sentence` bytes and
  `max_tokens_per_sentence` tokens before the lookup (`export.input_limits`;
  recorded in `metadata["input_limits"]`), then to `max_length` known words.
  """

  variables = None
  trainable_variables = None

  def __init__(self, text_to_ids, model, metadata=None, name=None, *,
               max_bytes_per_sentence=(
                   input_limits.DEFAULT_MAX_BYTES_PER_SENTENCE),
               max_tokens_per_sentence=(
                   input_limits.DEFAULT_MAX_TOKENS_PER_SENTENCE)):
    super().__init__(name=name)
    self.max_bytes_per_sentence, self.max_tokens_per_sentence = (
        input_limits.check(max_bytes_per_sentence, max_tokens_per_sentence))
    self.text_to_ids = text_to_ids
    self.model = model
    self.max_length = int(text_to_ids.max_length)
    self.variables = [w.value for w in model.weights]
    self.trainable_variables = [w.value for w in model.trainable_weights]
    self.regularization_losses = []
    self.metadata = dict(metadata or {})
    self.metadata["input_limits"] = input_limits.model_card_entry(
        self.max_bytes_per_sentence, self.max_tokens_per_sentence)

  def ids(self, sentences):
    sentences = input_limits.checked_batch(sentences)
    ids = self.text_to_ids(sentences, max_bytes=self.max_bytes_per_sentence,
                           max_tokens=self.max_tokens_per_sentence)
    return hybrid_siamese.pad_ids(ids, self.max_length, pad_multiple=1)

  @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
  def __call__(self, sentences):
    """float32 [batch, dim] encodings of tf.string [batch] sentences."""
    return self.model.encode(self.ids(sentences))

  @tf.function(input_signature=[tf.TensorSpec([None], tf.string,
                                              name="sentences")])
  def serve(self, sentences):
    return {"embeddings": self(sentences)}


class HybridSiamesePairClassifier(HybridSiameseEncoder):
  """Two batches of raw sentences -> match probability, distance, decision.

  In contrastive mode the MLP was not trained: `match` is distance <
  threshold and `probability` is that decision as 0.0/1.0.
  """

  def __init__(self, text_to_ids, model, mode, threshold, metadata=None,
               name=None, **limits):
    super().__init__(text_to_ids, model, metadata, name, **limits)
    if mode not in hybrid_siamese.MODES:
      raise ValueError(f"unknown mode {mode!r}")
    self.mode = mode
    self.threshold = float(threshold)

  @tf.function(input_signature=[tf.TensorSpec([None], tf.string),
                                tf.TensorSpec([None], tf.string)])
  def match(self, sentences_a, sentences_b):
    outputs = self.model((self.ids(sentences_a), self.ids(sentences_b)))
    match = hybrid_siamese.predict_match(outputs, self.mode, self.threshold)
    probability = outputs["probability"]
    if self.mode == "contrastive":
      probability = tf.cast(match, tf.float32)
    return {"probability": probability, "distance": outputs["distance"],
            "match": match}

  @tf.function(input_signature=[
      tf.TensorSpec([None], tf.string, name="sentences_a"),
      tf.TensorSpec([None], tf.string, name="sentences_b")])
  def serve(self, sentences_a, sentences_b):
    return self.match(sentences_a, sentences_b)

  @tf.function(input_signature=[tf.TensorSpec([None], tf.string,
                                              name="sentences")])
  def encode(self, sentences):
    return {"embeddings": self(sentences)}


def restore_model(model_dir, config):
  """The model of `model_dir` with its best-dev (else newest) weights."""
  model = hybrid_siamese.HybridSiamese.from_config(config["model"])
  model.build()
  # The trainer writes the best epoch with `Checkpoint.write` (no
  # `checkpoint` state file, so `tf.train.latest_checkpoint` cannot find it).
  best = os.path.join(model_dir, BEST_SUBDIR, "ckpt")
  if os.path.exists(best + ".index"):
    tf.train.Checkpoint(model=model).read(best).expect_partial()
    return model, best
  return model, model_dir_lib.restore_latest(model_dir, model=model)


def build_module(model_dir, config, encoder_only=False, *, quantize="none",
                 **input_caps):
  """The pair classifier (or, with `encoder_only`, the encoder) module.

  `input_caps`: max_bytes_per_sentence and max_tokens_per_sentence
  (`export.input_limits`). `quantize`: only "none" (an RNN/CNN encoder does
  not average the rows of one table).
  """
  if quantize != "none":
    raise errors.UserError(
        f"--quantize={quantize}: a hybrid_siamese export cannot be "
        "quantised (only the averaging models can: sent2vec, siamese_cbow, "
        "charagram's paragram_phrase)")
  vocabulary = vocabulary_lib.Vocabulary.load(
      os.path.join(model_dir, model_dir_lib.VOCABULARY_FILE))
  tokenizer = tokenizer_lib.Tokenizer.from_config(config["tokenizer"])
  text_to_ids = text_to_ids_lib.TextToIds(vocabulary, tokenizer,
                                          max_length=config["max_length"])
  model, checkpoint = restore_model(model_dir, config)
  dim = model.encoding_dim
  if encoder_only:
    signature = model_card.encoder_signature(dim)
  else:
    signature = {"inputs": {"sentences_a": "tf.string [batch]",
                            "sentences_b": "tf.string [batch]"},
                 "outputs": {"probability": "float32 [batch]",
                             "distance": "float32 [batch]",
                             "match": "bool [batch]"}}
  card = model_card.base_model_card(model_specs.HYBRID_SIAMESE, config,
                                       checkpoint, signature)
  card.update({
      "encoder": model.encoder_name, "encoding_dim": dim,
      "mode": config["mode"], "threshold": config["threshold"],
      "max_length": config["max_length"],
      "vocabulary_size": len(vocabulary),
      "parameters_without_embeddings":
          model.count_params_without_embeddings(),
      "tokenization": {**config.get("tokenizer", {}),
                       "description": "lower-case; \\w+ tokens (punctuation "
                                      "per keep_punctuation); unknown words "
                                      "dropped; truncated to max_length"},
      "callable": f"module(sentences) -> float32 [batch, {dim}] encodings",
  })
  if encoder_only:
    return HybridSiameseEncoder(text_to_ids, model, card, **input_caps)
  return HybridSiamesePairClassifier(text_to_ids, model, config["mode"],
                                     config["threshold"], card, **input_caps)


FLAGS = flags.FLAGS


def main(argv):
  del argv
  config = model_dir_lib.read_model_config(FLAGS.model_dir)
  if config.get("model_type") != "hybrid_siamese":
    raise errors.UserError(f"{FLAGS.model_dir!r} is not a hybrid siamese "
                           "model directory")
  module = build_module(
      FLAGS.model_dir, config, FLAGS.encoder_only,
      max_bytes_per_sentence=FLAGS.max_bytes_per_sentence,
      max_tokens_per_sentence=FLAGS.max_tokens_per_sentence)
  print(f"exported to {saved_model_writer.write(module, FLAGS.export_dir)}")


if __name__ == "__main__":
  flags.DEFINE_string("model_dir", None, "A trained model directory.",
                      required=True)
  flags.DEFINE_string("export_dir", None, "Export base folder.",
                      required=True)
  flags.DEFINE_bool("encoder_only", False, "Export the encoder alone "
                    "(sentences -> embeddings) instead of the pair "
                    "classifier.")
  flags.DEFINE_integer(
      "max_bytes_per_sentence", input_limits.DEFAULT_MAX_BYTES_PER_SENTENCE,
      "Each input string is cut to this many bytes before tokenisation.",
      lower_bound=1, upper_bound=2**31 - 1)
  flags.DEFINE_integer(
      "max_tokens_per_sentence", input_limits.DEFAULT_MAX_TOKENS_PER_SENTENCE,
      "At most this many tokens of each input string are used.",
      lower_bound=1, upper_bound=2**31 - 1)
  cli.run(main)
