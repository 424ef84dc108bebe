r"""The CHARAGRAM paper's Table 1 for trained runs: STS 2012-2015, SICK, Twitter 2015.

  python -m reports.charagram_results \
      --run="CHARAGRAM-PHRASE MAX=runs/charagram/charagram_phrase_max" \
      --run="charCNN MAX=runs/charagram/char_cnn_max" \
      --data_dir=../shared/data --output_markdown=docs/charagram.md

Each --run is NAME=MODEL_DIR of a `trainers/charagram.py` run; its latest
export (MODEL_DIR/export) is evaluated by cosine similarity, Pearson's r x 100
per set, as in Table 1 of the supplement of Wieting, Bansal, Gimpel,
Livescu, "CHARAGRAM: Embedding Words and Sentences via Character n-grams"
(EMNLP 2016). Rows: every STS set, yearly means, SICK test, Twitter 2015 test
and the mean over all sets (the paper's "Average" is the mean of its 22
sets; here 2013 SMT is absent, so the paper's mean over the same 21 sets is
shown beside it). The paper's four sentence models are shown for reference.

Runs named "<model> MAX" and "<model> MIX" are the two negative samplings
of one model; the page compares models each at the one whose mean STS-B
dev Pearson over its seeds is higher (a last row of the table, in no
mean): the test sets choose nothing.

Records: each seed's evaluation (per-set Pearson, the per-pair predicted
scores the paired bootstrap needs, rounded to 4 decimals, and the run's
training summary; and its STS-B dev Pearson) is also written to
<records_dir>/<run>/seed<k>/ (default
docs/records/charagram, committed; <run> is the --run folder's name), and a
seed whose run folder has no export is read from its record: the page can be
built over several sittings on different machines. --record_only evaluates
and records the runs without writing a page (docs/run_charagram.sh calls it
after each run). The page always uses the rounded per-pair scores, so a run
gives the same page from its folder and from its record.
"""

import json
import math
import os

from absl import flags
import numpy as np

from sentzoo.common import cli
from sentzoo.common import data_dir as data_dir_lib
from sentzoo.common import errors
from sentzoo.common import model_dir as model_dir_lib
from sentzoo.evaluation import encoder as encoder_lib
from sentzoo.evaluation import significance
from sentzoo.evaluation import sts
from sentzoo.evaluation import sts_data
from sentzoo.inputs import twitter_pit
from sentzoo.reports import formatting
from sentzoo.reports import paper_numbers
from sentzoo.reports import run_records
from sentzoo.reports import sts_tables

ALL_MEAN = "all.mean"
# Supplement Table 1's sets (Pearson's r x 100, reports.paper_numbers) under
# the names evaluated here. Its yearly means and Average are recomputed over
# the sets here (the paper's are over 22 sets, with 2013 SMT; its printed
# Average is a row of its own).
PAPER_SETS = {twitter_pit.SET_NAME if k == "Twitter2015" else k: v
              for k, v in paper_numbers.CHARAGRAM_TABLE1.items()
              if not k.endswith(".mean") and k != "Average"}


def evaluation_sets(data_dir):
  """STS 2012-2015 test sets, SICK test, Twitter 2015 test; (sets, missing)."""
  pair_sets, missing = sts_data.load_eval_sets(data_dir, ("sts", "sick"))
  try:
    pair_sets.append(twitter_pit.load_test_split(data_dir))
  except errors.DataDirError:
    missing.append(twitter_pit.SET_NAME)
  return pair_sets, missing


def table_rows(set_names, dev_name=None):
  """[(row key, label, member set names or None)] in Table 1 order; the
  dev set's row, when named, last."""
  rows = []
  for year in (2012, 2013, 2014, 2015):
    members = [n for n in set_names if sts_data.sts_year(n) == year]
    for name in members:
      rows.append((name, name, None))
    if members:
      rows.append((f"STS{year}.mean", f"**STS {year} mean** "
                   f"({len(members)} sets)", members))
  for name in ("SICK.test", twitter_pit.SET_NAME):
    if name in set_names:
      rows.append((name, name, None))
  rows.append((ALL_MEAN, f"**Average** ({len(set_names)} sets)",
               list(set_names)))
  if dev_name:
    rows.append((dev_name, f"{dev_name} (chooses MAX or MIX; not in the "
                 "Average)", None))
  return rows


