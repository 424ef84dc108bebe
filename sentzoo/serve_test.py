"""`sentzoo serve` as a subprocess, reached by real clients.

One server (a tiny Siamese CBOW export installed in a store as "tiny", and a
tiny hybrid siamese pair export served as "pair") answers the OpenAI client,
TF Serving-style REST requests (compared with the C API loader) and every
bad input of docs/serving.md's error table; a second one, with an API key,
is stopped by SIGTERM under load.
"""

import asyncio
import http.client
import json
import os
import re
import shutil
import socket
import time

import numpy as np
import tensorflow as tf

import sentzoo
from sentzoo import serve_fixtures
from sentzoo.export import export_model
from sentzoo.export import hybrid_siamese_test as hybrid_siamese_export_test
from sentzoo.tests import export_test_case
from sentzoo.tests import zoo_test_util

SENTENCES = zoo_test_util.SENTENCES
_DOC = os.path.join(zoo_test_util.REPO_ROOT, "docs", "serving.md")
CAPS = ["--max_body_bytes=4000", "--max_sentences=8",
        "--max_sentence_chars=100"]


def documented_errors(path=_DOC):
  """{code: status} of docs/serving.md's error table."""
  with open(path, encoding="utf-8") as f:
    text = f.read()
  table = text.split("<!-- serve-errors:", 1)[1].split("\n\n", 1)[0]
  rows = re.findall(r"^\| (\d{3}) \| `(\w+)` \|", table, re.M)
  return {code: int(status) for status, code in rows}


