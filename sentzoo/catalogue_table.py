r"""The "pick a model" table, generated from the catalogue and measured scores.

  python -m sentzoo.catalogue_table                 # the table (markdown)
  python -m sentzoo.catalogue_table --record siamese-cbow-demo

The store is per machine, so the scores an entry measured when it was
installed here (sentzoo/install_scores.py) are recorded in the repository,
docs/records/catalogue/<name>.json, by `--record NAME` (from the store at
$SENTZOO_HOME). The table has one row per catalogue entry: what it is for,
its recorded scores, and its paper's STS 2014 mean beside the one measured
here; an entry without a record says it is not trained yet. Nothing in the
table is typed by hand.
"""

import json
import os
import statistics
import sys
from typing import Any, Dict, Optional

from sentzoo import catalogue
from sentzoo import store as store_lib
from sentzoo.common import cli
from sentzoo.common import errors

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RECORDS_DIR = os.path.join(REPO_ROOT, "docs", "records", "catalogue")
RECORD_FIELDS = ("sts_mean", "sts_sets", "sts2014_mean", "stsb_dev",
                 "sick_test", "encode_sentences_per_s", "encode_measured_on",
                 "size_bytes", "note", "trainer_results")


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
  if manifest.get("training"):
    data["training"] = manifest["training"]
  os.makedirs(records_dir, exist_ok=True)
  path = os.path.join(records_dir, f"{name}.json")
  with open(path, "w", encoding="utf-8") as f:
    json.dump(data, f, indent=2, sort_keys=True)
    f.write("\n")
  return path


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
  if size_bytes is None:
    return "–"
  return (f"{size_bytes / 1e9:.1f} GB" if size_bytes >= 1e9 else
          f"{size_bytes / 1e6:.1f} MB")


def table(records: Dict[str, Dict[str, Any]]) -> str:
  """The markdown table: one row per catalogue entry."""
  lines = [
      "| model | for | STS-B dev | 19-set STS mean | SICK | size | "
      "encode (sentences/s) | STS 2014 mean: paper / here |",
      "|---|---|---:|---:|---:|---:|---:|---|"]
  for entry in catalogue.ENTRIES:
    paper = paper_sts2014_mean(entry.paper_figure)
    paper_cell = ("– (the paper reports no STS)" if paper is None else
                  f"{paper:.1f}")
    found = records.get(entry.name)
    if found is None:
      lines.append(
          f"| `{entry.name}` | {entry.purpose} | not trained yet "
          f"(`sentzoo train {entry.name}`) | | | | | {paper_cell} / – |")
      continue
    scores = found["scores"]
    speed = scores.get("encode_sentences_per_s")
    here = _number(scores.get("sts2014_mean"), 1)
    lines.append(
        f"| `{entry.name}` | {entry.purpose} | "
        f"{_number(scores.get('stsb_dev'))} | "
        f"{_number(scores.get('sts_mean'))} | "
        f"{_number(scores.get('sick_test'))} | "
        f"{_size(scores.get('size_bytes'))} | "
        f"{'–' if speed is None else f'{speed:,}'} | "
        f"{paper_cell} / {here} |")
  return "\n".join(lines)


def notes(records: Dict[str, Dict[str, Any]]) -> str:
  """How the table's numbers were measured, one line per recorded entry."""
  lines = ["Pearson r x 100, measured on each installed export when it was "
           "installed (`sentzoo train NAME`); 19-set STS: the mean of the "
           "STS 2012-2015 test sets present here (STS2013.SMT is not). "
           "Papers' STS 2014 means: Siamese CBOW Table 1, CHARAGRAM "
           "supplement Table 1, Sent2Vec Table 2 (their training data "
           "differ: docs/RESULTS.md)."]
  for name, found in records.items():
    measured = found["scores"].get("encode_measured_on", "")
    lines.append(f"- `{name}`: {found.get('source')}; encode speed on "
                 f"{measured}.")
  return "\n".join(lines)


# The README section the table fills (`--readme README.md`).
README_START = "<!-- pick-a-model: generated by python -m sentzoo.catalogue_table --readme README.md -->"
README_END = "<!-- pick-a-model: end -->"


def section(records: Dict[str, Dict[str, Any]]) -> str:
  """The table and its notes, as printed and as the README holds them."""
  return table(records) + "\n\n" + notes(records)


def fill_readme(path: str, text: str) -> None:
  """Replaces the README's generated section with `text`."""
  with open(path, encoding="utf-8") as f:
    readme = f.read()
  start, end = readme.find(README_START), readme.find(README_END)
  if start < 0 or end < start:
    raise errors.UserError(f"{path} has no generated section (the lines "
                           f"{README_START!r} and {README_END!r})")
  start += len(README_START)
  with open(path, "w", encoding="utf-8") as f:
    f.write(readme[:start] + "\n" + text + "\n" + readme[end:])


def main(argv):
  import argparse  # pylint: disable=g-import-not-at-top
  parser = argparse.ArgumentParser(prog="python -m sentzoo.catalogue_table")
  parser.add_argument("--record", nargs="+", metavar="NAME",
                      help="record these installed entries' scores first")
  parser.add_argument("--records_dir", default=RECORDS_DIR)
  parser.add_argument("--readme", metavar="PATH",
                      help="also write the table into this README's "
                      "generated section")
  args, rest = parser.parse_known_args(argv[1:])
  cli.reject_arguments([argv[0]] + rest)
  for name in args.record or ():
    path = record(name, store_lib.Store(), args.records_dir)
    print(f"recorded {path}", file=sys.stderr)
  records = read_records(args.records_dir)
  print(section(records))
  if args.readme:
    fill_readme(args.readme, section(records))


if __name__ == "__main__":
  from absl import flags  # pylint: disable=g-import-not-at-top
  _argv = list(sys.argv)
  sys.argv = sys.argv[:1]
  cli.run(lambda _: main(_argv), flags.FlagValues())
