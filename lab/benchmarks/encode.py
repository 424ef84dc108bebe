r"""Encode speed from raw text, side by side with epfml/sent2vec's binding.

  python -m lab.benchmarks.encode --export=EXPORT --data_dir=../shared/data \
      [--reference_python=PYTHON_WITH_SENT2VEC --reference_model=MODEL.bin] \
      [--other_export=EXPORT] [--record_dir=docs/records/encode]

Every side runs in a fresh process, alternating, --repeats times: a warm-up
call, then the median of 3 timed calls over --num_lines book lines. The
binding does not tokenise: it is timed on pre-tokenised lines and with
Python's tokeniser too (end to end).
"""
import json
import os
import re
import statistics
import sys
import time

from absl import flags

from lab.benchmarks import child_process
from lab import tables
from sentzoo.common import cli
from sentzoo.common import data_dir as data_dir_lib
from sentzoo.common import errors

FLAGS = flags.FLAGS

_TOKEN = r"\w+|[^\w\s]"
# The book corpus part the lines come from, and serving_default's batch.
CORPUS_PART, SERVING_BATCH_SIZE = 7, 4096
# The peer's child: runs in --reference_python, which has no sentzoo.
_PEER_CHILD = r"""
import json, re, resource, statistics, sys, time
import sent2vec
model_path, lines_path, mode, calls = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
lines = open(lines_path, encoding="utf-8").read().splitlines()
token = re.compile(%r)
def tokenise(lines):
  return [" ".join(token.findall(line.lower())) for line in lines]
model = sent2vec.Sent2vecModel()
model.load_model(model_path)
pretokenised = tokenise(lines) if mode == "pretokenised" else None
def run():
  if mode == "pretokenised":
    return model.embed_sentences(pretokenised, num_threads=2)
  return model.embed_sentences(tokenise(lines), num_threads=2)
run()
times = []
for _ in range(calls):
  start = time.perf_counter(); out = run(); times.append(time.perf_counter() - start)
  del out
print(json.dumps({"seconds": statistics.median(times), "lines": len(lines),
                  "dim": int(model.get_emb_size())}))
""" % _TOKEN


def corpus_lines(data_dir, part, count):
  """The first `count` non-blank lines of book corpus part `part`."""
  import gzip  # pylint: disable=g-import-not-at-top
  path = os.path.join(data_dir, "gutenberg", f"part{part:02d}.txt.gz")
  if not os.path.isfile(path):
    raise errors.DataDirError(f"no book corpus part at {path!r}")
  lines = []
  with gzip.open(path, "rt", encoding="utf-8") as f:
    for line in f:
      if line.strip():
        lines.append(line.rstrip("\n"))
        if len(lines) >= count:
          break
  return lines


