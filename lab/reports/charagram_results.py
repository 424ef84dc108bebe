r"""The CHARAGRAM paper's Table 1 for trained runs (docs/charagram.md).

  python -m lab.reports.charagram_results \
      --run="CHARAGRAM-PHRASE MAX=runs/charagram/charagram_phrase_max" \
      --data_dir=../shared/data [--record_only]

Each --run is NAME=MODEL_DIR of `trainers/charagram.py` runs (seed<k>/
folders); each export is scored by cosine, Pearson's r x 100 per set, beside
the supplement's Table 1 (Wieting et al., EMNLP 2016). The paper's Average
covers 22 sets; 2013 SMT is absent here, so the paper columns are recomputed
over the sets present. "<model> MAX" and "<model> MIX" runs are compared at
the sampling with the higher mean STS-B dev Pearson: test sets choose
nothing.

A finished seed's evaluation is kept in a committed record
(<records_dir>/<run>/seed<k>/: Pearsons, per-pair scores to 4 decimals, the
training summary) and read from there when the run folder is absent; the
command prints the page's text, and `make docs` writes it from the records
alone (`page_part`). Both use the rounded scores, so folder and record give
the same page.
"""

import json
import math
import os

from absl import flags
import numpy as np

from lab import records
from lab.reports import paper_numbers
from lab.reports import word_vector_choice
from lab import significance
from lab import tables
from sentzoo.common import cli
from sentzoo.common import data_dir as data_dir_lib
from sentzoo.common import errors
from sentzoo.common import model_dir as model_dir_lib
from sentzoo.evaluation import encoder as encoder_lib
from sentzoo.evaluation import sts
from sentzoo.evaluation import sts_data
from sentzoo.inputs import twitter_pit

ALL_MEAN = "all.mean"
# Table 1's sets under the names evaluated here (its means are recomputed).
PAPER_SETS = {twitter_pit.SET_NAME if k == "Twitter2015" else k: v
              for k, v in paper_numbers.CHARAGRAM_TABLE1.items()
              if not k.endswith(".mean") and k != "Average"}
PAPER_ORDER = ("CHARAGRAM-PHRASE", "PARAGRAM-PHRASE", "charCNN", "charLSTM")
EVAL_CACHE = "charagram_eval.json"
# A record's files: per-set Pearson, per-pair scores, the run's
# model_config.json less the model, training wall seconds
# (records.WALL_SECONDS).
RECORD_SCORES = "pearson.json"
RECORD_PREDICTED = "predicted.npz"
RECORD_CONFIG_KEYS = ("model_type", "variant", "training")


def evaluation_sets(data_dir):
  """(STS 2012-2015 + SICK test + Twitter 2015 test sets, missing names)."""
  pair_sets, missing = sts_data.load_eval_sets(data_dir, ("sts", "sick"))
  try:
    pair_sets.append(twitter_pit.load_test_split(data_dir))
  except errors.DataDirError:
    missing.append(twitter_pit.SET_NAME)
  return pair_sets, missing


def table_rows(set_names, dev_name=None):
  """[(row key, label, member sets or None)] in Table 1 order, dev last."""
  rows = []
  for year in (2012, 2013, 2014, 2015):
    members = [n for n in set_names if sts_data.sts_year(n) == year]
    rows += [(name, name, None) for name in members]
    if members:
      rows.append((f"STS{year}.mean", f"**STS {year} mean** "
                   f"({len(members)} sets)", members))
  rows += [(n, n, None) for n in ("SICK.test", twitter_pit.SET_NAME)
           if n in set_names]
  rows.append((ALL_MEAN, f"**Average** ({len(set_names)} sets)",
               list(set_names)))
  if dev_name:
    rows.append((dev_name, f"{dev_name} (chooses MAX or MIX; not in the "
                 "Average)", None))
  return rows


def row_values(scores, rows):
  """{row key: value} of one column of per-set scores."""
  mean = records.mean_present
  return {key: (mean([scores.get(m, math.nan) for m in members])
                if members else scores.get(key, math.nan))
          for key, _, members in rows}


