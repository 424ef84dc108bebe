"""The one tokeniser: used by every training pipeline and inside every export.

Only core `tf.strings` ops are used, so an exported graph that calls it loads in
stock TF Serving and in processes that never imported tensorflow_text.
"""

import tensorflow as tf

# Characters that are neither word characters nor whitespace; the same split as
# Python's `re.findall(r"\w+|[^\w\s]", text)` used by the project's baselines
# (`\w` spelled with Unicode classes, since RE2's `\w` is ASCII only).
_PUNCTUATION = r"[^\pL\pN\pM_\s\pZ]"
# The Unicode spaces (category Z) other than the ASCII space: replacing the
# ASCII space with itself would be a regex match at every word, which made
# this pass the slowest of the tokeniser (2.8 us of 9.2 per book sentence).
_NON_ASCII_SPACES = "[\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
# Punctuation or a Unicode space: everything that is not part of a token
# when punctuation is dropped (one pass instead of two).
_NOT_WORD = r"[^\pL\pN\pM_\s]"
# A whole string of valid UTF-8 with no NUL: it needs no transcoding and no
# NUL replacement. Written as explicit code point ranges: RE2 then rejects
# exactly what `unicode_transcode(errors="replace")` replaces (surrogates,
# overlong forms, code points above U+10FFFF; checked in the test), whereas
# RE2's `.` or `[^\x00]` accept some of them.
_CLEAN_UTF8 = "[\\x{1}-\\x{D7FF}\\x{E000}-\\x{10FFFF}]*"
# fastText's reader (`Dictionary::readWord`, `getLine`), which sent2vec's
# inference uses: a line ends at its first newline or at a "</s>" token; the
# bytes space, \t, \n, \v, \f, \r and NUL (made a space first) separate
# tokens.
_FASTTEXT_LINE_END = r"(?s)\n.*|(^|[ \t\r\v\f])</s>([ \t\r\v\f\n].*)?$"
SPLITS = ("zoo", "whitespace")


def truncate_utf8(sentences, max_bytes):
  """Cuts every string to at most `max_bytes` bytes, at a character boundary.

  A string of at most `max_bytes` bytes is returned unchanged. A longer one
  is cut to its first `max_bytes` bytes, minus the first bytes of a UTF-8
  character the cut would split (up to 3), so the result is a prefix of the
  string that ends where a character ends: valid UTF-8 stays valid, and the
  cut never makes a replacement character (invalid bytes before the cut
  are left for `Tokenizer.tokenize` to replace, as in any string). Work and
  memory are O(batch x max_bytes) whatever the input length. Core ops only.

  Args:
    sentences: tf.string [batch].
    max_bytes: int >= 1.

  Returns:
    tf.string [batch], each at most `max_bytes` bytes long.
  """
  sentences = tf.convert_to_tensor(sentences, tf.string)
  cut = tf.strings.substr(sentences, 0, max_bytes, unit="BYTE")
  length = tf.strings.length(cut, unit="BYTE")
  # The last 3 bytes of every cut string, left-padded with NULs (ASCII: never
  # part of a longer character), as uint8 [batch, 3].
  tail = tf.io.decode_raw(
      tf.strings.substr(tf.strings.join(["\0\0\0", cut]), length,
                        tf.ones_like(length) * 3, unit="BYTE"), tf.uint8)
  tail = tf.reshape(tf.cast(tail, tf.int32), [-1, 3])
  # Bytes a character needs, by its first byte (0: not a first byte; 0xF8
  # and above start nothing).
  needs = tf.where(tail >= 0xF8, 0, tf.where(tail >= 0xF0, 4, tf.where(
      tail >= 0xE0, 3, tf.where(tail >= 0xC0, 2, 0))))
  continuation = (tail >= 0x80) & (tail < 0xC0)
  # A character that starts at tail position i and is cut short: its first
  # byte needs more than the 3 - i bytes left, and only continuation bytes
  # follow it. At most one position qualifies.
  drop = tf.where(
      needs[:, 2] > 1, 1, tf.where(
          (needs[:, 1] > 2) & continuation[:, 2], 2, tf.where(
              (needs[:, 0] > 3) & continuation[:, 1] & continuation[:, 2], 3,
              0)))
  longer = tf.strings.length(sentences, unit="BYTE") > max_bytes
  keep = length - tf.where(longer, drop, 0)
  # pos is made from len so that both have the same static shape: with a
  # static batch of 1, `length` is [1] while `drop` is [?] (reshaped), and
  # Substr refuses [1] vs [?] when the graph is built.
  return tf.strings.substr(cut, tf.zeros_like(keep), keep, unit="BYTE")


