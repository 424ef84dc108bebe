"""Tests of the CHARAGRAM-family trainer: a train step per variant, and `python -m trainers.charagram` end to end."""

import json
import os
import random
import subprocess
import sys

import keras
import numpy as np
import tensorflow as tf

from export import charagram_export
from inputs import char_ngrams
from inputs import text_to_ids
from inputs import tokenizer
from inputs import vocabulary
from models import paraphrase_margin_loss
from trainers import charagram_step

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _pairs(n=60, seed=0):
  """Phrase pairs sharing a made-up word: learnable from characters."""
  rng = random.Random(seed)
  pairs = []
  for i in range(n):
    word = "".join(rng.choice("abcdefghij") for _ in range(5))
    pairs.append((f"the {word} {i % 7}", f"a {word} thing"))
  return pairs


def _featurizer(variant, texts):
  if variant == "paragram_phrase":
    tok = tokenizer.Tokenizer()
    words = sorted({w.decode() for w in tok.tokenize(
        tf.constant(texts)).flat_values.numpy()})
    return text_to_ids.TextToIds(
        vocabulary.Vocabulary(words, [1] * len(words)), tok)
  sizes = (1,) if variant in ("char_cnn", "char_lstm") else (2, 3, 4)
  vocab = char_ngrams.build_ngram_vocabulary(texts, sizes)
  return char_ngrams.CharNgramFeaturizer(
      sizes, vocabulary=vocab, unknown_id=sizes == (1,))


def _model(variant, featurizer):
  cls = charagram_export.VARIANTS[variant]
  if variant == "paragram_phrase":
    return cls(featurizer.vocabulary_size, 8)
  if variant == "charagram":
    return cls(featurizer.num_ids, 8)
  if variant == "char_cnn":
    return cls(featurizer.num_ids, 6, filter_widths=(2, 3),
               filters_per_width=4, embedding_dim=8)
  return cls(featurizer.num_ids, 6, 8)


class TrainStepTest(tf.test.TestCase):

  def test_every_variant_trains(self):
    pairs = _pairs()
    texts1, texts2 = [p[0] for p in pairs], [p[1] for p in pairs]
    for variant in sorted(charagram_export.VARIANTS):
      with self.subTest(variant=variant):
        keras.utils.set_random_seed(0)
        featurizer = _featurizer(variant, texts1 + texts2)
        model = _model(variant, featurizer)
        model(tf.ragged.constant([[1]], dtype=tf.int32))
        optimizer = keras.optimizers.Adam(0.01)
        optimizer.build(model.trainable_variables)
        dataset = charagram_step.pair_dataset(texts1, texts2, featurizer,
                                              batch_size=20, num_epochs=4)
        step = charagram_step.make_train_step(
            model, optimizer,
            paraphrase_margin_loss.ParaphraseMarginLoss(sampling="mix"),
            l2=1e-6, input_signature=list(dataset.element_spec))
        before = [v.numpy().copy() for v in model.trainable_variables]
        losses = [float(step(batch)["margin_loss"]) for batch in dataset]
        self.assertLen(losses, 12)
        self.assertTrue(np.all(np.isfinite(losses)))
        self.assertLess(np.mean(losses[-3:]), np.mean(losses[:3]))
        changed = [not np.allclose(b, v.numpy())
                   for b, v in zip(before, model.trainable_variables)]
        self.assertTrue(all(changed), variant)


def _run(args, env_data_dir=None):
  env = dict(os.environ, PYTHONPATH=REPO_ROOT, TF_CPP_MIN_LOG_LEVEL="2")
  env.pop("SENTZOO_DATA_DIR", None)
  return subprocess.run([sys.executable, "-m", "trainers.charagram", *args],
                        cwd=REPO_ROOT, env=env, capture_output=True,
                        text=True, timeout=600)


class TrainerEndToEndTest(tf.test.TestCase):

  def test_trains_exports_reloads_and_resumes(self):
    data_dir = os.path.join(self.get_temp_dir(), "data")
    os.makedirs(data_dir, exist_ok=True)
    with open(os.path.join(data_dir, "pairs.tsv"), "w") as f:
      f.writelines(f"{a}\t{b}\n" for a, b in _pairs(80))
    model_dir = os.path.join(self.get_temp_dir(), "run")
    common = ["--data_dir=" + data_dir, "--model_dir=" + model_dir,
              "--train_files=pairs.tsv", "--train_format=tsv",
              "--embedding_dim=8", "--batch_size=20", "--num_epochs=2",
              "--sampling=mix", "--log_every_steps=2",
              "--checkpoint_every_steps=2"]
    # Interrupted after 3 steps, then resumed to the end (8 steps).
    first = _run(common + ["--max_steps_per_run=3"])
    self.assertEqual(first.returncode, 0, first.stderr[-3000:])
    self.assertIn("rerun the same command to resume", first.stdout)
    second = _run(common)
    self.assertEqual(second.returncode, 0, second.stderr[-3000:])
    self.assertIn("resumed from", second.stdout)
    self.assertIn("step 8/8", second.stdout)
    config = json.load(open(os.path.join(model_dir, "model_config.json")))
    self.assertEqual(config["model_type"], "charagram")
    self.assertEqual(config["variant"], "charagram")
    self.assertEqual(config["training"]["num_pairs"], 80)
    export_path = os.path.join(model_dir, "export", "1")
    self.assertIn("export: " + os.path.abspath(export_path), second.stdout)
    # The export matches the model rebuilt from the model directory.
    loaded = tf.saved_model.load(export_path)
    texts = tf.constant(["the abcde 1", "", "unseen ☃ text"])
    rebuilt = charagram_export.build_module(model_dir, config)
    self.assertAllClose(loaded(texts), rebuilt(texts), atol=1e-6)
    served = loaded.signatures["serving_default"](sentences=texts)
    self.assertAllClose(served["embeddings"], rebuilt(texts), atol=1e-6)
    self.assertTrue(np.all(np.isfinite(loaded(texts).numpy())))

  def test_user_error_without_traceback(self):
    data_dir = os.path.join(self.get_temp_dir(), "data_small")
    os.makedirs(data_dir, exist_ok=True)
    with open(os.path.join(data_dir, "pairs.tsv"), "w") as f:
      f.write("a\tb\n")
    result = _run(["--data_dir=" + data_dir, "--train_files=pairs.tsv",
                   "--train_format=tsv", "--model_dir=" +
                   os.path.join(self.get_temp_dir(), "x")])
    self.assertEqual(result.returncode, 2)
    self.assertIn("error: 1 training pairs", result.stderr)
    self.assertNotIn("Traceback", result.stderr)


if __name__ == "__main__":
  tf.test.main()
