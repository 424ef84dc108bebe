"""Runs the `<!-- doc-test -->` Python snippets of docs/serving.md.

They run in order in one namespace, with `EXPORT` set to a small Siamese
CBOW export, so the usage shown to users stays true.
"""

import os
import re

import tensorflow as tf

from sentzoo.export import export_model
from sentzoo.tests import model_dir_fixtures

_DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "serving.md")
_SNIPPET = re.compile(r"<!-- doc-test -->\n```python\n(.*?)```", re.S)


def doc_snippets(path=_DOC):
  with open(path, encoding="utf-8") as f:
    return _SNIPPET.findall(f.read())


class ServingDocTest(tf.test.TestCase):

  def test_snippets_run(self):
    root = self.get_temp_dir()
    model_dir = os.path.join(root, "model")
    model_dir_fixtures.make_siamese_cbow_model_dir(model_dir)
    path = export_model.export(model_dir, os.path.join(root, "export"))
    snippets = doc_snippets()
    self.assertLen(snippets, 3)
    namespace = {}
    for i, snippet in enumerate(snippets):
      snippet = re.sub(r'^EXPORT = ".*"$', f"EXPORT = {path!r}", snippet,
                       flags=re.M)
      exec(compile(snippet, f"docs/serving.md snippet {i + 1}", "exec"),
           namespace)  # pylint: disable=exec-used
    self.assertEqual(namespace["vectors"].shape,
                     (2, model_dir_fixtures.DIM))
    self.assertAllClose(namespace["vectors"], namespace["same"])
    self.assertEqual(namespace["model"].output_shape, (None, 1))


if __name__ == "__main__":
  tf.test.main()
