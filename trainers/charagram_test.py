"""Tests of the CHARAGRAM-family trainer: a train step per variant, and `python -m trainers.charagram` end to end (one device, MirroredStrategy on 2 logical CPUs, 2 worker processes).

One-device runs go through `charagram.run` in this process (a `python -m`
run would pay TensorFlow's import, ~5 s); what an `errors.UserError` or
`errors.Interrupted` becomes on the command line (one `error:` line and
exit 2, exit 75) is common/cli.py's, tested in common/cli_test.py and
trainers/flag_validation_test.py.
"""

import json
import os
import random
import subprocess
import sys

import keras
import numpy as np
import tensorflow as tf

from sentzoo.common import errors
from sentzoo.export import charagram as charagram_export
from sentzoo.inputs import char_ngrams
from sentzoo.inputs import text_to_ids
from sentzoo.inputs import tokenizer
from sentzoo.inputs import vocabulary
from sentzoo.models import paraphrase_margin_loss
from sentzoo.tests import local_cluster
from sentzoo.tests import model_dir_fixtures
from sentzoo.tests import trainer_fixtures
from sentzoo.trainers import charagram
from sentzoo.trainers import charagram_step
from sentzoo.trainers import training_loop

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
        dataset = charagram_step.featurize_batches(
            charagram_step.text_batches(texts1, texts2, batch_size=20,
                                        num_epochs=4), featurizer)
        # The per-replica step, traced once as the loop traces it.
        step = tf.function(charagram_step.make_train_step(
            model, optimizer,
            paraphrase_margin_loss.ParaphraseMarginLoss(sampling="mix"),
            l2=1e-6), input_signature=[dataset.element_spec])
        before = [v.numpy().copy() for v in model.trainable_variables]
        losses = [float(step(batch)["margin_loss"]) for batch in dataset]
        self.assertLen(losses, 12)
        self.assertTrue(np.all(np.isfinite(losses)))
        self.assertLess(np.mean(losses[-3:]), np.mean(losses[:3]))
        changed = [not np.allclose(b, v.numpy())
                   for b, v in zip(before, model.trainable_variables)]
        self.assertTrue(all(changed), variant)


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
    # Interrupted with a checkpoint (exit 75 on the command line).
    with self.assertRaisesRegex(
        errors.Interrupted,
        "stopped at step 3; rerun the same command to resume"):
      trainer_fixtures.run_printed(charagram,
                                   common + ["--max_steps_per_run=3"])
    second = trainer_fixtures.run_printed(charagram, common)
    self.assertIn("resumed from", second)
    self.assertIn("step 8/8", second)
    config = json.load(open(os.path.join(model_dir, "model_config.json")))
    self.assertEqual(config["model_type"], "charagram")
    self.assertEqual(config["variant"], "charagram")
    self.assertEqual(config["training"]["num_pairs"], 80)
    export_path = os.path.join(model_dir, "export", "1")
    self.assertIn("export: " + os.path.abspath(export_path), second)
    # The export matches the model rebuilt from the model directory.
    loaded = tf.saved_model.load(export_path)
    texts = tf.constant(["the abcde 1", "", "unseen ☃ text"])
    rebuilt = charagram_export.build_module(model_dir, config)
    self.assertAllClose(loaded(texts), rebuilt(texts), atol=1e-6)
    served = loaded.signatures["serving_default"](sentences=texts)
    self.assertAllClose(served["embeddings"], rebuilt(texts), atol=1e-6)
    self.assertTrue(np.all(np.isfinite(loaded(texts).numpy())))

  def test_too_few_pairs_is_a_user_error(self):
    data_dir = os.path.join(self.get_temp_dir(), "data_small")
    os.makedirs(data_dir, exist_ok=True)
    with open(os.path.join(data_dir, "pairs.tsv"), "w") as f:
      f.write("a\tb\n")
    with self.assertRaisesRegex(errors.UserError, "^1 training pairs"):
      trainer_fixtures.run_printed(charagram, [
          "--data_dir=" + data_dir, "--train_files=pairs.tsv",
          "--train_format=tsv",
          "--model_dir=" + os.path.join(self.get_temp_dir(), "x")])


# Runs the trainer and saves the model's final weights (every worker's,
# also those of the non-chief whose checkpoints are scratch) to
# $TEST_DUMP_WEIGHTS (.npz).
_DUMP_WRAPPER = local_cluster.trainer_with_dump(
    "trainers.charagram",
    'np.savez(os.environ["TEST_DUMP_WEIGHTS"], '
    '*[np.asarray(w.numpy()) for w in model.weights])')

TIMEOUT_S = 300


