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

MODEL is an export's path or a model's name (sentzoo/catalogue.py; installed
in the store $SENTZOO_HOME, sentzoo/store.py). `python -m sentzoo.cli` is the
same command.

Exit codes as the trainers' (common/errors.py): 0 done; 2 a user's mistake,
one `error: ...` line; 75 interrupted (a training run resumes when run
again); 1 a bug (with its traceback).
"""

import argparse
import hashlib
import importlib
import json
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

from sentzoo import archive  # pylint: disable=g-import-not-at-top
from sentzoo import catalogue  # pylint: disable=g-import-not-at-top
from sentzoo import store as store_lib  # pylint: disable=g-import-not-at-top
from sentzoo.common import cli  # pylint: disable=g-import-not-at-top
from sentzoo.common import errors  # pylint: disable=g-import-not-at-top
from sentzoo.common import interrupts  # pylint: disable=g-import-not-at-top

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRESS_MIN_SENTENCES = 10_000  # Fewer: no progress bar.
DEFAULT_BATCH_SIZE = 1024
SEARCH_CACHE_SUBDIR = os.path.join("cache", "search")


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


def encode_all(model, sentences, batch_size=DEFAULT_BATCH_SIZE,
               what="encoding"):
  """`model.encode`, with its progress bar on a terminal."""
  try:
    return model.encode(sentences, batch_size=batch_size, show_progress_bar=(
        len(sentences) >= PROGRESS_MIN_SENTENCES and sys.stderr.isatty()))
  except (KeyboardInterrupt, Exception) as e:  # pylint: disable=broad-except
    if not interrupts.is_interrupt(e):
      raise
    raise CommandInterrupted(what) from e


def _read_lines(path):
  """The lines of `path` ('-': stdin) without their newlines."""
  try:
    if path == "-":
      text = sys.stdin.read()
    else:
      with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
  except OSError as e:
    raise errors.UserError(f"cannot read {path!r}: {e.strerror}") from e
  lines = text.split("\n")
  if lines and lines[-1] == "":
    lines.pop()
  return [line.rstrip("\r") for line in lines]


def _write_tsv(vectors, stream):
  for row in vectors:
    stream.write("\t".join(f"{x:.6g}" for x in row) + "\n")


# ------------------------------------------------------------ commands --


def cmd_encode(args):
  """One embedding per input line: .npy, or TSV (a row per line)."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  output = args.output
  if output != "-" and not output.endswith((".npy", ".tsv")):
    raise errors.UserError(f"--output {output!r}: give a .npy or .tsv file, "
                           "or - (TSV on stdout)")
  if output != "-" and not os.path.isdir(os.path.dirname(
      os.path.abspath(output))):
    raise errors.UserError(f"--output {output!r}: its folder does not exist")
  sentences = _read_lines(args.input)
  model = _load(args.model)
  vectors = encode_all(model, sentences, args.batch_size)
  if output == "-":
    _write_tsv(vectors, sys.stdout)
  elif output.endswith(".npy"):
    np.save(output, vectors)
  else:
    with open(output, "w", encoding="utf-8") as f:
      _write_tsv(vectors, f)
  if output != "-":
    print(f"wrote {vectors.shape[0]} x {vectors.shape[1]} embeddings to "
          f"{output}", file=sys.stderr)


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
      digest.update(store_lib.sha256_file(path).encode())
  return digest.hexdigest()


def corpus_embeddings(model, corpus_path, sentences, batch_size):
  """The corpus' embeddings, cached in the store by model and corpus.

  The key is the sha256 of the model's fingerprint and the corpus' bytes: a
  changed corpus or model is encoded again.
  """
  import numpy as np  # pylint: disable=g-import-not-at-top
  digest = hashlib.sha256(model_fingerprint(model.export_dir).encode())
  digest.update(b"\0" + "\n".join(sentences).encode("utf-8"))
  folder = os.path.join(store_lib.home(), SEARCH_CACHE_SUBDIR)
  path = os.path.join(folder, digest.hexdigest()[:32] + ".npy")
  if os.path.isfile(path):
    try:
      vectors = np.load(path, allow_pickle=False)
      if vectors.shape[0] == len(sentences):
        print(f"corpus embeddings from the cache ({path})", file=sys.stderr)
        return vectors
    except (OSError, ValueError):
      pass  # A damaged cache file: encode again.
  vectors = encode_all(model, sentences, batch_size, "encoding the corpus")
  try:
    os.makedirs(folder, exist_ok=True)
    partial = f"{path}.{os.getpid()}.partial.npy"
    np.save(partial, vectors)
    os.replace(partial, path)
    print(f"corpus embeddings cached in {path}", file=sys.stderr)
  except OSError as e:
    print(f"corpus embeddings not cached ({e.strerror})", file=sys.stderr)
  return vectors


