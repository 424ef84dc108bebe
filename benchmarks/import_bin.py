r"""`sentzoo import` of a sent2vec .bin against the C++ binding's load_model.

  python -m benchmarks.import_bin --workdir=/tmp/import_bench \
      --binding_python=../peers/venv/bin/python --rows=1500000 --dim=600

Writes a random table in the fork's format (--rows words, --dim, an output
matrix of the same shape, as the tool's own files have) unless it is there,
then runs, alternating, each in a fresh process, --repeats times:
  * the binding: `Sent2vecModel().load_model(FILE)` (its Python, the
    epfml/sent2vec Cython module);
  * `python -m sentzoo.cli import sent2vec FILE --output DIR --precision P`
    for each of --precisions (the export is deleted after each run).
Prints each side's wall seconds and peak resident memory (the child's own
ru_maxrss), the latter against the float32 table's bytes (rows x dim x 4).

--equality_bin=FILE --sentences=TXT (one tokenised sentence a line) instead
embeds the sentences with the binding and with the import of FILE, and
prints the largest absolute difference; --export_as=MODEL first writes the
zoo's MODEL with `sentzoo export-as sent2vec` and compares the binding's
vectors of that file with `sentzoo.load(MODEL).encode`.
"""

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from absl import app
from absl import flags
import numpy as np

FLAGS = flags.FLAGS
_BINDING_LOAD = ("import sent2vec, sys\n"
                 "sent2vec.Sent2vecModel().load_model(sys.argv[1])\n")
_BINDING_EMBED = ("import sent2vec, sys, numpy as np\n"
                  "m = sent2vec.Sent2vecModel(); m.load_model(sys.argv[1])\n"
                  "lines = open(sys.argv[2], encoding='utf-8').read()"
                  ".split('\\n')[:-1]\n"
                  "np.save(sys.argv[3], m.embed_sentences(lines, 2))\n")


def run_child(command):
  """(wall seconds, peak RSS bytes, CPU seconds) of `command` in a fresh
  process."""
  start = time.perf_counter()
  proc = subprocess.Popen(command, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE)
  _, status, usage = os.wait4(proc.pid, 0)
  seconds = time.perf_counter() - start
  stderr = proc.stderr.read().decode(errors="replace")
  proc.stderr.close()
  if status != 0:
    raise RuntimeError(f"{command[:4]} failed ({status}): {stderr[-2000:]}")
  return seconds, usage.ru_maxrss * 1024, usage.ru_utime + usage.ru_stime


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


def benchmark(path, rows, dim, binding_python, precisions, repeats, workdir):
  sides = {"binding load_model": [binding_python, "-c", _BINDING_LOAD,
                                  path]}
  out = os.path.join(workdir, "export")
  for precision in precisions:
    sides[f"sentzoo import ({precision})"] = [
        sys.executable, "-m", "sentzoo.cli", "import", "sent2vec", path,
        "--output", out, "--precision", precision]
  results = {side: [] for side in sides}
  for repeat in range(repeats):
    for side, command in sides.items():
      load = os.getloadavg()[0]
      seconds, rss, cpu = run_child(command)
      shutil.rmtree(out, ignore_errors=True)
      results[side].append((seconds, rss, cpu))
      print(f"run {repeat + 1} {side}: {seconds:.1f} s, {cpu:.1f} CPU-s, "
            f"peak RSS {rss / 1e9:.2f} GB (load before {load:.1f})",
            flush=True)
  table_bytes = rows * dim * 4
  base = statistics.median(r[0] for r in results["binding load_model"])
  print(f"\nfile {path}: {os.path.getsize(path) / 1e9:.2f} GB, table "
        f"{rows:,} x {dim} float32 = {table_bytes / 1e9:.2f} GB; medians "
        f"of {repeats}, sides alternating\n")
  print("| side | wall s (median, range) | x binding | CPU-s (median) | "
        "peak RSS GB | RSS / table bytes |")
  print("|---|---|---|---|---|---|")
  for side, runs in results.items():
    seconds = [r[0] for r in runs]
    rss = max(r[1] for r in runs)
    print(f"| {side} | {statistics.median(seconds):.1f} "
          f"({min(seconds):.1f}-{max(seconds):.1f}) | "
          f"{statistics.median(seconds) / base:.2f} | "
          f"{statistics.median(r[2] for r in runs):.1f} | {rss / 1e9:.2f} | "
          f"{rss / table_bytes:.2f} |")


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
  del argv
  if FLAGS.equality_bin or FLAGS.export_as:
    equality(FLAGS.equality_bin, FLAGS.sentences, FLAGS.binding_python,
             FLAGS.export_as)
    return
  os.makedirs(FLAGS.workdir, exist_ok=True)
  path = os.path.join(FLAGS.workdir, f"random_{FLAGS.rows}x{FLAGS.dim}.bin")
  if not os.path.exists(path):
    print(f"writing {path}", flush=True)
    write_random_bin(path, FLAGS.rows, FLAGS.dim)
  benchmark(path, FLAGS.rows, FLAGS.dim, FLAGS.binding_python,
            FLAGS.precisions, FLAGS.repeats, FLAGS.workdir)


if __name__ == "__main__":
  flags.DEFINE_string("workdir", None, "Where the random .bin and the "
                      "exports go (several GB).")
  flags.DEFINE_string("binding_python", None, "A Python with the "
                      "epfml/sent2vec binding (`import sent2vec`).",
                      required=True)
  flags.DEFINE_integer("rows", 1_500_000, "Words of the random table.")
  flags.DEFINE_integer("dim", 600, "Its dimension.")
  flags.DEFINE_list("precisions", ["float32", "int8"], "--precision values "
                    "of the imports.")
  flags.DEFINE_integer("repeats", 3, "Runs of each side.")
  flags.DEFINE_string("equality_bin", None, "Compare the import of this "
                      ".bin with the binding instead.")
  flags.DEFINE_string("export_as", None, "Compare this model of the zoo, "
                      "written by export-as, with the binding instead.")
  flags.DEFINE_string("sentences", None, "Tokenised sentences, one a line, "
                      "for the comparisons.")
  app.run(main)
