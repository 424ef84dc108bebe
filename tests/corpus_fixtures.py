"""A tiny book corpus in the data directory's layout, for trainer tests."""

import gzip
import os
import random


def write_book_corpus(data_dir, seed=0, parts=(1, 2), books_per_part=3,
                      lines_per_book=250, vocabulary_size=60):
  """Writes <data_dir>/gutenberg/partNN.txt.gz and index.tsv.

  Each part holds `books_per_part` books of `lines_per_book` random
  sentences (2-9 words of w0..w{vocabulary_size - 1} and a full stop),
  separated by empty lines, as in the real corpus.
  """
  rng = random.Random(seed)
  words = [f"w{i}" for i in range(vocabulary_size)]
  folder = os.path.join(data_dir, "gutenberg")
  os.makedirs(folder, exist_ok=True)
  with open(os.path.join(folder, "index.tsv"), "w") as f:
    f.write("part\tbook_order_in_part\tfirst_line_in_part\tnum_sentences\n")
    for part in parts:
      for book in range(books_per_part):
        f.write(f"{part}\t{book}\t{1 + (lines_per_book + 1) * book}\t"
                f"{lines_per_book}\n")
  for part in parts:
    books = []
    for _ in range(books_per_part):
      lines = [" ".join(rng.choice(words) for _ in range(rng.randint(2, 9)))
               + "." for _ in range(lines_per_book)]
      books.append("\n".join(lines))
    with gzip.open(os.path.join(folder, f"part{part:02d}.txt.gz"), "wt") as f:
      f.write("\n\n".join(books) + "\n")


def write_topic_corpus(data_dir, lines=600, seed=0):
  """Writes <data_dir>/gutenberg/part01.txt.gz: `lines` sentences of 3-8
  words t<k>w0..t<k>w9 of one topic k of 4 and a full stop, so words of a
  topic co-occur and a Sent2Vec model has something to learn."""
  rng = random.Random(seed)
  folder = os.path.join(data_dir, "gutenberg")
  os.makedirs(folder, exist_ok=True)
  sentences = []
  for _ in range(lines):
    topic = rng.randrange(4)
    words = [f"t{topic}w{rng.randrange(10)}" for _ in range(rng.randint(3, 8))]
    sentences.append(" ".join(words) + " .")
  with gzip.open(os.path.join(folder, "part01.txt.gz"), "wt") as f:
    f.write("\n".join(sentences) + "\n")
