r"""The `sentzoo` command: the everyday jobs without writing Python.

  sentzoo encode MODEL [--input FILE|-] [--output out.npy|out.tsv|-]
  sentzoo similarity MODEL "A man plays a guitar." "Someone plays music."
  sentzoo search MODEL --corpus FILE --query TEXT [-k 10]
  sentzoo evaluate MODEL [--data_dir DIR]      # the STS / SICK / STS-B table
  sentzoo models [--verify]                    # the catalogue and the store
  sentzoo train NAME... | --all [--data_dir DIR] [-- TRAINER FLAGS]
  sentzoo pack NAME [--output FILE]
  sentzoo install ARCHIVE [--replace] [--max_bytes N]
  sentzoo import FORMAT FILE --name NAME | --output DIR [--precision P]
  sentzoo export-as FORMAT MODEL OUT           # docs/import.md
  sentzoo serve NAME_OR_PATH... [--host 127.0.0.1] [--port 8080]

MODEL is an export's path or a model's name (sentzoo/catalogue.py; installed
in the store $SENTZOO_HOME, sentzoo/store.py). `python -m sentzoo.cli` is the
same command.

Exit codes as the trainers' (common/errors.py): 0 done; 2 a user's mistake,
one `error: ...` line; 75 interrupted (a training run resumes when run
again); 1 a bug (with its traceback).
"""

import argparse
import contextlib
import hashlib
import heapq
import importlib
import io
import os
import sys
import time

from sentzoo.common import console
from sentzoo.common import resources

# The console script (`sentzoo`, not `python -m`) is sentzoo's own program
# too: TensorFlow's start-up lines are hidden, malloc's arenas capped and
# unused optional imports skipped, as for `python -m sentzoo.cli`.
console.quiet_before_tensorflow()
resources.limit_malloc_arenas()
resources.skip_unused_optional_imports()

from absl import flags  # pylint: disable=g-import-not-at-top,g-bad-import-order

import sentzoo  # pylint: disable=g-import-not-at-top

from sentzoo import archive  # pylint: disable=g-import-not-at-top
from sentzoo import catalogue  # pylint: disable=g-import-not-at-top
from sentzoo import store as store_lib  # pylint: disable=g-import-not-at-top
from sentzoo.common import cli  # pylint: disable=g-import-not-at-top
from sentzoo.common import data_dir as data_dir_lib  # pylint: disable=g-import-not-at-top
from sentzoo.common import disk_errors  # pylint: disable=g-import-not-at-top
from sentzoo.common import errors  # pylint: disable=g-import-not-at-top
from sentzoo.common import interrupts  # pylint: disable=g-import-not-at-top

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Input lines read, encoded and written at a time: what bounds the memory
# of `encode` and `search`, whatever the input's size.
ENCODE_CHUNK_BATCHES = 16
SEARCH_CACHE_SUBDIR = os.path.join("cache", "search")
# The search cache's cap: the least recently used corpora go first.
SEARCH_CACHE_BYTES = 2 << 30


class CommandInterrupted(errors.Interrupted):
  """Ctrl-C during a command that keeps no state: exit 75 all the same."""

  def __init__(self, what):  # pylint: disable=super-init-not-called
    Exception.__init__(self, f"interrupted: {what} stopped; nothing was "
                       "written")
    self.step = 0


class _Parser(argparse.ArgumentParser):
  """argparse whose mistakes are one `error:` line (errors.UserError)."""

  def error(self, message):
    raise errors.UserError(f"{self.prog}: {message} (--help: usage)")


# ------------------------------------------------------------- helpers --


def _load(model):
  from sentzoo import sentence_model  # pylint: disable=g-import-not-at-top
  return sentence_model.load(store_lib.resolve(model))


def encode_all(model, sentences, batch_size, what="encoding"):
  """`model.encode` (no progress bar: `_encoded_chunks` shows one); a
  Ctrl-C is `CommandInterrupted`."""
  try:
    return model.encode(sentences, batch_size=batch_size,
                        show_progress_bar=False)
  except (KeyboardInterrupt, Exception) as e:  # pylint: disable=broad-except
    if not interrupts.is_interrupt(e):
      raise
    raise CommandInterrupted(what) from e


