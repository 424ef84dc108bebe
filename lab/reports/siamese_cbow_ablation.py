r"""The Siamese CBOW ablation table of docs/siamese_cbow.md.

Reads each run of `docs/run_siamese_cbow_ablation.sh` from its committed
record (docs/records/siamese_cbow_ablation/<run>/) and prints a row per run:
its flags against the base run's, STS test scores, STS-B dev, the held-out
neighbour ranking, the STS sets beaten against word2vec, and minutes. The
run with the highest STS-B dev Pearson is the selection: settings are chosen
on dev, never on the STS test sets. `make docs` writes the table and the
STS-B dev plot into the page (`ablations_part`, `dev_curves_part`).

  python -m lab.reports.siamese_cbow_ablation \
      --runs_dir=docs/records/siamese_cbow_ablation --runs=untrained,paper \
      --reference=word2vec=../shared/baselines/word2vec_books_sts.md
"""

import dataclasses
import os
import subprocess
from typing import Optional

from absl import flags

from lab import records
from lab.reports import baselines
from lab import tables
from sentzoo.common import cli
from sentzoo.common import errors
from sentzoo.common import model_dir as model_dir_lib

# Flags that say where a run is, not what it is.
_NOT_SETTINGS = ("data_dir", "model_dir", "export_dir", "flagfile")
STS_MEAN, STS2014_MEAN, SICK = "STS.mean", "STS2014.mean", "SICK.test"


@dataclasses.dataclass
class Run:
  """What the table shows of one trained run."""
  name: str
  flags: dict  # Flag name -> its flags.txt line.
  ablation_flags: Optional[str]  # The runner's flags for this row, if known.
  sts: dict  # Set or aggregate name -> Pearson x 100.
  dev_pearson: Optional[float]
  neighbour_ranking: Optional[float]
  steps: Optional[int]
  minutes: Optional[float]


def _last(records, key):
  values = [r[key] for r in records if key in r]
  return values[-1] if values else None


def load_run(runs_dir, name):
  """One run folder (or record); None before it has sts_results.json."""
  folder = os.path.join(runs_dir, name)
  results_path = os.path.join(folder, model_dir_lib.STS_RESULTS_FILE)
  if not os.path.exists(results_path):
    return None
  results = records.read_json(results_path)
  wall = records.wall_seconds(folder)
  evals = records.read_jsonl(
      os.path.join(folder, model_dir_lib.EVAL_LOG_FILE))
  return Run(
      name=name,
      flags=model_dir_lib.read_flags_file(folder),
      ablation_flags=records.read_text(
          os.path.join(folder, "ablation_flags.txt")),
      sts={k: v["pearson"] for part in ("sets", "aggregates")
           for k, v in results[part].items()},
      dev_pearson=_last(evals, "stsb_dev_pearson"),
      neighbour_ranking=_last(evals, "neighbour_ranking"),
      steps=_last(records.read_jsonl(
          os.path.join(folder, model_dir_lib.TRAIN_LOG_FILE)), "step"),
      minutes=None if wall is None else wall / 60)


def setting(run, base):
  """The runner's flags for `run` (ablation_flags.txt), else its flags.txt
  lines that differ from `base`'s (a flag only one has says which code
  ran, not what was trained: left out)."""
  if run.ablation_flags is not None:
    return run.ablation_flags or "(paper flagfile)"
  names = sorted(set(run.flags) & set(base.flags))
  diff = [run.flags[n] for n in names
          if n not in _NOT_SETTINGS and run.flags[n] != base.flags[n]]
  return " ".join(diff) or "(paper flagfile)"


def sets_beaten(run, references):
  """(sets where run's Pearson > every reference column's, sets compared)."""
  names = [k for k in run.sts if not k.endswith(".mean") and k != SICK
           and all(k in column for column in references.values())]
  wins = sum(run.sts[k] > max(c[k][0] for c in references.values())
             for k in names)
  return wins, len(names)


def selection(runs):
  """The run with the highest final STS-B dev Pearson (None if none has)."""
  scored = [r for r in runs if r.dev_pearson is not None]
  return max(scored, key=lambda r: r.dev_pearson) if scored else None


def format_table(runs, base, references, unfinished=()):
  """The ablation table: a row per run, then one per unfinished run."""
  best, rows = selection(runs), []
  for run in runs:
    wins, compared = sets_beaten(run, references) if references else (0, 0)
    rows.append([f"**{run.name}**" if run is best else run.name,
                 setting(run, base)] + [tables.number(run.sts.get(k))
                                        for k in (STS_MEAN, STS2014_MEAN, SICK)]
                + [tables.number(run.dev_pearson),
                   tables.number(run.neighbour_ranking, 4),
                   f"{wins}/{compared}" if compared else tables.MISSING,
                   tables.MISSING if run.steps is None else run.steps,
                   tables.number(run.minutes, 1)])
  text = tables.table(
      ["run", "flags besides the paper flagfile", "19-set mean",
       "STS 2014 mean", "SICK test", "STS-B dev", "neighbour ranking",
       "sets > best word2vec", "steps", "minutes"], rows,
      "|---|---|" + "---:|" * 8) + "".join(
          f"| {name} | no finished run recorded yet: `bash "
          f"docs/run_siamese_cbow_ablation.sh {name}` | | | | | | | | |\n"
          for name in unfinished)
  return text[:-1]


