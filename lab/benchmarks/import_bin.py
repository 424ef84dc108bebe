r"""`sentzoo import` of a sent2vec .bin against the C++ binding's load_model.

  python -m lab.benchmarks.import_bin --work_dir=$SCRATCH \
      --binding_python=../peers/venv/bin/python --rows=1500000 --dim=600 \
      [--record_dir=docs/records/import_bin]

Writes a random table in the fork's format (--rows words, --dim, an output
matrix of the same shape, as the tool's own files have) unless it is there,
then runs, alternating, each in a fresh process, --repeats times:
  * the binding: `Sent2vecModel().load_model(FILE)` (its Python, the
    epfml/sent2vec Cython module);
  * `python -m sentzoo.cli import sent2vec FILE --output DIR --precision P`
    for each of --precisions (the export is deleted after each run).
Prints each side's wall seconds and peak resident memory (the child's own
ru_maxrss, `child_process.run`), the latter against the float32 table's
bytes (rows x dim x 4). --record_dir records the "## Measured" section of
docs/import.md (`make docs` writes it into the page).

--equality_bin=FILE --sentences=TXT (one tokenised sentence a line) instead
embeds the sentences with the binding and with the import of FILE, and
prints the largest absolute difference; --export_as=MODEL first writes the
zoo's MODEL with `sentzoo export-as sent2vec` and compares the binding's
vectors of that file with `sentzoo.load(MODEL).encode`.
"""

import os
import shutil
import subprocess
import sys
import tempfile

from absl import flags
import numpy as np

from lab import tables
from lab.benchmarks import child_process
from sentzoo.common import cli

FLAGS = flags.FLAGS
_BINDING_LOAD = ("import sent2vec, sys\n"
                 "sent2vec.Sent2vecModel().load_model(sys.argv[1])\n")
_BINDING_EMBED = ("import sent2vec, sys, numpy as np\n"
                  "m = sent2vec.Sent2vecModel(); m.load_model(sys.argv[1])\n"
                  "lines = open(sys.argv[2], encoding='utf-8').read()"
                  ".split('\\n')[:-1]\n"
                  "np.save(sys.argv[3], m.embed_sentences(lines, 2))\n")
BINDING = "binding load_model"


def write_random_bin(path, rows, dim):
  """A sent2vec .bin of `rows` words and a N(0, 0.1) float32 table."""
  from sentzoo.inputs import fasttext_bin  # pylint: disable=g-import-not-at-top
  words = [f"w{i}" for i in range(rows - 1)]
  counts = np.arange(rows - 1, 0, -1)
  rng = np.random.default_rng(0)
  step = 1 << 14
  chunks = (rng.normal(0, 0.1, size=(min(step, rows - s), dim)).astype(
      np.float32) for s in range(0, rows, step))
  fasttext_bin.write(path, words, counts, chunks, rows, dim, 1, 0)


def commands(path, binding_python, precisions, out):
  """{side: the command of one run}: the binding's, then one a precision."""
  sides = {BINDING: [binding_python, "-c", _BINDING_LOAD, path]}
  for precision in precisions:
    sides[f"sentzoo import ({precision})"] = [
        sys.executable, "-m", "sentzoo.cli", "import", "sent2vec", path,
        "--output", out, "--precision", precision]
  return sides


def benchmark(path, rows, dim, sides, repeats, out):
  """Runs the sides alternating; the lines of the page's section."""
  printed = child_process.Printed()
  table_bytes = rows * dim * 4
  printed.say(
      f"A random {dim}-d table of {rows:,} words written in the format, with "
      f"an output matrix of the same shape, as the tool's files have: "
      f"{os.path.getsize(path) / 1e9:.2f} GB, the table "
      f"{table_bytes / 1e9:.2f} GB. Each side in a fresh process, "
      f"alternating, {repeats} times; {os.cpu_count()} CPUs; load average "
      f"before: {child_process.load_averages()}.", "",
      "| repeat | side | wall s | peak RSS GB | load (1 min) |",
      "|---:|---|---:|---:|---:|")

  def side(name, command):
    def one(repeat):
      done = child_process.run(command)
      shutil.rmtree(out, ignore_errors=True)
      printed.say(f"| {repeat + 1} | {name} | {done.seconds:.1f} | "
                  f"{done.peak_rss_mb * 2**20 / 1e9:.2f} | "
                  f"{done.load_before:.2f} |")
      return done.seconds, done.peak_rss_mb * 2**20
    return one

  runs = child_process.alternate(
      repeats, {name: side(name, command) for name, command in sides.items()})
  printed.say("", "| side | wall s, median (range) | x binding, per repeat | "
              "peak RSS GB, median (range) | peak RSS / table bytes |",
              "|---|---:|---:|---:|---:|")
  base = [seconds for seconds, _ in runs[BINDING]]
  for name, values in runs.items():
    seconds = [s for s, _ in values]
    rss = [r for _, r in values]
    printed.say(
        f"| {name} | {tables.median_range(seconds, '.1f')} | "
        f"{tables.median_range(child_process.ratios(seconds, base), '.2f')} | "
        f"{tables.median_range([r / 1e9 for r in rss], '.2f')} | "
        f"{tables.median_range([r / table_bytes for r in rss], '.2f')} |")
  printed.say("", "Targets: peak RSS at most 1.3 x the float32 table's bytes "
              "(0.5 x with int8), time at most 2 x the binding's load_model. "
              f"Load average after: {child_process.load_averages()}.")
  return printed