def _line_chunks(path, size):
  """The lines of `path` ('-': stdin), in lists of at most `size`, without
  their newline. A file is split as stdin is: at "\n" only (a stray "\r"
  stays in its line; one before the "\n" goes), bytes that are not UTF-8
  replaced."""
  try:
    if path == "-":
      if sys.stdin.isatty():
        print("reading sentences from the terminal, one a line; Ctrl-D "
              "ends them (--input FILE reads a file)", file=sys.stderr,
              flush=True)
      stream = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8",
                                errors="replace", newline="\n")
    else:
      stream = open(path, encoding="utf-8", errors="replace", newline="\n")
    with stream:
      chunk = []
      for line in stream:
        chunk.append(line.rstrip("\n").rstrip("\r"))
        if len(chunk) == size:
          yield chunk
          chunk = []
      if chunk:
        yield chunk
  except OSError as e:
    raise errors.UserError(f"cannot read {path!r}: {e.strerror}") from e


def _encoded_chunks(model, path, batch_size, what="encoding"):
  """(lines, embeddings) of `path`'s lines, `ENCODE_CHUNK_BATCHES` batches
  at a time (the same batches as one `encode` of all), with progress on a
  terminal."""
  from sentzoo import sentence_model  # pylint: disable=g-import-not-at-top
  import tqdm  # pylint: disable=g-import-not-at-top
  batch_size = batch_size or sentence_model.DEFAULT_BATCH_SIZE
  done, bar = 0, None
  try:
    for lines in _line_chunks(path, ENCODE_CHUNK_BATCHES * batch_size):
      yield lines, encode_all(model, lines, batch_size, what)
      done += len(lines)
      if bar is not None:
        bar.update(len(lines))
      elif (done >= sentence_model.PROGRESS_MIN_SENTENCES and
            sys.stderr.isatty()):
        bar = tqdm.tqdm(desc=what, unit=" sentences", initial=done)
  finally:
    if bar is not None:
      bar.close()


class _NpyWriter:
  """float32 rows appended to a binary file as one .npy array, as `np.save`
  writes it: its header, written first, gets the row count at `finish`
  (numpy leaves room for it to grow)."""

  def __init__(self, f, dim):
    self.f, self.rows, self.dim = f, 0, dim
    self._header()

  def _header(self):
    import numpy as np  # pylint: disable=g-import-not-at-top
    self.f.seek(0)
    np.lib.format.write_array_header_1_0(self.f, {
        "descr": "<f4", "fortran_order": False,
        "shape": (self.rows, self.dim)})

  def write(self, vectors):
    self.f.write(vectors.astype("<f4", copy=False).tobytes())
    self.rows += len(vectors)

  def finish(self):
    self._header()
    self.f.seek(0, os.SEEK_END)


def _write_tsv(vectors, stream):
  for row in vectors:
    stream.write("\t".join(f"{x:.6g}" for x in row) + "\n")


# ------------------------------------------------------------ commands --


def _positive(text):
  """argparse's type of a count >= 1."""
  value = int(text)
  if value < 1:
    raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
  return value


def cmd_encode(args):
  """One embedding per input line: .npy, or TSV (a row per line), written
  as the lines are read and encoded, chunk by chunk."""
  output = args.output
  if output != "-" and not output.endswith((".npy", ".tsv")):
    raise errors.UserError(f"--output {output!r}: give a .npy or .tsv file, "
                           "or - (TSV on stdout)")
  if os.path.isdir(output):
    raise errors.UserError(f"--output {output!r} is a folder: give a .npy "
                           "or .tsv file in it")
  if output != "-" and not os.path.isdir(os.path.dirname(
      os.path.abspath(output))):
    raise errors.UserError(f"--output {output!r}: its folder does not exist")
  model = _load(args.model)
  chunks = _encoded_chunks(model, args.input, args.batch_size)
  if output == "-":
    try:
      for _, vectors in chunks:
        _write_tsv(vectors, sys.stdout)
      sys.stdout.flush()
    except OSError as e:
      if isinstance(e, BrokenPipeError):
        raise
      # What stdout still buffers is dropped: Python's exit would retry it.
      os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
      raise errors.UserError(f"cannot write the embeddings to stdout "
                             f"({e.strerror}): pass --output FILE") from e
    return
  npy = output.endswith(".npy")
  rows = 0
  with disk_errors.plain_write_errors("the embeddings", output,
                                      "pass another --output"):
    with disk_errors.atomic_write(output, "wb" if npy else "w") as f:
      writer = _NpyWriter(f, model.dim) if npy else None
      for _, vectors in chunks:
        if writer:
          writer.write(vectors)
        else:
          _write_tsv(vectors, f)
        rows += len(vectors)
      if writer:
        writer.finish()
  print(f"wrote {rows} x {model.dim} embeddings to {output}", file=sys.stderr)