def child_main(kind, export, lines_path, batch_size, calls):
  """One measurement in this (fresh) process; prints one JSON line."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  import sentzoo  # pylint: disable=g-import-not-at-top
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  with open(lines_path, encoding="utf-8") as f:
    lines = f.read().splitlines()
  if kind == "encode":
    model = sentzoo.load(export)
    kwargs = {"batch_size": batch_size} if batch_size else {}
    run = lambda: model.encode(lines, **kwargs)  # pylint: disable=unnecessary-lambda-assignment
  elif kind == "serving_default":
    serve = tf.saved_model.load(export).signatures["serving_default"]

    def run():
      for start in range(0, len(lines), batch_size):
        serve(sentences=tf.constant(lines[start:start + batch_size]))[
            "embeddings"].numpy()
  elif kind == "batch_of_one":
    serve = tf.saved_model.load(export).signatures["serving_default"]
    lines = lines[:2000]
    latencies = []

    def run():
      latencies.clear()
      for line in lines:
        start = time.perf_counter()
        serve(sentences=tf.constant([line]))["embeddings"].numpy()
        latencies.append(time.perf_counter() - start)
  else:
    raise ValueError(kind)
  run()
  times = []
  for _ in range(calls):
    start = time.perf_counter()
    run()
    times.append(time.perf_counter() - start)
  result = {"seconds": statistics.median(times), "lines": len(lines)}
  if kind == "batch_of_one":
    result["median_ms"] = float(np.median(latencies) * 1e3)
    result["p99_ms"] = float(np.percentile(latencies, 99) * 1e3)
  print(json.dumps(result))


# Ours runs as a user's program does (`python -c`, not `-m`): sentzoo's
# set-up for its own commands (sentzoo/__init__.py) then leaves the process
# as it is, with glibc's default arenas and all of TensorFlow's imports.
_OURS_CHILD = """
import sys
from lab.benchmarks import encode
kind, export, lines_path, batch_size, calls = sys.argv[1:]
encode.child_main(kind, export, lines_path, int(batch_size), int(calls))
"""


def _ours(kind, export, lines_path, batch_size=0, calls=3):
  return [sys.executable, "-c", _OURS_CHILD, kind, export, lines_path,
          str(batch_size), str(calls)]


def _peer(mode, lines_path, calls=3):
  return [FLAGS.reference_python, "-c", _PEER_CHILD, FLAGS.reference_model,
          lines_path, mode, str(calls)]


def precision_sts_changes(export, data_dir):
  """{precision: {set: Pearson x100, ...}} of `encode(precision=...)`."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  import sentzoo  # pylint: disable=g-import-not-at-top
  from sentzoo.evaluation import encoder as encoder_lib  # pylint: disable=g-import-not-at-top
  from sentzoo.evaluation import sts  # pylint: disable=g-import-not-at-top
  from sentzoo.evaluation import sts_data  # pylint: disable=g-import-not-at-top
  model = sentzoo.load(export)
  pair_sets = [sts_data.load_stsb_split(data_dir, "dev"),
               sts_data.load_sick_split(data_dir, "trial")]
  out = {}
  for precision in ("float32", "int8", "ubinary"):
    def as_floats(vectors, precision=precision):
      if precision == "ubinary":
        bits = np.unpackbits(vectors, axis=1)[:, :model.dim]
        return bits.astype(np.float32) * 2.0 - 1.0
      return vectors.astype(np.float32)

    encoder = encoder_lib.FunctionEncoder(
        lambda batch, precision=precision, as_floats=as_floats: as_floats(
            model.encode([s.decode("utf-8", "replace") for s in
                          batch.numpy().tolist()], precision=precision)))
    results = sts.evaluate_pair_sets(encoder, pair_sets)
    out[precision] = {name: (r.pearson, r.spearman)
                      for name, r in results.sets.items()}
  return out