def mean_present(values):
  """The mean of the values that are neither None nor nan; nan if none."""
  return significance.mean_std(values)[0]


def row_values(scores, rows):
  """{row key: value} for one column of per-set scores."""
  out = {}
  for key, _, members in rows:
    out[key] = (mean_present([scores.get(m, math.nan) for m in members])
                if members else scores.get(key, math.nan))
  return out


def format_markdown(columns, set_names, missing=(), dev_name=None):
  """Markdown: the runs' Table 1 rows beside the paper's.

  Args:
    columns: list of (column name, {set name: Pearson x 100}, or a list of
      them, one per seed).
    set_names: the evaluated test sets, in order.
    missing: sets absent from the data.
    dev_name: the dev set's name: a last row, outside every mean.
  """
  rows = table_rows(set_names, dev_name)
  seeded = []  # (name, [per-seed row values])
  for name, scores in columns:
    per_seed = scores if isinstance(scores, (list, tuple)) else [scores]
    seeded.append((name, [row_values(x, rows) for x in per_seed]))
  values = [(name, {key: mean_present([v[key] for v in per_seed])
                    for key, _, _ in rows}) for name, per_seed in seeded]
  spreads = {name: {key: significance.mean_std([v[key] for v in per_seed])
                    for key, _, _ in rows} for name, per_seed in seeded}
  counts = {name: len(per_seed) for name, per_seed in seeded}
  paper_values = [(f"paper {p}", row_values(
      {k: v[i] for k, v in PAPER_SETS.items()}, rows))
                  for i, p in enumerate(paper_numbers.CHARAGRAM_COLUMNS)]
  header = (["set"] + [n if counts[n] == 1 else f"{n} (n={counts[n]})"
                        for n, _ in values] + [n for n, _ in paper_values])
  lines = ["| " + " | ".join(header) + " |",
           "|" + "---|" * len(header)]
  for key, label, _ in rows:
    cells = [label] + [formatting.number(v[key], 1) if counts[n] == 1 else
                       formatting.mean_std(spreads[n][key], 1) for n, v in values]
    cells += [formatting.number(v[key], 1) for _, v in paper_values]
    lines.append("| " + " | ".join(cells) + " |")
  printed = [formatting.number(v, 1)
             for v in paper_numbers.CHARAGRAM_TABLE1["Average"]]
  lines.append("| paper's printed Average (22 sets, incl. 2013 SMT) | "
               + " | ".join("" for _ in values) + " | "
               + " | ".join(printed) + " |")
  text = "\n".join(lines) + "\n"
  text += ("\nPearson's r x 100 of cosine similarity; a column over several "
           "training seeds (n=...) shows mean ± standard deviation over them "
           "(each seed's yearly means and Average first, then their mean and "
           "spread). The paper columns are "
           "copied from the supplement's Table 1; their yearly means and "
           "Average here are recomputed over the same sets as the runs "
           "(the paper's own means include 2013 SMT).\n")
  if missing:
    text += f"\nMissing sets (not in the data): {', '.join(missing)}\n"
  return text, dict(values)


PAPER_ORDER = ("CHARAGRAM-PHRASE", "PARAGRAM-PHRASE", "charCNN", "charLSTM")


def choose_sampling(averages, dev_means, groups):
  """Each model's MAX or MIX column, chosen on STS-B dev, with a line each.

  Args:
    averages: {column name: mean test Average} (reported, never chosen on).
    dev_means: {column name: mean STS-B dev Pearson over its seeds; nan
      when no seed has one}.
    groups: {model label: {"max": column name, "mix": column name}}.

  Returns:
    ({model: chosen column name}, [lines]). A model with one sampling has
    that one; a model with both whose dev score is missing for either has
    none (its line says so) and is left out of the ordering and the tests.
  """
  best, lines = {}, []
  for model, by_sampling in groups.items():
    present = {s: c for s, c in by_sampling.items()
               if c in averages and not math.isnan(averages[c])}
    if len(present) == 1:
      best[model] = next(iter(present.values()))
      continue
    if len(present) != 2:
      continue
    test = (f"MAX {averages[present['max']]:.1f}, MIX "
            f"{averages[present['mix']]:.1f} on the test Average")
    dev = {s: dev_means.get(c, math.nan) for s, c in present.items()}
    absent = [present[s] for s, v in dev.items() if math.isnan(v)]
    if absent:
      lines.append(f"- {model}: {test}; not chosen, no STS-B dev score for "
                   f"{', '.join(absent)} (evaluate its run folders again), so "
                   "it is left out of the ordering and the tests.")
      continue
    chosen = "max" if dev["max"] >= dev["mix"] else "mix"
    best[model] = present[chosen]
    lines.append(f"- {model}: {test}; STS-B dev MAX {dev['max']:.1f}, MIX "
                 f"{dev['mix']:.1f} -> {chosen.upper()} is chosen.")
  return best, lines


