"""Tests for lab.benchmarks.encode: the side-by-side sequence and its page."""

import gzip
import os
import re
import subprocess
import sys
import textwrap

import tensorflow as tf

from lab.benchmarks import encode
from sentzoo.export import export_model
from sentzoo.tests import model_dir_fixtures

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# A stand-in for epfml/sent2vec's binding, importable by the children.
_FAKE_BINDING = textwrap.dedent("""\
    import time

    import numpy as np

    class Sent2vecModel:
      def load_model(self, path):
        self.dim = 4

      def get_emb_size(self):
        return self.dim

      def embed_sentences(self, lines, num_threads=1):
        time.sleep(0.2)  # Slower than ours: a ratio well above 0.00.
        return np.zeros([len(lines), self.dim], np.float32)
    """)


class EncodeBenchmarkTest(tf.test.TestCase):

  def test_side_by_side_prints_ratios_and_writes_the_page(self):
    root = self.get_temp_dir()
    data_dir = os.path.join(root, "data")
    os.makedirs(os.path.join(data_dir, "gutenberg"))
    with gzip.open(os.path.join(data_dir, "gutenberg", "part07.txt.gz"),
                   "wt", encoding="utf-8") as f:
      f.write("".join(f"The cat sat on mat {i}.\n\n" for i in range(300)))
    model_dir = os.path.join(root, "model")
    model_dir_fixtures.make_siamese_cbow_model_dir(model_dir)
    export = export_model.export(model_dir, os.path.join(root, "export"),
                                 evaluate=False)
    fake = os.path.join(root, "fake_binding")
    os.makedirs(fake)
    with open(os.path.join(fake, "sent2vec.py"), "w", encoding="utf-8") as f:
      f.write(_FAKE_BINDING)
    record = os.path.join(root, "record")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [fake, os.environ.get("PYTHONPATH", "")]))
    result = subprocess.run(
        [sys.executable, "-m", "lab.benchmarks.encode", f"--export={export}",
         f"--data_dir={data_dir}", "--num_lines=200", "--repeats=2",
         "--batch_sizes=16,64", f"--reference_python={sys.executable}",
         "--reference_model=model.bin", f"--other_export={export}",
         "--noprecisions", f"--record_dir={record}", f"--work_dir={root}"],
        cwd=_ROOT, env=env, capture_output=True, text=True, timeout=600,
        check=False)
    self.assertEqual(result.returncode, 0, result.stderr[-2000:])
    out = result.stdout
    self.assertIn("200 raw lines of part07", out)
    self.assertLen(re.findall(r"^\| [12] \| ", out, re.M), 8)
    ratio = re.search(r"\| ours: sentzoo.load\(\)\.encode\(\) / binding, "
                      r"pre-tokenised input \| ([\d.]+)x \(([\d.]+)–"
                      r"([\d.]+)\) \|", out)
    self.assertIsNotNone(ratio, out)
    self.assertGreater(float(ratio.group(1)), 0)
    self.assertRegex(out, r"\| 64 \| [\d,]+ \| [\d,]+ \| [\d.]+ \|")
    self.assertRegex(out, r"Batch of one through serving_default .*median "
                          r"[\d.]+ ms")
    with open(os.path.join(record, "command.md"), encoding="utf-8") as f:
      # (Arguments are shell-quoted where they need it.)
      self.assertRegex(f.read(), r"python -m lab.benchmarks.encode '?--export=")
    with open(os.path.join(record, "measured.md"), encoding="utf-8") as f:
      text = f.read()
    self.assertIn(out.splitlines()[0], text)
    # The plot in the record, one bar per side, linked from the page.
    self.assertIn("/record/encode_speed.png)", text)
    self.assertIn("Blue: ours, raw text in; grey: the sent2vec binding", text)
    with open(os.path.join(record, "encode_speed.png"), "rb") as f:
      self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

  def test_without_the_peer_prints_ours_only(self):
    root = self.get_temp_dir()
    data_dir = os.path.join(root, "data")
    os.makedirs(os.path.join(data_dir, "gutenberg"))
    with gzip.open(os.path.join(data_dir, "gutenberg", "part07.txt.gz"),
                   "wt", encoding="utf-8") as f:
      f.write("".join(f"a dog {i}\n" for i in range(50)))
    model_dir = os.path.join(root, "model")
    model_dir_fixtures.make_siamese_cbow_model_dir(model_dir)
    export = export_model.export(model_dir, os.path.join(root, "export"),
                                 evaluate=False)
    result = subprocess.run(
        [sys.executable, "-m", "lab.benchmarks.encode", f"--export={export}",
         f"--data_dir={data_dir}", "--num_lines=50", "--repeats=1",
         "--noprecisions", f"--work_dir={root}"],
        cwd=_ROOT, capture_output=True, text=True, timeout=600, check=False)
    self.assertEqual(result.returncode, 0, result.stderr[-2000:])
    self.assertIn("ours: serving_default", result.stdout)
    self.assertNotIn("binding", result.stdout)

  def test_ours_runs_as_a_users_program(self):
    # With `-m`, sentzoo's set-up for its own commands (sentzoo/__init__.py:
    # malloc arenas capped, unused imports skipped) would run in the child
    # and flatter the peak RSS of `sentzoo.load().encode()`.
    command = encode._ours("encode", "EXPORT", "LINES", 1024, 3)  # pylint: disable=protected-access
    self.assertEqual(command[:2], [sys.executable, "-c"])
    self.assertNotIn("-m", command)
    self.assertEqual(command[3:], ["encode", "EXPORT", "LINES", "1024", "3"])


if __name__ == "__main__":
  tf.test.main()
