r"""Load on `sentzoo serve` from a bounded async client, against encode().

  python -m lab.benchmarks.serve_load --export=EXPORT \
      [--record_dir=docs/records/serve_load]
  python -m lab.benchmarks.serve_load --export=EXPORT --soak_seconds=600
  python -m lab.benchmarks.serve_load --export=EXPORT --sigterm

The server runs in its own process (`python -m sentzoo.cli serve`, on
loopback, any free port); the load generator is this process: an asyncio
client (keep-alive HTTP/1.1, httptools' parser) with N connections, each
sending its next request when the last is answered, until a fixed count of
requests is done. Requests are OpenAI embeddings requests of book-corpus
lines, `encoding_format` base64 (the `openai` client's default). For each
N in --clients and each k in --sentences_per_request: sentences/s, p50/p99
latency, errors and the server's peak RSS (VmHWM, reset before each row).
The baseline is `encode()` in a fresh process on the same lines at its
default batch size (fastest of 3 calls).

--soak_seconds: N=--soak_clients clients, requests of 1 to 32 lines, the
server's RSS sampled every 5 s; 1,000 responses kept and compared with
encode() at the end. --sigterm: SIGTERM to the server under load; every
request the server read must be answered (the server prints how many it
read and answered; the clients count what they got).
"""

import json
import os
import random
import sys
import tempfile
import time

from absl import flags
import numpy as np

from lab.benchmarks import child_process
from sentzoo import serve_fixtures
from sentzoo.common import cli
from sentzoo.common import data_dir as data_dir_lib

FLAGS = flags.FLAGS
flags.DEFINE_string("export", None, "The export to serve (the 700-d "
                    "sent2vec-books-uni or one of its shape).")
flags.DEFINE_string("data_dir", None, "Data folder (the book corpus lines).")
flags.DEFINE_list("clients", ["1", "8", "64", "256"], "Concurrent clients.")
flags.DEFINE_list("sentences_per_request", ["1", "32"], "Lines a request.")
flags.DEFINE_integer("requests", 4000, "Requests per row (at least 10 per "
                     "client).")
flags.DEFINE_integer("pool", 32768, "Distinct book lines the requests "
                     "cycle through.")
flags.DEFINE_list("server_flags", [], "More flags of `sentzoo serve`.")
flags.DEFINE_string("record_dir", None, "Record the load section of "
                    "docs/serving.md here (docs/records/serve_load: `make "
                    "docs` writes it into the page) and draw its plot, "
                    "docs/serving_load.png.")
flags.DEFINE_integer("soak_seconds", 0, "Run the soak instead, this long.")
flags.DEFINE_integer("soak_clients", 64, "Clients of the soak.")
flags.DEFINE_bool("sigterm", False, "Run the SIGTERM-under-load check "
                  "instead.")

MODEL = "bench"
SECTION = "Load: `sentzoo serve` under concurrent clients"
PLOT = "serving_load.png"
# The recorded section (below --record_dir) that lab/docs.py puts in the page.
RECORD = "section.md"
# ----------------------------------------------------------- baseline --


_ENCODE_CHILD = r"""
import json, sys, time
import sentzoo
lines = open(sys.argv[2], encoding="utf-8").read().split("\n")
model = sentzoo.load(sys.argv[1])
model.encode(lines[:1000])
times, cpu = [], time.process_time()
for _ in range(3):
  began = time.perf_counter(); model.encode(lines)
  times.append(time.perf_counter() - began)
print(json.dumps({"sentences_per_s": len(lines) / min(times), "cpu_us":
                  (time.process_time() - cpu) / 3 / len(lines) * 1e6}))
"""


def encode_baseline(export, lines):
  """encode() on `lines` in a fresh process: {"sentences_per_s" (the
  fastest of 3 calls), "cpu_us" (CPU time a sentence, all threads)}."""
  path = tempfile.mktemp(suffix=".txt")
  with open(path, "w", encoding="utf-8") as f:
    f.write("\n".join(lines))
  try:
    return child_process.run_json(
        [sys.executable, "-c", _ENCODE_CHILD, export, path])[0]
  finally:
    os.remove(path)


