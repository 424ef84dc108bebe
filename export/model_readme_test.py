"""Tests for export.model_readme."""

import os

import numpy as np
import tensorflow as tf

from sentzoo.export import averaging_encoder
from sentzoo.export import model_readme
from sentzoo.export import saved_model_writer
from sentzoo.inputs import text_to_ids as text_to_ids_lib
from sentzoo.inputs import vocabulary as vocabulary_lib

CARD = {
    "model_type": "sent2vec",
    "paper": "Pagliardini et al. NAACL 2018.",
    "signature": {"serving_default": {
        "inputs": {"sentences": "tf.string [batch]"},
        "outputs": {"embeddings": "float32 [batch, 700]"}}},
    "training": {"corpus_files": ["part01.txt.gz"], "num_epochs": 1},
    "tokenization": {"description": "lower-case; tokens \\w+",
                     "keep_punctuation": True},
    "vocabulary_size": 37461,
    "input_limits": {"max_bytes_per_sentence": 65536,
                     "max_tokens_per_sentence": 1024},
    "quantization": {"mode": "int8", "inference_only": True},
    "evaluation": {"sets": {"STSBenchmark-dev": {"pearson": 70.1,
                                                 "spearman": 69.5}}},
}


class ModelReadmeTest(tf.test.TestCase):

  def test_every_section_from_the_card(self):
    text = model_readme.render(CARD)
    for section in ("## Intended use", "## Training data", "## Tokenisation",
                    "## Limits", "## Scores"):
      self.assertIn(section, text)
    self.assertIn("part01.txt.gz", text)
    self.assertIn("Project Gutenberg book sentences: public domain", text)
    self.assertIn("lower-case; tokens \\w+.", text)
    self.assertIn("37,461 words", text)
    self.assertIn("65536 bytes, then to its first 1024 tokens", text)
    self.assertIn("**inference only**", text)
    self.assertIn("| STSBenchmark-dev | 70.1 | 69.5 |", text)

  def test_unknown_data_and_no_scores_are_said(self):
    text = model_readme.render({"training": {"corpus_files": ["mine.txt"]},
                                "evaluation": {"note": "no data"}})
    self.assertIn("not recorded in the settings", text)
    self.assertIn("No scores in this export: no data.", text)
    self.assertNotIn("inference only", text)
    self.assertEqual(model_readme.data_licences(
        {"training": {"pairs": "sick2014/SICK_train.txt",
                      "ppdb": "ppdb-2.0-xl"}}),
                     ["PPDB 2.0: CC BY 3.0",
                      "SICK 2014: CC BY-NC-SA 3.0 (non-commercial)"])

  def test_every_export_gets_one(self):
    vocabulary = vocabulary_lib.Vocabulary(["cat"], [3])
    encoder = averaging_encoder.AveragingSentenceEncoder(
        text_to_ids_lib.TextToIds(vocabulary), np.ones([2, 3], np.float32),
        {"model_type": "siamese_cbow"})
    path = saved_model_writer.write(encoder, self.get_temp_dir())
    with open(os.path.join(path, model_readme.README), encoding="utf-8") as f:
      text = f.read()
    self.assertEqual(text, model_readme.render(encoder.metadata))
    self.assertIn("# siamese_cbow export", text)
    self.assertIn("then to its first 1024 tokens", text)


if __name__ == "__main__":
  tf.test.main()