def ordering_lines(averages, best):
  """Sentences on the paper's ordering of the chosen columns.

  Args:
    averages: {column name: mean test Average}.
    best: {model label: its chosen column name} (`choose_sampling`).
  """
  present = [m for m in PAPER_ORDER if m in best]
  order = sorted(present, key=lambda m: -averages[best[m]])
  lines = ["- Ordering of the paper's four models, each at its MAX or MIX "
           "chosen on STS-B dev, by the test Average: " + " > ".join(
               f"{m} ({averages[best[m]]:.1f})" for m in order) + "."]
  same = order == present
  lines.append("- Do the means rank them in the paper's order CHARAGRAM-"
               f"PHRASE > PARAGRAM-PHRASE > charCNN > charLSTM? "
               f"{'yes' if same else 'no'}" + ("" if len(present) == 4 else
                         f" (among {', '.join(present)})") +
               " (whether the differences are real: the paired tests below).")
  return lines


EVAL_CACHE = "charagram_eval.json"


# A record's files (reports.run_records): per-set Pearson, per-pair
# predicted scores (4 decimals), the run's model_config.json less the model,
# and the training's wall-clock seconds (written into the run folder by
# docs/run_charagram.sh, summed over the invocations of a resumed run).
RECORD_SCORES = "pearson.json"
RECORD_PREDICTED = "predicted.npz"
RECORD_CONFIG = model_dir_lib.MODEL_CONFIG_FILE
RECORD_CONFIG_KEYS = ("model_type", "variant", "training")
RECORD_WALL_SECONDS = "wall_seconds"


def wall_seconds(*folders):
  """The training wall seconds in the first of `folders` that has them."""
  folder = run_records.first_with(RECORD_WALL_SECONDS, *folders)
  if folder is None:
    return None
  with open(os.path.join(folder, RECORD_WALL_SECONDS)) as f:
    text = f.read().strip()
  try:
    return float(text)
  except ValueError:
    raise errors.DataFormatError(os.path.join(folder, RECORD_WALL_SECONDS), 1,
                                 f"not a number of seconds: {text!r}")


def _has_export(folder):
  return os.path.isdir(os.path.join(folder, model_dir_lib.EXPORT_SUBDIR))


def _has_seeds(folder):
  return bool(folder) and os.path.isdir(folder) and any(
      n.startswith("seed") for n in os.listdir(folder))


def _is_recorded(record):
  return run_records.first_with(RECORD_SCORES, record) is not None


def seed_sources(model_dir, seeds, records_dir=None):
  """{seed: (run folder, record folder or None, read from the record?)}.

  model_dir/seed<k> for the seeds with an export there or, failing that, a
  record in records_dir/<run>/seed<k> (<run>: model_dir's name); when
  neither model_dir nor its record has seed folders at all, one run
  {None: ...} (model_dir itself).
  """
  run = os.path.basename(os.path.normpath(model_dir))
  def record(seed):
    return (run_records.record_dir(records_dir, run, seed) if records_dir
            else None)
  found = {}
  for k in seeds:
    folder = os.path.join(model_dir, f"seed{k}")
    if _has_export(folder):
      found[k] = (folder, record(k), False)
    elif _is_recorded(record(k)):
      found[k] = (folder, record(k), True)
  if found or _has_seeds(model_dir) or _has_seeds(record(None)):
    return found
  if _has_export(model_dir):
    return {None: (model_dir, record(None), False)}
  if _is_recorded(record(None)):
    return {None: (model_dir, record(None), True)}
  return {}


