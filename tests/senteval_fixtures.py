"""Test fixtures: a tiny SentEval / MSRP data directory in the real formats.

The sentences are built from two disjoint word pools per class, so that a
bag-of-words encoder separates the classes well (classifier tests can then
expect high accuracy), and the files exercise the loaders' format cases:
latin-1 bytes (MR, SUBJ, TREC train), an empty line (CR), a byte-order mark
and CRLF line ends (MSRP).
"""

import os

import numpy as np

POSITIVE_WORDS = ("good", "great", "superb", "lovely", "fine", "happy",
                  "bright", "warm")
NEGATIVE_WORDS = ("bad", "awful", "poor", "sad", "dull", "boring", "cold",
                  "ugly")
NEUTRAL_WORDS = ("the", "a", "film", "story", "it", "was", "and", "very")
TREC_WORDS = {
    "ABBR": ("abbreviation", "stand", "acronym"),
    "DESC": ("describe", "definition", "meaning"),
    "ENTY": ("animal", "color", "thing"),
    "HUM": ("who", "person", "inventor"),
    "LOC": ("where", "city", "country"),
    "NUM": ("many", "year", "distance"),
}


def _sentence(rng, pool, length=6):
  words = list(rng.choice(pool, size=3)) + list(
      rng.choice(NEUTRAL_WORDS, size=length - 3))
  rng.shuffle(words)
  return " ".join(words)


def _write(path, data: bytes):
  os.makedirs(os.path.dirname(path), exist_ok=True)
  with open(path, "wb") as f:
    f.write(data)
  return path


def _lines(sentences, encoding="utf-8", newline="\n") -> bytes:
  return "".join(s + newline for s in sentences).encode(encoding)


def write_senteval_fixture(data_dir: str, per_class: int = 30,
                           seed: int = 0) -> dict:
  """Writes <data_dir>/senteval/{MR,CR,SUBJ,MPQA,TREC} and <data_dir>/msrp.

  Returns:
    {task: expected number of examples} ({"TREC": (train, test), "MSRP":
    (train + val, test)}).
  """
  rng = np.random.default_rng(seed)
  base = os.path.join(data_dir, "senteval")
  pos = [_sentence(rng, POSITIVE_WORDS) for _ in range(per_class)]
  neg = [_sentence(rng, NEGATIVE_WORDS) for _ in range(per_class)]
  # MR: latin-1 with a non-ASCII byte in one sentence.
  _write(os.path.join(base, "MR", "rt-polarity.pos"),
         _lines(["caf\u00e9 " + pos[0]] + pos[1:], "latin-1"))
  _write(os.path.join(base, "MR", "rt-polarity.neg"), _lines(neg, "latin-1"))
  # CR: UTF-8, one empty line that counts as a sample (as in SentEval).
  _write(os.path.join(base, "CR", "custrev.pos"), _lines(pos[:-1] + [""]))
  _write(os.path.join(base, "CR", "custrev.neg"), _lines(neg))
  _write(os.path.join(base, "SUBJ", "subj.subjective"),
         _lines(pos, "latin-1"))
  _write(os.path.join(base, "SUBJ", "subj.objective"), _lines(neg, "latin-1"))
  _write(os.path.join(base, "MPQA", "mpqa.pos"), _lines(pos))
  _write(os.path.join(base, "MPQA", "mpqa.neg"), _lines(neg + neg[:5]))

  def trec_lines(count):
    out = []
    for i in range(count):
      label = list(TREC_WORDS)[i % len(TREC_WORDS)]
      question = _sentence(rng, TREC_WORDS[label], length=5)
      out.append(f"{label}:fine {question} ?")
    return out

  train = trec_lines(12 * len(TREC_WORDS))
  train[1] = train[1].replace("?", "na\u00efve ?")
  _write(os.path.join(base, "TREC", "train_5500.label"),
         _lines(train, "latin-1"))
  _write(os.path.join(base, "TREC", "TREC_10.label"),
         _lines(trec_lines(4 * len(TREC_WORDS))))

  def msrp_rows(count):
    rows = []
    for i in range(count):
      s1 = _sentence(rng, POSITIVE_WORDS + NEGATIVE_WORDS)
      if i % 3:
        rows.append(("1", s1, s1 + " indeed"))
      else:
        rows.append(("0", s1, _sentence(rng, TREC_WORDS["LOC"])))
    return rows

  header = "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String"

  def msrp_file(rows, bom):
    text = (("\ufeff" if bom else "") + header + "\r\n" + "".join(
        f"{q}\t{i}\t{i + 1000}\t{a}\t{b}\r\n"
        for i, (q, a, b) in enumerate(rows)))
    return text.encode("utf-8")

  msrp = os.path.join(data_dir, "msrp")
  _write(os.path.join(msrp, "msr-para-train.tsv"),
         msrp_file(msrp_rows(48), True))
  _write(os.path.join(msrp, "msr-para-val.tsv"), msrp_file(msrp_rows(12),
                                                           False))
  _write(os.path.join(msrp, "msr-para-test.tsv"), msrp_file(msrp_rows(30),
                                                            True))
  return {"MR": 2 * per_class, "CR": 2 * per_class, "SUBJ": 2 * per_class,
          "MPQA": 2 * per_class + 5, "TREC": (len(train), 24),
          "MSRP": (60, 30)}


FIXTURE_VOCABULARY = tuple(sorted(set(
    POSITIVE_WORDS + NEGATIVE_WORDS + NEUTRAL_WORDS +
    sum(TREC_WORDS.values(), ()) + ("indeed", "?"))))
