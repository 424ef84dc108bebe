r"""Word-vector norm against corpus frequency (Kenter et al. 2016, sec. 5).

After training, the paper finds frequent words shorter than content words.
This prints each model's median norm per frequency band and plots, on one
pair of axes, norm / the model's median against log frequency (median and
quartiles per bin). The record (--output_record) keeps the binned curves, so
the plot can be drawn again without the runs (--from_record):

  python -m lab.reports.word_norms --model_dir=RUN --export=RUN/export/1 \
      --output_png=PNG --output_record=JSON
"""

import json
import os

from absl import flags
import numpy as np
import tensorflow as tf

from lab import records
from lab import tables
from sentzoo.common import cli
from sentzoo.common import errors
from sentzoo.common import model_dir as model_dir_lib

# Frequency bands: the 100 most frequent words, then up to each bound.
BANDS = (100, 1000, 10000, 100000)


def read_vocabulary(path):
  """(words, int64 counts) of a `word<TAB>count` vocabulary file, in file
  order."""
  words, counts = [], []
  with open(path, encoding="utf-8") as f:
    for number, line in enumerate(f, start=1):
      parts = line.rstrip("\n").split("\t")
      if len(parts) != 2 or not parts[1].isdigit():
        raise errors.DataFormatError(path, number, "expected 'word<TAB>count'")
      words.append(parts[0])
      counts.append(int(parts[1]))
  return words, np.array(counts, np.int64)


def extremes(words, norms, counts, size=10, min_count=1000):
  """(the `size` shortest, the `size` longest) words among those seen at
  least `min_count` times (the paper lists both ends of its vocabulary)."""
  frequent = np.flatnonzero(counts >= min_count)
  order = frequent[np.argsort(norms[frequent], kind="stable")]
  return ([words[i] for i in order[:size]],
          [words[i] for i in order[::-1][:size]])


def band_medians(norms, counts, bands=BANDS):
  """[(label, words, median norm)] per frequency-rank band."""
  order = np.argsort(-counts, kind="stable")
  rows, start = [], 0
  for end in bands:
    end = min(end, len(order))
    if end <= start:
      break
    members = order[start:end]
    rows.append((f"ranks {start + 1:,}-{end:,}", len(members),
                 float(np.median(norms[members]))))
    start = end
  return rows


def spearman_norm_frequency(norms, counts):
  """Spearman's rho between norm and count (negative: frequent words are
  shorter)."""
  from scipy import stats  # Only this report needs scipy.
  return float(stats.spearmanr(norms, counts).statistic)


def binned_curve(norms, counts, bins=12):
  """[{"log10_count", "words", "q25", "median", "q75"}] of norm / median
  norm in each non-empty one of `bins` equal log10(count) bins."""
  relative = norms / np.median(norms)
  logs = np.log10(counts)
  edges = np.linspace(logs.min(), logs.max() + 1e-9, bins + 1)
  out = []
  for low, high in zip(edges[:-1], edges[1:]):
    members = relative[(logs >= low) & (logs < high)]
    if members.size:
      q25, median, q75 = np.percentile(members, [25, 50, 75])
      out.append({"log10_count": float((low + high) / 2),
                  "words": int(members.size), "q25": float(q25),
                  "median": float(median), "q75": float(q75)})
  return out


def caption(record):
  """What to look at, from the record's numbers."""
  parts = []
  for name, entry in record.items():
    curve = entry["curve"]
    parts.append(f"{name}: {curve[-1]['median']:.2f} for the most frequent "
                 f"bin ({curve[-1]['words']:,} words), "
                 f"{curve[0]['median']:.2f} for the rarest "
                 f"({curve[0]['words']:,} words; Spearman "
                 f"{entry['spearman_norm_count']:+.3f} over all words)")
  return ("Median word-vector norm, relative to the model's median, per "
          "frequency bin (shaded: quartiles). The paper (section 5) finds "
          "frequent words shorter after training: the line would fall to "
          "the right. " + "; ".join(parts) + ".")


