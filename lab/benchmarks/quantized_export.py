r"""Compact exports side by side: float32, float16 and int8 tables of one model.

  python -m lab.benchmarks.quantized_export --model_dir=runs/sent2vec_demo \
      --data_dir=../shared/data

Exports the latest checkpoint once per --modes entry and measures each, the
modes alternating: size on disk (MB = 10^6 bytes), load time, sentences/s on
the STS sentences (medians of --repeats), STS mean and STS-B dev Pearson.
"""

import json
import os
import shutil
import statistics
import tempfile
import time

from absl import flags
import tensorflow as tf

from lab.benchmarks import child_process
from lab import tables
from sentzoo.common import cli
from sentzoo.common import data_dir as data_dir_lib
from sentzoo.common import errors
from sentzoo.evaluation import encoder as encoder_lib
from sentzoo.evaluation import sts
from sentzoo.evaluation import sts_data
from sentzoo.export import export_model
from sentzoo.export import saved_model_writer
from sentzoo.export import table_quantization

FLAGS = flags.FLAGS
STSB_DEV = "STSB.dev"
MODE_LABELS = {"none": "float32", "float16": "float16", "int8": "int8"}


def _card_quantization(path):
  with open(os.path.join(path, saved_model_writer.MODEL_CARD),
            encoding="utf-8") as f:
    return json.load(f).get("quantization")


def _seconds(function):
  start = time.perf_counter()
  function()
  return time.perf_counter() - start


def measure(paths, pair_sets, batch_size, repeats):
  """{mode: its numbers} of the exports `paths` (mode -> version folder),
  the modes alternating: neither caches nor the shared machine favour one."""
  sentences = list(dict.fromkeys(  # Distinct, in first-seen order.
      s for p in pair_sets for s in (*p.sentences1, *p.sentences2)))
  loads = child_process.alternate(repeats, {
      mode: lambda _, path=path: _seconds(lambda: tf.saved_model.load(path))
      for mode, path in paths.items()})
  encoders = {mode: encoder_lib.load_encoder(path)
              for mode, path in paths.items()}
  encode = {mode: lambda e=e: e.encode(sentences, batch_size=batch_size)
            for mode, e in encoders.items()}
  for function in encode.values():
    function()  # Warm-up pass.
  encodes = child_process.alternate(repeats, {
      mode: lambda _, f=f: _seconds(f) for mode, f in encode.items()})
  results = {}
  for mode, path in paths.items():
    scores = sts.evaluate_pair_sets(encoders[mode], pair_sets,
                                    batch_size=batch_size)
    mean = scores.aggregates.get(sts.STS_MEAN_KEY)
    stsb = scores.sets.get(STSB_DEV)
    results[mode] = {
        "path": path, "quantization": _card_quantization(path),
        "bytes": sum(os.path.getsize(os.path.join(folder, name))
                     for folder, _, names in os.walk(path) for name in names),
        "load_seconds_each": loads[mode],
        "load_seconds": statistics.median(loads[mode]),
        "sentences": len(sentences), "encode_seconds_each": encodes[mode],
        "sentences_per_second": len(sentences) / statistics.median(
            encodes[mode]),
        "sts_mean_pearson": mean.pearson if mean else None,
        "sts_sets": len(mean.members) if mean else 0,
        "stsb_dev_pearson": stsb.pearson if stsb else None}
  return results


def _number(value, digits):
  return "n/a" if value is None else f"{value:.{digits}f}"


def _ratio(value, base):
  return "n/a" if not base else f"{value / base:.2f}x"


def _difference(value, base):
  if value is None or base is None:
    return "n/a"
  # Three decimals: quantisation moves the scores by hundredths of a point
  # or less; + 0.0 turns a rounded -0.0 into 0.0.
  return f"{round(value - base, 3) + 0.0:+.3f}"


