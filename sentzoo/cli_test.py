"""The `sentzoo` command, each subcommand run as a subprocess.

Refusals that need TensorFlow (a model is looked up or loaded) run in this
process through `cli._dispatch`, the part of `cli.main` inside
common/cli.run: a subprocess would add TensorFlow's import (~4 CPU-s) and
nothing else; what common/cli.run makes of an `errors.UserError` (one
`error:` line, exit 2) is shown end to end by the first case of
test_user_errors and of test_damaged_store_file_is_a_one_line_error.
"""

import contextlib
import io
import json
import os
import pty
import shutil
import signal
import subprocess
import sys
import time
from unittest import mock

import numpy as np
import tensorflow as tf

import sentzoo
from sentzoo import cli
from sentzoo import sentence_model
from sentzoo import store as store_lib
from sentzoo.tests import zoo_test_util
from sentzoo.common import data_dir as data_dir_lib
from sentzoo.common import errors
from sentzoo.tests import corpus_fixtures

run = zoo_test_util.run
SENTENCES = zoo_test_util.SENTENCES


def _has_eval_data():
  data_dir = os.environ.get("SENTZOO_DATA_DIR", "")
  return os.path.isfile(os.path.join(data_dir, "sts", "STSBenchmark",
                                     "sts-dev.csv"))