def _start(args, **extra_env):
  return subprocess.Popen([sys.executable, "-c", _DUMP_WRAPPER, *args],
                          cwd=REPO_ROOT,
                          env=trainer_fixtures.child_env(**extra_env),
                          stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)


def _finish(processes):
  return trainer_fixtures.finish_processes(processes, TIMEOUT_S)


def _losses(model_dir):
  return np.array([r["loss"] for r in training_loop.read_train_log(model_dir)])


def _weights(npz_path):
  with np.load(npz_path) as arrays:
    return [arrays[f"arr_{i}"] for i in range(len(arrays.files))]


class WordModelDataTest(tf.test.TestCase):

  def test_word_model_trains_on_the_whole_lexicon_by_default(self):
    from sentzoo.trainers import charagram as charagram_trainer
    fv = charagram_trainer.FLAGS
    fv.unparse_flags()
    fv(["charagram", "--flagfile=" + os.path.join(
        REPO_ROOT, "configs", "charagram_word.flags")])
    try:
      self.assertEqual(fv.max_pairs, 0)  # 0: all pairs; --max_pairs=N caps.
      data_dir = os.environ.get("SENTZOO_DATA_DIR")
      if data_dir and os.path.isdir(os.path.join(data_dir, "ppdb")):
        pairs = charagram_trainer.load_pairs(
            charagram_trainer.CharagramTrainer().settings(), data_dir)
        # The lexicon lists each pair in both directions (~374k lines of
        # word -> paraphrase): 187,276 distinct pairs, every one kept.
        self.assertEqual(len(pairs), 187_276)
    finally:
      fv.unparse_flags()


  def test_lexicon_files_add_word_pairs_to_the_phrase_pairs(self):
    from sentzoo.trainers import charagram as charagram_trainer
    data_dir = self.get_temp_dir()
    with open(os.path.join(data_dir, "phrases.tsv"), "w") as f:
      f.write("a big dog\ta large dog\nthe car\tthe auto\n")
    with open(os.path.join(data_dir, "lexicon.txt"), "w") as f:
      # Each pair listed both ways, as in PPDB's lexicon: kept once.
      f.write("big large huge\nlarge big\nalone\n")
    fv = charagram_trainer.FLAGS
    fv.unparse_flags()
    fv(["charagram", "--train_files=phrases.tsv", "--train_format=tsv",
        "--lexicon_files=lexicon.txt", "--batch_size=2"])
    try:
      pairs = charagram_trainer.load_pairs(
            charagram_trainer.CharagramTrainer().settings(), data_dir)
    finally:
      fv.unparse_flags()
    self.assertEqual(sorted((p.phrase1, p.phrase2) for p in pairs),
                     [("a big dog", "a large dog"), ("big", "huge"),
                      ("big", "large"), ("the car", "the auto")])