def cmd_similarity(args):
  model = _load(args.model)
  score = float(model.similarity(args.a, args.b)[0, 0])
  print(f"{score:.4f}")


def model_fingerprint(export_dir):
  """sha256 over the export's file names, sizes and its graph and index."""
  digest = hashlib.sha256()
  for rel in store_lib.list_files(export_dir):
    path = os.path.join(export_dir, rel)
    digest.update(f"{rel}\0{os.path.getsize(path)}\0".encode())
    if rel in ("saved_model.pb", "variables/variables.index",
               "assets.extra/model_card.json"):
      digest.update(disk_errors.sha256_file(path).encode())
  return digest.hexdigest()


def _corpus_cache(model, corpus_path):
  """The cache file of the corpus' embeddings in the store, keyed by the
  model's fingerprint and the corpus' bytes (a changed corpus or model is
  encoded again); None for stdin."""
  if corpus_path == "-":
    return None
  digest = hashlib.sha256(model_fingerprint(model.export_dir).encode())
  try:
    with open(corpus_path, "rb") as f:
      digest.update(hashlib.file_digest(f, "sha256").digest())
  except OSError as e:
    raise errors.UserError(f"cannot read {corpus_path!r}: {e.strerror}") from e
  return os.path.join(data_dir_lib.home(), SEARCH_CACHE_SUBDIR,
                      digest.hexdigest()[:32] + ".npy")


def _cached_chunks(path, corpus_path, batch_size):
  """(lines, embeddings) from the cache file `path`, read a chunk at a time,
  or None if it is not there (or damaged)."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  from sentzoo import sentence_model  # pylint: disable=g-import-not-at-top
  batch_size = batch_size or sentence_model.DEFAULT_BATCH_SIZE
  try:
    f = open(path, "rb")
    np.lib.format.read_magic(f)
    (_, dim), _, _ = np.lib.format.read_array_header_1_0(f)
  except (OSError, ValueError):
    return None
  os.utime(path)  # Recently used: evicted last.
  print(f"corpus embeddings from the cache ({path})", file=sys.stderr)

  def chunks():
    with f:
      for lines in _line_chunks(corpus_path,
                                ENCODE_CHUNK_BATCHES * batch_size):
        yield lines, np.fromfile(f, "<f4", len(lines) * dim).reshape(-1, dim)
  return chunks()


def _evict(folder, keep):
  """Removes the least recently used cache files until the folder holds at
  most SEARCH_CACHE_BYTES (never `keep`)."""
  files = sorted((os.path.join(folder, n) for n in os.listdir(folder)
                  if n.endswith(".npy")), key=os.path.getmtime, reverse=True)
  total = 0
  for path in files:
    total += os.path.getsize(path)
    if total > SEARCH_CACHE_BYTES and path != keep:
      os.remove(path)


def cmd_search(args):
  """Streams the corpus (from the cache, or encoded and cached as it goes),
  keeping each query's best k lines."""
  from sentzoo import sentence_model  # pylint: disable=g-import-not-at-top
  if args.k < 1:
    raise errors.UserError(f"-k must be >= 1, got {args.k}")
  model = _load(args.model)
  queries = model.encode(args.query)
  cache = _corpus_cache(model, args.corpus)
  chunks = cache and _cached_chunks(cache, args.corpus, args.batch_size)
  writer = None
  with contextlib.ExitStack() as stack:
    if chunks is None:
      chunks = _encoded_chunks(model, args.corpus, args.batch_size,
                               "encoding the corpus")
      if cache:
        try:
          os.makedirs(os.path.dirname(cache), exist_ok=True)
          writer = _NpyWriter(stack.enter_context(
              disk_errors.atomic_write(cache, "wb")), model.dim)
        except OSError as e:
          print(f"corpus embeddings not cached ({e.strerror})",
                file=sys.stderr)
    best = [[] for _ in args.query]  # (-score, line number, line), best first.
    start = 0
    for lines, vectors in chunks:
      if writer:
        writer.write(vectors)
      hits = sentence_model.semantic_search(queries, vectors, top_k=args.k)
      for kept, query_hits in zip(best, hits):
        kept.extend((-h["score"], start + h["corpus_id"] + 1,
                     lines[h["corpus_id"]]) for h in query_hits)
        kept[:] = heapq.nsmallest(args.k, kept)
      start += len(lines)
    if not start:
      raise errors.UserError(f"the corpus {args.corpus!r} has no lines")
    if writer:
      writer.finish()
  if writer:
    print(f"corpus embeddings cached in {cache}", file=sys.stderr)
    _evict(os.path.dirname(cache), cache)
  for query, kept in zip(args.query, best):
    if len(args.query) > 1:
      print(f"# {query}")
    for rank, (score, line_number, line) in enumerate(kept, start=1):
      print(f"{rank}\t{-score:.4f}\t{line_number}\t{line}")


