"""Caps on one sentence of a request: bytes first, then tokens.

Every exported encoder cuts each input string to `max_bytes_per_sentence`
bytes (at a UTF-8 character boundary, `inputs.tokenizer.truncate_utf8`)
before it tokenises, and keeps at most `max_tokens_per_sentence` tokens of
what is left (the word n-grams or character n-grams a model derives are
those of the kept tokens). Longer input is truncated, never rejected, so a
request never fails for being long, and the memory of a request is linear
in its capped size: at most batch x max_bytes_per_sentence bytes of text
and batch x max_tokens_per_sentence tokens reach the model.

Without the caps, memory grows with the input (the [tokens, dim] rows an
encoder averages); docs/design_measurements.md has the numbers.

Defaults, and why:
* 1,024 tokens. Sentence encoders average, or run over, a sentence's tokens;
  STS/SICK sentences are under 100 tokens and a book-corpus line rarely
  passes a few hundred. fastText, on which Sent2Vec's reference code is
  built, reads at most 1,024 tokens of a line (MAX_LINE_SIZE) too. The cap
  bounds the model's work per sentence at 1,024 rows (Sent2Vec: plus their
  n-grams).
* 64 KiB. It bounds the tokeniser's work (its regular expressions and its
  split run before any token can be counted) and is generous enough that
  the token cap, not the byte cap, is what cuts real text: 1,024 tokens of
  English take about 6 KB, and even 1,024 tokens of 16 four-byte
  characters each fit. A 64 KiB sentence costs the tokeniser a few MB.

Both are set when a model is exported (keyword arguments of every
exporter's `build_module`) and recorded in the model card under
"input_limits".
"""

import tensorflow as tf

from sentzoo.common import errors

DEFAULT_MAX_BYTES_PER_SENTENCE = 64 * 1024
DEFAULT_MAX_TOKENS_PER_SENTENCE = 1024
# tf.strings.substr and the byte lengths it is compared with are int32.
_LARGEST = 2**31 - 1


def check(max_bytes_per_sentence, max_tokens_per_sentence):
  """The two caps as ints, or a UserError naming the bad one.

  Returns:
    (max_bytes_per_sentence, max_tokens_per_sentence), ints in
    [1, 2^31 - 1].
  """
  caps = []
  for name, value in (("max_bytes_per_sentence", max_bytes_per_sentence),
                      ("max_tokens_per_sentence", max_tokens_per_sentence)):
    if isinstance(value, bool) or not isinstance(value, int) or not (
        1 <= value <= _LARGEST):
      raise errors.UserError(
          f"{name} must be an integer in [1, {_LARGEST}], got {value!r}")
    caps.append(int(value))
  return tuple(caps)


def model_card_entry(max_bytes_per_sentence, max_tokens_per_sentence):
  """The model card's "input_limits" field."""
  return {
      "max_bytes_per_sentence": int(max_bytes_per_sentence),
      "max_tokens_per_sentence": int(max_tokens_per_sentence),
      "description": "each input string is cut to max_bytes_per_sentence "
                     "bytes (at a UTF-8 character boundary) before "
                     "tokenisation, then to its first "
                     "max_tokens_per_sentence tokens; longer input is "
                     "truncated, never rejected",
  }


def checked_batch(sentences):
  """`sentences`, after a check that it is 1-D, with a message that says so.

  A signature's [None] shape is not enforced when a client (TF Serving, a
  loaded signature) feeds a scalar or a 2-D tensor; the string ops then fail
  deep inside with "must be broadcastable". The rank is computed from the
  shape's values (sum of min(d, 0) + 1 over dims), which graph optimisation
  cannot fold to the traced rank as it folds `tf.rank`.
  """
  shape = tf.shape(sentences)
  rank = tf.reduce_sum(tf.minimum(shape, 0) + 1)
  check = tf.debugging.Assert(
      tf.equal(rank, 1),
      ["sentences must be a 1-D tf.string tensor [batch] (one sentence: "
       "[sentence]); got shape", shape])
  with tf.control_dependencies([check]):
    return tf.identity(sentences)
