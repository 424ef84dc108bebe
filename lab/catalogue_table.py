r"""The "pick a model" tables, generated from the catalogue and its records.

  python -m lab.catalogue_table --record NAME...     # from $SENTZOO_HOME
  python -m lab.catalogue_table --encode_speed NAME...
  make docs                  # the README's and docs/RESULTS.md's tables

The store is per machine, so the scores an entry measured when it was
installed here (sentzoo/install_scores.py), and what it cost to train, are
recorded in the repository, docs/records/catalogue/<name>.json, by
`--record NAME`. The tables have one row per catalogue entry: what it is
for, what its record earns among the others (`marks`), its recorded scores,
and its paper's STS 2014 mean beside the one measured here; an entry without
a record says it is not trained yet. Nothing in them is typed by hand.
"""

import json
import os
import statistics
import sys
from typing import Any, Dict, Optional

from sentzoo import catalogue
from sentzoo import install_scores
from sentzoo import store as store_lib
from sentzoo.common import cli
from sentzoo.common import disk_errors
from sentzoo.common import errors
from lab import tables

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RECORDS_DIR = os.path.join(REPO_ROOT, "docs", "records", "catalogue")
RECORD_FIELDS = ("sts_mean", "sts_sets", "sts2014_mean", "stsb_dev",
                 "sick_test", "encode_sentences_per_s", "encode_measured_on",
                 "size_bytes", "precision", "note", "trainer_results",
                 "pair_test")


def paper_sts2014_mean(figure: Optional[catalogue.PaperFigure]
                       ) -> Optional[float]:
  """The paper's STS 2014 mean (Pearson x 100) of `figure`, or None."""
  if figure is None:
    return None
  from lab.reports import paper_numbers  # pylint: disable=g-import-not-at-top
  if figure.paper == "charagram":
    return paper_numbers.charagram_reference(figure.column)["STS2014.mean"]
  if figure.paper == "siamese_cbow":
    sets = paper_numbers.siamese_cbow_reference(figure.column)
  elif figure.paper == "sent2vec":
    sets = paper_numbers.sent2vec_sts_reference(figure.column)
  else:
    raise ValueError(f"unknown paper {figure.paper!r}")
  return statistics.mean(pearson for name, (pearson, _) in sets.items()
                         if name.startswith("STS2014."))


def record(name: str, store: store_lib.Store,
           records_dir: str = RECORDS_DIR) -> str:
  """Writes the install scores of installed entry `name`; returns the path."""
  catalogue.get(name)
  manifest = store.manifest(name)
  scores = manifest.get("scores", {})
  data = {"name": name, "source": manifest.get("source"),
          "installed": manifest.get("installed"),
          "scores": {k: scores[k] for k in RECORD_FIELDS if k in scores}}
  if "precision" not in data["scores"]:  # Installed before it was recorded.
    data["scores"]["precision"] = store_lib.export_precision(
        store.export_path(name))
  if manifest.get("training"):
    data["training"] = manifest["training"]
  os.makedirs(records_dir, exist_ok=True)
  path = os.path.join(records_dir, f"{name}.json")
  with disk_errors.atomic_write(path) as f:
    json.dump(data, f, indent=2, sort_keys=True)
    f.write("\n")
  return path


def measure_encode_again(names, store: store_lib.Store, data_dir: str,
                         records_dir: str = RECORDS_DIR) -> None:
  """Times `encode` of the installed entries `names` again, one after the
  other, and writes the speeds into their records: the speeds recorded at
  install time come from runs far apart, on a machine whose load varied, so
  "fastest encode" compares speeds measured in one sequence."""
  from sentzoo import sentence_model  # pylint: disable=g-import-not-at-top
  from sentzoo.evaluation import sts_data  # pylint: disable=g-import-not-at-top
  pair_sets, _ = sts_data.load_eval_sets(data_dir)
  sentences = install_scores.evaluation_sentences(pair_sets)
  for name in names:
    path = os.path.join(records_dir, f"{name}.json")
    with open(path, encoding="utf-8") as f:
      data = json.load(f)
    speed = install_scores.encode_speed(
        sentence_model.load(store.verify(name)), sentences)
    data["scores"].update(speed, encode_sequence=list(names))
    with disk_errors.atomic_write(path) as f:
      json.dump(data, f, indent=2, sort_keys=True)
      f.write("\n")
    print(f"{name}: {speed['encode_sentences_per_s']:,} sentences/s",
          file=sys.stderr)


def read_records(records_dir: str = RECORDS_DIR) -> Dict[str, Dict[str, Any]]:
  out = {}
  for entry in catalogue.ENTRIES:
    path = os.path.join(records_dir, f"{entry.name}.json")
    if os.path.isfile(path):
      with open(path, encoding="utf-8") as f:
        out[entry.name] = json.load(f)
  return out


def _number(value, digits=2):
  return "–" if value is None else f"{value:.{digits}f}"


def _size(size_bytes):
  return "–" if size_bytes is None else disk_errors.size_text(size_bytes)