def cmd_search(args):
  from sentzoo import sentence_model  # pylint: disable=g-import-not-at-top
  if args.k < 1:
    raise errors.UserError(f"-k must be >= 1, got {args.k}")
  corpus = _read_lines(args.corpus)
  if not corpus:
    raise errors.UserError(f"the corpus {args.corpus!r} has no lines")
  model = _load(args.model)
  corpus_vectors = corpus_embeddings(model, args.corpus, corpus,
                                     args.batch_size)
  hits = sentence_model.semantic_search(model.encode(args.query),
                                        corpus_vectors, top_k=args.k)
  for query, query_hits in zip(args.query, hits):
    if len(args.query) > 1:
      print(f"# {query}")
    for rank, hit in enumerate(query_hits, start=1):
      i = hit["corpus_id"]
      print(f"{rank}\t{hit['score']:.4f}\t{i + 1}\t{corpus[i]}")


def cmd_evaluate(args):
  from sentzoo import install_scores  # pylint: disable=g-import-not-at-top
  from sentzoo.common import data_dir as data_dir_lib  # pylint: disable=g-import-not-at-top
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
          "size": human_size(scores.get("size_bytes")),
          "sentences/s": "-" if speed is None else f"{speed:,}"}


def human_size(size):
  if size is None:
    return "-"
  for unit in ("B", "KB", "MB", "GB"):
    if size < 1000 or unit == "GB":
      return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
    size /= 1000
  return f"{size:.1f} GB"


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
    else:
      state, scores = "not installed", {}
    rows.append({"model": name, "state": state, **_format_scores(scores),
                 "for": entry.purpose if entry else "(not in the catalogue)"})
  columns = ["model", "state", "STS-B dev", "19-set STS", "SICK", "size",
             "sentences/s", "for"]
  widths = {c: max(len(c), *(len(r[c]) for r in rows)) for c in columns[:-1]}
  print("  ".join(c.ljust(widths.get(c, 0)) for c in columns).rstrip())
  for row in rows:
    print("  ".join(row[c].ljust(widths.get(c, 0)) for c in columns).rstrip())
  for name, source in imported:
    print(f"{name}: imported from {source['file']} ({source['format']}, "
          f"sha256 {source['sha256']})")
  print(f"store: {store.root} (${store_lib.ENV_VAR}); `sentzoo train NAME` "
        "trains and installs a model")


