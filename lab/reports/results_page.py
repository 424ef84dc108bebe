r"""docs/RESULTS.md's tables: every export beside its paper.

  python -m lab.reports.results_page --model="NAME=EXPORT" [--model=...] \
      --data_dir=../shared/data [--compare="A,B"] [--train_command="NAME=CMD"]

Each export is scored on STS 2012-2015, SICK, STS-B dev and the SentEval
transfer tasks, beside the papers' numbers (lab.reports.paper_numbers), the
data it was trained on (its model card) and the commands behind each row;
the tables are recorded in --record, the part of the page `make docs` writes
from "## Models evaluated" on. An export's evaluation is cached in
--cache_dir under its SavedModel fingerprint, the settings and the data
files' sizes, so adding an export evaluates that one only. --compare=A,B
adds per-set Williams tests. The catalogue's part of the page comes from
the install records (lab/catalogue_table.py).
"""

import datetime
import hashlib
import json
import os
import sys
import time
from typing import Any, Mapping, Optional, Sequence

from absl import flags
from absl import logging

from lab import records
from lab.reports import paper_numbers
from lab.reports import senteval_tables
from lab.reports import sts_tables
from lab import senteval
from lab import senteval_data
from lab import significance as significance_lib
from lab import tables
from sentzoo.common import cli
from sentzoo.common import data_dir as data_dir_lib
from sentzoo.common import errors
from sentzoo.common import model_dir as model_dir_lib
from sentzoo.evaluation import encoder as encoder_lib
from sentzoo.evaluation import sts
from sentzoo.evaluation import sts_data
from sentzoo.export import saved_model_writer

# Bump when a change of the evaluation code changes the numbers.
CACHE_VERSION = 1
STS_GROUPS = ("sts", "sick", "stsb")

# Reference columns of the STS table: (label, paper_numbers function, its
# column), the function giving {row key: value}.
STS_REFERENCES = (
    ("Siamese CBOW (paper)", paper_numbers.siamese_cbow_reference,
     "Siamese CBOW"),
    ("w2v CBOW (Siamese CBOW paper)", paper_numbers.siamese_cbow_reference,
     "w2v CBOW"),
    ("CHARAGRAM-PHRASE (paper)", paper_numbers.charagram_reference,
     "CHARAGRAM-PHRASE"),
    ("Sent2Vec uni. (paper)", paper_numbers.sent2vec_sts_reference,
     "Sent2Vec uni."),
    ("Sent2Vec uni.+bi. (paper)", paper_numbers.sent2vec_sts_reference,
     "Sent2Vec uni. + bi."),
)


def parse_model_spec(spec: str) -> tuple:
  """'NAME=PATH' -> (NAME, PATH); 'PATH' -> (None, PATH)."""
  if "=" in spec:
    return tables.name_value(spec, "--model", "NAME=PATH or PATH")
  return None, spec.strip()


def read_model_card(export_dir: str) -> dict:
  """The export's model card ({} if it has none)."""
  path = os.path.join(export_dir, saved_model_writer.MODEL_CARD)
  if not os.path.isfile(path):
    return {}
  with open(path, encoding="utf-8") as f:
    try:
      return json.load(f)
    except json.JSONDecodeError as e:
      raise errors.DataFormatError(path, e.lineno, f"invalid JSON: {e.msg}")


def _file_digest(path: str) -> str:
  with open(path, "rb") as f:
    return hashlib.file_digest(f, "sha256").hexdigest()


def export_fingerprint(export_dir: str) -> str:
  """A digest of the SavedModel's graph and variables index."""
  h = hashlib.sha256()
  for name in ("fingerprint.pb", "saved_model.pb", "saved_model.pbtxt",
               os.path.join("variables", "variables.index")):
    path = os.path.join(export_dir, name)
    if os.path.isfile(path):
      h.update(name.encode() + b"\0" + _file_digest(path).encode())
  return h.hexdigest()


def _data_signature(data_dir: str, tasks: Sequence[str]) -> dict:
  out = {}
  for task in tasks:
    for path in senteval_data.task_files(data_dir, task):
      out[os.path.relpath(path, data_dir)] = (
          os.path.getsize(path) if os.path.isfile(path) else None)
  return out


def cache_key(export_dir: str, data_dir: str, tasks: Sequence[str],
              config: senteval.TransferConfig) -> str:
  """The cache key of one export's evaluation (hex sha256)."""
  payload = {"version": CACHE_VERSION,
             "export": export_fingerprint(export_dir),
             "sts_groups": list(STS_GROUPS), "tasks": list(tasks),
             "transfer": config.to_json(),
             "data": _data_signature(data_dir, tasks)}
  return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()
                        ).hexdigest()