def compare(run_a, run_b, gold, num_samples=1000):
  """(t-test over the seeds both have of the Average, bootstrap of the mean
  Pearson over all sets with every seed of each). run_*: {seed: {"average":
  float, "predicted": {set: array}}}; gold: {set: array}."""
  common = [k for k in run_a if k in run_b]
  t_test = significance.paired_t_test(
      [run_a[k]["average"] for k in common],
      [run_b[k]["average"] for k in common])
  sets = []
  for name, g in gold.items():
    pa = [r["predicted"][name] for r in run_a.values() if name in
          r["predicted"]]
    pb = [r["predicted"][name] for r in run_b.values() if name in
          r["predicted"]]
    if pa and pb:
      sets.append((g, np.stack(pa), np.stack(pb)))
  bootstrap = significance.bootstrap_pearson_difference(
      sets, num_samples=num_samples)
  return t_test, bootstrap


def claims(runs, best, gold, num_samples=1000):
  """CHARAGRAM-PHRASE > each baseline, and the paper's order, tested.

  Args:
    runs: {column name: {seed: {"average", "predicted"}}}.
    best: {model: column name} (its MAX or MIX chosen on STS-B dev).
    gold: {set name: gold scores}.

  Returns:
    [(claim, verdict, detail)]: "A > B" for CHARAGRAM-PHRASE against each
    other model both present, then the paper's whole ordering (all four
    present), verdict `significance.claim_verdict`'s.
  """
  out, tested = [], {}
  def test(a, b):
    if (a, b) not in tested:
      t_test, boot = compare(runs[best[a]], runs[best[b]], gold, num_samples)
      detail = (f"{boot.difference:+.1f} ({best[a]} vs {best[b]}; t-test "
                f"over {t_test.num} seeds p {formatting.pvalue(t_test.pvalue)}"
                f", bootstrap p {formatting.pvalue(boot.pvalue)}, 95% "
                f"interval {boot.detail['ci95'][0]:+.1f} to "
                f"{boot.detail['ci95'][1]:+.1f})" if boot.num else
                "(no common sets)")
      tested[a, b] = significance.direction([t_test, boot]), detail
    return tested[a, b]
  first = PAPER_ORDER[0]
  for baseline in PAPER_ORDER[1:]:
    if first in best and baseline in best:
      d, detail = test(first, baseline)
      out.append((f"{first} > {baseline}", significance.claim_verdict([d]),
                  detail))
  if all(m in best for m in PAPER_ORDER):
    steps = [test(a, b) for a, b in zip(PAPER_ORDER, PAPER_ORDER[1:])]
    out.append((" > ".join(PAPER_ORDER),
                significance.claim_verdict([d for d, _ in steps]),
                "each step tested as above"))
  return out


def claim_lines(runs, best, gold, num_samples=1000):
  """The page's sentences for `claims`."""
  return [f"- {claim}: {verdict} {detail}." if detail[0] != "e" else
          f"- The paper's ordering {claim} ({detail}): {verdict}."
          for claim, verdict, detail in claims(runs, best, gold, num_samples)]


def _scores_json(evaluated):
  scores = {"sets": evaluated["scores"], "export": evaluated.get("export")}
  if evaluated.get("dev") is not None:
    scores["dev"] = evaluated["dev"]
  return scores


def write_record(record, folder, evaluated):
  """Writes a seed's record from its evaluation and run folder, unless the
  record already holds these Pearsons (its wall seconds are added when the
  record lacks them; a dev score it lacks is added to its pearson.json
  alone, leaving the per-pair scores' file as it was)."""
  if (os.path.isfile(os.path.join(folder, RECORD_WALL_SECONDS))
      and not os.path.isfile(os.path.join(record, RECORD_WALL_SECONDS))):
    run_records.copy_files(folder, record, [RECORD_WALL_SECONDS])
  scores_path = os.path.join(record, RECORD_SCORES)
  if _is_recorded(record):
    recorded = run_records.read_json(scores_path)
    if recorded["sets"] == evaluated["scores"]:
      if (evaluated.get("dev") is None
          or recorded.get("dev") == evaluated["dev"]):
        return False
      run_records.write_json(scores_path, _scores_json(evaluated))
      return True
  config = {}
  path = os.path.join(folder, RECORD_CONFIG)
  if os.path.exists(path):
    config = {k: v for k, v in run_records.read_json(path).items()
              if k in RECORD_CONFIG_KEYS}
  run_records.save_decimals(os.path.join(record, RECORD_PREDICTED),
                            evaluated["predicted"])
  run_records.write_json(os.path.join(record, RECORD_CONFIG), config)
  run_records.write_json(scores_path, _scores_json(evaluated))
  return True