def clean_utf8(sentences):
  """Invalid UTF-8 replaced with U+FFFD, and so is U+0000 (NUL)."""
  text = tf.strings.unicode_transcode(
      sentences, input_encoding="UTF-8", output_encoding="UTF-8",
      errors="replace")
  # tf.strings.lower(encoding="utf-8") stops at a NUL and drops the rest.
  return tf.strings.regex_replace(text, r"\x00", "\ufffd")


class Tokenizer:
  """Lower-cases and splits raw sentences into word and punctuation tokens.

  Tokens are maximal runs of Unicode letters, digits, marks and `_`, and single
  punctuation characters (dropped unless `keep_punctuation`). Invalid UTF-8 is
  replaced with U+FFFD first, so any byte string tokenises without error; so is
  U+0000 (NUL), which would otherwise cut the sentence short when lower-cased.

  Siamese CBOW's reference code drops punctuation tokens; the project's
  word2vec and Sent2Vec baselines keep them. Both are one flag away.

  `split="whitespace"` is fastText's and sent2vec's C++ reader instead, for
  text tokenised beforehand: tokens are the runs of bytes between spaces,
  \t, \n, \v, \f, \r and NUL, the sentence ends at its first newline or
  "</s>" token, and bytes are matched as they are (no UTF-8 repair;
  `keep_punctuation` has no effect; `lowercase` still applies).

  Example:
    >>> Tokenizer().tokenize(tf.constant(["Don't panic!"]))
    <tf.RaggedTensor [[b'don', b't', b'panic']]>
  """

  def __init__(self, lowercase=True, keep_punctuation=False, split="zoo"):
    if split not in SPLITS:
      raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    self.lowercase = lowercase
    self.keep_punctuation = keep_punctuation
    self.split = split

  def tokenize(self, sentences, max_bytes=None, max_tokens=None):
    """tf.string [batch] -> tf.string ragged [batch, (tokens)].

    Exports bound the work per sentence (`export.input_limits`): `max_bytes`
    cuts each sentence at a character boundary (`truncate_utf8`) before
    anything else reads it, `max_tokens` keeps its first tokens. None: no cap.
    """
    sentences = tf.convert_to_tensor(sentences, tf.string)
    if max_bytes:
      # Most batches hold no sentence over the cap: skip the cut's dozen ops.
      sentences = tf.cond(
          tf.reduce_any(tf.strings.length(sentences) > max_bytes),
          lambda: truncate_utf8(sentences, max_bytes),
          lambda: tf.identity(sentences))
    if self.split == "whitespace":
      return self._cap(self._split_whitespace(sentences), max_tokens)
    # Transcoding is the costliest pass (2.3 us a book sentence) and a no-op
    # on valid UTF-8 without NUL, which one cheap scan (0.4 us) recognises:
    # a batch runs it only if some sentence needs it.
    text = tf.cond(
        tf.reduce_all(tf.strings.regex_full_match(sentences, _CLEAN_UTF8)),
        lambda: tf.identity(sentences), lambda: clean_utf8(sentences))
    if self.lowercase:
      text = tf.strings.lower(text, encoding="utf-8")
    if self.keep_punctuation:
      # Unicode spaces (e.g. U+00A0) become ASCII spaces, which split()
      # knows; then every punctuation character is set apart (\0: the
      # match, which RE2 finds faster than a capture group).
      text = tf.strings.regex_replace(text, _NON_ASCII_SPACES, " ")
      text = tf.strings.regex_replace(text, _PUNCTUATION, r" \0 ")
    else:
      text = tf.strings.regex_replace(text, _NOT_WORD, " ")
    return self._cap(tf.strings.split(text), max_tokens)

  def _split_whitespace(self, sentences):
    text = tf.strings.regex_replace(sentences, r"\x00", " ")
    text = tf.strings.regex_replace(text, _FASTTEXT_LINE_END, "",
                                    replace_global=False)
    if self.lowercase:
      text = tf.strings.lower(text, encoding="utf-8")
    return tf.strings.split(text)  # At ASCII whitespace, as fastText.

  @staticmethod
  def _cap(tokens, max_tokens):
    if not max_tokens:
      return tokens
    # Slicing a ragged batch costs a fifth of the tokeniser: only a batch
    # with a sentence over the cap pays it.
    return tf.cond(tf.reduce_any(tokens.row_lengths() > max_tokens),
                   lambda: tokens[:, :max_tokens], lambda: tokens)

  def get_config(self):
    config = {"lowercase": self.lowercase,
              "keep_punctuation": self.keep_punctuation}
    if self.split != "zoo":  # Older configs have no "split".
      config["split"] = self.split
    return config

  @classmethod
  def from_config(cls, config):
    return cls(**config)