def markdown_table(results):
  """The markdown table of `measure`'s results (float32 first if present)."""
  base = results.get("none")
  sets = max((r["sts_sets"] for r in results.values()), default=0)
  lines = [
      f"| export | size (MB) | size vs float32 | load (s) | load vs float32 "
      f"| sentences/s | throughput vs float32 | STS {sets}-set mean "
      f"| Δ vs float32 | STS-B dev | Δ vs float32 |",
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
  for mode, r in results.items():
    lines.append(
        f"| {MODE_LABELS[mode]} | {r['bytes'] / 1e6:.2f} "
        f"| {_ratio(r['bytes'], base and base['bytes'])} "
        f"| {r['load_seconds']:.3f} "
        f"| {_ratio(r['load_seconds'], base and base['load_seconds'])} "
        f"| {r['sentences_per_second']:,.0f} "
        f"| {_ratio(r['sentences_per_second'], base and base['sentences_per_second'])} "
        f"| {_number(r['sts_mean_pearson'], 2)} "
        f"| {_difference(r['sts_mean_pearson'], base and base['sts_mean_pearson'])} "
        f"| {_number(r['stsb_dev_pearson'], 2)} "
        f"| {_difference(r['stsb_dev_pearson'], base and base['stsb_dev_pearson'])} |")
  return "\n".join(lines)


def plot_size_and_score(results, path):
  """STS mean and STS-B dev against export size, one point per mode.
  Returns the caption."""

  def draw(axis):
    for key, label, marker in (("sts_mean_pearson", "STS 2012-2015 mean", "o"),
                               ("stsb_dev_pearson", "STS-B dev", "s")):
      points = [(r["bytes"] / 1e6, r[key], MODE_LABELS[mode])
                for mode, r in results.items() if r[key] is not None]
      axis.plot([p[0] for p in points], [p[1] for p in points],
                marker=marker, markersize=7, linestyle=":", label=label)
      for size, score, name in points:
        axis.annotate(name, (size, score), textcoords="offset points",
                      xytext=(6, 6), fontsize=8)
    axis.set_xlim(left=0)

  tables.line_plot(path, "One checkpoint's exports: score against size",
                       "export size (MB)", "Pearson \u00d7 100", draw)
  return ("Each point is one export of the same checkpoint. Moving left is "
          "the saving in size; a point lower than float32's would be the "
          "score it costs.")


def main(argv):
  del argv
  data_dir = data_dir_lib.resolve_data_dir(FLAGS.data_dir)
  modes = list(dict.fromkeys(FLAGS.modes))
  for mode in modes:
    table_quantization.check_mode(mode)
  if not modes:
    raise errors.UserError("--modes needs at least one of "
                           f"{', '.join(table_quantization.MODES)}")
  pair_sets, _ = sts_data.load_eval_sets(data_dir, ("sts", "stsb"))
  if not pair_sets:
    raise errors.DataDirError(f"no STS sets or STS-B dev under {data_dir!r}")
  output_dir = FLAGS.output_dir or tempfile.mkdtemp(prefix="quantized_export_")
  if FLAGS.output_dir and os.path.exists(output_dir) and os.listdir(
      output_dir):
    raise errors.UserError(f"--output_dir={output_dir} is not empty")
  try:
    print(f"model: {FLAGS.model_dir}; {os.cpu_count()} CPUs; load average "
          f"{os.getloadavg()[0]:.2f}", flush=True)
    paths = {}
    for mode in modes:
      paths[mode] = export_model.export(
          FLAGS.model_dir, os.path.join(output_dir, MODE_LABELS[mode]),
          version=1, evaluate=False, quantize=mode)
      print(f"exported {MODE_LABELS[mode]} to {paths[mode]}", flush=True)
    results = measure(paths, pair_sets, FLAGS.batch_size, FLAGS.repeats)
  finally:
    if not FLAGS.output_dir:
      shutil.rmtree(output_dir, ignore_errors=True)
  table = markdown_table(results)
  print(table)
  if FLAGS.output_markdown:
    with open(FLAGS.output_markdown, "w", encoding="utf-8") as f:
      f.write(table + "\n")
  if FLAGS.output_png:
    print(plot_size_and_score(results, FLAGS.output_png))
  if FLAGS.output_json:
    with open(FLAGS.output_json, "w", encoding="utf-8") as f:
      json.dump({"model_dir": FLAGS.model_dir, "batch_size": FLAGS.batch_size,
                 "repeats": FLAGS.repeats, "cpus": os.cpu_count(),
                 "load_average_after": list(os.getloadavg()),
                 "results": results}, f, indent=1)


if __name__ == "__main__":
  flags.DEFINE_string("model_dir", None, "A trained model directory of an "
                      "averaging model.", required=True)
  flags.DEFINE_string("data_dir", None,
                      f"Data directory (default ${data_dir_lib.ENV_VAR}).")
  flags.DEFINE_string("output_dir", None, "Empty or new folder for the "
                      "exports, kept (default: a temporary folder, removed).")
  flags.DEFINE_list("modes", list(table_quantization.MODES),
                    "Table storage modes to export (none = float32).")
  flags.DEFINE_integer("batch_size", 1024, "Sentences per call.",
                       lower_bound=1)
  flags.DEFINE_integer("repeats", 5, "Timed loads and encode passes per "
                       "export (median reported).", lower_bound=1)
  flags.DEFINE_string("output_json", None, "Also write the numbers here.")
  flags.DEFINE_string("output_markdown", None, "Also write the table here.")
  flags.DEFINE_string("output_png", None, "Also draw size against score "
                      "here (its caption is printed last).")
  cli.run(main)