class SentzooCommandTest(tf.test.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    root = os.path.join(tf.compat.v1.test.get_temp_dir(), "sentzoo_cli")
    shutil.rmtree(root, ignore_errors=True)
    cls.export_dir = zoo_test_util.make_export(root)
    cls.home = os.path.join(root, "home")
    zoo_test_util.install_tiny(cls.home, "tiny", cls.export_dir)
    cls.expected = sentzoo.load(cls.export_dir).encode(SENTENCES)
    cls.input = os.path.join(root, "sentences.txt")
    with open(cls.input, "w", encoding="utf-8") as f:
      f.write("\n".join(SENTENCES) + "\n")

  def assertUserError(self, done, text):
    self.assertEqual(done.returncode, 2, done.stderr[-3000:])
    lines = done.stderr.strip().splitlines()
    self.assertLen(lines, 1, done.stderr)
    self.assertStartsWith(lines[0], "error: ")
    self.assertIn(text, lines[0])

  def assertUserErrorHere(self, home, args, text):
    """`sentzoo ARGS` with $SENTZOO_HOME=home, run in this process, raises a
    one-line `errors.UserError` with `text` in it."""
    with mock.patch.dict(os.environ, {data_dir_lib.HOME_ENV_VAR: home}), \
        contextlib.redirect_stdout(io.StringIO()), \
        self.assertRaises(errors.UserError) as raised:
      cli._dispatch(list(args))  # pylint: disable=protected-access
    self.assertNotIn("\n", str(raised.exception))
    self.assertIn(text, str(raised.exception))

  def test_encode_npy_by_name_and_by_path(self):
    for model in ("tiny", self.export_dir):
      out = os.path.join(self.get_temp_dir(), "v.npy")
      done = run(self.home, "encode", model, "--input", self.input,
                 "--output", out)
      self.assertEqual(done.returncode, 0, done.stderr[-3000:])
      self.assertAllClose(np.load(out), self.expected)
      self.assertIn(f"wrote {len(SENTENCES)} x 4 embeddings", done.stderr)

  def test_encode_stdin_to_tsv_on_stdout_and_to_file(self):
    done = run(self.home, "encode", "tiny",
               stdin="\n".join(SENTENCES) + "\n")
    self.assertEqual(done.returncode, 0, done.stderr[-3000:])
    rows = [[float(x) for x in line.split("\t")]
            for line in done.stdout.splitlines()]
    self.assertAllClose(rows, self.expected, atol=1e-5)
    out = os.path.join(self.get_temp_dir(), "v.tsv")
    done = run(self.home, "encode", "tiny", "--input", self.input,
               "--output", out)
    self.assertEqual(done.returncode, 0, done.stderr[-3000:])
    self.assertAllClose(np.loadtxt(out, delimiter="\t"), self.expected,
                        atol=1e-5)

  def test_similarity(self):
    done = run(self.home, "similarity", "tiny", SENTENCES[0], SENTENCES[1])
    self.assertEqual(done.returncode, 0, done.stderr[-3000:])
    expected = sentzoo.load(self.export_dir).similarity(SENTENCES[0],
                                                        SENTENCES[1])[0, 0]
    self.assertAlmostEqual(float(done.stdout), expected, places=4)

  def test_search_ranks_by_cosine_and_caches_the_corpus(self):
    home = os.path.join(self.get_temp_dir(), "search_home")
    shutil.copytree(self.home, home)
    corpus = [s for s in SENTENCES if s]
    path = os.path.join(self.get_temp_dir(), "corpus.txt")
    with open(path, "w", encoding="utf-8") as f:
      f.write("\n".join(corpus) + "\n")
    done = run(home, "search", "tiny", "--corpus", path, "--query",
               "the cat sat", "-k", "3")
    self.assertEqual(done.returncode, 0, done.stderr[-3000:])
    self.assertIn("corpus embeddings cached", done.stderr)
    model = sentzoo.load(self.export_dir)
    scores = model.similarity(["the cat sat"], corpus)[0]
    order = np.argsort(-scores, kind="stable")[:3]
    rows = [line.split("\t") for line in done.stdout.splitlines()]
    self.assertEqual([int(r[0]) for r in rows], [1, 2, 3])
    self.assertEqual([int(r[2]) - 1 for r in rows], list(order))
    self.assertEqual([r[3] for r in rows], [corpus[i] for i in order])
    self.assertAllClose([float(r[1]) for r in rows], scores[order],
                        atol=1e-4)
    again = run(home, "search", "tiny", "--corpus", path, "--query",
                "the cat sat", "-k", "3")
    self.assertIn("corpus embeddings from the cache", again.stderr)
    self.assertEqual(again.stdout, done.stdout)
    # A changed corpus is encoded again.
    with open(path, "a", encoding="utf-8") as f:
      f.write("the cat sat\n")
    changed = run(home, "search", "tiny", "--corpus", path, "--query",
                  "the cat sat", "-k", "1")
    self.assertIn("corpus embeddings cached", changed.stderr)
    self.assertEndsWith(changed.stdout.strip(), "\tthe cat sat")

  def test_evaluate_prints_the_sts_table(self):
    if not _has_eval_data():
      self.skipTest("needs $SENTZOO_DATA_DIR with STS / SICK / STS-B")
    done = run(self.home, "evaluate", "tiny")
    self.assertEqual(done.returncode, 0, done.stderr[-3000:])
    for row in ("STSB.dev", "SICK.test", "STS2014.headlines",
                "mean of the 19 STS"):
      self.assertIn(row, done.stdout)
    stored = store_lib.Store(self.home).manifest("tiny")["scores"]
    self.assertIn(f"{stored['stsb_dev']:.2f}", done.stdout)

  def test_models_lists_catalogue_and_store(self):
    done = run(self.home, "models")
    self.assertEqual(done.returncode, 0, done.stderr[-3000:])
    lines = done.stdout.splitlines()
    self.assertRegex(lines[0], r"^model\s+state\s+STS-B dev\s+19-set STS")
    tiny = [line for line in lines if line.startswith("tiny ")]
    self.assertLen(tiny, 1)
    self.assertIn("installed", tiny[0])
    self.assertRegex(
        [line for line in lines if line.startswith("siamese-cbow-demo")][0],
        r"not installed")
    verified = run(self.home, "models", "--verify")
    self.assertEqual(verified.returncode, 0, verified.stderr[-3000:])
    self.assertIn("installed, sha256 ok", verified.stdout)

  def test_pack_then_install_on_another_store_gives_the_same_embeddings(
      self):
    archive = os.path.join(self.get_temp_dir(), "tiny.sentzoo.tar.gz")
    done = run(self.home, "pack", "tiny", "--output", archive)
    self.assertEqual(done.returncode, 0, done.stderr[-3000:])
    self.assertIn(f"wrote {archive}", done.stdout)
    other = os.path.join(self.get_temp_dir(), "other_home")
    done = run(other, "install", archive)
    self.assertEqual(done.returncode, 0, done.stderr[-3000:])
    self.assertIn("installed tiny", done.stdout)
    store = store_lib.Store(other)
    self.assertAllClose(
        sentzoo.load(store.verify("tiny", hashes=True)).encode(SENTENCES),
        self.expected)
    out = os.path.join(self.get_temp_dir(), "v.npy")
    done = run(other, "encode", "tiny", "--input", self.input, "--output",
               out)
    self.assertEqual(done.returncode, 0, done.stderr[-3000:])
    self.assertAllClose(np.load(out), self.expected)
    # Installing it again needs --replace.
    self.assertUserError(run(other, "install", archive), "--replace")
    done = run(other, "install", archive, "--replace")
    self.assertEqual(done.returncode, 0, done.stderr[-3000:])

  def test_user_errors(self):
    self.assertUserError(run(self.home, "encode", "no-such-model",
                             "--input", self.input),
                         "'no-such-model' is neither a path nor installed")
    # argparse's own error, not an errors.UserError: a subprocess.
    self.assertUserError(run(self.home, "frobnicate"), "invalid choice")
    for args, text in (
        (["similarity", "siamese-cbow-demo", "a", "b"],
         "sentzoo train siamese-cbow-demo"),
        (["encode", "tiny", "--input", "/no/such/file"],
         "cannot read '/no/such/file'"),
        (["encode", "tiny", "--input", self.input, "--output", "v.csv"],
         ".npy or .tsv"),
        (["train", "no-such-model"], "unknown model 'no-such-model'"),
        (["pack", "no-such-model"], "neither a path nor installed"),
        (["search", "tiny", "--corpus", self.input], "--query"),
        (["encode", "tiny", "--", "--x=1"], "for `sentzoo train` only")):
      with self.subTest(args=args):
        self.assertUserErrorHere(self.home, args, text)

  def test_damaged_store_file_is_a_one_line_error(self):
    home = os.path.join(self.get_temp_dir(), "damaged_home")
    shutil.copytree(self.home, home)
    store = store_lib.Store(home)
    export_dir = store.export_path("tiny")
    data = os.path.join(export_dir, "variables",
                        "variables.data-00000-of-00001")
    with open(data, "r+b") as f:  # Same size, other bytes.
      first = f.read(1)
      f.seek(0)
      f.write(bytes([first[0] ^ 0xFF]))
    self.assertUserError(run(home, "models", "--verify"),
                         "variables.data-00000-of-00001 does not match its "
                         "sha256")
    # Every load compares the sha256s (not only the first after install).
    self.assertUserError(run(home, "similarity", "tiny", "a", "b"),
                         "does not match its sha256")
    with open(data, "ab") as f:
      f.write(b"x")
    self.assertUserErrorHere(home, ["encode", "tiny", "--input", self.input],
                             "changed since install")
    os.remove(data)
    self.assertUserErrorHere(home, ["encode", "tiny", "--input", self.input],
                             "is missing")

  def test_train_installs_a_model_resumably(self):
    data_dir = os.path.join(self.get_temp_dir(), "tiny_data")
    corpus_fixtures.write_book_corpus(data_dir, parts=(1,))
    home = os.path.join(self.get_temp_dir(), "train_home")
    trainer_flags = ["--", "--embedding_dim=8", "--batch_size=20",
                     "--min_count=1", "--train_steps=6",
                     "--log_every_steps=6", "--eval_every_steps=0",
                     "--heldout_books=1", "--nocompare_untrained"]
    done = run(home, "train", "siamese-cbow-demo", "--data_dir", data_dir,
               *trainer_flags)
    self.assertEqual(done.returncode, 0, done.stderr[-3000:])
    self.assertIn("installed siamese-cbow-demo", done.stdout)
    store = store_lib.Store(home)
    manifest = store.manifest("siamese-cbow-demo")
    self.assertIn("configs/siamese_cbow_demo.flags, step 6",
                  manifest["source"])
    self.assertGreater(manifest["scores"]["encode_sentences_per_s"], 0)
    # The vocabulary travels with the export (a hybrid matcher's
    # --word_vectors needs it), hashed as the rest.
    self.assertIn(store_lib.VOCABULARY_IN_EXPORT, manifest["files"])
    self.assertEqual(manifest["scores"]["precision"], "float32")
    cost = manifest["training"]
    self.assertFalse(cost["resumed"])
    self.assertGreater(cost["peak_rss_bytes"], 100 * 2**20)
    self.assertEqual(cost["cpus"], len(os.sched_getaffinity(0)))
    encoded = run(home, "encode", "siamese-cbow-demo", stdin="w1 w2\n")
    self.assertEqual(encoded.returncode, 0, encoded.stderr[-3000:])
    self.assertLen(encoded.stdout.strip().split("\t"), 8)
    # A rerun finds the finished run and installs it again.
    again = run(home, "train", "siamese-cbow-demo", "--data_dir", data_dir,
                *trainer_flags)
    self.assertEqual(again.returncode, 0, again.stderr[-3000:])
    self.assertIn("nothing to do", again.stdout)
    self.assertIn("installed siamese-cbow-demo", again.stdout)
    self.assertTrue(store.manifest("siamese-cbow-demo")["training"]["resumed"])

  def test_an_entry_exported_again_with_an_int8_table(self):
    data_dir = os.path.join(self.get_temp_dir(), "tiny_data_s2v")
    corpus_fixtures.write_book_corpus(data_dir, parts=(1,))
    home = os.path.join(self.get_temp_dir(), "int8_home")
    missing = run(home, "train", "sent2vec-books-uni-int8", "--data_dir",
                  data_dir)
    self.assertEqual(missing.returncode, 2, missing.stderr[-3000:])
    self.assertIn("train that first (`sentzoo train sent2vec-books-uni`)",
                  missing.stderr)
    done = run(home, "train", "sent2vec-books-uni", "sent2vec-books-uni-int8",
               "--data_dir", data_dir, "--", "--embedding_dim=8",
               "--min_count=1", "--min_count_label=1", "--train_steps=4",
               "--block_lines=8", "--num_negatives=2")
    self.assertEqual(done.returncode, 0, done.stderr[-3000:])
    store = store_lib.Store(home)
    int8 = store.manifest("sent2vec-books-uni-int8")
    self.assertEqual(int8["scores"]["precision"], "int8")
    self.assertIn("sent2vec-books-uni's run exported with a int8 table, "
                  "step 4", int8["source"])
    with open(os.path.join(store.export_path("sent2vec-books-uni"),
                           store_lib.VOCABULARY_IN_EXPORT)) as f:
      words = " ".join(line.split("\t")[0] for line in f.readlines()[:5])
    vectors = [sentence_model.load(store.export_path(name)).encode([words])
               for name in ("sent2vec-books-uni", "sent2vec-books-uni-int8")]
    self.assertAllClose(vectors[0], vectors[1], atol=0.02, rtol=0.02)

  def test_ctrl_c_exits_75(self):
    environ = dict(os.environ, SENTZOO_HOME=self.home)
    process = subprocess.Popen(
        [sys.executable, "-m", "sentzoo.cli", "encode", "tiny"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, cwd=zoo_test_util.REPO_ROOT,
        env=environ,
        # A child of a background shell job may inherit SIGINT ignored.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(5)  # It waits on stdin by then (no TensorFlow imported yet).
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    self.assertEqual(process.returncode, 75, err[-3000:])
    self.assertIn("interrupted: `sentzoo encode` stopped", out)
    self.assertNotIn("Traceback", err)

  def test_progress_only_on_a_terminal_and_a_long_input(self):
    model = mock.Mock(encode=lambda s, **_: np.zeros([len(s), 2]))
    path = os.path.join(self.get_temp_dir(), "lines.txt")
    for tty, count, shown in ((True, sentence_model.PROGRESS_MIN_SENTENCES, True),
                              (True, sentence_model.PROGRESS_MIN_SENTENCES - 1, False),
                              (False, sentence_model.PROGRESS_MIN_SENTENCES, False)):
      with open(path, "w") as f:
        f.write("a\n" * count)
      err = io.StringIO()
      err.isatty = lambda t=tty: t
      with mock.patch("sys.stderr", err):
        chunks = list(cli._encoded_chunks(model, path, 7))  # pylint: disable=protected-access
      self.assertEqual(sum(len(v) for _, v in chunks), count)
      self.assertLen(chunks[0][0], 7 * cli.ENCODE_CHUNK_BATCHES)
      self.assertEqual("sentences/s" in err.getvalue(), shown)

  def test_a_stray_carriage_return_splits_a_file_as_stdin(self):
    text = "The cat\rsat.\nthe mat\r\ndog bird\n"
    path = os.path.join(self.get_temp_dir(), "cr.txt")
    with open(path, "w", encoding="utf-8", newline="") as f:
      f.write(text)
    from_file = run(self.home, "encode", "tiny", "--input", path)
    from_stdin = run(self.home, "encode", "tiny", stdin=text)
    self.assertEqual(from_file.returncode, 0, from_file.stderr[-3000:])
    self.assertLen(from_file.stdout.splitlines(), 3)
    self.assertEqual(from_file.stdout, from_stdin.stdout)
    lines = ["The cat\rsat.", "the mat", "dog bird"]
    expected = sentzoo.load(self.export_dir).encode(lines)
    rows = [[float(x) for x in line.split("\t")]
            for line in from_file.stdout.splitlines()]
    self.assertAllClose(rows, expected, atol=1e-5)

  def test_npy_is_written_in_chunks_as_np_save_writes_it(self):
    lines = [f"{SENTENCES[i % len(SENTENCES)]} {i}" for i in range(1000)]
    path = os.path.join(self.get_temp_dir(), "many.txt")
    with open(path, "w", encoding="utf-8") as f:
      f.write("\n".join(lines) + "\n")
    out = os.path.join(self.get_temp_dir(), "many.npy")
    # 7 a batch: 9 chunks of 112 lines.
    done = run(self.home, "encode", "tiny", "--input", path, "--output", out,
               "--batch_size", "7")
    self.assertEqual(done.returncode, 0, done.stderr[-3000:])
    expected = io.BytesIO()
    np.save(expected, sentzoo.load(self.export_dir).encode(lines,
                                                           batch_size=7))
    with open(out, "rb") as f:
      self.assertEqual(f.read(), expected.getvalue())
    self.assertEqual(os.listdir(self.get_temp_dir()).count("many.npy"), 1)

  def test_batch_size_below_one_is_one_error_line(self):
    for value in ("0", "-3"):
      self.assertUserError(run(self.home, "encode", "tiny", "--batch_size",
                               value, stdin="a\n"),
                           f"--batch_size: must be >= 1, got {value}")

  def test_outputs_that_cannot_be_written_are_one_error_line(self):
    folder = os.path.join(self.get_temp_dir(), "out.npy")
    os.makedirs(folder)
    self.assertUserError(run(self.home, "encode", "tiny", "--input",
                             self.input, "--output", folder), "is a folder")
    read_only = zoo_test_util.mount_tmpfs(self, "ro,size=64k")
    self.assertUserError(
        run(self.home, "encode", "tiny", "--input", self.input, "--output",
            os.path.join(read_only, "out.npy")),
        "cannot write the embeddings to")
    full = zoo_test_util.mount_tmpfs(self, "size=64k")
    many = os.path.join(self.get_temp_dir(), "many.txt")
    with open(many, "w", encoding="utf-8") as f:
      f.write("the cat sat on the mat\n" * 5000)
    for name in ("out.npy", "out.tsv"):
      self.assertUserError(
          run(self.home, "encode", "tiny", "--input", many, "--output",
              os.path.join(full, name)), "no space left on device writing")
      self.assertEqual(os.listdir(full), [])
    with open("/dev/full", "w") as dev_full:
      done = subprocess.run(
          [sys.executable, "-m", "sentzoo.cli", "encode", "tiny", "--input",
           many], stdout=dev_full, stderr=subprocess.PIPE, text=True,
          cwd=zoo_test_util.REPO_ROOT,
          env=zoo_test_util.environ(self.home), check=False)
    self.assertUserError(done, "cannot write the embeddings to stdout (No "
                         "space left on device)")

  def test_version_terminal_stdin_and_a_wrong_case_name(self):
    done = run(self.home, "--version")
    self.assertEqual((done.returncode, done.stdout),
                     (0, f"sentzoo {sentzoo.__version__}\n"))
    main, terminal = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "sentzoo.cli", "encode", "tiny"],
        stdin=terminal, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, cwd=zoo_test_util.REPO_ROOT,
        env=zoo_test_util.environ(self.home))
    os.close(terminal)
    os.write(main, b"the cat\n\x04")
    out, err = process.communicate(timeout=120)
    os.close(main)
    self.assertEqual(process.returncode, 0, err[-3000:])
    self.assertIn("reading sentences from the terminal", err)
    self.assertLen(out.splitlines(), 1)
    self.assertUserError(run(self.home, "encode", "Siamese-CBOW-demo",
                             stdin="a\n"),
                         "did you mean 'siamese-cbow-demo'?")

  def test_search_cache_keeps_the_most_recently_used(self):
    folder = os.path.join(self.get_temp_dir(), "cache")
    os.makedirs(folder)
    for i, name in enumerate(("old.npy", "newer.npy", "new.npy")):
      path = os.path.join(folder, name)
      with open(path, "wb") as f:
        f.write(bytes(100))
      os.utime(path, (i, i))
    with mock.patch.object(cli, "SEARCH_CACHE_BYTES", 250):
      cli._evict(folder, os.path.join(folder, "new.npy"))  # pylint: disable=protected-access
    self.assertEqual(sorted(os.listdir(folder)), ["new.npy", "newer.npy"])


class SentzooLoadByNameTest(tf.test.TestCase):

  def test_load_by_name_equals_load_by_path(self):
    root = self.get_temp_dir()
    export_dir = zoo_test_util.make_export(os.path.join(root, "m"))
    home = os.path.join(root, "home")
    path = zoo_test_util.install_tiny(home, "tiny", export_dir)
    previous = os.environ.get(data_dir_lib.HOME_ENV_VAR)
    os.environ[data_dir_lib.HOME_ENV_VAR] = home
    try:
      by_name = sentzoo.load("tiny")
      self.assertEqual(by_name.export_dir.rstrip("/"), path.rstrip("/"))
      self.assertAllClose(by_name.encode(SENTENCES),
                          sentzoo.load(export_dir).encode(SENTENCES))
      # hub.load-style consumers take the entry's path: a SavedModel.
      loaded = tf.saved_model.load(path)
      self.assertAllClose(
          loaded.signatures["serving_default"](
              sentences=tf.constant(SENTENCES))["embeddings"],
          by_name.encode(SENTENCES))
    finally:
      if previous is None:
        del os.environ[data_dir_lib.HOME_ENV_VAR]
      else:
        os.environ[data_dir_lib.HOME_ENV_VAR] = previous
    self.assertEqual(json.loads(open(os.path.join(
        home, "models", "tiny", "manifest.json")).read())["name"], "tiny")


if __name__ == "__main__":
  tf.test.main()
