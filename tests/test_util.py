"""Test helpers for evaluation: a tiny hashing encoder and fixture files."""

import os
import shutil
import tempfile

import tensorflow as tf


class HashBagEncoder(tf.Module):
  """Averages hashed word vectors: sentences [batch] -> embeddings [batch, dim].

  Words are whitespace tokens hashed into `num_buckets` rows of a variable
  table; a sentence without words gets the zero vector.
  """

  def __init__(self, num_buckets=64, dim=8, seed=0):
    super().__init__()
    self.num_buckets = num_buckets
    self.table = tf.Variable(
        tf.random.stateless_normal([num_buckets, dim], seed=[seed, 1]),
        name="table")

  @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
  def encode(self, sentences):
    tokens = tf.strings.split(sentences)  # Ragged [batch, (words)].
    ids = tf.strings.to_hash_bucket_fast(tokens, self.num_buckets)
    vectors = tf.gather(self.table, ids)  # Ragged [batch, (words), dim].
    total = tf.reduce_sum(vectors, axis=1)  # [batch, dim]
    count = tf.cast(tokens.row_lengths(), tf.float32)[:, tf.newaxis]
    return total / tf.maximum(count, 1.0)

  @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
  def serve(self, sentences):
    return {"embeddings": self.encode(sentences)}


def save_hash_bag_encoder(module, export_dir):
  """Saves `module` with a serving_default signature; returns export_dir."""
  tf.saved_model.save(module, export_dir,
                      signatures={"serving_default": module.serve})
  return export_dir


def make_tempdir(test_case):
  """A fresh temp dir removed after the test (works without parsed flags).

  absltest's create_tempdir needs --test_tmpdir, which pytest does not parse.
  """
  path = tempfile.mkdtemp(prefix="sentzoo_eval_")
  test_case.addCleanup(shutil.rmtree, path, ignore_errors=True)
  return path


def write_file(path, content):
  """Writes str (UTF-8) or bytes to path, creating folders; returns path."""
  os.makedirs(os.path.dirname(path), exist_ok=True)
  data = content.encode("utf-8") if isinstance(content, str) else content
  with open(path, "wb") as f:
    f.write(data)
  return path


# A fixture data directory: STS2012.MSRpar (one line with an invalid UTF-8
# byte), STS2014.images, STS2015.answers-forums (two empty gold lines),
# SICK test and STSB dev. Every other canonical STS set is missing.
FIXTURE_MSRPAR = [
    (b"a man is playing a guitar .", b"a man plays the guitar .", "4.8"),
    (b"a woman slices an onion", b"a man is riding a horse", "0.4"),
    (b"caf\xff is open", b"the cafe is open today", "3.5"),
    (b"the stock fell sharply", b"shares dropped a lot", "2.9"),
]
FIXTURE_IMAGES = [
    ("a dog runs on the grass", "a dog is running on grass", "4.6"),
    ("two kids play football", "a plane lands at the airport", "0.2"),
    ("a red car is parked", "a car parked on the street", "3.1"),
]
FIXTURE_FORUMS = [
    ("how do I learn python", "what is the best way to learn python", "4"),
    ("is coffee bad for you", "the weather is nice", ""),
    ("my cat hates baths", "cats do not like water", "3"),
    ("where is the station", "the train leaves at noon", "   "),
    ("buy low sell high", "never sell at a loss", "1.5"),
]
FIXTURE_SICK = [
    ("1", "A boy is playing outdoors", "A kid is playing outside", "4.5"),
    ("2", "A man is cooking", "Nobody is cooking", "3.2"),
    ("3", "A cat sits on a mat", "Two men are running", "1.1"),
    ("4", "A woman is singing", "A lady sings a song", "4.9"),
]
FIXTURE_STSB = [
    ("a man is dancing .", "a man dances .", "5.000"),
    ("a child rides a horse .", "a dog eats food .", "0.500", "extra\tcols"),
    ("the sun is shining .", "it is a sunny day .", "3.800"),
]


def write_fixture_data_dir(data_dir):
  """Writes the fixture sets under data_dir; returns data_dir."""
  sts = os.path.join(data_dir, "sts")
  base = os.path.join(sts, "STS2012-test")
  write_file(os.path.join(base, "STS.input.MSRpar.txt"),
             b"".join(a + b"\t" + b + b"\n" for a, b, _ in FIXTURE_MSRPAR))
  write_file(os.path.join(base, "STS.gs.MSRpar.txt"),
             "".join(g + "\n" for _, _, g in FIXTURE_MSRPAR))
  for year, name, rows in ((2014, "images", FIXTURE_IMAGES),
                           (2015, "answers-forums", FIXTURE_FORUMS)):
    base = os.path.join(sts, f"STS{year}-test")
    write_file(os.path.join(base, f"STS.input.{name}.txt"),
               "".join(f"{a}\t{b}\n" for a, b, _ in rows))
    write_file(os.path.join(base, f"STS.gs.{name}.txt"),
               "".join(f"{g}\n" for _, _, g in rows))
  write_file(
      os.path.join(data_dir, "sick2014", "SICK_test_annotated.txt"),
      "pair_ID\tsentence_A\tsentence_B\trelatedness_score\t"
      "entailment_judgment\n" +
      "".join(f"{i}\t{a}\t{b}\t{s}\tNEUTRAL\n" for i, a, b, s in FIXTURE_SICK))
  write_file(
      os.path.join(sts, "STSBenchmark", "sts-dev.csv"),
      "".join("\t".join(["main-captions", "MSRvid", "2012test", f"{i:04d}",
                         row[2], row[0], row[1], *row[3:]]) + "\n"
              for i, row in enumerate(FIXTURE_STSB)))
  return data_dir


def real_data_dir():
  """$SENTZOO_DATA_DIR, else <repo>/../shared/data; None if it is absent."""
  path = os.environ.get("SENTZOO_DATA_DIR") or os.path.join(
      os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "..",
      "shared", "data")
  return path if os.path.isdir(os.path.join(path, "sts")) else None