def _load_average() -> Optional[list]:
  try:
    return [round(x, 2) for x in os.getloadavg()]
  except OSError:
    return None


def evaluate_export(export_dir: str, data_dir: str, tasks: Sequence[str],
                    config: senteval.TransferConfig, batch_size: int = 1024
                    ) -> dict:
  """One export's STS (with per-pair scores) and transfer results, timed,
  with the load average before and after, as JSON."""
  load_before = _load_average()
  encoder = encoder_lib.load_encoder(export_dir)
  pair_sets, missing = sts_data.load_eval_sets(data_dir, STS_GROUPS)
  start = time.perf_counter()
  sts_results = sts.evaluate_pair_sets(encoder, pair_sets, missing,
                                       batch_size=batch_size)
  sts_seconds = time.perf_counter() - start
  loaded, transfer_missing = senteval.load_tasks(data_dir, tasks)
  transfer = senteval.evaluate(encoder, loaded, config, batch_size)
  return {
      "sts": sts.results_to_json(sts_results, include_predictions=True),
      "sts_seconds": sts_seconds,
      "transfer": {t: r.to_json() for t, r in transfer.items()},
      "transfer_missing": transfer_missing,
      "load_average": [load_before, _load_average()],
      "evaluated_at": datetime.datetime.now(datetime.timezone.utc).strftime(
          "%Y-%m-%d %H:%M UTC"),
  }


def cached_evaluation(export_path: str, data_dir: str, tasks: Sequence[str],
                      config: senteval.TransferConfig, cache_dir: str,
                      batch_size: int = 1024) -> dict:
  """`evaluate_export` through the cache, with "export_dir", "key",
  "model_card" and "cached"."""
  export_dir = encoder_lib.resolve_export_dir(export_path)
  key = cache_key(export_dir, data_dir, tasks, config)
  path = os.path.join(cache_dir, f"{key[:24]}.json") if cache_dir else ""
  if path and os.path.isfile(path):
    with open(path, encoding="utf-8") as f:
      entry = json.load(f)
    if entry.get("key") == key:
      entry["cached"] = True
      logging.info("%s: evaluation from cache %s", export_dir, path)
      return entry
  logging.info("%s: evaluating", export_dir)
  entry = evaluate_export(export_dir, data_dir, tasks, config, batch_size)
  entry.update({"key": key, "export_dir": export_dir,
                "model_card": read_model_card(export_dir)})
  if path:
    os.makedirs(cache_dir, exist_ok=True)
    model_dir_lib.write_text_atomically(path, json.dumps(entry))
  entry["cached"] = False
  return entry


def _format_value(value) -> str:
  if isinstance(value, (list, tuple)):
    return ", ".join(str(v) for v in value)
  if isinstance(value, Mapping):
    return "; ".join(f"{k}: {_format_value(v)}" for k, v in value.items())
  return str(value)


# The card's "training" keys the "training data" column shows.
TRAINING_DATA_KEYS = ("corpus", "corpus_files", "train_files",
                      "lexicon_files", "task_paraphrases", "num_pairs",
                      "num_epochs", "total_steps")


def training_data(card: Mapping[str, Any]) -> str:
  """What the export was trained on, from its model card."""
  training = card.get("training")
  if not training:
    return "(no training record in the model card)"
  if not isinstance(training, Mapping):
    return _format_value(training)
  return "; ".join(f"{k}: {_format_value(training[k])}"
                   for k in TRAINING_DATA_KEYS if training.get(k))


def _cell(text: str) -> str:
  return str(text).replace("|", "\\|").replace("\n", " ")


def row_commands(path: str, tasks: Sequence[str],
                 config: senteval.TransferConfig) -> tuple:
  """The commands that reproduce an export's STS and transfer rows."""
  sts_cmd = (f"python -m lab.reports.sts_tables --model={path} "
             f"--data_dir=../shared/data --sets={','.join(STS_GROUPS)}")
  transfer_cmd = (
      f"python -m lab.reports.senteval_tables --model={path} "
      f"--data_dir=../shared/data --tasks={','.join(tasks)} "
      f"--outer_folds={config.outer_folds} "
      f"--inner_folds={config.inner_folds} --seed={config.seed} "
      f"--l2_grid={','.join(f'{x:g}' for x in config.l2_grid)}")
  return sts_cmd, transfer_cmd


SIGNIFICANCE_TITLE = "Significance (per set)"


