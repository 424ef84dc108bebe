r"""docs/REPRODUCTION.md: each paper's headline claims, ours, the verdict.

Written by `make docs` (lab/docs.py) from the committed records
(docs/records/) and the papers' numbers (lab.reports.paper_numbers); the
SentEval averages from docs/RESULTS.md's recorded transfer table. Each claim
is decided by its page's test: "reproduces", "does not reproduce", or
"cannot be tested here" (the paper's data or setting is not available; the
reason says which).
"""

import math
import os
import re
import textwrap

from scipy import stats

from lab import records
from lab.reports import baselines
from lab.reports import charagram_results
from lab.reports import hybrid_table
from lab.reports import paper_numbers
from lab.reports import siamese_cbow_ablation
from lab import significance
from lab import tables
from sentzoo.common import cli
from sentzoo.evaluation import sts_data

REPRODUCES, DOES_NOT, CANNOT = ("reproduces", "does not reproduce",
                                "cannot be tested here")
_VERDICTS = {significance.HOLDS: REPRODUCES,
             significance.DOES_NOT_HOLD: DOES_NOT,
             significance.NOT_DISTINGUISHABLE: DOES_NOT}
BOOKS = ("Toronto Book Corpus not available: 3.8M Gutenberg sentences here "
         "against 74M")
STS2014 = [k for k in paper_numbers.SENT2VEC_TABLE2_SETS
           if k.startswith("STS2014.")]


def _set_verdict(wins, total):
  """(verdict, p) of a sign test: two-sided binomial p of `wins` of `total`
  sets against 1/2."""
  p = float(stats.binomtest(wins, total, 0.5).pvalue) if total else math.nan
  if p < significance.CLAIM_ALPHA:
    return (REPRODUCES if wins > total / 2 else DOES_NOT), p
  return DOES_NOT, p


def siamese_cbow_rows(records_dir, word2vec_page):
  """Kenter et al. (2016): Siamese CBOW > word2vec averaging; Table 1."""
  names = sorted(os.listdir(records_dir))
  runs = [r for r in (siamese_cbow_ablation.load_run(records_dir, n)
                      for n in names) if r is not None]
  best = siamese_cbow_ablation.selection(runs)
  table = paper_numbers.SIAMESE_CBOW_TABLE1
  ours_sets = [k for k in table if k in best.sts]
  columns = paper_numbers.SIAMESE_CBOW_COLUMNS
  i, w2v = columns.index("Siamese CBOW"), [columns.index("w2v skipgram"),
                                           columns.index("w2v CBOW")]
  paper_wins = sum(table[k][i][0] > max(table[k][j][0] for j in w2v)
                   for k in table)
  rows = []
  if os.path.isfile(word2vec_page):
    references = baselines.load_baseline_file(word2vec_page, "word2vec")
    wins, total = siamese_cbow_ablation.sets_beaten(best, references)
    verdict, p = _set_verdict(wins, total)
    rows.append((
        "Siamese CBOW beats word2vec (skip-gram and CBOW) averaging on most "
        "STS sets", f"{paper_wins} of {len(table)} sets",
        f"{wins} of {total} sets", verdict, BOOKS,
        f"{best.name} (the ablation run chosen on STS-B dev) against "
        "word2vec skip-gram and CBOW averaging trained on the same corpus; "
        f"sign test over the sets p {tables.pvalue(p)}"))
  else:
    rows.append(("Siamese CBOW beats word2vec averaging on most STS sets",
                 f"{paper_wins} of {len(table)} sets", tables.MISSING,
                 CANNOT, "no word2vec baseline page", word2vec_page))
  paper_mean = records.mean_present(
      [table[k][i][0] for k in ours_sets])
  rows.append((
      "Siamese CBOW's STS scores (Table 1)",
      f"{paper_mean:.2f} (mean of the {len(ours_sets)} sets here)",
      f"{tables.number(best.sts.get('STS.mean'))} (1 run)", CANNOT, BOOKS,
      f"{best.name}, the ablation run chosen on STS-B dev"))
  return rows


CHARAGRAM_RUNS = [
    (f"{model} {sampling}", os.path.join("runs/charagram", f"{folder}_"
                                         f"{sampling.lower()}"))
    for model, folder in (("CHARAGRAM-PHRASE", "charagram_phrase"),
                          ("PARAGRAM-PHRASE", "paragram_phrase"),
                          ("charCNN", "char_cnn"), ("charLSTM", "char_lstm"))
    for sampling in ("MAX", "MIX")]