def table_bytes(export):
  """Bytes of the export's variables (its table, for the averaging models)."""
  from sentzoo.evaluation import encoder  # pylint: disable=g-import-not-at-top
  folder = os.path.join(encoder.resolve_export_dir(export), "variables")
  return sum(os.path.getsize(os.path.join(folder, name))
             for name in os.listdir(folder) if name.startswith(
                 "variables.data"))


def tiny_export(folder):
  """An averaging export of 10 words, d = 4: a server with next to no model."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top,unused-import
  from sentzoo.export import averaging_encoder  # pylint: disable=g-import-not-at-top
  from sentzoo.export import saved_model_writer  # pylint: disable=g-import-not-at-top
  from sentzoo.inputs import text_to_ids  # pylint: disable=g-import-not-at-top
  from sentzoo.inputs import vocabulary  # pylint: disable=g-import-not-at-top
  words = [f"w{i}" for i in range(10)]
  table = np.random.default_rng(0).normal(size=(11, 4)).astype(np.float32)
  return saved_model_writer.write(averaging_encoder.AveragingSentenceEncoder(
      text_to_ids.TextToIds(vocabulary.Vocabulary(words, [1] * 10)), table,
      {"model_type": "benchmark"}), folder)


# ---------------------------------------------------------------- main --


def _percentile_ms(latencies, q):
  return float(np.percentile(latencies, q) * 1e3) if latencies else None


def _lines():
  from lab.benchmarks import encode  # pylint: disable=g-import-not-at-top
  data_dir = data_dir_lib.resolve_data_dir(FLAGS.data_dir)
  return encode.corpus_lines(data_dir, encode.CORPUS_PART, FLAGS.pool)


def measure(export, lines):
  """Every row of the table, and what the targets compare with."""
  from sentzoo.evaluation import encoder  # pylint: disable=g-import-not-at-top
  folder = tempfile.mkdtemp(prefix="serve_load_")
  unloaded = serve_fixtures.Server([f"tiny={tiny_export(folder)}"])
  unloaded.wait_listening()
  serve_fixtures.run_load(
      unloaded.url, serve_fixtures.request_bodies(["w1 w2"], 1, "tiny", 1),
      1, 50)
  unloaded_mb = unloaded.status("VmRSS")
  unloaded.stop()
  baseline = encode_baseline(export, lines)
  server = serve_fixtures.Server([f"{MODEL}={export}", *FLAGS.server_flags])
  server.wait_listening()
  idle_mb = server.status("VmRSS")
  rows = []
  try:
    for per_request in map(int, FLAGS.sentences_per_request):
      bodies = serve_fixtures.request_bodies(lines, per_request, MODEL)
      for clients in map(int, FLAGS.clients):
        # Connects first.
        serve_fixtures.run_load(server.url, bodies, clients, 2 * clients)
        server.reset_peak()
        load_before = os.getloadavg()[0]
        cpu = server.cpu_seconds(), time.process_time()
        result = serve_fixtures.run_load(server.url, bodies, clients,
                          max(FLAGS.requests, 10 * clients))
        sentences = max(result["sentences"], 1)
        row = {"clients": clients, "per_request": per_request,
               "requests": len(result["latencies"]),
               "sentences_per_s": result["answered"] * per_request /
                                  result["seconds"],
               "p50_ms": _percentile_ms(result["latencies"], 50),
               "p99_ms": _percentile_ms(result["latencies"], 99),
               "errors": sum(result["failures"].values()),
               "failures": result["failures"],
               "peak_rss_mb": server.status("VmHWM"),
               "server_cpu_us": (server.cpu_seconds() - cpu[0]) / sentences
                                * 1e6,
               "client_cpu_us": (time.process_time() - cpu[1]) / sentences
                                * 1e6,
               "load_before": load_before}
        row["vs_encode"] = row["sentences_per_s"] / baseline[
            "sentences_per_s"]
        rows.append(row)
        print(json.dumps(row), flush=True)
  finally:
    code = server.stop()
  with open(os.path.join(encoder.resolve_export_dir(export), "assets.extra",
                         "model_card.json"), encoding="utf-8") as f:
    card = json.load(f)
  return {"rows": rows, "encode_sentences_per_s": baseline["sentences_per_s"],
          "encode_cpu_us": baseline["cpu_us"], "card": card,
          "unloaded_rss_mb": unloaded_mb, "idle_rss_mb": idle_mb,
          "table_mb": table_bytes(export) / 2**20, "server_exit": code,
          "server_log_tail": server.log()[-300:]}


def _fmt(value, spec):
  return "-" if value is None else format(value, spec)


def section(result, export, argv):
  """The page's section: the table, the targets, the plot's link."""
  from lab import tables  # pylint: disable=g-import-not-at-top
  rows = result["rows"]
  table = tables.table(
      ["clients", "sentences / request", "requests", "sentences/s",
       "x encode()", "p50 ms", "p99 ms", "errors", "server peak RSS MB",
       "CPU us / sentence: server, client"],
      [[r["clients"], r["per_request"], r["requests"],
        _fmt(r["sentences_per_s"], ",.0f"), _fmt(r["vs_encode"], ".2f"),
        _fmt(r["p50_ms"], ".1f"), _fmt(r["p99_ms"], ".1f"), r["errors"],
        _fmt(r["peak_rss_mb"], ",.0f"),
        f"{_fmt(r.get('server_cpu_us'), '.1f')}, "
        f"{_fmt(r.get('client_cpu_us'), '.1f')}"] for r in rows])
  rss_cap = 1.3 * result["table_mb"] + result["unloaded_rss_mb"]
  card = result["card"]
  text = "\n".join([
      f"## {SECTION}", "",
      "Produced by `python -m lab.benchmarks.serve_load "
      f"{' '.join(argv)}` on a "
      f"{card.get('model_type')} export of {card.get('embedding_dim')} "
      f"dimensions and {card.get('vocabulary_size'):,} words "
      f"({result['table_mb']:,.0f} MB of variables). The server runs in its "
      "own process on loopback; the load generator (this benchmark's "
      "process: asyncio, uvloop and httptools' parser) keeps N connections "
      "busy, each sending its next OpenAI embeddings request (book-corpus "
      "lines, `encoding_format` base64, the `openai` client's default) when "
      "the last is answered, for a fixed count of requests. `x encode()`: "
      "the rate over in-process `encode()` on the same lines at its default "
      "batch size in a fresh process, "
      f"{result['encode_sentences_per_s']:,.0f} sentences/s "
      f"({_fmt(result.get('encode_cpu_us'), '.1f')} us of CPU a sentence). "
      "CPU us / sentence: the CPU time (all threads) of the server and of "
      "the load generator over the sentences answered, which a loaded "
      "machine changes less than the rates. Peak RSS: the "
      "server's VmHWM, reset before each row; the server's RSS idle with the "
      f"model: {result['idle_rss_mb']:,.0f} MB; with a 10-word model (the "
      f"unloaded server): {result['unloaded_rss_mb']:,.0f} MB, so the RSS "
      f"target (1.3 x table + unloaded) is {rss_cap:,.0f} MB. The machine: "
      f"{os.cpu_count()} CPUs, 1-minute load average before the rows "
      f"{min(r['load_before'] for r in rows):.1f} to "
      f"{max(r['load_before'] for r in rows):.1f}; on a shared machine the "
      "client, the server and the other work share the cores.", "", table,
      f"![sentences/s against clients]({PLOT})", "", *_checks(result), ""])
  return tables.readable(text)


def _row(rows, clients, per_request):
  found = [r for r in rows if (r["clients"], r["per_request"]) == (
      clients, per_request)]
  return found[0] if found else None


def _checks(result):
  """The soak's and the SIGTERM check's lines, and the issue's targets."""
  lines = []
  soak_ = result.get("soak")
  if soak_:
    lines += [
        f"Soak: {soak_['seconds']} s at {soak_['clients']} clients, requests "
        f"of 1 to 32 lines: {soak_['requests']:,} requests "
        f"({soak_['sentences']:,} sentences), "
        f"{sum(soak_['failures'].values())} errors; the server's RSS "
        f"{soak_['rss_mb_first_minute_end']:,.1f} MB after the first minute, "
        f"{soak_['rss_mb_end']:,.1f} MB at the end (range "
        f"{soak_['rss_mb_min']:,.1f} to {soak_['rss_mb_max']:,.1f} MB, "
        f"{soak_['rss_spread']:.2%}); {soak_['compared']:,} responses drawn "
        f"at random, max |served - encode()| = {soak_['max_abs_diff']:.3g}; "
        f"load average at the end {soak_['load_average']}.", ""]
  sigterm = result.get("sigterm")
  if sigterm:
    answered, read = sigterm["server_answered_of_read"] or (None, None)
    lines += [
        f"SIGTERM under load ({sigterm['clients']} clients x 32 lines): the "
        f"server answered {answered} of the {read} requests it read and "
        f"exited {sigterm['server_exit']}; the clients got "
        f"{sigterm['client_answered']} answers, and then " + (", ".join(
            f"{n} {kind}" for kind, n in sigterm["client_failures"].items())
                                                          or "nothing")
        + " (a connection refused, or closed before the server read the "
        "request).", ""]
  rows, cap = result["rows"], (1.3 * result["table_mb"] +
                               result["unloaded_rss_mb"])
  targets = []
  row = _row(rows, 64, 32)
  if row:
    targets.append(f"64 clients x 32 lines at >= 0.6 x encode(), 0 errors: "
                   f"{row['vs_encode']:.2f} x, {row['errors']} errors")
  row = _row(rows, 256, 1)
  if row:
    targets.append(f"256 clients x 1 line, p99 <= 50 ms, 0 errors, peak RSS "
                   f"<= {cap:,.0f} MB: {row['p99_ms']:.1f} ms, "
                   f"{row['errors']} errors, {row['peak_rss_mb']:,.0f} MB")
  if soak_:
    targets.append(f"soak RSS within 5%, 0 errors, responses equal: "
                   f"{soak_['rss_spread']:.2%}, "
                   f"{sum(soak_['failures'].values())} errors, max diff "
                   f"{soak_['max_abs_diff']:.3g}")
  if sigterm:
    targets.append(f"SIGTERM loses no request read: {answered} of {read} "
                   "answered")
  if targets:
    lines += ["The targets (for a quiet 2-core machine), measured here:",
              ""] + [f"- {t}" for t in targets]
  return lines