def cmd_evaluate(args):
  from sentzoo import install_scores  # pylint: disable=g-import-not-at-top
  try:
    from sentzoo.evaluation import sts  # pylint: disable=g-import-not-at-top
  except ModuleNotFoundError as e:
    # The core install encodes; evaluating needs the [train] extra (scipy).
    raise errors.UserError(
        f"sentzoo evaluate needs {e.name}, which the core install leaves "
        "out: pip install 'sentzoo[train]'") from e
  data_dir = data_dir_lib.resolve_data_dir(args.data_dir)
  model = _load(args.model)
  results = install_scores.evaluate(model, data_dir)
  results.model_name = args.model
  print(sts.format_table([results]))


def _format_scores(scores):
  def cell(key, digits=2):
    value = scores.get(key)
    return "-" if value is None else f"{value:.{digits}f}"
  speed = scores.get("encode_sentences_per_s")
  return {"STS-B dev": cell("stsb_dev"), "19-set STS": cell("sts_mean"),
          "SICK": cell("sick_test"),
          "size": cell("size_bytes") if scores.get("size_bytes") is None
                  else disk_errors.size_text(scores["size_bytes"]),
          "precision": scores.get("precision", "-"),
          "sentences/s": "-" if speed is None else f"{speed:,}"}


def cmd_models(args):
  store = store_lib.Store()
  rows, imported = [], []
  names = list(catalogue.names()) + [
      n for n in store.installed() if not catalogue.find(n)]
  for name in names:
    entry = catalogue.find(name)
    if store.is_installed(name):
      if args.verify:
        store.verify(name, hashes=True)
      manifest = store.manifest(name)
      if manifest.get("imported"):
        imported.append((name, manifest["imported"]))
      state = ("imported" if manifest.get("imported") else "installed") + (
          ", sha256 ok" if args.verify else "")
      scores = manifest.get("scores", {})
      if "precision" not in scores:  # Installed before it was recorded.
        scores = dict(scores, precision=store_lib.export_precision(
            store.export_path(name)))
    else:
      state, scores = "not installed", {}
    rows.append({"model": name, "state": state, **_format_scores(scores),
                 "for": entry.purpose if entry else "(not in the catalogue)"})
  columns = ["model", "state", "STS-B dev", "19-set STS", "SICK", "size",
             "precision", "sentences/s", "for"]
  widths = {c: max(len(c), *(len(r[c]) for r in rows)) for c in columns[:-1]}
  print("  ".join(c.ljust(widths.get(c, 0)) for c in columns).rstrip())
  for row in rows:
    print("  ".join(row[c].ljust(widths.get(c, 0)) for c in columns).rstrip())
  for name, source in imported:
    print(f"{name}: imported from {source['file']} ({source['format']}, "
          f"sha256 {source['sha256']})")
  print(f"store: {store.root} (${data_dir_lib.HOME_ENV_VAR}); `sentzoo train NAME` "
        "trains and installs a model")


