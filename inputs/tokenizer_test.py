"""Tests for inputs.tokenizer."""


import numpy as np
import tensorflow as tf

from sentzoo.inputs import tokenizer as tokenizer_lib
from sentzoo.tests import tokenizer_fixtures

def _decode(ragged):
  return [[t.decode("utf-8") for t in row] for row in ragged.to_list()]


class TokenizerTest(tf.test.TestCase):

  def test_matches_python_regex_with_punctuation(self):
    tokens = tokenizer_lib.Tokenizer(keep_punctuation=True).tokenize(
        tf.constant(tokenizer_fixtures.TRICKY))
    for sentence, got in zip(tokenizer_fixtures.TRICKY, _decode(tokens)):
      self.assertEqual(got, tokenizer_fixtures.python_reference(sentence, True), repr(sentence))

  def test_matches_python_regex_without_punctuation(self):
    tokens = tokenizer_lib.Tokenizer(keep_punctuation=False).tokenize(
        tf.constant(tokenizer_fixtures.TRICKY))
    for sentence, got in zip(tokenizer_fixtures.TRICKY, _decode(tokens)):
      self.assertEqual(got, tokenizer_fixtures.python_reference(sentence, False), repr(sentence))

  def test_default_drops_punctuation_and_lowercases(self):
    tokens = tokenizer_lib.Tokenizer().tokenize(tf.constant(["Don't panic!"]))
    self.assertEqual(_decode(tokens), [["don", "t", "panic"]])

  def test_lowercase_false_keeps_case(self):
    tokens = tokenizer_lib.Tokenizer(lowercase=False).tokenize(
        tf.constant(["Hello WORLD"]))
    self.assertEqual(_decode(tokens), [["Hello", "WORLD"]])

  def test_combining_marks_stay_in_the_word(self):
    # Documented difference from Python's `\w` (which excludes marks): a
    # decomposed accent does not split a word.
    tokens = tokenizer_lib.Tokenizer(keep_punctuation=True).tokenize(
        tf.constant(["cafe\u0301 ok"]))
    self.assertEqual(_decode(tokens), [["cafe\u0301", "ok"]])

  def test_nul_character_does_not_truncate_the_sentence(self):
    # tf.strings.lower stops at a NUL; the tokenizer replaces it first.
    sentences = tf.constant(["Alpha\x00Beta gamma"])
    tokens = tokenizer_lib.Tokenizer().tokenize(sentences)
    self.assertEqual(_decode(tokens), [["alpha", "beta", "gamma"]])
    tokens = tokenizer_lib.Tokenizer(keep_punctuation=True).tokenize(sentences)
    self.assertEqual(_decode(tokens), [["alpha", "\ufffd", "beta", "gamma"]])

  def test_invalid_utf8_does_not_raise(self):
    sentences = tf.constant([b"ab\xff\xfecd", b"\xc3", b"ok \x80 x",
                             b"\xed\xa0\x80 surrogate"])
    tokens = tokenizer_lib.Tokenizer().tokenize(sentences)
    self.assertEqual(_decode(tokens),
                     [["ab", "cd"], [], ["ok", "x"], ["surrogate"]])
    # With punctuation kept, each bad sequence becomes U+FFFD.
    tokens = tokenizer_lib.Tokenizer(keep_punctuation=True).tokenize(
        tf.constant([b"ab\xffcd"]))
    self.assertEqual(_decode(tokens), [["ab", "\ufffd", "cd"]])

  def test_empty_and_whitespace_only_give_no_tokens(self):
    sentences = ["", " ", "\t\n ", "\u00a0\u3000", "   \r\n"]
    for keep in (False, True):
      tokens = tokenizer_lib.Tokenizer(keep_punctuation=keep).tokenize(
          tf.constant(sentences))
      self.assertAllEqual(tokens.row_lengths(), [0] * len(sentences))
    tokens = tokenizer_lib.Tokenizer().tokenize(tf.constant(["?!.,;"]))
    self.assertAllEqual(tokens.row_lengths(), [0])

  def test_empty_batch(self):
    tokens = tokenizer_lib.Tokenizer().tokenize(tf.constant([], tf.string))
    self.assertEqual(int(tokens.nrows()), 0)

  def test_long_sentence(self):
    words = [f"w{i % 97}" for i in range(10_000)]
    sentence = " , ".join(words)
    tokens = tokenizer_lib.Tokenizer().tokenize(tf.constant([sentence, "x"]))
    self.assertAllEqual(tokens.row_lengths(), [10_000, 1])
    self.assertEqual(_decode(tokens)[0], words)
    tokens = tokenizer_lib.Tokenizer(keep_punctuation=True).tokenize(
        tf.constant([sentence]))
    self.assertEqual(int(tokens.row_lengths()[0]), 2 * 10_000 - 1)

  def test_truncate_utf8_never_splits_a_character(self):
    rng = np.random.default_rng(0)
    alphabet = ["a", " ", "é", "ß", "猫", "€", "😀", "𝄞", "\u0301", "\x00"]
    texts = ["".join(rng.choice(alphabet, size=rng.integers(0, 12)))
             for _ in range(200)]
    data = [t.encode("utf-8") for t in texts]
    for max_bytes in range(1, 14):
      got = tokenizer_lib.truncate_utf8(tf.constant(data), max_bytes).numpy()
      for original, cut in zip(data, got):
        # The longest prefix of at most max_bytes bytes that is whole
        # characters; valid UTF-8, never a replacement character.
        expected = original[:max_bytes].decode("utf-8", "ignore")
        self.assertEqual(cut.decode("utf-8"), expected, (original, max_bytes))

  def test_truncate_utf8_short_invalid_and_empty(self):
    data = [b"", b"abc", b"\xff\xfe\xfd\xfc\xfb", b"ab\xc3", b"a\x80\x80\x80b",
            b"\xe7\x8c"]
    got = tokenizer_lib.truncate_utf8(tf.constant(data), 3).numpy().tolist()
    # Strings within the cap are unchanged, invalid bytes and all; a cut
    # drops only the start of a character it splits.
    self.assertEqual(got, [b"", b"abc", b"\xff\xfe\xfd", b"ab\xc3",
                           b"a\x80\x80", b"\xe7\x8c"])
    self.assertEqual(tokenizer_lib.truncate_utf8(
        tf.constant([b"ab\xe7\x8c\xab"]), 4).numpy().tolist(), [b"ab"])
    self.assertEqual(tokenizer_lib.truncate_utf8(
        tf.constant([b"\xf0\x9f\x98\x80x"]), 3).numpy().tolist(), [b""])
    empty = tokenizer_lib.truncate_utf8(tf.constant([], tf.string), 5)
    self.assertEqual(empty.shape, (0,))

  def test_tokenize_caps_bytes_then_tokens(self):
    tokenizer = tokenizer_lib.Tokenizer()
    sentences = tf.constant(["one two three four", "Café au lait", ""])
    self.assertEqual(
        _decode(tokenizer.tokenize(sentences, max_tokens=2)),
        [["one", "two"], ["café", "au"], []])
    # "Caf" + the first byte of "é": the split character is dropped.
    self.assertEqual(
        _decode(tokenizer.tokenize(sentences, max_bytes=4)),
        [["one"], ["caf"], []])
    self.assertEqual(
        _decode(tokenizer.tokenize(sentences, max_bytes=12, max_tokens=2)),
        [["one", "two"], ["café", "au"], []])
    self.assertEqual(_decode(tokenizer.tokenize(sentences)),
                     [["one", "two", "three", "four"], ["café", "au", "lait"],
                      []])

  def test_config_round_trip(self):
    tokenizer = tokenizer_lib.Tokenizer(lowercase=False, keep_punctuation=True)
    config = tokenizer.get_config()
    self.assertEqual(config, {"lowercase": False, "keep_punctuation": True})
    revived = tokenizer_lib.Tokenizer.from_config(config)
    self.assertEqual(revived.get_config(), config)
    sentences = tf.constant(["Hi, There!"])
    self.assertEqual(_decode(revived.tokenize(sentences)),
                     [["Hi", ",", "There", "!"]])

  def test_whitespace_split_is_fasttexts_reader(self):
    # Dictionary::readWord / getLine of the C++ sent2vec: ASCII whitespace
    # and NUL separate; a newline or a "</s>" token ends the sentence;
    # bytes stay as they are (no lower-casing by default, no UTF-8 repair).
    tokenizer = tokenizer_lib.Tokenizer(lowercase=False, split="whitespace")
    sentences = [" a\tb\vc\fd\re\x00f  g\xa0h ", "x </s> y", "x</s> y </s>z",
                 "</s>", "one\ntwo", "Don't, PANIC!", ""]
    got = tokenizer.tokenize(tf.constant(sentences)).to_list()
    self.assertEqual(got, [
        [b"a", b"b", b"c", b"d", b"e", b"f", b"g\xc2\xa0h"], [b"x"],
        [b"x</s>", b"y", b"</s>z"], [], [b"one"], [b"Don't,", b"PANIC!"],
        []])
    invalid = tokenizer.tokenize(tf.constant([b"a\xff b"])).to_list()
    self.assertEqual(invalid, [[b"a\xff", b"b"]])
    capped = tokenizer.tokenize(tf.constant(["a b c d"]), max_tokens=2)
    self.assertEqual(capped.to_list(), [[b"a", b"b"]])
    lowered = tokenizer_lib.Tokenizer(split="whitespace").tokenize(
        tf.constant(["Don't PANIC"]))
    self.assertEqual(_decode(lowered), [["don't", "panic"]])
    config = tokenizer.get_config()
    self.assertEqual(config["split"], "whitespace")
    self.assertEqual(
        tokenizer_lib.Tokenizer.from_config(config).get_config(), config)
    with self.assertRaises(ValueError):
      tokenizer_lib.Tokenizer(split="spaces")

  def test_inside_tf_function(self):
    tokenizer = tokenizer_lib.Tokenizer(keep_punctuation=True)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def tokenize(sentences):
      return tokenizer.tokenize(sentences)

    got = _decode(tokenize(tf.constant(tokenizer_fixtures.TRICKY)))
    self.assertEqual(got, [tokenizer_fixtures.python_reference(s, True) for s in tokenizer_fixtures.TRICKY])

  def test_clean_utf8_check_is_exactly_what_transcoding_leaves_alone(self):
    # The tokeniser skips transcoding and the NUL replacement for a batch
    # whose every sentence passes this check: it must pass exactly those
    # strings that the two passes would leave unchanged.
    data = tokenizer_fixtures.random_byte_strings(1, 2000) + [b"\x7f", b"\xc2\x80", b""]
    clean = tf.strings.regex_full_match(
        tf.constant(data), tokenizer_lib._CLEAN_UTF8).numpy()
    unchanged = tokenizer_lib.clean_utf8(tf.constant(data)).numpy()
    for sentence, is_clean, after in zip(data, clean, unchanged):
      self.assertEqual(bool(is_clean), after == sentence, sentence)
    self.assertGreater(clean.sum(), 100)
    self.assertLess(clean.sum(), len(data) - 100)

  def test_same_tokens_as_the_previous_implementation(self):
    # Batches with and without bad bytes (the transcoding branch), over and
    # under the caps (the cutting branches), both punctuation settings.
    clean = [s.encode("utf-8") for s in tokenizer_fixtures.TRICKY if "\x00" not in s]
    batches = [clean, tokenizer_fixtures.random_byte_strings(2), tokenizer_fixtures.TRICKY,
               [b"word " * 40, b"\xe7\x8c\xab" * 30 + b"x"] + clean]
    for keep in (False, True):
      tokenizer = tokenizer_lib.Tokenizer(keep_punctuation=keep)
      for batch in batches:
        for caps in ((None, None), (64, 5), (13, None), (None, 3)):
          with self.subTest(keep=keep, caps=caps):
            got = tokenizer.tokenize(tf.constant(batch), *caps)
            want = tokenizer_fixtures.previous_tokenize(tf.constant(batch), keep, *caps)
            self.assertEqual(got.to_list(), want.to_list())

  def test_a_batch_of_one_with_a_static_shape(self):
    # Substr refused pos [1] vs len [?] when the batch size was static.
    tokenizer = tokenizer_lib.Tokenizer()

    @tf.function(input_signature=[tf.TensorSpec([1], tf.string)])
    def tokenize(sentences):
      return tokenizer.tokenize(sentences, max_bytes=8, max_tokens=2)

    self.assertEqual(_decode(tokenize(tf.constant(["great"]))), [["great"]])
    self.assertEqual(_decode(tokenize(tf.constant(["Café au lait x"]))),
                     [["café", "au"]])

  def test_inside_dataset_map(self):
    tokenizer = tokenizer_lib.Tokenizer()
    dataset = tf.data.Dataset.from_tensor_slices(tokenizer_fixtures.TRICKY).batch(4).map(
        lambda s: tokenizer.tokenize(s).to_tensor(default_value=""))
    got = []
    for batch in dataset.as_numpy_iterator():
      got.extend([[t.decode("utf-8") for t in row if t] for row in batch])
    self.assertEqual(got, [tokenizer_fixtures.python_reference(s, False) for s in tokenizer_fixtures.TRICKY])


if __name__ == "__main__":
  tf.test.main()
