"""The one tokeniser: used by every training pipeline and inside every export.

Only core `tf.strings` ops are used, so an exported graph that calls it loads in
stock TF Serving and in processes that never imported tensorflow_text.
"""

import tensorflow as tf

# Characters that are neither word characters nor whitespace; the same split as
# Python's `re.findall(r"\w+|[^\w\s]", text)` used by the project's baselines
# (`\w` spelled with Unicode classes, since RE2's `\w` is ASCII only).
_PUNCTUATION = r"[^\pL\pN\pM_\s\pZ]"
_UNICODE_SPACES = r"\pZ"


class Tokenizer:
  """Lower-cases and splits raw sentences into word and punctuation tokens.

  Tokens are maximal runs of Unicode letters, digits, marks and `_`, and single
  punctuation characters (dropped unless `keep_punctuation`). Invalid UTF-8 is
  replaced with U+FFFD first, so any byte string tokenises without error; so is
  U+0000 (NUL), which would otherwise cut the sentence short when lower-cased.

  Siamese CBOW's reference code drops punctuation tokens; the project's
  word2vec and Sent2Vec baselines keep them. Both are one flag away.

  Example:
    >>> Tokenizer().tokenize(tf.constant(["Don't panic!"]))
    <tf.RaggedTensor [[b'don', b't', b'panic']]>
  """

  def __init__(self, lowercase=True, keep_punctuation=False):
    self.lowercase = lowercase
    self.keep_punctuation = keep_punctuation

  def tokenize(self, sentences):
    """Splits sentences into tokens.

    Args:
      sentences: tf.string tensor of shape [batch].

    Returns:
      tf.RaggedTensor of tf.string, shape [batch, (tokens)].
    """
    text = tf.strings.unicode_transcode(
        sentences, input_encoding="UTF-8", output_encoding="UTF-8",
        errors="replace")
    # tf.strings.lower(encoding="utf-8") stops at a NUL and drops the rest.
    text = tf.strings.regex_replace(text, r"\x00", "\ufffd")
    if self.lowercase:
      text = tf.strings.lower(text, encoding="utf-8")
    if self.keep_punctuation:
      text = tf.strings.regex_replace(text, "(" + _PUNCTUATION + ")", r" \1 ")
    else:
      text = tf.strings.regex_replace(text, _PUNCTUATION, " ")
    # Unicode spaces (e.g. U+00A0) become ASCII spaces, which split() knows.
    text = tf.strings.regex_replace(text, _UNICODE_SPACES, " ")
    return tf.strings.split(text)

  def get_config(self):
    return {"lowercase": self.lowercase,
            "keep_punctuation": self.keep_punctuation}

  @classmethod
  def from_config(cls, config):
    return cls(**config)

