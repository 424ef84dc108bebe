"""The load benchmark's page section and requests (the load itself runs in
sentzoo/serve_test.py, against a served tiny export)."""

import base64
import json

from absl.testing import absltest
import numpy as np

from lab import docs
from lab.benchmarks import serve_load
from sentzoo import serve_fixtures

ROW = {"clients": 64, "per_request": 32, "requests": 4000,
       "sentences_per_s": 32428.6, "vs_encode": 0.2304, "p50_ms": 43.66,
       "p99_ms": 305.96, "errors": 0, "peak_rss_mb": 748.8,
       "load_before": 10.5, "server_cpu_us": 11.04, "client_cpu_us": 2.9}
RESULT = {"rows": [dict(ROW, clients=1, per_request=1), ROW],
          "encode_sentences_per_s": 140764.6, "encode_cpu_us": 5.31, "unloaded_rss_mb": 609.2,
          "idle_rss_mb": 722.2, "table_mb": 100.0,
          "card": {"model_type": "sent2vec", "embedding_dim": 700,
                   "vocabulary_size": 37461},
          "soak": {"seconds": 606, "clients": 64, "requests": 468480,
                   "sentences": 7737240, "failures": {},
                   "rss_mb_first_minute_end": 740.26, "rss_mb_end": 742.02,
                   "rss_mb_min": 740.26, "rss_mb_max": 742.02,
                   "rss_spread": 0.00237, "compared": 1000,
                   "max_abs_diff": 0.0, "server_exit": 0,
                   "load_average": "16.17 15.40 13.27"},
          "sigterm": {"clients": 64, "client_answered": 1525,
                      "client_failures": {"ConnectionClosed": 64},
                      "server_answered_of_read": [1525, 1525],
                      "server_exit": 0}}


class ServeLoadTest(absltest.TestCase):

  def test_section_is_the_table_without_machine_paths(self):
    text = serve_load.section(RESULT, "/work/x/export", [
        "--export=EXPORT", "--record_dir=docs/records/serve_load"])
    self.assertStartsWith(text, f"## {serve_load.SECTION}\n")
    flat = " ".join(text.split())  # The prose is wrapped.
    self.assertIn("| 64 | 32 | 4000 | 32,429 | 0.23 | 43.7 | 306.0 | 0 | 749 | "
                  "11.0, 2.9 |", flat)
    self.assertIn("140,765 sentences/s (5.3 us of CPU a sentence)", flat)
    self.assertIn("is 739 MB", flat)  # 1.3 x 100 + 609.2
    self.assertIn("468,480 requests (7,737,240 sentences), 0 errors", flat)
    self.assertIn("(range 740.3 to 742.0 MB, 0.24%)", flat)
    self.assertIn("answered 1525 of the 1525 requests it read and exited 0",
                  flat)
    self.assertIn("- 64 clients x 32 lines at >= 0.6 x encode(), 0 errors: "
                  "0.23 x, 0 errors", flat)
    self.assertNotIn("/work/", flat)
    self.assertIn(serve_load.PLOT, flat)
    # The part lab/docs.py declares for docs/serving.md is this section.
    page = [p for p in docs.PAGES if p.path == "docs/serving.md"][0]
    _, part, _ = docs.split_part("# Serving\n\n## Speed\n\ntext\n\n" + text,
                                 page.parts[0])
    self.assertEqual(part, text)

  def test_requests_and_decoding(self):
    lines = [f"line {i}" for i in range(100)]
    bodies = serve_fixtures.request_bodies(lines, 32, serve_load.MODEL,
                                            count=5)
    self.assertLen(bodies, 5)
    for sentences, body in bodies:
      self.assertLen(sentences, 32)
      self.assertEqual(json.loads(body), {"model": serve_load.MODEL,
                                          "input": sentences,
                                          "encoding_format": "base64"})
    vector = np.arange(4, dtype="<f4")
    self.assertSequenceEqual(serve_fixtures.decode(
        {"embedding": base64.b64encode(vector.tobytes()).decode()}).tolist(),
                             [0, 1, 2, 3])
    self.assertSequenceEqual(serve_fixtures.decode(
        {"embedding": [0.5, 1.0]}).tolist(), [0.5, 1.0])


if __name__ == "__main__":
  absltest.main()