def _train(entry, run_dir, data_dir, trainer_flags, store):
  """Trains `entry` resumably in `run_dir`; (export path, step, results)."""
  from sentzoo.models import model_specs  # pylint: disable=g-import-not-at-top
  argv = [f"--flagfile={os.path.join(REPO_ROOT, entry.flagfile)}",
          f"--model_dir={run_dir}", f"--data_dir={data_dir}"]
  if entry.word_vectors_from and not any(
      f.startswith("--word_vectors=") for f in trainer_flags):
    vectors = store.verify(entry.word_vectors_from, hashes=False)
    argv += [f"--word_vectors={vectors}", "--word_vectors_vocab=" +
             os.path.join(vectors, store_lib.VOCABULARY_IN_EXPORT)]
  argv += list(trainer_flags)
  trainer = importlib.import_module(
      f"sentzoo.{model_specs.get(entry.model_type).trainer_module}")
  print(f"training {entry.name} in {run_dir} ({entry.flagfile})", flush=True)
  # A flagfile names other flagfiles relative to the repository root.
  cwd = os.getcwd()
  os.chdir(REPO_ROOT)
  try:
    summary = trainer.run(argv)
  finally:
    os.chdir(cwd)
  if not summary.export_path:
    raise errors.UserError(f"{entry.name}: the run exported nothing")
  return summary.export_path, summary.step, summary.results


def _export_again(entry, run_dir, out_dir, data_dir):
  """Exports the finished run of `entry.export_of` with `entry.quantize`."""
  from sentzoo.common import model_dir as model_dir_lib  # pylint: disable=g-import-not-at-top
  from sentzoo.export import export_model  # pylint: disable=g-import-not-at-top
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  if not os.path.isdir(os.path.join(run_dir, "export")):
    raise errors.UserError(
        f"{entry.name} is {entry.export_of} exported again: train that "
        f"first (`sentzoo train {entry.export_of}`)")
  print(f"exporting {entry.export_of} ({run_dir}) as {entry.name} "
        f"({entry.quantize} table)", flush=True)
  path = export_model.export(run_dir, out_dir, data_dir=data_dir,
                             quantize=entry.quantize)
  checkpoint = tf.train.latest_checkpoint(
      os.path.join(run_dir, model_dir_lib.CHECKPOINT_SUBDIR))
  return path, int(checkpoint.rsplit("-", 1)[1]), {}


def train_entry(entry, data_dir, run_root, trainer_flags, store):
  """Trains `entry` resumably in run_root/NAME (or exports the run of the
  entry it is an export of) and installs its export."""
  from sentzoo import install_scores  # pylint: disable=g-import-not-at-top
  from sentzoo import sentence_model  # pylint: disable=g-import-not-at-top
  from sentzoo.common import model_dir as model_dir_lib  # pylint: disable=g-import-not-at-top
  from sentzoo.models import model_specs  # pylint: disable=g-import-not-at-top
  if not os.path.isfile(os.path.join(REPO_ROOT, entry.flagfile)):
    raise errors.UserError(
        f"{entry.flagfile} is not here: `sentzoo train` runs from a source "
        "checkout of sentzoo (its configs/)")
  data_dir = os.path.abspath(data_dir_lib.resolve_data_dir(data_dir))
  run_dir = os.path.join(run_root, entry.export_of or entry.name)
  # What the entry cost to train: this invocation's wall time and peak
  # resident memory (from the training's start to the install), on this
  # machine; the peak is reset first so that an earlier entry of the same
  # `sentzoo train` command does not count.
  resources.reset_peak_rss()
  load_before = os.getloadavg()[0]
  started = time.monotonic()
  resumed = os.path.isdir(os.path.join(run_dir,
                                        model_dir_lib.CHECKPOINT_SUBDIR))
  if entry.export_of:
    export_path, step, results = _export_again(
        entry, run_dir, os.path.join(run_root, entry.name, "export"),
        data_dir)
    resumed = False
  else:
    export_path, step, results = _train(entry, run_dir, data_dir,
                                        trainer_flags, store)
  model = sentence_model.load(export_path)
  print(f"measuring {entry.name} for the store", flush=True)
  scores = install_scores.measure(model, export_path, data_dir)
  if not model_specs.get(entry.model_type).sentence_encoder:
    # A pair model's own measure: its task's accuracy at the best dev epoch.
    scores["trainer_results"] = {
        k: v for k, v in results.items()
        if k.endswith("accuracy") or k in ("best_epoch", "final_step")}
  vocabulary = os.path.join(run_dir, model_dir_lib.VOCABULARY_FILE)
  cost = {"wall_seconds": round(time.monotonic() - started),
          "peak_rss_bytes": int(resources.peak_rss_mb() * 2**20),
          "cpus": len(os.sched_getaffinity(0)),
          "cpu": resources.cpu_model(),
          "load_average_before": round(load_before, 1),
          "resumed": resumed}
  what = (f"{entry.export_of}'s run exported with a {entry.quantize} table"
          if entry.export_of else f"trained with {entry.flagfile}")
  path = store.install_dir(
      entry.name, export_path,
      {"source": f"{what}, step {step}", "scores": scores, "training": cost},
      extra_files=({store_lib.VOCABULARY_IN_EXPORT: vocabulary}
                   if os.path.isfile(vocabulary) else None))
  print(f"installed {entry.name}: {path}", flush=True)
  scores = store.manifest(entry.name)["scores"]
  print("  ".join(f"{k} {v}" for k, v in _format_scores(scores).items()),
        flush=True)