def dev_curves(runs_dir, names):
  """{run: [(step, STS-B dev Pearson)]} from each run's eval_log.jsonl."""
  paths = {n: os.path.join(runs_dir, n, model_dir_lib.EVAL_LOG_FILE)
           for n in names}
  return {n: [(p["step"], p["stsb_dev_pearson"])
              for p in records.read_jsonl(path) if "stsb_dev_pearson" in p]
          for n, path in paths.items() if os.path.exists(path)}


def dev_caption(curves, untrained):
  """What the STS-B dev plot shows, with its numbers."""
  ends = "; ".join(f"{n} {p[-1][1]:.2f}" for n, p in curves.items())
  return (f"STS-B dev Pearson of each run at its evaluations; dashed: the "
          f"model before training ({untrained:.2f}). A line above the dashed "
          f"one means training helped. At the last step: {ends}.")


def plot_dev_curves(curves, untrained, path):
  """STS-B dev against training step, one line per run, one pair of axes;
  the untrained model's score as a dashed line. Returns the caption."""
  def draw(axis):
    for name, points in curves.items():
      axis.plot(*zip(*points), marker="o", markersize=5, linewidth=2,
                label=name)
    axis.axhline(untrained, color="grey", linestyle="--", linewidth=1,
                 label=f"before training ({untrained:.2f})")
  tables.line_plot(path, "STS-B dev during training",
                   "training step (batches of 100)",
                   "STS-B dev Pearson \u00d7 100", draw)
  return dev_caption(curves, untrained)


def report_text(runs_dir, names, base="paper", references=None):
  """(the table and the dev selection's sentence, the selected Run, every
  finished Run)."""
  if not names:
    raise errors.UserError("--runs names no run")
  loaded = {n: load_run(runs_dir, n) for n in names}
  runs = [r for r in loaded.values() if r is not None]
  by_name = {r.name: r for r in runs}
  if base not in by_name:
    raise errors.UserError(
        f"--base={base} is not a finished run among --runs (run "
        "docs/run_siamese_cbow_ablation.sh first)")
  text = format_table(runs, by_name[base], references or {},
                      [n for n, r in loaded.items() if r is None])
  best = selection(runs)
  if best is not None:
    text += (f"\n\nSelected on STS-B dev: **{best.name}** (dev Pearson "
             f"{best.dev_pearson:.2f}); its test scores: 19-set mean "
             f"{tables.number(best.sts.get(STS_MEAN))}, STS 2014 "
             f"{tables.number(best.sts.get(STS2014_MEAN))}, SICK "
             f"{tables.number(best.sts.get(SICK))}.")
  return text, best, runs


# docs/siamese_cbow.md's records, and the runs its STS-B dev plot draws.
RECORDS = "docs/records/siamese_cbow_ablation"
PLOT_RUNS = ("paper", "lr1e-3", "lr1e-2", "lr1e-3_document", "lr1e-3_nearby")


def page_runs():
  """The ablation runs in the page's order (the runner's list)."""
  return subprocess.run(
      ["bash", "docs/run_siamese_cbow_ablation.sh", "--list"], check=True,
      capture_output=True, text=True).stdout.split()


def ablations_part(context):
  """docs/siamese_cbow.md's ablation table and selection (lab/docs.py)."""
  text, _, _ = report_text(RECORDS, page_runs(), "paper", baselines.load_references(
      [f"word2vec={context.baselines}/word2vec_books_sts.md"]))
  return text + "\n\n\n"


def _untrained_dev():
  return load_run(RECORDS, "untrained").dev_pearson


def dev_curves_part(context):
  """The STS-B dev plot's caption (lab/docs.py)."""
  del context
  return f"*{dev_caption(dev_curves(RECORDS, PLOT_RUNS), _untrained_dev())}*\n"


def draw_dev_curves(path):
  """docs/siamese_cbow_dev_curves.png (lab/docs.py)."""
  plot_dev_curves(dev_curves(RECORDS, PLOT_RUNS), _untrained_dev(), path)


def define_flags(flag_values):
  flags.DEFINE_string("runs_dir", RECORDS,
                      "Folder of the run folders (or of their records).",
                      flag_values=flag_values)
  flags.DEFINE_list("runs", [], "Run names in table order.",
                    flag_values=flag_values)
  flags.DEFINE_string("base", "paper", "The run whose flags the others are "
                      "compared with.", flag_values=flag_values)
  flags.DEFINE_multi_string("reference", [], "PREFIX=PATH of a baseline page "
                            "(see lab.reports.baselines).",
                            flag_values=flag_values)


def report(flag_values):
  """Prints the table and the dev selection; returns the selected run."""
  text, best, _ = report_text(
      flag_values.runs_dir, flag_values.runs, flag_values.base,
      baselines.load_references(flag_values.reference))
  print(text)
  return best


def run(argv):
  """Runs the command in-process (argv[0] is the program)."""
  return report(cli.parse_own_flags(define_flags, argv))


if __name__ == "__main__":
  cli.run_with_own_flags(define_flags, report)
