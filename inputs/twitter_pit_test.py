"""Tests for inputs.twitter_pit, on fixtures written by the tests."""

import os
import tempfile

import tensorflow as tf

from sentzoo.common import errors
from sentzoo.inputs import twitter_pit

_DATA = ("51\t8 Mile\tAll the home alones\t8 mile is on\t3\tA/O\tB/O\n"
         "51\t8 Mile\tAll the home alones\tThe last rap battle\t0\tA/O\tB/O\n"
         "52\tTopic\tgreat game\twhat a game\t5\tA/O\tB/O\n")
_LABELS = "----\t0.6000\nfalse\t0.0000\ntrue\t1.0000\n"


class TwitterPitTest(tf.test.TestCase):

  def _folder(self, data=_DATA, labels=_LABELS):
    root = tempfile.mkdtemp(dir=self.get_temp_dir())
    folder = os.path.join(root, twitter_pit.FOLDER)
    os.makedirs(folder)
    with open(os.path.join(folder, "test.data"), "w") as f:
      f.write(data)
    if labels is not None:
      with open(os.path.join(folder, "test.label"), "w") as f:
        f.write(labels)
    return root

  def test_loads_pair_set(self):
    pair_set = twitter_pit.load_test_split(self._folder())
    self.assertEqual(pair_set.name, "Twitter2015.test")
    self.assertLen(pair_set, 3)
    self.assertEqual(pair_set.sentences2[2], "what a game")
    self.assertAllEqual(pair_set.scores, [3.0, 0.0, 5.0])

  def test_without_label_file(self):
    self.assertLen(twitter_pit.load_test_split(self._folder(labels=None)), 3)

  def test_mismatching_label_file(self):
    root = self._folder(labels="----\t0.6000\nfalse\t0.2000\ntrue\t1.0\n")
    with self.assertRaisesRegex(errors.DataFormatError, "does not match"):
      twitter_pit.load_test_split(root)

  def test_train_format_is_refused(self):
    root = self._folder(data="51\tT\ta\tb\t(1, 4)\tx\ty\n", labels=None)
    with self.assertRaisesRegex(errors.DataFormatError, r"test.data:1:"):
      twitter_pit.load_test_split(root)

  def test_missing_file(self):
    with self.assertRaises(errors.DataDirError):
      twitter_pit.load_test_split(tempfile.mkdtemp(dir=self.get_temp_dir()))

  def test_real_file_if_present(self):
    data_dir = os.environ.get("SENTZOO_DATA_DIR", "")
    if not os.path.isfile(os.path.join(data_dir, twitter_pit.FOLDER,
                                       "test.data")):
      self.skipTest("no data directory")
    self.assertLen(twitter_pit.load_test_split(data_dir), 972)


if __name__ == "__main__":
  tf.test.main()