def read_record(record, set_names):
  """A seed's evaluation from its record (as `_evaluate_cached` gives;
  "dev" None when the record has no dev score)."""
  recorded = run_records.read_json(os.path.join(record, RECORD_SCORES))
  scores = recorded["sets"]
  predicted = run_records.load_decimals(os.path.join(record,
                                                     RECORD_PREDICTED))
  absent = [n for n in set_names if n not in scores or n not in predicted]
  if absent:
    raise errors.UserError(f"record {record} lacks the sets {absent}: "
                           "evaluate the run again (its run folder)")
  return {"scores": {n: scores[n] for n in set_names},
          "predicted": {n: predicted[n] for n in set_names},
          "dev": recorded.get("dev")}


def evaluate_source(source, pair_sets, missing, name, dev_set=None):
  """One seed's evaluation from its run folder (cached, and recorded) or
  its record; per-pair scores rounded as a record keeps them."""
  folder, record, from_record = source
  if from_record:
    return read_record(record, [p.name for p in pair_sets])
  evaluated = _evaluate_cached(folder, pair_sets, missing, name, dev_set)
  if record and write_record(record, folder, evaluated):
    size = run_records.size_bytes(record)
    print(f"{name}: recorded {folder} in {record} ({size:,} bytes)")
  evaluated["predicted"] = {n: run_records.round_decimals(v)
                            for n, v in evaluated["predicted"].items()}
  return evaluated


def _evaluate_cached(folder, pair_sets, missing, name, dev_set=None):
  """{"scores": {set: Pearson x 100}, "predicted": {set: array}, "dev":
  Pearson x 100 on dev_set or None} of the export in folder, cached in
  folder/EVAL_CACHE (keyed by export path; a set the cache lacks is
  evaluated and added)."""
  export = encoder_lib.resolve_export_dir(
      os.path.join(folder, model_dir_lib.EXPORT_SUBDIR))
  cache = os.path.join(folder, EVAL_CACHE)
  sets = {}
  if os.path.exists(cache):
    with open(cache) as f:
      cached = json.load(f)
    if cached.get("export") == export:
      sets = cached["sets"]
  wanted = list(pair_sets) + ([dev_set] if dev_set is not None else [])
  absent = [p for p in wanted if p.name not in sets]
  if absent:
    results = sts.evaluate_pair_sets(encoder_lib.load_encoder(export),
                                     absent, missing, model_name=name)
    sets.update({n: {"pearson": r.pearson,
                     "predicted": [float(x) for x in np.asarray(r.predicted)]}
                 for n, r in results.sets.items()})
    model_dir_lib.write_text_atomically(
        cache, json.dumps({"export": export, "sets": sets}))
  names = [p.name for p in pair_sets]
  return {"export": export,
          "scores": {n: sets[n]["pearson"] for n in names},
          "predicted": {n: np.asarray(sets[n]["predicted"]) for n in names},
          "dev": sets[dev_set.name]["pearson"] if dev_set is not None
                 else None}


FLAGS = flags.FLAGS


