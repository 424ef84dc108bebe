"""Test helpers for the tokeniser: tricky sentences and reference tokenisers.

`python_reference` is the split the tokeniser promises (Python's regex);
`previous_tokenize` is the graph the tokeniser ran before its speed work
(issue 34), the reference that the faster graph must match token for token.
"""

import re

import numpy as np
import tensorflow as tf

from sentzoo.inputs import tokenizer as tokenizer_lib

# Sentences where a naive split goes wrong. Every one must tokenise exactly as
# Python's `re.findall(r"\w+|[^\w\s]", s.lower())`.
TRICKY = [
    "Café naïve résumé ÉCOLE Straße ΣΊΣΥΦΟΣ Ünïcödé",
    "I'm 25 years-old, aren't I?",
    "snake_case_word __init__ _ a_1",
    "em—dash–en dash -- hyphen-ated",
    "tabs\there\t\tand\nnewline\r\nend",
    "nbsp\u00a0here\u00a0\u00a0twice",
    "thin\u2009space ideographic\u3000space",
    "emoji 😀 party🎉! 👍🏽ok",
    "数字123abc 東京タワー",
    "price: $4.99 (approx.) 100% #1 @user",
    "«quotes» “curly” ‘single’ 'plain' \"double\"",
    "x²+y³=z ½ Ⅻ ٣٤",
    "...!!!???",
    "ALLCAPS MiXeD cAsE",
    "  leading and trailing spaces  ",
    "a",
]


def python_reference(sentence, keep_punctuation):
  tokens = re.findall(r"\w+|[^\w\s]", sentence.lower())
  if not keep_punctuation:
    tokens = [t for t in tokens if re.match(r"\w", t)]
  return tokens


def previous_tokenize(sentences, keep_punctuation, max_bytes=None,
                      max_tokens=None):
  """The tokeniser's ops before issue 34, kept as the reference of speed work.

  Transcode every sentence, NUL -> U+FFFD, lower-case, set punctuation apart
  with a capture group, Unicode spaces -> " ", split.
  """
  sentences = tf.convert_to_tensor(sentences, tf.string)
  if max_bytes:
    sentences = tokenizer_lib.truncate_utf8(sentences, max_bytes)
  text = tf.strings.unicode_transcode(sentences, "UTF-8", "UTF-8",
                                      errors="replace")
  text = tf.strings.regex_replace(text, r"\x00", "\ufffd")
  text = tf.strings.lower(text, encoding="utf-8")
  punctuation = r"[^\pL\pN\pM_\s\pZ]"
  if keep_punctuation:
    text = tf.strings.regex_replace(text, "(" + punctuation + ")", r" \1 ")
  else:
    text = tf.strings.regex_replace(text, punctuation, " ")
  text = tf.strings.regex_replace(text, r"\pZ", " ")
  tokens = tf.strings.split(text)
  if max_tokens:
    tokens = tokens[:, :max_tokens]
  return tokens


def random_byte_strings(seed, count=400):
  """Byte strings of valid, invalid and edge-case UTF-8 pieces."""
  rng = np.random.default_rng(seed)
  pieces = [b"a", b"Z", b" ", b"\t", b"\n", b"\x00", b"\x0b", b",", b"'",
            b"\xc3\xa9", b"\xc3\x89", b"\xe7\x8c\xab", b"\xf0\x9f\x98\x80",
            b"\xc2\xa0", b"\xe3\x80\x80", b"\xe2\x80\xa8", b"\xcc\x81",
            b"\xff", b"\x80", b"\xc0\xaf", b"\xe0\x80\x80", b"\xed\xa0\x80",
            b"\xf4\x90\x80\x80", b"\xf0\x80\x80\x80", b"\xc3", b"\xe2\x82",
            b"\xef\xbb\xbf", b"\xf4\x8f\xbf\xbf", b"\xed\x9f\xbf", b"\xee\x80\x80"]
  return [b"".join(rng.choice(pieces, size=rng.integers(0, 9)))
          for _ in range(count)]