def plot(result, path):
  from lab import tables  # pylint: disable=g-import-not-at-top

  def draw(axis):
    for per_request in sorted({r["per_request"] for r in result["rows"]}):
      rows = [r for r in result["rows"] if r["per_request"] == per_request]
      axis.plot([r["clients"] for r in rows],
                [r["sentences_per_s"] for r in rows], marker="o",
                label=f"sentzoo serve, {per_request} sentence(s) a request")
    axis.axhline(result["encode_sentences_per_s"], color="gray", ls="--",
                 label="in-process encode()")
    clients = sorted({r["clients"] for r in result["rows"]})
    axis.set_xscale("log", base=2)
    axis.set_xticks(clients, [str(c) for c in clients])
    axis.set_yscale("log")

  tables.line_plot(path, "sentzoo serve: throughput under load",
                       "concurrent clients", "sentences / s", draw)


def soak(export, lines):
  """The soak's figures: RSS samples, errors, the kept responses' match."""
  rng = random.Random(0)
  bodies = []
  for _ in range(4096):
    k = rng.randint(1, 32)
    start = rng.randrange(len(lines) - k)
    bodies.append((lines[start:start + k],
                   serve_fixtures.embeddings_request(lines[start:start + k],
                                                     MODEL)))
  server = serve_fixtures.Server([f"{MODEL}={export}", *FLAGS.server_flags])
  server.wait_listening()
  samples = []
  totals = {"answered": 0, "sentences": 0, "failures": {}, "kept": []}
  began = time.monotonic()
  try:
    while time.monotonic() - began < FLAGS.soak_seconds:
      result = serve_fixtures.run_load(server.url, bodies, FLAGS.soak_clients,
                        FLAGS.soak_clients * 20,
                        keep=1000 - len(totals["kept"]))
      totals["answered"] += result["answered"]
      totals["sentences"] += result["sentences"]
      totals["kept"] += result["kept"]
      for k, v in result["failures"].items():
        totals["failures"][k] = totals["failures"].get(k, 0) + v
      if not samples or time.monotonic() - began - samples[-1][0] >= 5:
        samples.append((time.monotonic() - began, server.status("VmRSS")))
  finally:
    code = server.stop()
  import sentzoo  # pylint: disable=g-import-not-at-top
  model = sentzoo.load(export)
  worst = 0.0
  for sentences, vectors in totals["kept"]:
    worst = max(worst, float(np.abs(model.encode(sentences) - vectors).max()))
  after_warmup = [mb for t, mb in samples if t >= 60] or [
      mb for _, mb in samples]
  out = {"seconds": round(time.monotonic() - began),
         "clients": FLAGS.soak_clients, "requests": totals["answered"],
         "sentences": totals["sentences"], "failures": totals["failures"],
         "rss_mb_first_minute_end": after_warmup[0],
         "rss_mb_end": samples[-1][1], "rss_mb_min": min(after_warmup),
         "rss_mb_max": max(after_warmup),
         "rss_spread": max(after_warmup) / min(after_warmup) - 1,
         "compared": len(totals["kept"]), "max_abs_diff": worst,
         "server_exit": code, "load_average": child_process.load_averages()}
  print(json.dumps(out), flush=True)
  return out