def charagram_rows(records_dir, data_dir, tested=None):
  """Wieting et al. (2016): CHARAGRAM-PHRASE above the other three (tested:
  `charagram_results.claims`' comparisons done already)."""
  pair_sets, missing = charagram_results.evaluation_sets(data_dir)
  dev_set = sts_data.load_stsb_split(data_dir, "dev")
  _, per_run, present = charagram_results.load_runs(
      CHARAGRAM_RUNS, [0, 1, 2], pair_sets, missing, records_dir, dev_set,
      records_only=True)
  _, (best, _) = charagram_results.chosen_columns(per_run,
                                                  [p[0] for p in present])
  gold = {p.name: p.scores for p in pair_sets}
  paper = dict(zip(paper_numbers.CHARAGRAM_COLUMNS,
                   paper_numbers.CHARAGRAM_TABLE1["Average"]))
  rows = []
  for claim, verdict, detail in charagram_results.claims(per_run, best, gold,
                                                         tested=tested):
    models = claim.split(" > ")
    spreads = [significance.mean_std([s["average"] for s in
                                      per_run[best[m]].values()])
               for m in models]
    rows.append((
        claim + " (Table 1 Average)",
        " > ".join(f"{paper[m]:.1f}" for m in models),
        " vs ".join(tables.mean_std(s, 1) for s in spreads)
        + f" ({min(s[2] for s in spreads)} seeds)",
        _VERDICTS[verdict], "PPDB 2.0 human-rated pairs here: Wieting's "
        "PPDB-XL phrase file is not available", detail))
  return rows


def hybrid_rows(records_dir):
  """Nicosia and Moschitti (2017): joint loss >= each single loss."""
  fv = cli.parse_own_flags(hybrid_table.define_flags, [
      "hybrid_table", f"--records_dir={records_dir}",
      "--runs_dir="])
  seeds = records.parse_seeds(fv.seeds)
  papers = {"msrp": ("Quora (paper, Table 1)", "MSRP instead of Quora "
                     "Question Pairs (not available)"),
            "sick": ("SNLI binary (paper, Table 2)", "SICK-E binary instead "
                     "of SNLI (not available)")}
  rows = []
  for task in fv.tasks:
    table, instead = papers[task]
    for encoder in fv.encoders:
      contrastive, logistic, joint = paper_numbers.HYBRID_SIAMESE_TABLES[
          table][encoder]
      verdict, detail = hybrid_table.joint_claim(fv, task, encoder, seeds)
      if verdict == "not run":
        continue
      ours = {mode: tables.mean_std(significance.mean_std(
          [hybrid_table.test_accuracy(hybrid_table.read_results(
              fv, task, encoder, mode, s)) for s in seeds]))
              for mode in ("joint", "contrastive", "logistic")}
      rows.append((
          f"{hybrid_table.ENCODERS[encoder]}: joint loss >= contrastive and "
          f"logistic ({task.upper()})",
          f"{joint:.2f} vs {contrastive:.2f} / {logistic:.2f}",
          f"{ours['joint']} vs {ours['contrastive']} / {ours['logistic']} "
          f"({len(seeds)} seeds)", _VERDICTS[verdict], instead,
          "joint minus each single loss, p of the paired t-test over seeds / "
          f"McNemar's test: {detail}"))
  return rows


def _page_row(page, section, label):
  """The cells of the row labelled `label` in a table of the page's section
  whose heading starts with `section`; None if there is none."""
  inside = False
  with open(page, encoding="utf-8") as f:
    for line in f:
      if line.startswith("## "):
        inside = line[3:].startswith(section)
      cells = tables.cells(line)
      if inside and cells[0] == label:
        return cells
  return None