def side_by_side(argv):
  data_dir = data_dir_lib.resolve_data_dir(FLAGS.data_dir)
  from sentzoo.evaluation import encoder as encoder_lib  # pylint: disable=g-import-not-at-top
  export = encoder_lib.resolve_export_dir(FLAGS.export)
  lines = corpus_lines(data_dir, CORPUS_PART, FLAGS.num_lines)
  tmp = os.path.join(FLAGS.work_dir, f"encode_lines_{os.getpid()}.txt")
  os.makedirs(FLAGS.work_dir, exist_ok=True)
  with open(tmp, "w", encoding="utf-8") as f:
    f.write("\n".join(lines) + "\n")
  tokens = sum(len(re.findall(_TOKEN, line.lower())) for line in lines)
  peer = bool(FLAGS.reference_python)
  if peer and not FLAGS.reference_model:
    raise errors.UserError("--reference_python needs --reference_model "
                           "(a sent2vec .bin)")
  out = child_process.Printed()
  say = out.say

  def measure(command):
    """A child's sentences/s and peak RSS MB, and both as table cells with
    the 1-min load before it."""
    result, done = child_process.run_json(command)
    speed, rss = result["lines"] / result["seconds"], done.peak_rss_mb
    return speed, rss, f"{speed:,.0f} | {rss:,.0f} | {done.load_before:.2f} |"

  def batch_of_one(export_dir, what):
    result, done = child_process.run_json(
        _ours("batch_of_one", export_dir, tmp, calls=1))
    say("", f"{what}: median {result['median_ms']:.3f} ms, 99th percentile "
        f"{result['p99_ms']:.3f} ms (load {done.load_before:.2f}).")

  say(f"{len(lines):,} raw lines of part{CORPUS_PART:02d} "
      f"({tokens / len(lines):.1f} tokens a line); {os.cpu_count()} CPUs; "
      f"load average before: {child_process.load_averages()}",
      f"export: {export}")
  if peer:
    say(f"peer: {FLAGS.reference_model} through {FLAGS.reference_python}")
  kinds = [("ours: sentzoo.load().encode()", _ours("encode", export, tmp)),
           (f"ours: serving_default, batch {SERVING_BATCH_SIZE}",
            _ours("serving_default", export, tmp, SERVING_BATCH_SIZE))]
  if peer:
    kinds += [("binding, pre-tokenised input", _peer("pretokenised", tmp)),
              ("binding + Python tokeniser", _peer("end_to_end", tmp))]
  say("", "| repeat | side | sentences/s | peak RSS MB | load (1 min) |",
      "|---:|---|---:|---:|---:|")

  def side(name, command):
    def one(repeat):
      speed, rss, cells = measure(command)
      say(f"| {repeat + 1} | {name} | {cells}")
      return speed, rss
    return one

  runs = child_process.alternate(
      FLAGS.repeats, {name: side(name, command) for name, command in kinds})
  say("", "| side | sentences/s, median (range) | peak RSS MB |",
      "|---|---:|---:|")
  for name, values in runs.items():
    say(f"| {name} | {tables.median_range([v[0] for v in values])} | "
        f"{tables.median_range([v[1] for v in values])} |")
  if peer:
    say("", "Ratios, ours / theirs, per repeat (median and range over "
        "repeats):", "", "| ratio | median (range) |", "|---|---:|")
    for ours_name, _ in kinds[:2]:
      for peer_name, _ in kinds[2:]:
        ratios = [o[0] / p[0] for o, p in zip(runs[ours_name],
                                              runs[peer_name])]
        say(f"| {ours_name} / {peer_name} | "
            f"{tables.median_range(ratios, '.2f', 'x')} |")
      rss = [o[1] / p[1] for o, p in zip(runs[ours_name],
                                         runs[kinds[2][0]])]
      say(f"| peak RSS of {ours_name} / binding's | "
          f"{tables.median_range(rss, '.2f', 'x')} |")
  if FLAGS.batch_sizes:
    say("", "`encode(batch_size=...)`, one process each (ours only):", "",
        "| batch_size | sentences/s | peak RSS MB | load (1 min) |",
        "|---:|---:|---:|---:|")
    for size in FLAGS.batch_sizes:
      say(f"| {int(size):,} | "
          + measure(_ours("encode", export, tmp, int(size)))[2])
  batch_of_one(export, "Batch of one through serving_default (2,000 lines, "
               "one call each)")
  if FLAGS.other_export:
    other = encoder_lib.resolve_export_dir(FLAGS.other_export)
    say("", f"Other export: {other}", "",
        "| side | sentences/s | peak RSS MB | load (1 min) |",
        "|---|---:|---:|---:|")
    for name, command in (
        ("encode()", _ours("encode", other, tmp)),
        (f"serving_default, batch {SERVING_BATCH_SIZE}",
         _ours("serving_default", other, tmp, SERVING_BATCH_SIZE))):
      say(f"| {name} | " + measure(command)[2])
    batch_of_one(other, "Its batch of one through serving_default")
  if FLAGS.precisions:
    changes = precision_sts_changes(export, data_dir)
    names = sorted(changes["float32"])
    say("", "STS of `encode(precision=...)` (Pearson / Spearman x100; "
        "change from float32):", "",
        "| precision | " + " | ".join(names) + " |",
        "|---|" + "---:|" * len(names))
    for precision, sets in changes.items():
      cells = []
      for name in names:
        (p, s), (p0, s0) = sets[name], changes["float32"][name]
        cells.append(f"{p:.2f} / {s:.2f}" + (
            "" if precision == "float32" else
            f" ({p - p0:+.2f} / {s - s0:+.2f})"))
      say(f"| {precision} | " + " | ".join(cells) + " |")
  say("", f"Load average after: {child_process.load_averages()}")
  os.remove(tmp)
  if FLAGS.record_dir:
    os.makedirs(FLAGS.record_dir, exist_ok=True)
    png = os.path.join(FLAGS.record_dir, "encode_speed.png")
    caption = plot_sides(runs, png, peer)
    out[0:0] = [f"![Sentences per second of each side]"
                f"({os.path.relpath(png, 'docs')})", "", caption, ""]
    child_process.write_record(FLAGS.record_dir, "lab.benchmarks.encode",
                               argv, out)