def _training_line(name, model_dir, config_dir=None):
  """One line of the "Runs:" list; model_config.json is read from
  config_dir (default model_dir: a record's folder for a recorded run)."""
  path = os.path.join(config_dir or model_dir, model_dir_lib.MODEL_CONFIG_FILE)
  if not os.path.exists(path):
    return f"- {name}: `{model_dir}`"
  with open(path) as f:
    config = json.load(f)
  if config.get("model_type") != "charagram":
    return (f"- {name}: `{model_dir}`: a {config.get('model_type')} model "
            "(not trained on paraphrase pairs)")
  t = config.get("training", {})
  return (f"- {name}: `{model_dir}`: {config.get('variant')}, "
          f"{t.get('num_pairs')} pairs of {', '.join(t.get('train_files', []))}"
          f" (format {t.get('train_format')}, min score {t.get('min_score')})"
          + "".join(f" + word pairs of {f} (format lexicon)"
                    for f in t.get("lexicon_files", []))
          + (f" + task paraphrases of {', '.join(t['task_paraphrases'])}"
             if t.get("task_paraphrases") else "") + ","
          f" {t.get('total_steps')} steps of {t.get('batch_size')}, sampling "
          f"{t.get('sampling')}, L2 {t.get('l2')}, init "
          f"{t.get('initialisation', 'random')}")


def load_runs(runs, seeds, pair_sets, missing, records_dir=None,
              dev_set=None):
  """Evaluates (or reads from records) every --run, on the test sets and
  on dev_set.

  Returns (columns, per_run, present): format_markdown's columns (each
  seed's scores with its dev score under dev_set's name, when it has one),
  claim_lines' runs (with "dev": the seed's dev Pearson or None), and
  [(name, run folder shown, folder holding its model_config.json, seeds,
  [training wall seconds of each seed that has them])].
  """
  rows = table_rows([p.name for p in pair_sets])
  columns, per_run, present = [], {}, []
  for name, model_dir in runs:
    sources = seed_sources(model_dir, seeds, records_dir)
    if not sources:
      print(f"{name}: no seed of {seeds} under {model_dir}"
            + (f" nor in {records_dir}" if records_dir else "")
            + "; left out")
      continue
    evaluated = {k: evaluate_source(source, pair_sets, missing, name,
                                    dev_set)
                 for k, source in sources.items()}
    columns.append((name, [
        {**e["scores"], **({dev_set.name: e["dev"]} if dev_set is not None
                           and e.get("dev") is not None else {})}
        for e in evaluated.values()]))
    per_run[name] = {k: {"average": row_values(e["scores"], rows)[ALL_MEAN],
                         "predicted": e["predicted"], "dev": e.get("dev")}
                     for k, e in evaluated.items()}
    folder, record, _ = next(iter(sources.values()))
    config_dir = run_records.first_with(model_dir_lib.MODEL_CONFIG_FILE,
                                        folder, record)
    present.append((name, folder, config_dir,
                    sorted(k for k in sources if k is not None),
                    [w for w in (wall_seconds(f, r)
                                 for f, r, _ in sources.values())
                     if w is not None]))
  return columns, per_run, present


def page_text(runs, seeds, pair_sets, missing, records_dir=None,
              bootstrap_samples=1000, dev_set=None):
  """The page below the preamble: table, MAX/MIX chosen on dev_set,
  ordering, paired tests, runs."""
  gold = {p.name: p.scores for p in pair_sets}
  columns, per_run, present = load_runs(runs, seeds, pair_sets, missing,
                                        records_dir, dev_set)
  set_names = [p.name for p in pair_sets]
  table, values = format_markdown(
      columns, set_names, missing,
      dev_set.name if dev_set is not None else None)
  averages = {name: v[ALL_MEAN] for name, v in values.items()}
  dev_means = {name: mean_present([s["dev"] for s in seeded.values()])
               for name, seeded in per_run.items()}
  groups = {}
  for name, _, _, _, _ in present:
    model, _, sampling = name.rpartition(" ")
    if sampling.lower() in ("max", "mix"):
      groups.setdefault(model, {})[sampling.lower()] = name
  best, choice = choose_sampling(averages, dev_means, groups)
  text = (table + "\nMAX or MIX, chosen per model by the mean STS-B dev "
          "Pearson over its seeds (the test sets choose nothing):\n\n"
          + "\n".join(choice + ordering_lines(averages, best)) + "\n")
  text += ("\nPaired tests (each model at its MAX or MIX chosen on STS-B "
           "dev): a paired t-test over seeds of the Average (seed k "
           "vs seed k) and a paired bootstrap (1,000 samples) of the "
           "difference of the mean-over-sets Pearson, redrawing the pairs of "
           "every set, with all seeds of each model. A claim \"A > B\" "
           "holds when both give p < 0.05 with A above, does not hold when "
           "both give p < 0.05 with A below, and is otherwise not "
           "distinguishable at p<0.05.\n\n")
  text += "\n".join(claim_lines(per_run, best, gold,
                                bootstrap_samples)) + "\n"
  text += "\nRuns:\n" + "\n".join(
      _training_line(f"{n} (seeds {', '.join(map(str, ks))})" if ks else n,
                     d, c) + _wall_note(ws) for n, d, c, ks, ws in present)
  text += "\n"
  every = [w for *_, ws in present for w in ws]
  if every:
    text += (f"\nTraining wall time of the runs above: {sum(every) / 60:.1f} "
             f"min in all, over the {len(every)} trained seeds that recorded "
             "it (docs/run_charagram.sh; 2 shared CPU cores; evaluation "
             "not included).\n")
  return text