def sent2vec_rows(records_dir, results_page):
  """Pagliardini et al. (2018): Tables 1 (SentEval) and 2 (STS 2014)."""
  rows = []
  record = os.path.join(records_dir, "sent2vec_books_uni", "pearson.json")
  paper = paper_numbers.SENT2VEC_TABLE2["Sent2Vec uni."]
  paper_mean = records.mean_present(
      [paper[k][1] for k in STS2014])
  if os.path.isfile(record):
    sets = records.read_json(record)["sets"]
    ours = records.mean_present([sets.get(k) for k in STS2014])
    rows.append(("Sent2Vec uni. on the six STS 2014 sets (Table 2, Pearson)",
                 f"{paper_mean:.1f}", f"{ours:.1f} (1 run)", CANNOT, BOOKS,
                 "record docs/records/charagram/sent2vec_books_uni"))
  labels = {"Sent2Vec uni.": "Sent2Vec uni (book corpus, 9 epochs)",
            "Sent2Vec uni. + bi.": "Sent2Vec uni+bi (book corpus, 12 epochs; "
                                   "2 step threads)"}
  ours = {}
  for model, label in labels.items():
    cells = _page_row(results_page, "Transfer tasks", label) if os.path.isfile(
        results_page) else None
    ours[model] = float(re.sub(r"[*]", "", cells[-1])) if cells else None
  table = paper_numbers.SENT2VEC_TABLE1
  for model in labels:
    rows.append((
        f"{model} SentEval average (Table 1)",
        f"{table[model]['Average']:.1f}",
        f"{tables.number(ours[model], 1)} (1 run)", CANNOT, BOOKS,
        "from the transfer table of docs/RESULTS.md (lab.reports.results_page)"))
  rows.append((
      "uni. + bi. above uni. on the SentEval average (Table 1)",
      f"{table['Sent2Vec uni. + bi.']['Average']:.1f} vs "
      f"{table['Sent2Vec uni.']['Average']:.1f}",
      f"{tables.number(ours['Sent2Vec uni. + bi.'], 1)} vs "
      f"{tables.number(ours['Sent2Vec uni.'], 1)}", CANNOT,
      "one run each, no per-example decisions recorded: no test",
      "docs/RESULTS.md's transfer table; " + BOOKS))
  return rows


def format_page(sections, command):
  """sections: [(paper, page link, rows)] -> the markdown page; a row is
  (claim, paper's number, ours, verdict, why, detail)."""
  counts = {}
  body = []
  for title, link, rows in sections:
    body += [f"## [{title}]({link})", "",
             "| # | claim | paper | ours | verdict | why |",
             "|---:|---|---|---|---|---|"]
    notes = []
    for claim, paper, ours, verdict, why, detail in rows:
      counts[verdict] = counts.get(verdict, 0) + 1
      number = counts and sum(counts.values())
      body.append(f"| {number} | {claim} | {paper} | {ours} | **{verdict}** "
                  f"| {why} |")
      notes.append(textwrap.fill(f"{number}. {detail}", 100,
                                 subsequent_indent="   "))
    body += ["", "Details:", ""] + notes + [""]
  lines = ["# Reproduction report", "",
           "<!-- Generated by lab/reports/reproduction.py; do not edit by hand. "
           "-->", "", textwrap.fill(
           "Each paper's headline claims beside what this zoo measured. A "
           "claim \"A > B\" is decided by the paired tests of its page "
           "(p < 0.05 in each, the same sign); \"does not reproduce\" "
           "includes a difference no test can tell from chance. A number the "
           "paper reached on data not available here is shown, not judged. "
           "Means \u00b1 standard deviation over seeds.", 100), "",
           "Verdicts: " + ", ".join(f"{v} {counts.get(v, 0)}" for v in
                                    (REPRODUCES, DOES_NOT, CANNOT)) + ".", ""]
  return "\n".join(lines + body + [tables.commands_section([command])])


def page(context):
  """The page (lab/docs.py) from the committed records, the shared folder's
  word2vec baseline and data (the CHARAGRAM tests' gold scores), and the
  SentEval averages of docs/RESULTS.md's recorded tables."""
  records_dir = context.records
  sections = [
      ("Siamese CBOW", "siamese_cbow.md", siamese_cbow_rows(
          os.path.join(records_dir, "siamese_cbow_ablation"),
          os.path.join(context.baselines, "word2vec_books_sts.md"))),
      ("CHARAGRAM", "charagram.md", charagram_rows(
          os.path.join(records_dir, "charagram"), context.data_dir,
          context.tested)),
      ("Hybrid siamese", "hybrid_siamese.md", hybrid_rows(
          os.path.join(records_dir, "hybrid_table"))),
      ("Sent2Vec", "sent2vec.md", sent2vec_rows(
          os.path.join(records_dir, "charagram"),
          os.path.join(records_dir, "results", "tables.md"))),
  ]
  return format_page(sections, "make docs")