def plot_sides(runs, path, peer):
  """Sentences/s of each side on one axis: the median as a bar, the range
  over repeats as a line across it. Returns the caption."""
  import matplotlib  # Only the plot needs matplotlib (the [plots] extra).
  matplotlib.use("Agg")
  from matplotlib import pyplot
  names = list(runs)
  medians = [statistics.median(v[0] for v in runs[n]) for n in names]
  lows = [m - min(v[0] for v in runs[n]) for m, n in zip(medians, names)]
  highs = [max(v[0] for v in runs[n]) - m for m, n in zip(medians, names)]
  figure, axis = pyplot.subplots(figsize=(7, 0.6 * len(names) + 1.2))
  colours = ["tab:blue" if n.startswith("ours") else "tab:grey" for n in names]
  axis.barh(range(len(names)), [m / 1000 for m in medians], color=colours,
            xerr=[[x / 1000 for x in lows], [x / 1000 for x in highs]],
            capsize=4)
  axis.set_yticks(range(len(names)), names, fontsize=8)
  axis.invert_yaxis()
  axis.set_xlabel("thousand sentences per second (median; line: range)")
  axis.set_xlim(left=0)
  axis.grid(axis="x", alpha=0.3)
  figure.tight_layout()
  figure.savefig(path, dpi=110)
  pyplot.close(figure)
  if not peer:
    return "Ours only (no --reference_python): sentences/s of each side."
  return ("Blue: ours, raw text in; grey: the sent2vec binding. A blue bar as "
          "long as the first grey one keeps pace with the binding on "
          "pre-tokenised input while also tokenising; the last grey bar is "
          "what a user of the binding gets from raw text.")


def main(argv):
  del argv
  side_by_side(sys.argv[1:])


if __name__ == "__main__":
  flags.DEFINE_string("export", None, "Export folder (base or version).",
                      required=True)
  flags.DEFINE_string("data_dir", None,
                      f"Data directory (default ${data_dir_lib.ENV_VAR}).")
  flags.DEFINE_integer("num_lines", 100_000, "Lines encoded per call.",
                       lower_bound=1)
  flags.DEFINE_integer("repeats", 3, "Alternating repeats.", lower_bound=1)
  flags.DEFINE_list("batch_sizes", [], "encode(batch_size=...) values to "
                    "measure, e.g. 1024,2048,4096,8192.")
  flags.DEFINE_string("reference_python", None, "A Python that imports "
                      "`sent2vec` (epfml/sent2vec's binding); optional.")
  flags.DEFINE_string("reference_model", None, "The sent2vec .bin model "
                      "for the binding.")
  flags.DEFINE_string("other_export", None, "Another export to measure "
                      "(ours only), e.g. Siamese CBOW's.")
  flags.DEFINE_bool("precisions", True, "Measure the STS change of each "
                    "encode(precision=...) on STS-B dev and SICK trial.")
  flags.DEFINE_string("record_dir", None, "Record the results and their "
                      "plot here: docs/records/encode for "
                      "docs/encode_speed.md.")
  flags.DEFINE_string("work_dir", "/tmp", "Where the lines file goes.")
  cli.run(main)