def format_markdown(columns, set_names, missing=(), dev_name=None):
  """(markdown table of the runs beside the paper, {name: {row: mean}}).

  columns: [(name, {set: Pearson x 100} or a list of them, one per seed)].
  """
  rows = table_rows(set_names, dev_name)
  seeded = [(name, [row_values(x, rows) for x in
                    (scores if isinstance(scores, (list, tuple)) else
                     [scores])]) for name, scores in columns]
  values = {name: {key: records.mean_present([v[key] for v in seeds])
                   for key, _, _ in rows} for name, seeds in seeded}
  paper = [(f"paper {p}", row_values({k: v[i] for k, v in PAPER_SETS.items()},
                                     rows))
           for i, p in enumerate(paper_numbers.CHARAGRAM_COLUMNS)]
  header = (["set"] + [n if len(s) == 1 else f"{n} (n={len(s)})"
                       for n, s in seeded] + [n for n, _ in paper])
  body = []
  for key, label, _ in rows:
    body.append([label] + [
        tables.number(values[n][key], 1) if len(s) == 1 else
        tables.mean_std(significance.mean_std([v[key] for v in s]), 1)
        for n, s in seeded] + [tables.number(v[key], 1) for _, v in paper])
  printed = paper_numbers.CHARAGRAM_TABLE1["Average"]
  body.append(["paper's printed Average (22 sets, incl. 2013 SMT)"]
              + [""] * len(seeded) + [tables.number(v, 1) for v in printed])
  text = tables.table(header, body) + (
      "\nPearson's r x 100 of cosine similarity; a column over several "
      "training seeds (n=...) shows mean ± standard deviation over them "
      "(each seed's yearly means and Average first, then their mean and "
      "spread). The paper columns are copied from the supplement's Table 1; "
      "their yearly means and Average here are recomputed over the same sets "
      "as the runs (the paper's own means include 2013 SMT).\n")
  if missing:
    text += f"\nMissing sets (not in the data): {', '.join(missing)}\n"
  return text, values


def choose_sampling(averages, dev_means, groups):
  """Each model's MAX or MIX column, chosen on STS-B dev; ({model: column},
  lines). groups: {model: {"max": column, "mix": column}}. A model with both
  but a dev score missing for either gets none (and a line saying so)."""
  best, lines = {}, []
  for model, by_sampling in groups.items():
    present = {s: c for s, c in by_sampling.items()
               if c in averages and not math.isnan(averages[c])}
    if len(present) == 1:
      best[model] = next(iter(present.values()))
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
  """Sentences on the paper's ordering of the chosen columns."""
  present = [m for m in PAPER_ORDER if m in best]
  order = sorted(present, key=lambda m: -averages[best[m]])
  return [
      "- Ordering of the paper's four models, each at its MAX or MIX chosen "
      "on STS-B dev, by the test Average: " + " > ".join(
          f"{m} ({averages[best[m]]:.1f})" for m in order) + ".",
      "- Do the means rank them in the paper's order CHARAGRAM-PHRASE > "
      "PARAGRAM-PHRASE > charCNN > charLSTM? "
      f"{'yes' if order == present else 'no'}" + (
          "" if len(present) == 4 else f" (among {', '.join(present)})") +
      " (whether the differences are real: the paired tests below)."]


def _has_export(folder, records_only=False):
  return not records_only and os.path.isdir(
      os.path.join(folder, model_dir_lib.EXPORT_SUBDIR))


def _has_seeds(folder):
  return bool(folder) and os.path.isdir(folder) and any(
      n.startswith("seed") for n in os.listdir(folder))


def _is_recorded(record):
  return records.first_with(RECORD_SCORES, record) is not None


def seed_sources(model_dir, seeds, records_dir=None, records_only=False):
  """{seed: (run folder, record folder or None, read from the record?)}:
  the seeds with an export (unless `records_only`), else a record; a run
  without any seed folders is the single run {None: ...}."""
  run = os.path.basename(os.path.normpath(model_dir))
  def record(seed):
    return (records.record_dir(records_dir, run, seed) if records_dir
            else None)
  found = {}
  for k in seeds:
    folder = os.path.join(model_dir, f"seed{k}")
    exported = _has_export(folder, records_only)
    if exported or _is_recorded(record(k)):
      found[k] = (folder, record(k), not exported)
  if found or (_has_seeds(model_dir) and not records_only) or _has_seeds(
      record(None)):
    return found
  exported = _has_export(model_dir, records_only)
  if exported or _is_recorded(record(None)):
    return {None: (model_dir, record(None), not exported)}
  return {}