def significance_section(results: Mapping[str, Any],
                         compare: Sequence[tuple]) -> str:
  """Williams' test of B against A for each (A, B) of `compare`; results:
  name -> sts.EvalResults."""
  lines = [f"## {SIGNIFICANCE_TITLE}", "",
           "Which model agrees better with the human scores: Williams' test "
           "of two dependent correlations with the gold scores, "
           "Holm-corrected over the sets of each comparison.", ""]
  labelled = {f"{b} vs {a}": significance_lib.compare_per_set(
      results[b], results[a]) for a, b in compare}
  lines.append(sts_tables.format_significance_table(labelled))
  return "\n".join(lines).rstrip("\n") + "\n"


def build_tables(entries: Sequence[dict], config: senteval.TransferConfig,
                 tasks: Sequence[str], compare: Sequence[tuple] = (),
                 train_commands: Optional[Mapping[str, str]] = None) -> str:
  """The tables of `cached_evaluation`s (each with "name" and "path"): the
  page from "## Models evaluated" on."""
  train_commands = dict(train_commands or {})
  names = [e["name"] for e in entries]
  lines = []

  # -- models and training data
  cards = [e.get("model_card", {}) for e in entries]
  lines += ["## Models evaluated", "", tables.table(
      ["model", "type", "export", "checkpoint", "training data actually used "
       "(model card)", "the paper trained on"],
      [[_cell(x) for x in (e["name"], card.get("model_type", "?"), e["path"],
                           card.get("checkpoint", ""), training_data(card),
                           paper_numbers.PAPER_TRAINING_DATA.get(
                               card.get("model_type", "?"), "—"))]
       for e, card in zip(entries, cards)]) + "\n<details><summary>Commands that produced each model's rows "
            "(the page runs the same functions; run from the repository "
            "root)</summary>", ""]
  for e in entries:
    sts_cmd, transfer_cmd = row_commands(e["path"], tasks, config)
    lines.append(f"- **{e['name']}**")
    if e["name"] in train_commands:
      lines.append(f"  - trained by: {tables.code(train_commands[e['name']])}")
    lines.append(f"  - STS / SICK / STS-B rows: {tables.code(sts_cmd)}")
    lines.append(f"  - transfer rows: {tables.code(transfer_cmd)}")
    load = e.get("load_average") or [None, None]
    lines.append(
        f"  - evaluated {e.get('evaluated_at', '?')}; load average (1, 5, 15 "
        f"min) before {load[0]}, after {load[1]} on this machine's 2 cores")
  lines += ["", "</details>", ""]

  # -- transfer
  transfer_rows = senteval_tables.paper_rows()
  transfer_rows += [(e["name"], e.get("transfer", {})) for e in entries]
  lines += [
      "## Transfer tasks (SentEval)", "",
      "Accuracy × 100 (MSRP: accuracy / F1 of the paraphrase class). "
      "Rows marked *(paper, Table 1)* are the Sent2Vec paper's Table 1 "
      "(Pagliardini et al., 2018; Toronto books models; their Average as "
      "printed); the Siamese CBOW and CHARAGRAM papers report no transfer "
      "results. Protocol here: " + config.describe() + ". "
      "Average: mean accuracy over the six tasks, as in the paper.", "",
      senteval_tables.format_transfer_table(transfer_rows),
      "Seconds each evaluation took (total, in brackets the part spent "
      "encoding sentences), measured on a shared 2-core machine (see the "
      "load averages above):", "",
      senteval_tables.format_time_table(
          [(e["name"], e.get("transfer", {})) for e in entries])]
  missing = sorted({t for e in entries for t in e.get("transfer_missing", [])})
  if missing:
    lines += [f"Transfer tasks without data: {', '.join(missing)}", ""]

  # -- STS
  results = []
  for e in entries:
    r = sts.results_from_json(e["sts"])
    r.model_name = e["name"]
    results.append(r)
  references = {label: reference(column)
                for label, reference, column in STS_REFERENCES}
  lines += [
      "## Semantic similarity: STS 2012–2015, SICK, STS Benchmark", "",
      "Reference columns are the papers' reported numbers: Siamese CBOW "
      "paper Table 1 (Toronto Book Corpus; Pearson (Spearman)); CHARAGRAM "
      "supplement Table 1 (Pearson only; its year means include sets not in "
      "the shared data, e.g. 2013 SMT); Sent2Vec paper Table 2 (STS 2014 "
      "sets only, two decimals; its SICK figure is on test + train and is "
      "left out). STS2013.SMT is LDC-licensed and not in the shared data. "
      f"Nothing in this table is marked: see \"{SIGNIFICANCE_TITLE}\".",
      "", sts.format_table(results, names, references=references)]
  lines += ["Seconds for the STS/SICK/STS-B evaluation (encoding and "
            "scoring): " + "; ".join(
                f"{e['name']} {e.get('sts_seconds', 0.0):.1f} s"
                for e in entries), ""]

  # -- significance
  if compare:
    lines += [significance_section(dict(zip(names, results)), compare)]
  return "\n".join(lines).rstrip("\n") + "\n"


