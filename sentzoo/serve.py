"""`sentzoo serve`: exports behind the HTTP APIs clients already speak.

One Starlette router on uvicorn (docs/serving.md lists the routes and the
errors): OpenAI's `POST /v1/embeddings`, TF Serving's REST `POST
/v1/models/NAME[/versions/N]:predict` (the export's serving_default) and
status and metadata, `/healthz`, and Prometheus text on `/metrics`. Models
are named on the command line; a request names a served model, never a path.

The rows of concurrent requests to a model are coalesced into one signature
call on a worker thread (`Batcher`); every error is a JSON answer and the
server goes on. SIGTERM or SIGINT: stop accepting connections, answer every
request read, print how many, exit 0.
"""

import asyncio
import collections
import concurrent.futures
import contextlib
import dataclasses
import gc
import hmac
import os
import signal
import socket
import sys
import time
import traceback
from typing import Any, Dict, List, Sequence

import numpy as np
import orjson
import prometheus_client
import pybase64
from starlette import requests as requests_lib
from starlette import responses
from starlette import routing
import tensorflow as tf
import uvicorn

from sentzoo import catalogue
from sentzoo import sentence_model
from sentzoo import store as store_lib
from sentzoo.common import errors
from sentzoo.common import interrupts
from sentzoo.evaluation import encoder as encoder_lib
from sentzoo.export import signature_info

API_KEY_ENV_VAR = "SENTZOO_API_KEY"
LOOPBACK = ("127.0.0.1", "::1", "localhost")
# Signature calls in flight per model: one runs while Python builds the next
# batch's input and copies out the last one's output.
_CALLS_IN_FLIGHT = 2
_BATCH_BUCKETS = tuple(2**i for i in range(13))
_SECONDS_BUCKETS = (.001, .002, .005, .01, .02, .05, .1, .2, .5, 1, 2, 5, 10)


@dataclasses.dataclass(frozen=True)
class Limits:
  max_body_bytes: int  # 413 above
  max_sentences: int  # per request (rows of a predict request); 413 above
  max_sentence_chars: int  # 413 above
  max_batch_sentences: int  # rows per signature call
  max_wait_ms: float  # for a batch to fill


class ApiError(Exception):
  """An HTTP error answered with a JSON body; `code` names what was wrong."""

  def __init__(self, status, code, message):
    super().__init__(message)
    self.status, self.code = status, code


@dataclasses.dataclass
class _Job:
  """One request's rows: {input key: list}, filled in by batches."""
  columns: Dict[str, list]
  rows: int
  future: asyncio.Future
  taken: int = 0
  done: int = 0
  outputs: Any = None