def equality(path, sentences_path, binding_python, model=None):
  """Max |binding - zoo| over the sentences; with `model`, of its export-as
  file against `sentzoo.load(model)`."""
  import sentzoo  # pylint: disable=g-import-not-at-top
  from sentzoo import interop  # pylint: disable=g-import-not-at-top
  with open(sentences_path, encoding="utf-8") as f:
    sentences = f.read().split("\n")[:-1]
  with tempfile.TemporaryDirectory() as tmp:
    if model is not None:
      path = os.path.join(tmp, "export_as.bin")
      interop.export_as("sent2vec", model, path)
      ours = sentzoo.load(model).encode(sentences)
    else:
      export = interop.import_file("sent2vec", path,
                                   output_dir=os.path.join(tmp, "export"))
      ours = sentzoo.load(export).encode(sentences)
    subprocess.run([binding_python, "-c", _BINDING_EMBED, path,
                    sentences_path, os.path.join(tmp, "b.npy")], check=True)
    theirs = np.load(os.path.join(tmp, "b.npy"))
  diff = np.abs(ours - theirs)
  print(f"{len(sentences):,} sentences, dim {ours.shape[1]}: max |binding - "
        f"zoo| = {diff.max():.3g} (mean {diff.mean():.3g}); "
        f"{int((np.abs(theirs).sum(1) == 0).sum())} all-zero rows")


def main(argv):
  cli.reject_arguments(argv)
  if FLAGS.equality_bin or FLAGS.export_as:
    equality(FLAGS.equality_bin, FLAGS.sentences, FLAGS.binding_python,
             FLAGS.export_as)
    return
  cli.require_flags("work_dir")
  os.makedirs(FLAGS.work_dir, exist_ok=True)
  path = os.path.join(FLAGS.work_dir, f"random_{FLAGS.rows}x{FLAGS.dim}.bin")
  if not os.path.exists(path):
    print(f"writing {path}", flush=True)
    write_random_bin(path, FLAGS.rows, FLAGS.dim)
  out = os.path.join(FLAGS.work_dir, "export")
  printed = benchmark(path, FLAGS.rows, FLAGS.dim, commands(
      path, FLAGS.binding_python, FLAGS.precisions, out), FLAGS.repeats, out)
  if FLAGS.record_dir:
    args = [a for a in sys.argv[1:] if not a.startswith(
        ("--work_dir", "--binding_python"))]
    child_process.write_record(FLAGS.record_dir, "lab.benchmarks.import_bin",
                               ["--work_dir=SCRATCH",
                                "--binding_python=PYTHON", *args], printed)


if __name__ == "__main__":
  flags.DEFINE_string("work_dir", None, "Where the random .bin and the "
                      "exports go (several GB).")
  flags.DEFINE_string("binding_python", None, "A Python with the "
                      "epfml/sent2vec binding (`import sent2vec`).",
                      required=True)
  flags.DEFINE_integer("rows", 1_500_000, "Words of the random table.")
  flags.DEFINE_integer("dim", 600, "Its dimension.")
  flags.DEFINE_list("precisions", ["float32", "int8"], "--precision values "
                    "of the imports.")
  flags.DEFINE_integer("repeats", 3, "Runs of each side.")
  flags.DEFINE_string("record_dir", None, "Record the \"## Measured\" "
                      "section of docs/import.md here "
                      "(docs/records/import_bin: `make docs` writes it).")
  flags.DEFINE_string("equality_bin", None, "Compare the import of this "
                      ".bin with the binding instead.")
  flags.DEFINE_string("export_as", None, "Compare this model of the zoo, "
                      "written by export-as, with the binding instead.")
  flags.DEFINE_string("sentences", None, "Tokenised sentences, one a line, "
                      "for the comparisons.")
  cli.run(main)