def cmd_train(args):
  names = list(catalogue.names()) if args.all else args.names
  if not names:
    raise errors.UserError("name a model to train (`sentzoo models` lists "
                           "them), or --all")
  entries = [catalogue.get(name) for name in names]
  store = store_lib.Store()
  run_root = os.path.abspath(args.run_root or os.path.join(store.root,
                                                          "runs"))
  try:
    for entry in entries:
      train_entry(entry, args.data_dir, run_root, args.trainer_flags, store)
  except (KeyboardInterrupt, Exception) as e:  # pylint: disable=broad-except
    if not interrupts.is_interrupt(e):
      raise
    raise CommandInterrupted("training (rerun to resume from its last "
                             "checkpoint)") from e


def cmd_pack(args):
  path = archive.pack(store_lib.Store(), args.name, args.output)
  print(f"wrote {path} ({disk_errors.size_text(os.path.getsize(path))})")


def cmd_install(args):
  if args.max_bytes < 1:
    raise errors.UserError(f"--max_bytes must be >= 1, got {args.max_bytes}")
  store = store_lib.Store()
  name = archive.install(args.archive, store, max_bytes=args.max_bytes,
                         replace=args.replace, data_dir=args.data_dir)
  scores = store.manifest(name)["scores"]
  print(f"installed {name}: {store.export_path(name)}")
  print("  ".join(f"{k} {v}" for k, v in _format_scores(scores).items()))


def cmd_import(args):
  # oneDNN's allocator keeps 8 bytes per 256 of a large tensor (131 MB for
  # a 3.6 GB table): the command, the first to import TensorFlow, uses
  # TensorFlow's plain allocator.
  os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
  from sentzoo import interop  # pylint: disable=g-import-not-at-top
  path = interop.import_file(
      args.format, args.file, name=args.name, output_dir=args.output,
      tokenizer=args.tokenizer, precision=args.precision,
      replace=args.replace, data_dir=args.data_dir)
  print(f"imported {args.file}: {path}")


def cmd_export_as(args):
  from sentzoo import interop  # pylint: disable=g-import-not-at-top
  tokenization = interop.export_as(args.format, args.model, args.output)
  print(f"wrote {args.output} ({disk_errors.size_text(os.path.getsize(args.output))})")
  if tokenization.get("split") != "whitespace":
    print("note: the C++ tool and gensim split text at whitespace only: give "
          "them text tokenised as this model's tokeniser does "
          f"({tokenization.get('description', 'see its model card')})")


def cmd_serve(args):
  try:
    from sentzoo import serve  # pylint: disable=g-import-not-at-top
  except ModuleNotFoundError as e:
    raise errors.UserError(
        f"sentzoo serve needs {e.name}, which the core install leaves out: "
        "pip install 'sentzoo[serve]'") from e
  serve.serve(args.models, args.host, args.port, serve.Limits(
      args.max_body_bytes, args.max_sentences, args.max_sentence_chars,
      args.max_batch_sentences, args.max_wait_ms), api_key=args.api_key)


