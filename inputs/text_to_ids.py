"""Raw sentences -> word ids: the mapping shared by training pipelines and exports."""

import tensorflow as tf

from sentzoo.inputs import ragged_rows
from sentzoo.inputs import tokenizer as tokenizer_lib
from sentzoo.inputs import vocabulary as vocabulary_lib


class TextToIds(tf.Module):
  """Tokenises, looks words up, drops unknown words and optionally truncates.

  The lookup table is a tracked resource, so a `tf.Module` that holds this
  object exports it inside its SavedModel (core ops only).

  Example:
    >>> to_ids = TextToIds(Vocabulary(["a", "cat"], [9, 5]), Tokenizer())
    >>> to_ids(tf.constant(["A dog, a cat.", ""]))
    <tf.RaggedTensor [[1, 1, 2], []]>
  """

  def __init__(self, vocabulary, tokenizer=None, max_length=None, name=None,
               table=None):
    """`table`: `vocabulary`'s lookup table to share, e.g. another
    `TextToIds`' (for 92k words, 7 MB of keys, values and hash map held
    once); by default, a new one."""
    super().__init__(name=name)
    self.tokenizer = tokenizer or tokenizer_lib.Tokenizer()
    self.vocabulary_size = vocabulary.size_with_padding
    self.max_length = max_length
    self.table = table if table is not None else vocabulary.lookup_table()

  def __call__(self, sentences, max_bytes=None, max_tokens=None):
    """tf.string [batch] -> int32 ragged [batch, (ids)] of ids in
    [1, vocabulary_size): unknown words left out (an all-unknown sentence has
    no ids), at most `max_length` ids per sentence when it is set.
    `max_bytes`, `max_tokens`: `Tokenizer.tokenize`'s caps.
    """
    tokens = self.tokenizer.tokenize(sentences, max_bytes=max_bytes,
                                     max_tokens=max_tokens)
    ids = tokens.with_flat_values(self.table.lookup(tokens.flat_values))
    ids = ragged_rows.keep_values(
        ids, ids.flat_values > vocabulary_lib.PADDING_ID)
    if self.max_length:
      ids = ids[:, :self.max_length]
    return tf.cast(ids, tf.int32)