def compare(run_a, run_b, gold, num_samples=1000):
  """(t-test over the common seeds of the Average, bootstrap of the mean
  Pearson over all sets with every seed of each). run_*: {seed: {"average",
  "predicted": {set: array}}}."""
  common = [k for k in run_a if k in run_b]
  t_test = significance.paired_t_test([run_a[k]["average"] for k in common],
                                      [run_b[k]["average"] for k in common])
  sets = []
  for name, g in gold.items():
    pa, pb = ([r["predicted"][name] for r in run.values()
               if name in r["predicted"]] for run in (run_a, run_b))
    if pa and pb:
      sets.append((g, np.stack(pa), np.stack(pb)))
  return t_test, significance.bootstrap_pearson_difference(
      sets, num_samples=num_samples)


def claims(runs, best, gold, num_samples=1000, tested=None):
  """[(claim, verdict, detail)]: CHARAGRAM-PHRASE > each other model, then
  the paper's whole ordering (when all four are present). tested: the
  comparisons done already, by their columns, from the same records."""
  out = []
  tested = {} if tested is None else tested
  def test(a, b):
    if (best[a], best[b]) not in tested:
      t_test, boot = compare(runs[best[a]], runs[best[b]], gold, num_samples)
      detail = (f"{boot.difference:+.1f} ({best[a]} vs {best[b]}; t-test "
                f"over {t_test.num} seeds p {tables.pvalue(t_test.pvalue)}"
                f", bootstrap p {tables.pvalue(boot.pvalue)}, 95% "
                f"interval {boot.detail['ci95'][0]:+.1f} to "
                f"{boot.detail['ci95'][1]:+.1f})" if boot.num else
                "(no common sets)")
      tested[best[a], best[b]] = (significance.direction([t_test, boot]),
                                  detail)
    return tested[best[a], best[b]]
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


def claim_lines(runs, best, gold, num_samples=1000, tested=None):
  """The page's sentences for `claims`."""
  return [f"- {claim}: {verdict} {detail}." if detail[0] != "e" else
          f"- The paper's ordering {claim} ({detail}): {verdict}."
          for claim, verdict, detail in claims(runs, best, gold, num_samples,
                                               tested)]


def _scores_json(evaluated):
  scores = {"sets": evaluated["scores"], "export": evaluated.get("export")}
  if evaluated.get("dev") is not None:
    scores["dev"] = evaluated["dev"]
  return scores


def write_record(record, folder, evaluated):
  """Writes a seed's record unless it holds these Pearsons already (wall
  seconds it lacks are copied; a new dev score rewrites pearson.json
  alone). Returns whether anything of the scores was written."""
  if (os.path.isfile(os.path.join(folder, records.WALL_SECONDS))
      and not os.path.isfile(os.path.join(record, records.WALL_SECONDS))):
    records.copy_files(folder, record, [records.WALL_SECONDS])
  scores_path = os.path.join(record, RECORD_SCORES)
  if _is_recorded(record):
    recorded = records.read_json(scores_path)
    if recorded["sets"] == evaluated["scores"]:
      if evaluated.get("dev") in (None, recorded.get("dev")):
        return False
      records.write_json(scores_path, _scores_json(evaluated))
      return True
  config_path = os.path.join(folder, model_dir_lib.MODEL_CONFIG_FILE)
  config = ({k: v for k, v in records.read_json(config_path).items()
             if k in RECORD_CONFIG_KEYS}
            if os.path.exists(config_path) else {})
  records.save_decimals(os.path.join(record, RECORD_PREDICTED),
                            evaluated["predicted"])
  records.write_json(os.path.join(record, model_dir_lib.MODEL_CONFIG_FILE),
                         config)
  records.write_json(scores_path, _scores_json(evaluated))
  return True


def read_record(record, set_names):
  """A seed's evaluation from its record ("dev" None when it has none)."""
  recorded = records.read_json(os.path.join(record, RECORD_SCORES))
  scores = recorded["sets"]
  predicted = records.load_decimals(os.path.join(record,
                                                     RECORD_PREDICTED))
  absent = [n for n in set_names if n not in scores or n not in predicted]
  if absent:
    raise errors.UserError(f"record {record} lacks the sets {absent}: "
                           "evaluate the run again (its run folder)")
  return {"scores": {n: scores[n] for n in set_names},
          "predicted": {n: predicted[n] for n in set_names},
          "dev": recorded.get("dev")}