def _is_encoder(entry: catalogue.CatalogueEntry) -> bool:
  from sentzoo.models import model_specs  # pylint: disable=g-import-not-at-top
  return model_specs.get(entry.model_type).sentence_encoder


# What the table marks, each from the sentence encoders' records alone:
# (label, score key, the better of two values).
BEST_LABELS = (("best STS-B dev", "stsb_dev", max),
               ("best 19-set STS", "sts_mean", max),
               ("fastest encode", "encode_sentences_per_s", max))
# "smallest": the smallest export whose 19-set mean is at most this far
# below the best one.
SMALLEST_WITHIN_POINTS = 1.0
SMALLEST_LABEL = (f"smallest within {SMALLEST_WITHIN_POINTS:g} point of the "
                  "best 19-set STS")


def marks(records: Dict[str, Dict[str, Any]]) -> Dict[str, list]:
  """{entry name: the labels of BEST_LABELS and SMALLEST_LABEL it earns},
  over the recorded sentence encoders of the catalogue."""
  scores = {e.name: records[e.name]["scores"] for e in catalogue.ENTRIES
            if e.name in records and _is_encoder(e)}
  out: Dict[str, list] = {name: [] for name in scores}
  for label, key, better in BEST_LABELS:
    known = {n: s[key] for n, s in scores.items() if s.get(key) is not None}
    if known:
      top = better(known.values())
      for name, value in known.items():
        if value == top:
          out[name].append(label)
  means = {n: s["sts_mean"] for n, s in scores.items()
           if s.get("sts_mean") is not None and s.get("size_bytes")}
  if means:
    close = [n for n, m in means.items()
             if m >= max(means.values()) - SMALLEST_WITHIN_POINTS]
    smallest = min(scores[n]["size_bytes"] for n in close)
    for name in close:
      if scores[name]["size_bytes"] == smallest:
        out[name].append(SMALLEST_LABEL)
  return out


def _not_trained(entry, columns):
  return ([f"`{entry.name}`", entry.purpose,
           f"not trained yet (`sentzoo train {entry.name}`)"]
          + [""] * (columns - 3))


def encoder_table(records: Dict[str, Dict[str, Any]]) -> str:
  """The sentence encoders: one row per catalogue entry."""
  header = ["model", "for", "measured", "STS-B dev", "19-set STS mean",
            "SICK", "size", "precision", "encode (sentences/s)",
            "STS 2014 mean: paper / here"]
  earned = marks(records)
  rows = []
  for entry in catalogue.ENTRIES:
    if not _is_encoder(entry):
      continue
    paper = paper_sts2014_mean(entry.paper_figure)
    paper_cell = "–" if paper is None else f"{paper:.1f}"
    found = records.get(entry.name)
    if found is None:
      rows.append(_not_trained(entry, len(header))[:-1]
                  + [f"{paper_cell} / –"])
      continue
    scores = found["scores"]
    speed = scores.get("encode_sentences_per_s")
    rows.append([
        f"`{entry.name}`", entry.purpose,
        "; ".join(earned.get(entry.name, [])) or "–",
        _number(scores.get("stsb_dev")), _number(scores.get("sts_mean")),
        _number(scores.get("sick_test")), _size(scores.get("size_bytes")),
        scores.get("precision", "float32"),
        "–" if speed is None else f"{speed:,}",
        f"{paper_cell} / {_number(scores.get('sts2014_mean'), 1)}"])
  return tables.table(header, rows, "|---|---|---|---:|---:|---:|---:|"
                          "---|---:|---|")


def pair_table(records: Dict[str, Dict[str, Any]]) -> str:
  """The pair classifiers: test accuracy and F1 beside the majority class's."""
  header = ["model", "for", "task", "test accuracy", "test F1",
            "majority class: accuracy / F1", "size"]
  rows = []
  for entry in catalogue.ENTRIES:
    if _is_encoder(entry):
      continue
    found = records.get(entry.name)
    if found is None:
      rows.append(_not_trained(entry, len(header)))
      continue
    pairs = found["scores"].get("pair_test", {})
    rows.append([
        f"`{entry.name}`", entry.purpose,
        f"{pairs.get('task', '–')} ({pairs.get('pairs', '–')} test pairs)",
        _number(pairs.get("accuracy")), _number(pairs.get("f1")),
        f"{_number(pairs.get('majority_accuracy'))} / "
        f"{_number(pairs.get('majority_f1'))}",
        _size(found["scores"].get("size_bytes"))])
  return tables.table(header, rows, "|---|---|---|---:|---:|---:|---:|")


def table(records: Dict[str, Dict[str, Any]]) -> str:
  """Both tables: the sentence encoders, then the pair classifiers."""
  return (encoder_table(records) + "\nPair classifiers (`predict`), "
          "accuracy and F1 x 100 on their task's test split:\n\n"
          + pair_table(records)).rstrip("\n")