class ServeTest(tf.test.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    root = os.path.join(tf.compat.v1.test.get_temp_dir(), "serve_test")
    shutil.rmtree(root, ignore_errors=True)
    cls.home = os.path.join(root, "home")
    cls.tiny = zoo_test_util.install_tiny(
        cls.home, "tiny", zoo_test_util.make_export(root))
    model_dir = os.path.join(root, "pair_model")
    hybrid_siamese_export_test.make_model_dir(model_dir, "cnn")
    cls.pair = export_model.export(model_dir, os.path.join(root, "pair"),
                                   evaluate=False)
    cls.server = serve_fixtures.Server(["tiny", f"pair={cls.pair}", *CAPS],
                                   home=cls.home)
    cls.server.wait_listening()
    host, port = cls.server.url.split("//")[1].rsplit(":", 1)
    cls.address = (host, int(port))

  @classmethod
  def tearDownClass(cls):
    cls.server.kill()
    super().tearDownClass()

  def request(self, method, path, body=None, headers=None):
    """(status, parsed JSON or text) of one request on a new connection."""
    connection = http.client.HTTPConnection(*self.address, timeout=60)
    if isinstance(body, (dict, list)):
      body = json.dumps(body)
    connection.request(method, path, body, headers or {})
    response = connection.getresponse()
    data = response.read()
    connection.close()
    kind = response.getheader("content-type", "")
    return response.status, (json.loads(data) if "json" in kind else
                             data.decode())

  def assertServesNext(self):
    status, body = self.request("POST", "/v1/embeddings",
                                {"model": "tiny", "input": "the cat"})
    self.assertEqual(status, 200, body)
    self.assertLen(body["data"], 1)

  def test_openai_client_gets_encode(self):
    import openai  # pylint: disable=g-import-not-at-top
    client = openai.OpenAI(base_url=self.server.url + "/v1", api_key="none")
    expected = sentzoo.load(self.tiny).encode(SENTENCES)
    # The client's default asks for base64 and decodes it.
    for encoding in ("(default: base64)", "float"):
      response = client.embeddings.create(
          model="tiny", input=SENTENCES, **(
              {"encoding_format": encoding} if encoding == "float" else {}))
      got = np.array([d.embedding for d in response.data], np.float32)
      self.assertEqual([d.index for d in response.data],
                       list(range(len(SENTENCES))))
      self.assertAllClose(got, expected, atol=1e-6)
      print(f"openai {openai.__version__} client, encoding_format="
            f"{encoding}: {got.shape[0]} x {got.shape[1]} embeddings, max "
            f"|served - encode()| = {np.abs(got - expected).max():.2g}; "
            f"usage {response.usage.prompt_tokens} tokens")
    one = client.embeddings.create(model="tiny", input=SENTENCES[0])
    self.assertAllClose(one.data[0].embedding, expected[0], atol=1e-6)
    self.assertEqual([m.id for m in client.models.list()], ["tiny", "pair"])

  def test_tf_serving_rest_equals_the_c_api(self):
    if export_test_case.compiled_c_loader() is None:
      self.skipTest("no C compiler")
    c_api = export_test_case.run_c_loader(
        self.tiny, {"sentences": SENTENCES}, ["embeddings"])["embeddings"]
    for path in ("/v1/models/tiny:predict",
                 "/v1/models/tiny/versions/1:predict"):
      status, rows = self.request("POST", path, {"instances": SENTENCES})
      self.assertEqual(status, 200, rows)
      self.assertAllClose(rows["predictions"], c_api, atol=1e-6)
      status, columns = self.request(
          "POST", path, {"inputs": {"sentences": SENTENCES}})
      self.assertAllClose(columns["outputs"], c_api, atol=1e-6)
    status, b64 = self.request("POST", "/v1/models/tiny:predict", {
        "instances": [{"b64": "dGhlIGNhdA=="}]})  # "the cat"
    self.assertAllClose(b64["predictions"][0],
                        sentzoo.load(self.tiny).encode("the cat")[0])
    a = hybrid_siamese_export_test.SENTENCES_A
    b = hybrid_siamese_export_test.SENTENCES_B
    c_api = export_test_case.run_c_loader(
        self.pair, {"sentences_a": a, "sentences_b": b},
        ["probability", "distance", "match"])
    status, rows = self.request("POST", "/v1/models/pair:predict", {
        "instances": [{"sentences_a": x, "sentences_b": y}
                      for x, y in zip(a, b)]})
    self.assertEqual(status, 200, rows)
    for key in ("probability", "distance"):
      self.assertAllClose([r[key] for r in rows["predictions"]], c_api[key],
                          atol=1e-6)
    status, columns = self.request("POST", "/v1/models/pair:predict", {
        "inputs": {"sentences_a": a, "sentences_b": b}})
    self.assertAllClose(columns["outputs"]["probability"],
                        sentzoo.load(self.pair).predict(list(zip(a, b))),
                        atol=1e-6)

  def test_models_status_metadata_health_metrics(self):
    status, models = self.request("GET", "/v1/models")
    self.assertEqual([(m["id"], m["kind"]) for m in models["data"]],
                     [("tiny", "sentence encoder"), ("pair", "pair model")])
    status, body = self.request("GET", "/v1/models/tiny")
    self.assertEqual(body["model_version_status"][0]["state"], "AVAILABLE")
    status, body = self.request("GET", "/v1/models/pair/versions/1/metadata")
    signature = body["metadata"]["signature_def"]["signature_def"][
        "serving_default"]
    self.assertEqual(sorted(signature["inputs"]), ["sentences_a",
                                                   "sentences_b"])
    self.assertEqual(self.request("GET", "/healthz"),
                     (200, {"status": "ok"}))
    self.assertServesNext()
    status, text = self.request("GET", "/metrics")
    self.assertEqual(status, 200)
    for name in ("sentzoo_requests_total", "sentzoo_errors_total",
                 "sentzoo_request_seconds_bucket", "sentzoo_sentences_total",
                 "sentzoo_batch_sentences_bucket"):
      self.assertIn(name, text)
    self.assertRegex(text, r'sentzoo_requests_total\{route="embeddings",'
                     r'status="200"\} [1-9]')

  def test_every_bad_input_is_its_documented_json_error(self):
    documented = documented_errors()
    embeddings = "/v1/embeddings"
    good = {"model": "tiny", "input": ["the cat"]}
    cases = [
        ("POST", embeddings, "{not json", "invalid_json"),
        ("POST", embeddings, [1, 2], "invalid_type"),
        ("POST", embeddings, {"model": "tiny"}, "invalid_input"),
        ("POST", embeddings, dict(good, input=[]), "invalid_input"),
        ("POST", embeddings, dict(good, input=7), "invalid_input"),
        ("POST", embeddings, dict(good, input=["a", 3]), "invalid_input"),
        ("POST", embeddings, dict(good, input=[[1, 2, 3]]), "invalid_input"),
        ("POST", embeddings, dict(good, encoding_format="int8"),
         "invalid_encoding_format"),
        ("POST", embeddings, dict(good, dimensions=3), "invalid_dimensions"),
        ("POST", embeddings, dict(good, model="pair"), "pair_model"),
        ("POST", embeddings, dict(good, model="nope"), "model_not_found"),
        ("POST", embeddings, dict(good, model="/etc/passwd"),
         "model_not_found"),
        ("POST", embeddings, dict(good, input=["w"] * 9),
         "too_many_sentences"),
        ("POST", embeddings, dict(good, input=["x" * 101]),
         "sentence_too_long"),
        ("POST", embeddings, dict(good, input=["the"] * 8, pad="x" * 5000),
         "body_too_large"),
        ("POST", "/v1/models/nope:predict", {"instances": ["a"]},
         "model_not_found"),
        ("POST", "/v1/models/tiny/versions/2:predict", {"instances": ["a"]},
         "version_not_found"),
        ("POST", "/v1/models/tiny:predict", {"instances": ["a"],
                                             "inputs": ["a"]},
         "invalid_input"),
        ("POST", "/v1/models/tiny:predict", {"instances": []},
         "invalid_input"),
        ("POST", "/v1/models/pair:predict", {"instances": ["a"]},
         "invalid_input"),
        ("POST", "/v1/models/pair:predict", {"inputs": {
            "sentences_a": ["a", "b"], "sentences_b": ["a"]}},
         "invalid_input"),
        ("POST", "/v1/models/tiny:predict", {"instances": ["a"],
                                             "signature_name": "encode"},
         "invalid_signature"),
        ("GET", "/v1/nothing", None, "not_found"),
        ("GET", embeddings, None, "method_not_allowed"),
    ]
    seen = set()
    for method, path, body, code in cases:
      with self.subTest(path=path, code=code, body=str(body)[:60]):
        status, answer = self.request(method, path, body)
        error = answer["error"]
        got = error if isinstance(error, str) else error["message"]
        if not path.startswith("/v1/models/"):
          self.assertEqual(error["code"], code, answer)
        self.assertEqual(status, documented[code], answer)
        self.assertTrue(got)
        seen.add(code)
        self.assertServesNext()
    # A body over the cap without a Content-Length (chunked): read, then 413.
    connection = http.client.HTTPConnection(*self.address, timeout=60)
    connection.request("POST", embeddings, body=iter([b"{" + b" " * 5000]),
                       encode_chunked=True)
    self.assertEqual(connection.getresponse().status, 413)
    connection.close()
    self.assertServesNext()
    # The documented codes this test could not cause here: 401 (the SIGTERM
    # test's server has a key) and 499 (test_client_that_leaves).
    self.assertEqual(set(documented) - seen,
                     {"invalid_api_key", "client_disconnected"})

  def test_client_that_leaves(self):
    request = json.dumps({"model": "tiny", "input": ["the cat"] * 8}).encode()
    head = (f"POST /v1/embeddings HTTP/1.1\r\nHost: x\r\nContent-Type: "
            f"application/json\r\nContent-Length: {len(request)}\r\n\r\n"
            ).encode()
    # Mid-body, and with the whole request sent but before the answer.
    for data in (head + request[:10], head + request):
      sock = socket.create_connection(self.address)
      sock.sendall(data)
      sock.close()
    time.sleep(0.5)
    self.assertServesNext()
    _, text = self.request("GET", "/metrics")
    self.assertIn('code="client_disconnected"', text)

  def test_sigterm_under_load_answers_every_request_it_read(self):
    server = serve_fixtures.Server(["tiny", "--max_wait_ms=5"], home=self.home,
                               env={"SENTZOO_API_KEY": "sesame"})
    url = server.wait_listening()
    host, port = url.split("//")[1].rsplit(":", 1)
    connection = http.client.HTTPConnection(host, int(port), timeout=60)
    for headers, status in (({}, 401),
                            ({"Authorization": "Bearer nope"}, 401),
                            ({"Authorization": "Bearer sesame"}, 200)):
      connection.request("POST", "/v1/embeddings", json.dumps(
          {"model": "tiny", "input": "a"}), headers)
      response = connection.getresponse()
      body = json.loads(response.read())
      self.assertEqual(response.status, status, body)
      if status == 401:
        self.assertEqual(body["error"]["code"], "invalid_api_key")
    connection.request("GET", "/healthz")
    self.assertEqual(connection.getresponse().status, 200)
    connection.close()
    lines = [f"{w} cat sat on the mat" for w in SENTENCES * 50]
    bodies = serve_fixtures.request_bodies(lines, 4, "tiny", count=64)
    result = serve_fixtures.sigterm_under_load(
        server, bodies, clients=16, after_seconds=1.5, api_key="sesame")
    got, (stopped, code) = result
    self.assertEqual(code, 0, server.log())
    self.assertIsNotNone(stopped, server.log())
    answered, accepted = stopped
    self.assertEqual(answered, accepted)
    self.assertGreater(got["answered"], 100)
    self.assertEqual(got["answered"] + 4, answered)  # + the 4 above.
    self.assertFalse([k for k in got["failures"]
                      if k not in ("ConnectionRefusedError",
                                   "ConnectionClosed")], got["failures"])

  def test_damaged_store_entry_stops_the_start(self):
    home = os.path.join(self.get_temp_dir(), "damaged")
    shutil.copytree(self.home, home)
    with open(os.path.join(home, "models", "tiny", "export",
                           "saved_model.pb"), "ab") as f:
      f.write(b"x")
    done = zoo_test_util.run(home, "serve", "tiny", "--port=0")
    self.assertEqual(done.returncode, 2, done.stderr[-3000:])
    lines = done.stderr.strip().splitlines()
    self.assertLen(lines, 1, done.stderr)
    self.assertStartsWith(lines[0], "error: store entry 'tiny' changed")


class BatcherTest(tf.test.TestCase):
  """`serve.Batcher` in this process, with a function that records its
  batches."""

  def run_batcher(self, body, max_rows=8, max_wait_s=0.01):
    from sentzoo import serve  # pylint: disable=g-import-not-at-top
    calls = []

    def fn(feeds):
      calls.append(list(feeds["x"]))
      time.sleep(0.01)
      return {"y": np.array([[len(x)] for x in feeds["x"]], np.float32)}

    async def main():
      batcher = serve.Batcher(fn, max_rows, max_wait_s)
      loop = asyncio.ensure_future(batcher.loop())
      try:
        return await body(batcher)
      finally:
        loop.cancel()
        batcher.close()

    return asyncio.run(main()), calls

  def test_concurrent_requests_share_one_call(self):
    async def body(batcher):
      futures = [batcher.submit({"x": ["a" * i, "b"]}) for i in range(1, 4)]
      return await asyncio.gather(*futures)

    results, calls = self.run_batcher(body)
    self.assertLen(calls, 1)
    self.assertEqual(calls[0], ["a", "b", "aa", "b", "aaa", "b"])
    for i, result in enumerate(results, 1):
      self.assertAllEqual(result["y"], [[i], [1]])

  def test_a_huge_request_delays_others_by_its_share_only(self):
    order = []

    async def body(batcher):
      huge = batcher.submit({"x": [f"h{i}" for i in range(80)]})
      huge.add_done_callback(lambda _: order.append("huge"))
      await asyncio.sleep(0.005)  # The huge one is being encoded.
      small = batcher.submit({"x": ["s1", "s2"]})
      small.add_done_callback(lambda _: order.append("small"))
      return (await huge)["y"], (await small)["y"]

    (huge, small), calls = self.run_batcher(body)
    self.assertEqual(order, ["small", "huge"])
    self.assertAllEqual(huge, [[len(f"h{i}")] for i in range(80)])
    self.assertAllEqual(small, [[2], [2]])
    with_small = [i for i, call in enumerate(calls) if "s1" in call]
    self.assertLen(with_small, 1)
    self.assertLessEqual(with_small[0], 2)  # Not after the huge one's 10.
    self.assertEqual(max(len(c) for c in calls), 8)

  def test_a_cancelled_request_is_not_encoded(self):
    async def body(batcher):
      gone = batcher.submit({"x": [f"g{i}" for i in range(40)]})
      await asyncio.sleep(0.005)
      gone.cancel()
      return await batcher.submit({"x": ["kept"]})

    result, calls = self.run_batcher(body)
    self.assertAllEqual(result["y"], [[4]])
    self.assertLess(sum(len(c) for c in calls), 40)

  def test_an_error_reaches_every_request_of_the_batch(self):
    from sentzoo import serve  # pylint: disable=g-import-not-at-top

    def fn(feeds):
      raise ValueError(f"bad batch of {len(feeds['x'])}")

    async def main():
      batcher = serve.Batcher(fn, 8, 0.01)
      loop = asyncio.ensure_future(batcher.loop())
      futures = [batcher.submit({"x": ["a"]}) for _ in range(2)]
      results = await asyncio.gather(*futures, return_exceptions=True)
      loop.cancel()
      batcher.close()
      return results

    for result in asyncio.run(main()):
      self.assertIsInstance(result, ValueError)
      self.assertEqual(str(result), "bad batch of 2")


class ServeArgumentsTest(tf.test.TestCase):
  """Refusals before a model loads, in this process (`cli._dispatch`)."""

  def test_bad_arguments_are_user_errors(self):
    from sentzoo import cli  # pylint: disable=g-import-not-at-top
    from sentzoo.common import errors  # pylint: disable=g-import-not-at-top
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    port = busy.getsockname()[1]
    # Refused before anything loads: a folder stands for the export.
    export = os.path.join(self.get_temp_dir(), "m", "export", "1")
    os.makedirs(export, exist_ok=True)
    for args, text in (
        (["--max_sentences=0"], "max_sentences=0"),
        (["--max_wait_ms=-1"], "max_wait_ms=-1"),
        ([f"--port={port}"], "cannot listen on 127.0.0.1"),
    ):
      with self.subTest(args=args), self.assertRaisesRegex(errors.UserError,
                                                           re.escape(text)):
        cli._dispatch(["serve", export, *args])  # pylint: disable=protected-access
    for specs, text in (([export, export], "two models named"),
                        ([f"Bad={export}"], "cannot serve")):
      with self.assertRaisesRegex(errors.UserError, text):
        cli._dispatch(["serve", *specs])  # pylint: disable=protected-access
    busy.close()

  def test_served_names(self):
    from sentzoo import serve  # pylint: disable=g-import-not-at-top
    export = os.path.join(self.get_temp_dir(), "my-model", "export", "1")
    os.makedirs(export, exist_ok=True)
    self.assertEqual(serve.resolve([export]), {"my-model": export})
    self.assertEqual(serve.resolve([f"x={export}"]), {"x": export})


if __name__ == "__main__":
  tf.test.main()