def evaluate_source(source, pair_sets, missing, name, dev_set=None):
  """One seed's evaluation from its run folder (cached and recorded) or its
  record; per-pair scores rounded as a record keeps them."""
  folder, record, from_record = source
  if from_record:
    return read_record(record, [p.name for p in pair_sets])
  evaluated = _evaluate_cached(folder, pair_sets, missing, name, dev_set)
  if record and write_record(record, folder, evaluated):
    size = records.size_bytes(record)
    print(f"{name}: recorded {folder} in {record} ({size:,} bytes)")
  evaluated["predicted"] = {n: records.round_decimals(v)
                            for n, v in evaluated["predicted"].items()}
  return evaluated


def _evaluate_cached(folder, pair_sets, missing, name, dev_set=None):
  """{"export", "scores", "predicted", "dev"} of the export in `folder`,
  cached in folder/EVAL_CACHE per export path (only the sets the cache
  lacks are evaluated)."""
  export = encoder_lib.resolve_export_dir(
      os.path.join(folder, model_dir_lib.EXPORT_SUBDIR))
  cache = os.path.join(folder, EVAL_CACHE)
  sets = {}
  if os.path.exists(cache):
    cached = records.read_json(cache)
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
          "dev": None if dev_set is None else sets[dev_set.name]["pearson"]}


def _training_line(name, model_dir, config_dir=None):
  """One line of the "Runs:" list, from model_config.json in config_dir
  (default model_dir; a record's folder for a recorded run)."""
  path = os.path.join(config_dir or model_dir, model_dir_lib.MODEL_CONFIG_FILE)
  if not os.path.exists(path):
    return f"- {name}: `{model_dir}`"
  config = records.read_json(path)
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
              dev_set=None, records_only=False):
  """Evaluates (or reads from records) every run, on the test sets and
  dev_set. Returns (format_markdown's columns, claims' runs with "dev",
  [(name, folder shown, folder of its model_config.json, seeds, [wall
  seconds of the seeds that have them])])."""
  rows = table_rows([p.name for p in pair_sets])
  columns, per_run, present = [], {}, []
  for name, model_dir in runs:
    sources = seed_sources(model_dir, seeds, records_dir, records_only)
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
    walls = (records.wall_seconds(f, r) for f, r, _ in sources.values())
    present.append((name, folder, records.first_with(
        model_dir_lib.MODEL_CONFIG_FILE, folder, record),
                    sorted(k for k in sources if k is not None),
                    [w for w in walls if w is not None]))
  return columns, per_run, present


def sampling_groups(names):
  """{model: {"max"|"mix": run name}} of the runs named '<model> MAX|MIX'."""
  groups = {}
  for name in names:
    model, _, sampling = name.rpartition(" ")
    if sampling.lower() in ("max", "mix"):
      groups.setdefault(model, {})[sampling.lower()] = name
  return groups


def chosen_columns(per_run, names):
  """({run: its test Average, mean over its seeds}, `choose_sampling`'s
  (best, lines) by each run's mean STS-B dev) of `load_runs`' per_run;
  names: the runs' names, in page order."""
  averages, dev = ({name: records.mean_present([s[key] for s in
                                                    seeded.values()])
                    for name, seeded in per_run.items()}
                   for key in ("average", "dev"))
  return averages, choose_sampling(averages, dev, sampling_groups(names))


def page_text(runs, seeds, pair_sets, missing, records_dir=None,
              bootstrap_samples=1000, dev_set=None, records_only=False,
              tested=None):
  """The page below the preamble: table, MAX/MIX chosen on dev_set,
  ordering, paired tests, runs."""
  gold = {p.name: p.scores for p in pair_sets}
  columns, per_run, present = load_runs(runs, seeds, pair_sets, missing,
                                        records_dir, dev_set, records_only)
  table, _ = format_markdown(columns, [p.name for p in pair_sets], missing,
                             dev_set.name if dev_set is not None else None)
  averages, (best, choice) = chosen_columns(per_run, [p[0] for p in present])
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
  text += "\n".join(claim_lines(per_run, best, gold, bootstrap_samples,
                                tested)) + "\n"
  text += "\nRuns:\n" + "\n".join(
      _training_line(f"{n} (seeds {', '.join(map(str, ks))})" if ks else n,
                     d, c) + ("; training wall time per seed " + " / ".join(
                         f"{w / 60:.1f}" for w in ws) + " min" if ws else "")
      for n, d, c, ks, ws in present) + "\n"
  every = [w for *_, ws in present for w in ws]
  if every:
    text += (f"\nTraining wall time of the runs above: {sum(every) / 60:.1f} "
             f"min in all, over the {len(every)} trained seeds that recorded "
             "it (docs/run_charagram.sh; 2 shared CPU cores; evaluation "
             "not included).\n")
  return text