def training_cost_table(records: Dict[str, Dict[str, Any]]) -> str:
  """What each entry cost to train here (`sentzoo train NAME`)."""
  header = ["model", "wall time", "peak RSS", "CPU", "1-min load before",
            "run"]
  rows = []
  for entry in catalogue.ENTRIES:
    cost = records.get(entry.name, {}).get("training")
    if not cost:
      rows.append([f"`{entry.name}`", "not recorded", "", "", "", ""])
      continue
    minutes = cost["wall_seconds"] / 60
    rows.append([
        f"`{entry.name}`",
        f"{minutes:.1f} min" if minutes < 90 else f"{minutes / 60:.1f} h",
        f"{cost['peak_rss_bytes'] / 2**30:.1f} GiB",
        f"{cost['cpu']}, {cost['cpus']} cores",
        f"{cost['load_average_before']:.1f}",
        "resumed (this invocation only)" if cost["resumed"] else "whole"])
  return tables.table(header, rows, "|---|---:|---:|---|---:|---|")


def notes(records: Dict[str, Dict[str, Any]]) -> str:
  """How the table's numbers were measured, one line per recorded entry."""
  lines = ["Pearson r x 100, measured on each installed export when it was "
           "installed (`sentzoo train NAME`); 19-set STS: the mean of the "
           "STS 2012-2015 test sets present here (STS2013.SMT is not). "
           "\"measured\" is computed from the records alone: the best "
           "STS-B dev and 19-set mean, the fastest encode, and the smallest "
           f"export within {SMALLEST_WITHIN_POINTS:g} point of the best "
           "19-set mean. Papers' STS 2014 means: Siamese CBOW Table 1, "
           "CHARAGRAM supplement Table 1, Sent2Vec Table 2 (their training "
           "data differ: docs/RESULTS.md)."]
  sequences = []
  for name, found in records.items():
    measured = found["scores"].get("encode_measured_on")
    lines.append(f"- `{name}`: {found.get('source')}"
                 + (f"; encode speed on {measured}." if measured else "."))
    sequence = found["scores"].get("encode_sequence")
    if sequence and sequence not in sequences:
      sequences.append(sequence)
  lines += [f"\nThe encode speeds of {', '.join(f'`{n}`' for n in sequence)} "
            "were measured again in one sequence, one after the other "
            "(`python -m lab.catalogue_table --encode_speed NAME...`)."
            for sequence in sequences]
  return "\n".join(lines)


# The README section the table fills (`--readme README.md`).
README_START = ("<!-- pick-a-model: generated by `make docs` from "
                "docs/records/catalogue/ -->")
README_END = "<!-- pick-a-model: end -->"


def section(records: Dict[str, Dict[str, Any]]) -> str:
  """The table and its notes, as printed and as the README holds them."""
  return table(records) + "\n\n" + notes(records)


RESULTS_TITLE = "Every model of the catalogue"


def results_part(context) -> str:
  """docs/RESULTS.md's catalogue part (lab/docs.py): the tables, what each
  entry cost to train, and how it was measured."""
  records = read_records(os.path.join(context.records, "catalogue"))
  return "\n".join([
      f"## {RESULTS_TITLE}", "",
      "Every entry was trained here by `sentzoo train NAME` into a fresh "
      "store; its scores were measured on the installed export "
      "(`docs/records/catalogue/NAME.json`). Pearson's r x 100.", "",
      table(records), "", "### What each entry cost to train", "",
      "`sentzoo train NAME` (`make zoo` trains them all in this order): "
      "the wall time and peak resident memory of the command, from the "
      "start of training to the install, on the machine named. The machine "
      "was shared with other work: the 1-minute load average before each "
      "entry says how much, and a load above the core count slows it.", "",
      training_cost_table(records).rstrip("\n"), "", notes(records), "", ""])


def main(argv):
  import argparse  # pylint: disable=g-import-not-at-top
  parser = argparse.ArgumentParser(prog="python -m lab.catalogue_table")
  parser.add_argument("--record", nargs="+", metavar="NAME",
                      help="record these installed entries' scores first")
  parser.add_argument("--records_dir", default=RECORDS_DIR)
  parser.add_argument("--encode_speed", nargs="+", metavar="NAME",
                      help="time these recorded, installed entries' encode "
                      "again, one after the other, into their records")
  parser.add_argument("--data_dir", help="for --encode_speed's sentences "
                      "(default: $SENTZOO_DATA_DIR)")
  args, rest = parser.parse_known_args(argv[1:])
  cli.reject_arguments([argv[0]] + rest)
  for name in args.record or ():
    path = record(name, store_lib.Store(), args.records_dir)
    print(f"recorded {path}", file=sys.stderr)
  if args.encode_speed:
    from sentzoo.common import data_dir as data_dir_lib  # pylint: disable=g-import-not-at-top
    measure_encode_again(args.encode_speed, store_lib.Store(),
                         data_dir_lib.resolve_data_dir(args.data_dir),
                         args.records_dir)
  print(section(read_records(args.records_dir)))


if __name__ == "__main__":
  from absl import flags  # pylint: disable=g-import-not-at-top
  _argv = list(sys.argv)
  sys.argv = sys.argv[:1]
  cli.run(lambda _: main(_argv), flags.FlagValues())