class Batcher:
  """Coalesces the rows of concurrent requests into calls of `fn`.

  `fn({key: list of rows}) -> {output key: array [rows, ...]}` runs on a
  worker thread. Made, and `submit` called, on the event loop, where
  `loop` runs.
  """

  def __init__(self, fn, max_rows, max_wait_s, on_batch=lambda rows: None):
    self._fn, self._max_rows, self._max_wait = fn, max_rows, max_wait_s
    self._on_batch = on_batch
    self._pending = collections.deque()
    self._waiting_rows = self._running = 0
    self._arrived, self._filled = asyncio.Event(), asyncio.Event()
    self._slots = asyncio.Semaphore(_CALLS_IN_FLIGHT)
    self._pool = concurrent.futures.ThreadPoolExecutor(_CALLS_IN_FLIGHT)

  def submit(self, columns):
    """A future of the outputs for these rows: {output key: array [rows,
    ...]}; cancel it to drop the rows not taken yet."""
    rows = len(next(iter(columns.values())))
    job = _Job(columns, rows, asyncio.get_running_loop().create_future())
    self._pending.append(job)
    self._waiting_rows += rows
    self._arrived.set()
    if self._waiting_rows >= self._max_rows:
      self._filled.set()
    return job.future

  async def loop(self):
    """Forms and launches batches until cancelled."""
    while True:
      await self._arrived.wait()
      self._arrived.clear()
      # An idle model takes the rows at once; while it is busy, a batch
      # waits for more (woken early only when full, not by each arrival).
      if self._running and self._waiting_rows < self._max_rows:
        self._filled.clear()
        with contextlib.suppress(asyncio.TimeoutError):
          await asyncio.wait_for(self._filled.wait(), self._max_wait)
      await self._slots.acquire()
      pieces = self._take()
      if not pieces:
        self._slots.release()
        continue
      self._running += 1
      asyncio.create_task(self._call(pieces))
      if self._pending:
        self._arrived.set()

  def _take(self):
    """(job, start, stop) pieces of one batch: each waiting job gets an
    equal share of the room, then what the others leave."""
    pieces, room = [], self._max_rows
    while room and self._pending:
      share = max(1, room // len(self._pending))
      waiting = collections.deque()
      for job in self._pending:
        if job.future.done():  # Cancelled: the client left.
          self._waiting_rows -= job.rows - job.taken
          continue
        n = min(share, job.rows - job.taken, room)
        if n:
          pieces.append((job, job.taken, job.taken + n))
          job.taken += n
          room -= n
          self._waiting_rows -= n
        if job.taken < job.rows:
          waiting.append(job)
      self._pending = waiting
    return pieces

  async def _call(self, pieces):
    try:
      feeds = {key: [row for job, start, stop in pieces
                     for row in job.columns[key][start:stop]]
               for key in pieces[0][0].columns}
      self._on_batch(sum(stop - start for _, start, stop in pieces))
      try:
        outputs = await asyncio.get_running_loop().run_in_executor(
            self._pool, self._fn, feeds)
      except Exception as e:  # pylint: disable=broad-except
        for job, _, _ in pieces:
          if not job.future.done():
            job.future.set_exception(e)
        return
      at = 0
      for job, start, stop in pieces:
        if stop - start == job.rows:  # The whole job: views of the batch.
          job.outputs = {k: v[at:at + job.rows] for k, v in outputs.items()}
        elif job.outputs is None:
          job.outputs = {k: np.empty((job.rows,) + v.shape[1:], v.dtype)
                         for k, v in outputs.items()}
        if stop - start < job.rows:
          for key, value in outputs.items():
            job.outputs[key][start:stop] = value[at:at + stop - start]
        at += stop - start
        job.done += stop - start
        if job.done == job.rows and not job.future.done():
          job.future.set_result(job.outputs)
    finally:
      self._running -= 1
      self._slots.release()

  def close(self):
    self._pool.shutdown(wait=False, cancel_futures=True)


@dataclasses.dataclass
class ServedModel:
  name: str
  version: int
  model: sentence_model.SentenceModel
  input_keys: List[str]
  metadata: Dict[str, Any]  # TF Serving's GetModelMetadata answer
  batcher: Any = None

  def run_signature(self, feeds):
    """serving_default on {input key: list of str/bytes}; numpy outputs."""
    outputs = self.model.signature(**{
        key: tf.constant(rows, tf.string) for key, rows in feeds.items()})
    return {key: value.numpy() for key, value in outputs.items()}


def _model_name(spec, path):
  """The name a model is served under: NAME of NAME=PATH, a store name, or
  the export's folder name (runs/x/export/1 -> x)."""
  if not (os.path.exists(spec) or "/" in spec or os.sep in spec):
    return spec
  parts = [p for p in os.path.abspath(path).split(os.sep) if p]
  while parts and (parts[-1].isdigit() or
                   parts[-1] == store_lib.EXPORT_SUBDIR):
    parts.pop()
  return parts[-1] if parts else "model"


def resolve(specs: Sequence[str]) -> Dict[str, str]:
  """{served name: path} of `NAME_OR_PATH` or `NAME=PATH` specs, every store
  entry verified (a damaged one is a UserError)."""
  paths = {}
  for spec in specs:
    name, sep, rest = spec.partition("=")
    if sep and catalogue.NAME_PATTERN.match(name):
      spec = rest
    path = store_lib.resolve(spec)
    name = name if sep else _model_name(spec, path)
    if not catalogue.NAME_PATTERN.match(name):
      raise errors.UserError(
          f"cannot serve {spec!r} as {name!r}: a model's name is lower-case "
          "letters, digits, '.', '_' and '-'; name it with NAME=PATH")
    if name in paths:
      raise errors.UserError(f"two models named {name!r}; name one with "
                             "NAME=PATH")
    paths[name] = path
  return paths


def _tensor_json(info):
  """A TensorInfo as TF Serving's metadata JSON shows it."""
  shape = ({"unknownRank": True} if info.shape is None else
           {"dim": [{"size": str(d)} for d in info.shape]})
  return {"name": info.tensor_name, "dtype": info.dtype, "tensorShape": shape}


def load(name, path):
  """The model `name` at `path`, loaded and warmed up."""
  model = sentence_model.load(path)
  base = os.path.basename(os.path.normpath(model.export_dir))
  version = int(base) if base.isdigit() else 1
  signature = signature_info.read_signature(model.export_dir)
  metadata = {
      "model_spec": {"name": name, "signature_name": "",
                     "version": str(version)},
      "metadata": {"signature_def": {"signature_def": {"serving_default": {
          "inputs": {k: _tensor_json(v) for k, v in signature.inputs.items()},
          "outputs": {k: _tensor_json(v)
                      for k, v in signature.outputs.items()},
          "methodName": signature.method_name}},
          "@type": "type.googleapis.com/tensorflow.serving.SignatureDefMap"}}}
  served = ServedModel(name, version, model, sorted(signature.inputs),
                       metadata)
  served.run_signature({key: [""] for key in served.input_keys})
  return served


def _json(value, status=200, headers=None):
  return responses.Response(
      orjson.dumps(value, option=orjson.OPT_SERIALIZE_NUMPY), status,
      headers, media_type="application/json")


class Server:
  """The app's state: the models, the caps, the key and the metrics."""

  def __init__(self, models: Dict[str, ServedModel], limits: Limits,
               api_key=None):
    self.models, self.limits, self.api_key = models, limits, api_key
    prometheus_client.disable_created_metrics()  # Noise in every scrape.
    self.registry = prometheus_client.CollectorRegistry()
    metric = lambda kind, name, doc, labels, **kw: kind(
        f"sentzoo_{name}", doc, labels, registry=self.registry, **kw)
    counter, histogram = prometheus_client.Counter, prometheus_client.Histogram
    self.requests = metric(counter, "requests", "Requests answered",
                           ["route", "status"])
    self.errors = metric(counter, "errors", "Errors by code", ["route", "code"])
    self.latency = metric(histogram, "request_seconds", "Request to answer",
                          ["route"], buckets=_SECONDS_BUCKETS)
    self.sentences = metric(counter, "sentences", "Rows encoded", ["model"])
    self.batches = metric(histogram, "batch_sentences", "Rows per model call",
                          ["model"], buckets=_BATCH_BUCKETS)
    self.accepted = self.answered = 0

  def app(self):
    """The ASGI app: a Starlette router (no middleware: the endpoints
    answer every error themselves, as JSON)."""
    routes = [("/v1/embeddings", "embeddings", {"POST": self.embeddings}),
              ("/v1/models", "models", {"GET": self.list_models}),
              ("/healthz", "healthz", {"GET": self.healthz}),
              ("/metrics", "metrics", {"GET": self.metrics})]
    for model in ("/v1/models/{name}", "/v1/models/{name}/versions/{version}"):
      routes += [(model + ":predict", "predict", {"POST": self.predict}),
                 (model, "status", {"GET": self.status}),
                 (model + "/metadata", "metadata", {"GET": self.metadata})]
    every = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
    return routing.Router(
        [routing.Route(path, self._endpoint(name, methods), methods=every)
         for path, name, methods in routes],
        default=routing.request_response(self._endpoint("none", {})),
        lifespan=self._lifespan)

  @contextlib.asynccontextmanager
  async def _lifespan(self, app):
    del app  # Unused.
    tasks = []
    for served in self.models.values():
      served.batcher = Batcher(
          served.run_signature, self.limits.max_batch_sentences,
          self.limits.max_wait_ms / 1000,
          self.batches.labels(served.name).observe)
      tasks.append(asyncio.create_task(served.batcher.loop()))
    yield
    for task, served in zip(tasks, self.models.values()):
      task.cancel()
      served.batcher.close()

  def _error(self, request, error):
    if request.url.path.startswith("/v1/models/"):  # TF Serving's format.
      body = {"error": str(error)}
    else:
      body = {"error": {"message": str(error), "type": (
          "invalid_request_error" if error.status < 500 else "server_error"),
                        "param": None, "code": error.code}}
    return _json(body, error.status, {"WWW-Authenticate": "Bearer"}
                 if error.status == 401 else None)

  def _endpoint(self, route, methods):
    """The route's endpoint: checks the method and the key, answers errors
    as JSON, counts and times the request."""
    async def endpoint(request):
      began = time.perf_counter()
      self.accepted += 1
      try:
        fn = methods.get(request.method)
        if fn is None:
          raise ApiError(405, "method_not_allowed", f"{request.url.path} "
                         f"takes {' or '.join(methods)}") if methods else \
              ApiError(404, "not_found", f"no route {request.url.path}")
        if self.api_key is not None and route != "healthz":
          given = request.headers.get("authorization", "")
          if not hmac.compare_digest(given.encode(),
                                     f"Bearer {self.api_key}".encode()):
            raise ApiError(401, "invalid_api_key", "a missing or wrong API "
                           "key: send Authorization: Bearer KEY")
        response = await fn(request)
      except ApiError as e:
        self.errors.labels(route, e.code).inc()
        response = self._error(request, e)
      except Exception as e:  # pylint: disable=broad-except
        traceback.print_exc()  # A bug: logged; the server keeps serving.
        self.errors.labels(route, "internal").inc()
        response = self._error(request, ApiError(
            500, "internal", f"{type(e).__name__}: {e}"))
      self.answered += 1
      self.requests.labels(route, str(response.status_code)).inc()
      self.latency.labels(route).observe(time.perf_counter() - began)
      return response
    return endpoint

  # ---------------------------------------------------------- requests --

  async def _body(self, request):
    """The request's JSON object; 413 over the cap, 400 if not JSON."""
    cap = self.limits.max_body_bytes
    length = request.headers.get("content-length", "")
    if length.isdigit() and int(length) > cap:
      raise ApiError(413, "body_too_large", f"the body has {length} bytes; "
                     f"the cap is {cap}")
    body = bytearray()
    try:
      async for chunk in request.stream():
        body += chunk
        if len(body) > cap:
          raise ApiError(413, "body_too_large",
                         f"the body is over the cap of {cap} bytes")
    except requests_lib.ClientDisconnect as e:
      raise ApiError(499, "client_disconnected", "the client left") from e
    try:
      value = orjson.loads(body)
    except orjson.JSONDecodeError as e:
      raise ApiError(400, "invalid_json", f"the body is not JSON: {e}") from e
    if not isinstance(value, dict):
      raise ApiError(400, "invalid_type", "the body must be a JSON object, "
                     f"got {type(value).__name__}")
    return value

  def _model(self, name, version=None):
    served = self.models.get(name) if isinstance(name, str) else None
    if served is None:
      raise ApiError(404, "model_not_found", f"no model {name!r} is served; "
                     f"served: {', '.join(sorted(self.models))}")
    if version is not None and version != str(served.version):
      raise ApiError(404, "version_not_found", f"model {name!r} has version "
                     f"{served.version} only, not {version!r}")
    return served

  def _rows(self, values, what):
    """`values` checked: a non-empty list of str within the caps."""
    if not isinstance(values, list) or not values:
      raise ApiError(400, "invalid_input", f"{what} must be a non-empty list "
                     "of strings" + (", got an empty list" if
                                     isinstance(values, list) else ""))
    if len(values) > self.limits.max_sentences:
      raise ApiError(413, "too_many_sentences", f"{what} has {len(values)} "
                     f"items; the cap is {self.limits.max_sentences}")
    for i, value in enumerate(values):
      if isinstance(value, dict) and list(value) == ["b64"]:
        try:
          value = values[i] = pybase64.b64decode(value["b64"],
                                                  validate=True)
        except (TypeError, ValueError) as e:
          raise ApiError(400, "invalid_input",
                         f"{what}[{i}]: bad base64") from e
      elif not isinstance(value, str):
        raise ApiError(400, "invalid_input", f"{what}[{i}] is "
                       f"{type(value).__name__}, not a string")
      if len(value) > self.limits.max_sentence_chars:
        raise ApiError(413, "sentence_too_long", f"{what}[{i}] has "
                       f"{len(value)} characters; the cap is "
                       f"{self.limits.max_sentence_chars}")
    return values

  async def _run(self, request, served, columns):
    """The batched signature outputs for `columns`; 499 if the client
    leaves first."""
    job = served.batcher.submit(columns)
    gone = asyncio.ensure_future(request.receive())
    gone.add_done_callback(lambda _: job.cancel())
    try:
      outputs = await job
    except asyncio.CancelledError:
      if not gone.done():
        raise
      raise ApiError(499, "client_disconnected", "the client left") from None
    finally:
      gone.cancel()
    self.sentences.labels(served.name).inc(len(next(iter(columns.values()))))
    return outputs

  async def embeddings(self, request):
    body = await self._body(request)
    served = self._model(body.get("model"))
    if served.input_keys != [encoder_lib.INPUT_KEY]:
      raise ApiError(400, "pair_model", f"{served.name!r} is a pair model: "
                     f"POST /v1/models/{served.name}:predict with "
                     f"{' and '.join(served.input_keys)}")
    dimensions = body.get("dimensions")
    if dimensions is not None and dimensions != served.model.dim:
      raise ApiError(400, "invalid_dimensions", f"{served.name!r} gives "
                     f"{served.model.dim} dimensions, not {dimensions!r}")
    text = body.get("input")
    sentences = self._rows([text] if isinstance(text, str) else text,
                           "input")
    if any(isinstance(s, bytes) for s in sentences):
      raise ApiError(400, "invalid_input", "input must be strings")
    encoding = body.get("encoding_format", "float")
    if encoding not in ("float", "base64"):
      raise ApiError(400, "invalid_encoding_format", "encoding_format must "
                     f"be 'float' or 'base64', got {encoding!r}")
    vectors = (await self._run(request, served, {
        encoder_lib.INPUT_KEY: sentences}))[encoder_lib.OUTPUT_KEY]
    vectors = vectors.astype("<f4", copy=False)
    words = sum(len(s.split()) for s in sentences)
    return _json({"object": "list", "model": served.name, "data": [
        {"object": "embedding", "index": i, "embedding": (
            pybase64.b64encode_as_string(v) if encoding == "base64" else v)}
        for i, v in enumerate(vectors)],
                  "usage": {"prompt_tokens": words, "total_tokens": words}})

  async def predict(self, request):
    served = self._model(request.path_params["name"],
                         request.path_params.get("version"))
    body = await self._body(request)
    keys = served.input_keys
    if body.get("signature_name", "serving_default") != "serving_default":
      raise ApiError(400, "invalid_signature", "only serving_default is "
                     f"served, not {body['signature_name']!r}")
    if ("instances" in body) == ("inputs" in body):
      raise ApiError(400, "invalid_input", "give one of 'instances' (rows) "
                     "or 'inputs' (columns)")
    if "instances" in body:
      rows = body["instances"]
      if isinstance(rows, list) and len(keys) == 1:
        rows = [r[keys[0]] if isinstance(r, dict) and list(r) == keys
                else r for r in rows]
        columns = {keys[0]: rows}
      elif isinstance(rows, list) and all(
          isinstance(r, dict) and sorted(r) == keys for r in rows):
        columns = {k: [r[k] for r in rows] for k in keys}
      else:
        raise ApiError(400, "invalid_input", "instances must be a list of "
                       + (f"{{{', '.join(keys)}}} objects" if len(keys) > 1
                          else "strings"))
    else:
      columns = body["inputs"]
      if len(keys) == 1 and not isinstance(columns, dict):
        columns = {keys[0]: columns}
      if not isinstance(columns, dict) or sorted(columns) != keys:
        raise ApiError(400, "invalid_input", f"inputs must have the keys "
                       f"{keys}")
    columns = {k: self._rows(v, k) for k, v in columns.items()}
    if len({len(v) for v in columns.values()}) > 1:
      raise ApiError(400, "invalid_input", "the inputs must have one length")
    outputs = await self._run(request, served, columns)
    single = next(iter(outputs.values())) if len(outputs) == 1 else None
    if "inputs" in body:
      return _json({"outputs": outputs if single is None else single})
    if single is not None:
      return _json({"predictions": single})
    return _json({"predictions": [{k: v[i] for k, v in outputs.items()}
                                  for i in range(len(columns[keys[0]]))]})

  async def list_models(self, request):
    del request  # Unused.
    return _json({"object": "list", "data": [
        {"id": s.name, "object": "model", "created": 0, "owned_by": "sentzoo",
         "version": s.version, "inputs": s.input_keys,
         "kind": "pair model" if s.model.is_pair_model else "sentence encoder"}
        for s in self.models.values()]})

  async def status(self, request):
    served = self._model(request.path_params["name"],
                         request.path_params.get("version"))
    return _json({"model_version_status": [{
        "version": str(served.version), "state": "AVAILABLE",
        "status": {"error_code": "OK", "error_message": ""}}]})

  async def metadata(self, request):
    return _json(self._model(request.path_params["name"],
                             request.path_params.get("version")).metadata)

  async def healthz(self, request):
    del request  # Unused.
    return _json({"status": "ok"})

  async def metrics(self, request):
    del request  # Unused.
    return responses.Response(prometheus_client.generate_latest(
        self.registry), media_type=prometheus_client.CONTENT_TYPE_LATEST)


class _Uvicorn(uvicorn.Server):
  """uvicorn, whose SIGTERM/SIGINT drain and end in exit 0 (uvicorn raises
  the signal again once it has drained, which would end the command as
  interrupted)."""

  @contextlib.contextmanager
  def capture_signals(self):
    previous = {s: signal.signal(s, self.handle_exit)
                for s in interrupts.SIGNALS}
    try:
      yield
    finally:
      for s, handler in previous.items():
        signal.signal(s, handler)
      interrupts.stopping()


def _listen(host, port):
  try:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    sock = socket.socket(infos[0][0], socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(infos[0][4])
    sock.listen(2048)
  except OSError as e:
    raise errors.UserError(f"cannot listen on {host}:{port}: "
                           f"{e.strerror or e}") from e
  return sock


def serve(specs: Sequence[str], host: str, port: int, limits: Limits,
          api_key=None):
  """Serves the models of `specs` until SIGTERM/SIGINT (see the module doc).

  Raises:
    errors.UserError: a model that is not there or fails its store
      verification, a bad cap, or an address it cannot listen on.
  """
  if min(dataclasses.astuple(limits)[:4]) < 1 or limits.max_wait_ms < 0:
    raise errors.UserError(f"the caps and --max_batch_sentences must be >= 1 "
                           f"and --max_wait_ms >= 0, got {limits}")
  api_key = api_key or os.environ.get(API_KEY_ENV_VAR) or None
  paths = resolve(specs)
  sock = _listen(host, port)
  models = {name: load(name, path) for name, path in paths.items()}
  server = Server(models, limits, api_key)
  # TensorFlow's hundreds of thousands of objects leave the garbage
  # collector's generations: a full collection over them took 0.5 s, a
  # pause every request in flight then waited out.
  gc.collect()
  gc.freeze()
  address = sock.getsockname()
  for served in models.values():
    print(f"serving {served.name} ({served.model.export_dir}; "
          f"{'pair model' if served.model.is_pair_model else 'encoder'})",
          file=sys.stderr)
  if host not in LOOPBACK and api_key is None:
    print(f"warning: serving on {host} without an API key (--api_key or "
          f"${API_KEY_ENV_VAR})", file=sys.stderr)
  print(f"listening on http://{address[0]}:{address[1]} (SIGTERM or Ctrl-C "
        "stops it)", file=sys.stderr, flush=True)
  config = uvicorn.Config(server.app(), log_level="warning", access_log=False,
                          proxy_headers=False, timeout_graceful_shutdown=None)
  _Uvicorn(config).run(sockets=[sock])
  print(f"stopped: {server.answered} of {server.accepted} requests "
        "answered", file=sys.stderr, flush=True)