FLAGS = flags.FLAGS


def main(argv):
  cli.reject_arguments(argv)
  if not FLAGS.run:
    raise errors.UserError("pass --run=NAME=MODEL_DIR at least once")
  runs = [tables.name_value(spec, "--run", "NAME=MODEL_DIR")
          for spec in FLAGS.run]
  seeds = records.parse_seeds(FLAGS.seeds)
  data_dir = data_dir_lib.resolve_data_dir(FLAGS.data_dir)
  pair_sets, missing = evaluation_sets(data_dir)
  dev_set = sts_data.load_stsb_split(data_dir, "dev")  # never in a test mean
  if FLAGS.record_only:
    if not FLAGS.records_dir:
      raise errors.UserError("--record_only needs --records_dir")
    load_runs(runs, seeds, pair_sets, missing, FLAGS.records_dir, dev_set)
    return
  print(page_text(runs, seeds, pair_sets, missing, FLAGS.records_dir,
                  FLAGS.bootstrap_samples, dev_set))


# docs/charagram.md's columns, in order: (name, run folder), trained by
# docs/run_charagram.sh; then the word vectors PARAGRAM-PHRASE starts from.
PAGE_RUNS = tuple(
    (name, f"runs/charagram/{folder}") for name, folder in (
        ("CHARAGRAM-PHRASE MAX", "charagram_phrase_max"),
        ("CHARAGRAM-PHRASE MIX", "charagram_phrase_mix"),
        ("CHARAGRAM-PHRASE + task paraphrases MAX",
         "charagram_phrase_tasks_max"),
        ("CHARAGRAM-PHRASE + PPDB-XL word pairs MAX",
         "charagram_phrase_lexicon_max"),
        ("PARAGRAM-PHRASE MAX", "paragram_phrase_max"),
        ("PARAGRAM-PHRASE MIX", "paragram_phrase_mix"),
        ("charCNN MAX", "char_cnn_max"), ("charCNN MIX", "char_cnn_mix"),
        ("charLSTM MAX", "char_lstm_max"), ("charLSTM MIX", "char_lstm_mix"),
        ("PARAGRAM-PHRASE random init MAX", "paragram_phrase_random_max"),
        ("PARAGRAM-PHRASE L2 1e-6 MAX", "paragram_phrase_max_l2"),
        ("CHARAGRAM word (lexicon) MAX", "charagram_word_max")))


def page_part(context):
  """docs/charagram.md from its table on (lab/docs.py): the recorded runs
  of PAGE_RUNS and of the zoo's word vectors."""
  choice = word_vector_choice.read_choice(
      os.path.join(context.records, "zoo_word_vectors.json"))
  records_dir = os.path.join(context.records, "charagram")
  runs = [run for run in PAGE_RUNS + (
      ("PARAGRAM-PHRASE initial word vectors", choice["model_dir"]),)
          if seed_sources(run[1], [0, 1, 2], records_dir, True)]
  pair_sets, missing = evaluation_sets(context.data_dir)
  return page_text(runs, [0, 1, 2], pair_sets, missing, records_dir,
                   dev_set=sts_data.load_stsb_split(context.data_dir, "dev"),
                   records_only=True, tested=context.tested)


if __name__ == "__main__":
  flags.DEFINE_multi_string("run", [], "NAME=MODEL_DIR of a trained run; "
                            "names ending in ' MAX' / ' MIX' are compared.")
  flags.DEFINE_string("data_dir", "", "Data directory (default: "
                      f"${data_dir_lib.ENV_VAR}).")
  flags.DEFINE_list("seeds", ["0", "1", "2"], "Seeds of a --run folder with "
                    "seed<k> subfolders (those present are used).")
  flags.DEFINE_integer("bootstrap_samples", 1000, "Paired bootstrap "
                       "samples.")
  flags.DEFINE_string("records_dir", "docs/records/charagram", "Records of "
                      "the seeds' evaluations: written for every evaluated "
                      "seed, read where a seed has no export. Empty: none.")
  flags.DEFINE_bool("record_only", False, "Evaluate and record the runs; "
                    "print no page.")
  cli.run(main)