def _add_install_flags(p):
  """--replace and --data_dir of the commands that install a store entry."""
  p.add_argument("--replace", action="store_true",
                 help="replace an installed model of the same name")
  p.add_argument("--data_dir", help="for the scores measured at install "
                 "(default: $SENTZOO_DATA_DIR)")


def build_parser():
  parser = _Parser(prog="sentzoo", description=__doc__.split("\n\n")[0],
                   formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--verbose", action="store_true",
                      help="show TensorFlow's INFO logging")
  parser.add_argument("--version", action="version",
                      version=f"sentzoo {sentzoo.__version__}")
  commands = parser.add_subparsers(dest="command", metavar="COMMAND",
                                   parser_class=_Parser)
  commands.required = True
  model_help = "an export's path, or a model's name (`sentzoo models`)"
  batch_help = "sentences per call of the model (default: `encode`'s)"

  p = commands.add_parser("encode", help="embed one sentence per line")
  p.add_argument("model", help=model_help)
  p.add_argument("--input", default="-", help="a text file, one sentence a "
                 "line; - (default): stdin")
  p.add_argument("--output", default="-", help="out.npy, out.tsv, or - "
                 "(default): TSV on stdout")
  p.add_argument("--batch_size", type=_positive, help=batch_help)
  p.set_defaults(run=cmd_encode)

  p = commands.add_parser("similarity", help="cosine of two sentences")
  p.add_argument("model", help=model_help)
  p.add_argument("a")
  p.add_argument("b")
  p.set_defaults(run=cmd_similarity)

  p = commands.add_parser("search", help="the corpus lines nearest a query")
  p.add_argument("model", help=model_help)
  p.add_argument("--corpus", required=True, help="a text file, one "
                 "sentence a line (its embeddings are cached in the store), "
                 "or - (stdin, not cached)")
  p.add_argument("--query", required=True, action="append",
                 help="a query (repeat for several)")
  p.add_argument("-k", type=int, default=10, help="how many lines to show")
  p.add_argument("--batch_size", type=_positive, help=batch_help)
  p.set_defaults(run=cmd_search)

  p = commands.add_parser("evaluate", help="the STS / SICK / STS-B table")
  p.add_argument("model", help=model_help)
  p.add_argument("--data_dir", help="default: $SENTZOO_DATA_DIR")
  p.set_defaults(run=cmd_evaluate)

  p = commands.add_parser("models", help="the catalogue and what is "
                          "installed")
  p.add_argument("--verify", action="store_true",
                 help="compare every installed file's sha256")
  p.set_defaults(run=cmd_models)

  p = commands.add_parser(
      "train", help="train catalogue models and install them",
      description="Trains each named model resumably (rerun to resume) "
      "and installs its export in the store. Flags after `--` go to the "
      "trainer, e.g. `-- --train_steps=100`.")
  p.add_argument("names", nargs="*", metavar="NAME")
  p.add_argument("--all", action="store_true", help="every catalogue model")
  p.add_argument("--data_dir", help="default: $SENTZOO_DATA_DIR")
  p.add_argument("--run_root", help="where runs are kept (default: "
                 "$SENTZOO_HOME/runs)")
  p.set_defaults(run=cmd_train)

  p = commands.add_parser("pack", help="write an installed model to one "
                          "archive file")
  p.add_argument("name")
  p.add_argument("--output", help="default: NAME.sentzoo.tar.gz")
  p.set_defaults(run=cmd_pack)

  p = commands.add_parser("install", help="verify an archive and install it")
  p.add_argument("archive")
  p.add_argument("--max_bytes", type=int, default=archive.DEFAULT_MAX_BYTES,
                 help="cap on the archive's files (default: %(default)s)")
  _add_install_flags(p)
  p.set_defaults(run=cmd_install)

  p = commands.add_parser(
      "import", help="a sent2vec .bin or a word-vector file as a model",
      description="Reads a sent2vec .bin (epfml/sent2vec) or a word-vector "
      "file into a verified store entry (--name) or a new version of an "
      "export folder (--output). docs/import.md.")
  p.add_argument("format", help="sent2vec, word2vec-text, word2vec-binary, "
                 "glove or fasttext-vec")
  p.add_argument("file")
  p.add_argument("--name", help="install as this store entry")
  p.add_argument("--output", help="write an export folder (gets <version>/)")
  p.add_argument("--precision", default="float32",
                 help="the table's type: float32 (default), float16 or int8")
  p.add_argument("--tokenizer", default="whitespace",
                 help="whitespace (default): the C++ inference's split, for "
                 "tokenised text; zoo: the zoo's tokeniser, for raw text")
  _add_install_flags(p)
  p.set_defaults(run=cmd_import)

  p = commands.add_parser(
      "export-as", help="write a model in another tool's format",
      description="Writes a float32 averaging model as a sent2vec .bin "
      "(Sent2Vec models; the C++ tool and its binding read it) or as "
      "word2vec text or binary (its word vectors; gensim reads them).")
  p.add_argument("format", help="sent2vec, word2vec-text or word2vec-binary")
  p.add_argument("model", help=model_help)
  p.add_argument("output", metavar="OUT")
  p.set_defaults(run=cmd_export_as)

  p = commands.add_parser(
      "serve", help="serve models over HTTP: OpenAI's /v1/embeddings, TF "
      "Serving's REST predict", description="Serves the models over HTTP "
      "until SIGTERM or Ctrl-C (docs/serving.md lists the routes).",
      formatter_class=argparse.ArgumentDefaultsHelpFormatter)
  p.add_argument("models", nargs="+", metavar="NAME_OR_PATH",
                 help=model_help + "; NAME=PATH serves a path as NAME")
  p.add_argument("--host", default="127.0.0.1",
                 help="address to listen on")
  p.add_argument("--port", type=int, default=8080, help="0: any free port")
  p.add_argument("--api_key", help="require `Authorization: Bearer KEY` "
                 "(or set $SENTZOO_API_KEY)")
  p.add_argument("--max_batch_sentences", type=int, default=1024,
                 help="sentences of concurrent requests per model call")
  p.add_argument("--max_wait_ms", type=float, default=2.0,
                 help="while a model call runs, how long the next batch "
                 "waits to fill")
  p.add_argument("--max_body_bytes", type=int, default=16 * 2**20,
                 help="a larger request body is refused (413)")
  p.add_argument("--max_sentences", type=int, default=2048,
                 help="sentences per request; more is refused (413)")
  p.add_argument("--max_sentence_chars", type=int, default=65536,
                 help="characters per sentence; more is refused (413)")
  p.set_defaults(run=cmd_serve)
  return parser