def train_entry(entry, data_dir, run_root, trainer_flags, store):
  """Trains `entry` resumably in run_root/NAME and installs its export."""
  from sentzoo import install_scores  # pylint: disable=g-import-not-at-top
  from sentzoo import sentence_model  # pylint: disable=g-import-not-at-top
  from sentzoo.common import data_dir as data_dir_lib  # pylint: disable=g-import-not-at-top
  from sentzoo.common import model_dir as model_dir_lib  # pylint: disable=g-import-not-at-top
  from sentzoo.models import model_specs  # pylint: disable=g-import-not-at-top
  spec = model_specs.get(entry.model_type)
  flagfile = os.path.join(REPO_ROOT, entry.flagfile)
  if not os.path.isfile(flagfile):
    raise errors.UserError(
        f"{entry.flagfile} is not here: `sentzoo train` runs from a source "
        "checkout of sentzoo (its configs/)")
  data_dir = os.path.abspath(data_dir_lib.resolve_data_dir(data_dir))
  run_dir = os.path.join(run_root, entry.name)
  argv = [f"--flagfile={flagfile}", f"--model_dir={run_dir}",
          f"--data_dir={data_dir}"]
  if entry.word_vectors_from and not any(
      f.startswith("--word_vectors=") for f in trainer_flags):
    vectors = store.verify(entry.word_vectors_from, hashes=False)
    argv += [f"--word_vectors={vectors}", "--word_vectors_vocab=" +
             os.path.join(vectors, store_lib.VOCABULARY_IN_EXPORT)]
  argv += list(trainer_flags)
  trainer = importlib.import_module(f"sentzoo.{spec.trainer_module}")
  print(f"training {entry.name} in {run_dir} ({entry.flagfile})", flush=True)
  # What the entry cost to train: this invocation's wall time and peak
  # resident memory (from the training's start to the install), on this
  # machine; the peak is reset first so that an earlier entry of the same
  # `sentzoo train` command does not count.
  resources.reset_peak_rss()
  load_before = os.getloadavg()[0]
  started = time.monotonic()
  resumed = os.path.isdir(os.path.join(run_dir,
                                        model_dir_lib.CHECKPOINT_SUBDIR))
  # A flagfile names other flagfiles relative to the repository root.
  cwd = os.getcwd()
  os.chdir(REPO_ROOT)
  try:
    summary = trainer.run(argv)
  finally:
    os.chdir(cwd)
  if not summary.export_path:
    raise errors.UserError(f"{entry.name}: the run exported nothing")
  model = sentence_model.load(summary.export_path)
  print(f"measuring {entry.name} for the store", flush=True)
  scores = install_scores.measure(model, summary.export_path, data_dir)
  if not spec.sentence_encoder:
    # A pair model's own measure: its task's accuracy at the best dev epoch.
    scores["trainer_results"] = {
        k: v for k, v in summary.results.items()
        if k.endswith("accuracy") or k in ("best_epoch", "final_step")}
  vocabulary = os.path.join(run_dir, model_dir_lib.VOCABULARY_FILE)
  cost = {"wall_seconds": round(time.monotonic() - started),
          "peak_rss_bytes": int(resources.peak_rss_mb() * 2**20),
          "cpus": len(os.sched_getaffinity(0)),
          "cpu": resources.cpu_model(),
          "load_average_before": round(load_before, 1),
          "resumed": resumed}
  path = store.install_dir(
      entry.name, summary.export_path,
      {"source": f"trained with {entry.flagfile}, step {summary.step}",
       "scores": scores, "training": cost},
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
  print(f"wrote {path} ({human_size(os.path.getsize(path))})")


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
  from sentzoo import interop  # pylint: disable=g-import-not-at-top
  path = interop.import_file(
      args.format, args.file, name=args.name, output_dir=args.output,
      tokenizer=args.tokenizer, precision=args.precision,
      replace=args.replace, data_dir=args.data_dir)
  print(f"imported {args.file}: {path}")


def cmd_export_as(args):
  from sentzoo import interop  # pylint: disable=g-import-not-at-top
  tokenization = interop.export_as(args.format, args.model, args.output)
  print(f"wrote {args.output} ({human_size(os.path.getsize(args.output))})")
  if tokenization.get("split") != "whitespace":
    print("note: the C++ tool and gensim split text at whitespace only: give "
          "them text tokenised as this model's tokeniser does "
          f"({tokenization.get('description', 'see its model card')})")


def build_parser():
  parser = _Parser(prog="sentzoo", description=__doc__.split("\n\n")[0],
                   formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--verbose", action="store_true",
                      help="show TensorFlow's INFO logging")
  commands = parser.add_subparsers(dest="command", metavar="COMMAND",
                                   parser_class=_Parser)
  commands.required = True
  model_help = "an export's path, or a model's name (`sentzoo models`)"

  p = commands.add_parser("encode", help="embed one sentence per line")
  p.add_argument("model", help=model_help)
  p.add_argument("--input", default="-", help="a text file, one sentence a "
                 "line; - (default): stdin")
  p.add_argument("--output", default="-", help="out.npy, out.tsv, or - "
                 "(default): TSV on stdout")
  p.add_argument("--batch_size", type=int, default=DEFAULT_BATCH_SIZE)
  p.set_defaults(run=cmd_encode)

  p = commands.add_parser("similarity", help="cosine of two sentences")
  p.add_argument("model", help=model_help)
  p.add_argument("a")
  p.add_argument("b")
  p.set_defaults(run=cmd_similarity)

  p = commands.add_parser("search", help="the corpus lines nearest a query")
  p.add_argument("model", help=model_help)
  p.add_argument("--corpus", required=True, help="a text file, one "
                 "sentence a line (its embeddings are cached in the store)")
  p.add_argument("--query", required=True, action="append",
                 help="a query (repeat for several)")
  p.add_argument("-k", type=int, default=10, help="how many lines to show")
  p.add_argument("--batch_size", type=int, default=DEFAULT_BATCH_SIZE)
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
  p.add_argument("--replace", action="store_true",
                 help="replace an installed model of the same name")
  p.add_argument("--max_bytes", type=int, default=archive.DEFAULT_MAX_BYTES,
                 help="cap on the archive's files (default: %(default)s)")
  p.add_argument("--data_dir", help="for the scores measured at install "
                 "(default: $SENTZOO_DATA_DIR)")
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
  p.add_argument("--replace", action="store_true",
                 help="replace an installed model of the same name")
  p.add_argument("--data_dir", help="for the scores measured at install "
                 "(default: $SENTZOO_DATA_DIR)")
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
