"""Tests for export.op_check: exports with non-core ops are caught."""

import os
import subprocess
import sys
import textwrap

import tensorflow as tf

from sentzoo.export import op_check

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

  def test_usage_error(self):
    done = _run("-m", "export.op_check")
    self.assertNotEqual(done.returncode, 0)
    self.assertIn("usage", done.stderr)


if __name__ == "__main__":
  tf.test.main()