class DistributedTrainingTest(tf.test.TestCase):
  """--strategy gives the one-device run: MIX negatives from the whole
  global batch (all-gathered embeddings), L2 split over replicas."""

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.root = os.path.join(tf.compat.v1.test.get_temp_dir(),
                            "charagram_distributed")
    data_dir = os.path.join(cls.root, "data")
    os.makedirs(data_dir, exist_ok=True)
    with open(os.path.join(data_dir, "pairs.tsv"), "w") as f:
      f.writelines(f"{a}\t{b}\n" for a, b in _pairs(80))
    # 80 pairs, global batches of 20: 4 steps per epoch, 12 steps.
    cls.common = ["--data_dir=" + data_dir, "--train_files=pairs.tsv",
                  "--train_format=tsv", "--embedding_dim=8",
                  "--batch_size=20", "--num_epochs=3", "--sampling=mix",
                  "--l2=1e-3", "--log_every_steps=1",
                  "--checkpoint_every_steps=5", "--noexport"]
    cls._runs = {}

  def _train(self, name, extra_args=()):
    """Runs the trainer once per name (cached across tests); returns
    (model_dir, final weights)."""
    if name not in self._runs:
      model_dir = os.path.join(self.root, name)
      dump = os.path.join(self.root, name + ".npz")
      (rc, _, err), = _finish([_start(
          self.common + list(extra_args) + ["--model_dir=" + model_dir],
          TEST_DUMP_WEIGHTS=dump)])
      self.assertEqual(rc, 0, err[-3000:])
      self._runs[name] = model_dir, _weights(dump)
    return self._runs[name]

  def test_mirrored_on_two_cpus_matches_one_device(self):
    single, single_weights = self._train("single")
    mirrored, mirrored_weights = self._train(
        "mirrored", ["--strategy=mirrored", "--num_cpu_devices=2"])
    with open(os.path.join(mirrored, "model_config.json")) as f:
      self.assertEqual(json.load(f)["training"]["replicas"], 2)
    log = training_loop.read_train_log(mirrored)
    self.assertEqual([r["step"] for r in log], list(range(1, 13)))
    # Per-replica negatives (10 pairs) or an L2 term counted twice would
    # change the curve from the first step on.
    self.assertAllClose(_losses(single), _losses(mirrored), atol=1e-5)
    self.assertAllClose(
        [r["margin_loss"] for r in training_loop.read_train_log(single)],
        [r["margin_loss"] for r in log], atol=1e-5)
    self.assertLen(mirrored_weights, len(single_weights))
    for a, b in zip(single_weights, mirrored_weights):
      self.assertAllClose(a, b, atol=1e-5)
    losses = _losses(mirrored)
    self.assertLess(losses[-3:].mean(), losses[:3].mean())

  def test_multi_worker_two_processes_match_one_device(self):
    _, single_weights = self._train("single")
    model_dir = os.path.join(self.root, "multi_worker")
    results = _finish(trainer_fixtures.start_workers(
        _start, self.common + ["--model_dir=" + model_dir], self.root))
    for rc, _, err in results:
      self.assertEqual(rc, 0, err[-3000:])
    chief, other = [_weights(os.path.join(self.root, f"worker{i}.npz"))
                    for i in range(2)]
    self.assertLen(other, len(chief))
    for a, b, c in zip(chief, other, single_weights):
      self.assertAllEqual(a, b)
      self.assertAllClose(a, c, atol=1e-5)
    self.assertEqual(training_loop.read_train_log(model_dir)[-1]["step"], 12)
    self.assertIn("step 12/12", results[1][1])
    self.assertFalse(os.path.exists(
        os.path.join(model_dir, "workertemp_1", "checkpoints")))

  def test_batch_size_not_a_multiple_of_replicas_is_a_user_error(self):
    (rc, _, err), = _finish([_start(
        self.common + ["--batch_size=15", "--strategy=mirrored",
                       "--num_cpu_devices=2",
                       "--model_dir=" + os.path.join(self.root, "odd")],
        TEST_DUMP_WEIGHTS=os.path.join(self.root, "odd.npz"))])
    self.assertEqual(rc, 2, err[-3000:])
    self.assertIn("error: --batch_size=15 (the global batch) must be a "
                  "multiple of the 2 replicas", err)
    self.assertNotIn("Traceback", err)


class InitialWordVectorsTest(tf.test.TestCase):
  """PARAGRAM-PHRASE's --word_vectors: a model dir or an export."""

  def setUp(self):
    super().setUp()
    # A run in this process that raised may have left its flags set.
    charagram.FLAGS.unparse_flags()

  def tearDown(self):
    charagram.FLAGS.unparse_flags()
    super().tearDown()

  def test_model_dir_gives_its_vocabulary_and_newest_table(self):
    model_dir = os.path.join(self.get_temp_dir(), "vectors_run")
    table = model_dir_fixtures.make_siamese_cbow_model_dir(model_dir)
    charagram.FLAGS(["prog", f"--word_vectors={model_dir}",
                     f"--embedding_dim={model_dir_fixtures.DIM}"])
    self.assertEqual(charagram.word_vectors_vocab(
        charagram.CharagramTrainer().settings()),
                     os.path.join(model_dir, "vocab.txt"))
    rows = charagram.initial_word_vectors(
          charagram.CharagramTrainer().settings(),
          len(model_dir_fixtures.WORDS) + 1)
    self.assertAllEqual(rows[0], np.zeros([model_dir_fixtures.DIM]))
    self.assertAllClose(rows[1:], table[1:])

  def test_export_needs_its_vocabulary_and_the_right_width(self):
    charagram.FLAGS(["prog", "--word_vectors=/no/such/export",
                     "--embedding_dim=4"])
    with self.assertRaisesRegex(charagram.errors.UserError,
                                "needs --word_vectors_vocab"):
      charagram.initial_word_vectors(
          charagram.CharagramTrainer().settings(), 10)
    model_dir = os.path.join(self.get_temp_dir(), "wide_run")
    model_dir_fixtures.make_siamese_cbow_model_dir(model_dir)
    charagram.FLAGS.unparse_flags()
    charagram.FLAGS(["prog", f"--word_vectors={model_dir}",
                     "--embedding_dim=300"])
    with self.assertRaisesRegex(charagram.errors.UserError,
                                "--embedding_dim"):
      charagram.initial_word_vectors(
          charagram.CharagramTrainer().settings(),
          len(model_dir_fixtures.WORDS) + 1)


if __name__ == "__main__":
  tf.test.main()
