"""Test helpers for the Sent2Vec input pipeline."""

from sentzoo.inputs import sent2vec_data


def make_batch(lines, featurizer, keep_prob, cdf, num_negatives=10,
               dropout_k=0, context="remove", seed=(0, 0), negative_group=1,
               first_line=0):
  """One block of raw lines (tf.string [lines]) -> one training batch
  (`sent2vec_data.make_batch_from_words` of the lines' word ids)."""
  words, line_tokens = featurizer.word_ids_and_line_tokens(lines)
  return sent2vec_data.make_batch_from_words(
      words, line_tokens, featurizer, keep_prob, cdf, num_negatives,
      dropout_k, context, seed, negative_group, first_line)