def _dispatch(argv):
  trainer_flags = []
  if "--" in argv:
    i = argv.index("--")
    argv, trainer_flags = argv[:i], argv[i + 1:]
  args = build_parser().parse_args(argv)
  args.trainer_flags = trainer_flags
  if trainer_flags and args.command != "train":
    raise errors.UserError("flags after `--` are for `sentzoo train` only")
  try:
    args.run(args)
  except BrokenPipeError:
    # `sentzoo encode ... | head`: the reader has what it wanted.
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
  except errors.UserError as e:
    if "\n" not in str(e):
      raise
    # One line: the layers below may quote a multi-line message.
    raise errors.UserError(" ".join(str(e).split())) from e
  except (KeyboardInterrupt, Exception) as e:  # pylint: disable=broad-except
    if not interrupts.is_interrupt(e):
      raise
    raise CommandInterrupted(f"`sentzoo {args.command}`") from e


def main(argv=None):
  """The console script: `sentzoo COMMAND ...` (common/cli.py's exit codes)."""
  argv = list(sys.argv if argv is None else argv)
  own = argv[1:]
  # common/cli.run parses absl flags from sys.argv; the subcommands' own
  # arguments are argparse's, read inside the guarded function.
  before_trainer_flags = own[:own.index("--")] if "--" in own else own
  sys.argv = [argv[0]] + (
      ["--verbose"] if "--verbose" in before_trainer_flags else [])
  cli.run(lambda _: _dispatch(own), flags.FlagValues())


if __name__ == "__main__":
  main()