def plot(record, path):
  """One panel, shared axes: each model's binned curve (`binned_curve`)."""
  def draw(axis):
    for name, entry in record.items():
      curve = entry["curve"]
      x = [b["log10_count"] for b in curve]
      line, = axis.plot(
          x, [b["median"] for b in curve], marker="o", markersize=5,
          linewidth=2,
          label=f"{name} (Spearman {entry['spearman_norm_count']:+.3f})")
      axis.fill_between(x, [b["q25"] for b in curve],
                        [b["q75"] for b in curve], color=line.get_color(),
                        alpha=0.15)
    axis.axhline(1.0, color="grey", linewidth=0.8, linestyle="--")
  tables.line_plot(path, "Do frequent words get shorter vectors?",
                       "log10 corpus count of the word",
                       "norm / the model's median norm", draw)


# docs/siamese_cbow.md's plot: the demo model's record.
DEMO_RECORD = "docs/records/word_norms/siamese_cbow_demo.json"


def caption_part(context):
  """The demo plot's caption (lab/docs.py)."""
  del context
  return f"*{caption(records.read_json(DEMO_RECORD))}*\n"


def draw_demo(path):
  """docs/siamese_cbow_word_norms.png from its record (lab/docs.py)."""
  plot(records.read_json(DEMO_RECORD), path)


def define_flags(flag_values):
  flags.DEFINE_multi_string("model_dir", [], "Model directory (its vocab.txt "
                            "holds the counts); repeat to compare.",
                            flag_values=flag_values)
  flags.DEFINE_multi_string("export", [], "The SavedModel export of each "
                            "--model_dir (its `embeddings` table).",
                            flag_values=flag_values)
  flags.DEFINE_list("names", [], "A label per model (default: the folder).",
                    flag_values=flag_values)
  flags.DEFINE_string("output_png", None, "Write the scatter plot here.",
                      flag_values=flag_values)
  flags.DEFINE_string("output_record", None, "Write what the plot draws "
                      "here (JSON), to draw it again with --from_record.",
                      flag_values=flag_values)
  flags.DEFINE_string("from_record", None, "Draw --output_png from this "
                      "record instead of reading models.",
                      flag_values=flag_values)


def run(argv):
  """Runs the command in-process (argv[0] is the program)."""
  return report(cli.parse_own_flags(define_flags, argv))


def report(flag_values):
  """Prints (and writes) the norm report for parsed flags."""
  if flag_values.from_record:
    with open(flag_values.from_record, encoding="utf-8") as f:
      record = json.load(f)
    if flag_values.output_png:
      plot(record, flag_values.output_png)
    print(caption(record))
    return
  model_dirs, exports = flag_values.model_dir, flag_values.export
  if not model_dirs or len(model_dirs) != len(exports):
    raise errors.UserError("give one --export per --model_dir (at least one)")
  names = flag_values.names or [os.path.basename(os.path.normpath(d))
                                for d in model_dirs]
  if len(names) != len(model_dirs):
    raise errors.UserError("--names needs one label per --model_dir")
  record = {}
  for name, model_dir, export in zip(names, model_dirs, exports):
    words, counts = read_vocabulary(
        os.path.join(model_dir, model_dir_lib.VOCABULARY_FILE))
    table = getattr(tf.saved_model.load(export), "embeddings", None)
    if table is None:
      raise errors.UserError(
          f"{export} has no float `embeddings` word table (a quantised "
          "export?): pass a float32 export of the model")
    table = table.numpy()
    if table.shape[0] != len(counts) + 1:
      raise errors.UserError(
          f"{export}: {table.shape[0]} rows, but {model_dir}/vocab.txt has "
          f"{len(counts)} words (+1 padding row)")
    norms = np.linalg.norm(table[1:], axis=1)
    rho = spearman_norm_frequency(norms, counts)
    rows = band_medians(norms, counts)
    shortest, longest = extremes(words, norms, counts)
    print(f"{name}: Spearman(norm, count) = {rho:+.3f}")
    for band, n, median in rows:
      print(f"  {band:>22}  {n:>7,} words  median norm {median:.4f}")
    print(f"  shortest of the words seen 1,000+ times: {' '.join(shortest)}")
    print(f"  longest of the words seen 1,000+ times:  {' '.join(longest)}")
    record[name] = {"spearman_norm_count": round(rho, 4),
                    "curve": binned_curve(norms, counts)}
  if flag_values.output_record:
    with open(flag_values.output_record, "w", encoding="utf-8") as f:
      json.dump(record, f, indent=1)
  if flag_values.output_png:
    plot(record, flag_values.output_png)
    print(f"wrote {flag_values.output_png}")
  print(caption(record))
  return record


if __name__ == "__main__":
  cli.run_with_own_flags(define_flags, report)
