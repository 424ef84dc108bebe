r"""Peak memory of serving one huge sentence, with and without the input caps.

  python -m lab.benchmarks.serving_memory [--sentence_mb=5 --dim=300]
  python -m lab.benchmarks.serving_memory --export=runs/siamese_cbow_demo/export/1

Without --export, measures two built exports, caps off (as exports were before the caps)
and capped. Each in a fresh process: load, warm up, reset the peak RSS,
encode one sentence of --sentence_mb MB, read the peak (Linux).
"""

import json
import os
import shutil
import sys
import tempfile

from absl import flags
import numpy as np

from lab.benchmarks import child_process
from sentzoo.common import cli
from sentzoo.export import input_limits

FLAGS = flags.FLAGS
flags.DEFINE_string("export", None, "An export (version folder) to measure "
                    "instead of the two built here.")
flags.DEFINE_float("sentence_mb", 5.0, "Size of the one sentence, in MB "
                   "(10^6 bytes).", lower_bound=0.001)
flags.DEFINE_integer("dim", 300, "Embedding size of the built exports (the "
                     "Siamese CBOW paper's 300).", lower_bound=1)
flags.DEFINE_string("child", None, "Internal: measure this export in this "
                    "process and print one JSON line.")

_UNCAPPED = 2**31 - 1
# The built exports' words (and the sentence's).
WORDS = [f"w{i}" for i in range(10000)]


def _sentence(num_bytes, words):
  """About `num_bytes` bytes of words drawn from `words`, space-separated."""
  average = np.mean([len(w) + 1 for w in words])
  picks = np.random.default_rng(0).choice(words,
                                          size=int(num_bytes / average) + 1)
  return " ".join(picks).encode("utf-8")[:num_bytes]


def measure_in_this_process(export_path, num_bytes):
  """Peak RSS before and after encoding one sentence: a JSON-able dict."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  serve = tf.saved_model.load(export_path).signatures["serving_default"]
  serve(sentences=tf.constant(["a warm-up request", ""]))
  card_path = os.path.join(export_path, "assets.extra", "model_card.json")
  card = {}
  if os.path.exists(card_path):
    with open(card_path, encoding="utf-8") as f:
      card = json.load(f)
  sentence = tf.constant([_sentence(num_bytes, WORDS)])
  recorder = child_process.PhaseRecorder()
  recorder.mark("before")
  embeddings = serve(sentences=sentence)["embeddings"].numpy()
  recorder.mark("request")
  before = recorder.phases["before"]["end_mb" if recorder.resets else "peak_mb"]
  after = recorder.phases["request"]["peak_mb"]
  return {"export": export_path, "input_bytes": num_bytes,
          "input_limits": card.get("input_limits"),
          "before_mb": round(before, 1), "peak_mb": round(after, 1),
          "increase_mb": round(after - before, 1),
          "baseline": ("RSS (peak reset)" if recorder.resets
                       else "earlier peak"),
          "finite": bool(np.all(np.isfinite(embeddings)))}


def build_export(base, max_bytes_per_sentence, max_tokens_per_sentence):
  """A Siamese-CBOW-shaped export with these caps; returns its path."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top,unused-import
  from sentzoo.export import averaging_encoder  # pylint: disable=g-import-not-at-top
  from sentzoo.export import saved_model_writer  # pylint: disable=g-import-not-at-top
  from sentzoo.inputs import text_to_ids  # pylint: disable=g-import-not-at-top
  from sentzoo.inputs import vocabulary  # pylint: disable=g-import-not-at-top
  table = np.random.default_rng(0).normal(
      size=(len(WORDS) + 1, FLAGS.dim)).astype(np.float32)
  encoder = averaging_encoder.AveragingSentenceEncoder(
      text_to_ids.TextToIds(vocabulary.Vocabulary(WORDS, [1] * len(WORDS))),
      table, {"model_type": "benchmark"},
      max_bytes_per_sentence=max_bytes_per_sentence,
      max_tokens_per_sentence=max_tokens_per_sentence)
  return saved_model_writer.write(encoder, base)


def main(argv):
  del argv
  num_bytes = int(FLAGS.sentence_mb * 1e6)
  if FLAGS.child:
    print(json.dumps(measure_in_this_process(FLAGS.child, num_bytes)))
    return
  folder = None
  if FLAGS.export:
    runs = [("given export", FLAGS.export)]
  else:
    folder = tempfile.mkdtemp(prefix="serving_memory_")
    runs = [
        ("caps off (exports before the caps)",
         build_export(os.path.join(folder, "uncapped"), _UNCAPPED,
                      _UNCAPPED)),
        ("capped",
         build_export(os.path.join(folder, "capped"),
                      input_limits.DEFAULT_MAX_BYTES_PER_SENTENCE,
                      input_limits.DEFAULT_MAX_TOKENS_PER_SENTENCE)),
    ]
  print(f"one sentence of {num_bytes / 1e6:g} MB through serving_default, "
        f"each export in a fresh process (peak RSS = VmHWM)")
  try:
    for label, path in runs:
      result = child_process.run_json(
          [sys.executable, "-m", "lab.benchmarks.serving_memory",
           f"--child={path}", f"--sentence_mb={num_bytes / 1e6}"])[0]
      limits = result["input_limits"] or {}
      print(f"{label}: max_bytes_per_sentence="
            f"{limits.get('max_bytes_per_sentence')}, max_tokens_per_sentence="
            f"{limits.get('max_tokens_per_sentence')}")
      print(f"  {result['baseline']} before {result['before_mb']:,.1f} MB, "
            f"peak during the request {result['peak_mb']:,.1f} MB: "
            f"+{result['increase_mb']:,.1f} MB = "
            f"{result['increase_mb'] * 2**20 / num_bytes:,.2f} x the input; "
            f"embeddings finite: {result['finite']}")
  finally:
    if folder:
      shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
  cli.run(main)