def sigterm_check(export, lines):
  """`serve_fixtures.sigterm_under_load` on the export, as a JSON-able dict."""
  result, (stopped, code) = serve_fixtures.sigterm_under_load(
      serve_fixtures.Server([f"{MODEL}={export}", *FLAGS.server_flags]),
      serve_fixtures.request_bodies(lines, 32, MODEL), FLAGS.soak_clients)
  out = {"clients": FLAGS.soak_clients, "client_answered": result["answered"],
         "client_failures": result["failures"],
         "server_answered_of_read": stopped, "server_exit": code}
  print(json.dumps(out), flush=True)
  return out


def main(argv):
  cli.reject_arguments(argv)
  cli.require_flags("export")
  export, lines = FLAGS.export, _lines()
  result = measure(export, lines)
  print(json.dumps({k: v for k, v in result.items()
                    if k not in ("rows", "card")}), flush=True)
  result["soak"] = soak(export, lines) if FLAGS.soak_seconds else None
  result["sigterm"] = sigterm_check(export, lines) if FLAGS.sigterm else None
  if FLAGS.record_dir:
    from lab import tables  # pylint: disable=g-import-not-at-top
    args = [("--export=EXPORT" if a.startswith("--export") else a)
            for a in sys.argv[1:] if not a.startswith("--data_dir")]
    plot(result, os.path.join("docs", PLOT))
    tables.write_page(os.path.join(FLAGS.record_dir, RECORD),
                      section(result, export, args))
    print(f"recorded {FLAGS.record_dir}: `make docs` writes its page")


if __name__ == "__main__":
  cli.run(main)
