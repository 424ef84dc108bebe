"""Tests for export.op_check: exports with non-core ops are caught.

`python -m export.op_check` runs as a subprocess where the process matters:
the passing export (the command's exit 0), and an export of
tensorflow_text ops checked in a process that never imported it. Its other
outcomes call `op_check.main` in this process (which has imported no
extension library, as `main` checks): a subprocess would add only
TensorFlow's import (~5 s).
"""

import contextlib
import io
import os
import subprocess
import sys
import textwrap

from absl import app
import tensorflow as tf

from sentzoo.common import errors
from sentzoo.export import export_model
from sentzoo.export import hybrid_siamese_test as hybrid_siamese_export_test
from sentzoo.export import op_check
from sentzoo.export import sent2vec_test as sent2vec_export_test
from sentzoo.tests import model_dir_fixtures

_REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(*args, **kwargs):
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2",
             PYTHONPATH=_REPO_ROOT + os.pathsep + os.environ.get(
                 "PYTHONPATH", ""))
  return subprocess.run([sys.executable, *args], capture_output=True,
                        text=True, timeout=300, cwd=_REPO_ROOT, env=env,
                        **kwargs)


class _Lower(tf.Module):

  @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
  def __call__(self, sentences):
    return tf.strings.split(tf.strings.lower(sentences)).row_lengths()


class OpCheckTest(tf.test.TestCase):

  def test_core_export_passes(self):
    path = os.path.join(self.get_temp_dir(), "core")
    tf.saved_model.save(_Lower(), path)
    ops = op_check.graph_op_types(path)
    self.assertIn("StringLower", ops)
    self.assertIn("StringSplitV2", ops)
    self.assertEmpty(op_check.unregistered_op_types(path))
    done = _run("-m", "export.op_check", path)
    self.assertEqual(done.returncode, 0, done.stderr[-2000:])
    self.assertIn("are core TensorFlow ops", done.stdout)

  def test_tensorflow_text_op_fails(self):
    path = os.path.join(self.get_temp_dir(), "text")
    # Saved in a process that loads tensorflow_text; checked in one that
    # does not, like TF Serving.
    saver = _run("-c", textwrap.dedent(f"""
        import tensorflow as tf
        import tensorflow_text as text

        class M(tf.Module):
          @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
          def __call__(self, s):
            return text.WhitespaceTokenizer().tokenize(s).row_lengths()

        tf.saved_model.save(M(), {path!r})
        """))
    self.assertEqual(saver.returncode, 0, saver.stderr[-2000:])
    done = _run("-m", "export.op_check", path)
    self.assertEqual(done.returncode, 1, done.stdout + done.stderr[-2000:])
    self.assertRegex(done.stdout, r"not core TensorFlow ops: .*TFText>")

  def test_the_zoo_s_exports_are_inside_the_allowlist(self):
    makers = {
        "siamese_cbow": model_dir_fixtures.make_siamese_cbow_model_dir,
        "sent2vec": lambda d: sent2vec_export_test._make_model_dir(  # pylint: disable=protected-access
            d, word_ngrams=2),
        "hybrid_gru": hybrid_siamese_export_test.make_model_dir,
    }
    for name, make in makers.items():
      for quantize in (("none", "int8") if name == "siamese_cbow" else
                       ("none",)):
        root = os.path.join(self.get_temp_dir(), f"{name}_{quantize}")
        make(os.path.join(root, "model"))
        path = export_model.export(os.path.join(root, "model"),
                                   os.path.join(root, "export"),
                                   evaluate=False, quantize=quantize)
        self.assertEmpty(op_check.disallowed_ops(path), name)
        # The saver's own file ops are there, and allowed only there.
        self.assertContainsSubset({"SaveV2", "RestoreV2"},
                                  op_check.graph_op_types(path))

  def test_file_ops_outside_the_saver_are_refused(self):

    class WritesAFile(tf.Module):

      @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
      def __call__(self, s):
        tf.io.write_file("/tmp/op_check_test_written", s[0])
        return tf.strings.length(tf.io.read_file("/etc/hostname"))

    path = os.path.join(self.get_temp_dir(), "writes")
    tf.saved_model.save(WritesAFile(), path)
    found = op_check.disallowed_ops(path)
    self.assertTrue(any(f.startswith("WriteFile in function") for f in found),
                    found)
    self.assertTrue(any(f.startswith("ReadFile in function") for f in found),
                    found)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
      code = op_check.main(["op_check", path])
    self.assertEqual(code, 1, out.getvalue())
    self.assertIn("outside the allowlist of install: ReadFile", out.getvalue())

  def test_damaged_saved_model_is_a_user_error(self):
    path = os.path.join(self.get_temp_dir(), "damaged")
    os.makedirs(path)
    with open(os.path.join(path, "saved_model.pb"), "wb") as f:
      f.write(b"\xff\xff\xff not a proto")
    with self.assertRaisesRegex(errors.UserError, "is damaged"):
      op_check.disallowed_ops(path)

  def test_usage_error(self):
    with self.assertRaisesRegex(app.UsageError, "usage"):
      op_check.main(["op_check"])


if __name__ == "__main__":
  tf.test.main()