def _wall_note(seconds):
  """"; training wall time ..." for a run's "Runs:" line ("" if none)."""
  if not seconds:
    return ""
  return ("; training wall time per seed "
          + " / ".join(f"{w / 60:.1f}" for w in seconds) + " min")


def main(argv):
  cli.reject_arguments(argv)
  if not FLAGS.run:
    raise errors.UserError("pass --run=NAME=MODEL_DIR at least once")
  runs = []
  for spec in FLAGS.run:
    name, sep, model_dir = spec.partition("=")
    if not sep or not name or not model_dir:
      raise errors.UserError(f"--run={spec!r}: expected NAME=MODEL_DIR")
    runs.append((name, model_dir))
  try:
    seeds = [int(k) for k in FLAGS.seeds]
  except ValueError:
    raise errors.UserError(f"--seeds must be integers, got {FLAGS.seeds}")
  data_dir = data_dir_lib.resolve_data_dir(FLAGS.data_dir)
  pair_sets, missing = evaluation_sets(data_dir)
  # STS-B dev chooses each model's MAX or MIX (never in a test mean).
  dev_set = sts_data.load_stsb_split(data_dir, "dev")
  if FLAGS.record_only:
    if not FLAGS.records_dir:
      raise errors.UserError("--record_only needs --records_dir")
    load_runs(runs, seeds, pair_sets, missing, FLAGS.records_dir, dev_set)
    return
  text = page_text(runs, seeds, pair_sets, missing, FLAGS.records_dir,
                   FLAGS.bootstrap_samples, dev_set)
  print(text)
  if FLAGS.output_markdown:
    with open(FLAGS.output_markdown, "w", encoding="utf-8") as f:
      if FLAGS.command_note:
        f.write(sts_tables.command_note_line(FLAGS.command_note) + "\n\n")
      if FLAGS.preamble:
        with open(FLAGS.preamble, encoding="utf-8") as p:
          f.write(p.read().rstrip("\n") + "\n\n")
      f.write(text)


if __name__ == "__main__":
  flags.DEFINE_multi_string("run", [], "NAME=MODEL_DIR of a trained run; "
                            "names ending in ' MAX' / ' MIX' are compared.")
  flags.DEFINE_string("data_dir", "", "Data directory (default: "
                      f"${data_dir_lib.ENV_VAR}).")
  flags.DEFINE_string("output_markdown", "", "Also write the page here.")
  flags.DEFINE_list("seeds", ["0", "1", "2"], "A --run folder with seed<k> "
                    "subfolders contributes these seeds (those present); "
                    "one without is a single run.")
  flags.DEFINE_integer("bootstrap_samples", 1000, "Paired bootstrap "
                       "samples.")
  flags.DEFINE_string("command_note", "", "First line 'Produced by: ...'.")
  flags.DEFINE_string("records_dir", "docs/records/charagram", "Records of "
                      "the runs' evaluations: written for every evaluated "
                      "seed, read for a seed whose run folder has no "
                      "export. Empty: none.")
  flags.DEFINE_bool("record_only", False, "Evaluate and record the runs; "
                    "write no page.")
  flags.DEFINE_string("preamble", "", "A markdown file written above the "
                      "table (prose that states no measured numbers).")
  cli.run(main)