def define_flags(flag_values: flags.FlagValues) -> None:
  """Defines this command's flags on `flag_values`."""
  flags.DEFINE_multi_string(
      "model", [], "NAME=PATH (or PATH) of an export (base dir with integer "
      "versions, or a version dir); repeat for several models.",
      flag_values=flag_values)
  flags.DEFINE_string("data_dir", "", "Data directory (default: "
                      f"${data_dir_lib.ENV_VAR}).", flag_values=flag_values)
  flags.DEFINE_string("record", "docs/records/results/tables.md", "Where "
                      "the tables go (`make docs` puts them in the page).",
                      flag_values=flag_values)
  flags.DEFINE_string("cache_dir", "runs/results_cache", "Per-export "
                      "evaluation JSON cache ('' to disable).",
                      flag_values=flag_values)
  senteval_tables.define_transfer_flags(flag_values)
  # Listed by --help as this command's own.
  flags.adopt_module_key_flags(senteval_tables, flag_values)
  flags.DEFINE_multi_string(
      "compare", [], "A,B: per-set Williams test of model B against model "
      "A on the STS sets (names as in --model); repeatable.",
      flag_values=flag_values)
  flags.DEFINE_multi_string(
      "train_command", [], "NAME=COMMAND that trained model NAME, shown on "
      "the page; repeatable.", flag_values=flag_values)


def _default_name(card: Mapping[str, Any], path: str) -> str:
  base = os.path.basename(os.path.normpath(path))
  if base.isdigit() or base == "export":
    base = os.path.basename(os.path.dirname(os.path.normpath(path))) + (
        "" if base == "export" else f"/{base}")
  model_type = card.get("model_type")
  return f"{base} ({model_type})" if model_type else base


def generate(fv: flags.FlagValues, out=None) -> dict:
  """Runs the command for parsed flags; returns {"page", "entries"}."""
  out = out or sys.stdout
  if not fv.model:
    raise errors.UserError("no model given: pass --model=NAME=EXPORT_PATH "
                           "(repeat for several models)")
  config = senteval_tables.config_from_flags(fv)
  unknown = [t for t in fv.tasks if t not in senteval_data.TASKS]
  if unknown:
    raise errors.UserError(f"--tasks: unknown {unknown}; choose from "
                           f"{','.join(senteval_data.TASKS)}")
  data_dir = data_dir_lib.resolve_data_dir(fv.data_dir)
  entries = []
  for spec in fv.model:
    name, path = parse_model_spec(spec)
    entry = cached_evaluation(path, data_dir, fv.tasks, config, fv.cache_dir,
                              batch_size=fv.batch_size)
    entry["name"] = name or _default_name(entry.get("model_card", {}), path)
    entry["path"] = path
    entries.append(entry)
    print(f"{entry['name']}: {'cached' if entry['cached'] else 'evaluated'}",
          file=out)
  names = [e["name"] for e in entries]
  if len(set(names)) != len(names):
    raise errors.UserError(f"model names must be unique, got {names}")
  compare = []
  for spec in fv.compare:
    parts = [p.strip() for p in spec.split(",")]
    if len(parts) != 2 or any(p not in names for p in parts):
      raise errors.UserError(f"--compare={spec!r}: expected A,B with two of "
                             f"the model names {names}")
    compare.append(tuple(parts))
  train_commands = dict(tables.name_value(
      spec, "--train_command", f"NAME=CMD with NAME one of {names}")
                        for spec in fv.train_command)
  unknown = sorted(set(train_commands) - set(names))
  if unknown:
    raise errors.UserError(f"--train_command: {unknown} are not model names "
                           f"({names})")
  text = build_tables(entries, config, fv.tasks, compare, train_commands)
  if fv.record:
    tables.write_page(fv.record, text)
    print(f"wrote {fv.record}", file=out)
  return {"tables": text, "entries": entries}


def run(argv: Sequence[str], out=None) -> dict:
  """Runs the command in-process (argv[0] is the program)."""
  return generate(cli.parse_own_flags(define_flags, argv), out=out)


if __name__ == "__main__":
  cli.run_with_own_flags(define_flags, generate)
