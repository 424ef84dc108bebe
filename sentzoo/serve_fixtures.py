"""`sentzoo serve` in a child process and a bounded asyncio load client: what
sentzoo/serve_test.py and the load benchmark (lab/benchmarks/serve_load.py)
both drive the server with.

The client keeps N keep-alive HTTP/1.1 connections (httptools' parser, uvloop
where installed), each sending its next request when the last is answered,
until a fixed count of requests is done.
"""

import asyncio
import base64
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

_LISTENING = re.compile(r"listening on (http://\S+)")
_STOPPED = re.compile(r"stopped: (\d+) of (\d+) requests answered")


# ------------------------------------------------------------- server --


class Server:
  """`python -m sentzoo.cli serve` in a child process, its log in a file."""

  def __init__(self, models, flags_=(), env=None, home=None):
    self.log_path = tempfile.mktemp(prefix="serve_", suffix=".log")
    environ = dict(os.environ, **(env or {}))
    if home:
      environ["SENTZOO_HOME"] = home
    repo = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    environ["PYTHONPATH"] = repo + os.pathsep + environ.get("PYTHONPATH", "")
    self._log = open(self.log_path, "wb")  # pylint: disable=consider-using-with
    self.proc = subprocess.Popen(  # pylint: disable=consider-using-with
        [sys.executable, "-m", "sentzoo.cli", "serve", *models, "--port=0",
         *flags_], stdout=self._log, stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL, env=environ, cwd=repo)
    self.url = None

  def log(self):
    with open(self.log_path, encoding="utf-8", errors="replace") as f:
      return f.read()

  def wait_listening(self, timeout=300):
    """The server's base URL once it listens; raises if it exits first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
      found = _LISTENING.search(self.log())
      if found:
        self.url = found.group(1)
        return self.url
      if self.proc.poll() is not None:
        raise RuntimeError(f"the server exited with {self.proc.returncode}:"
                           f"\n{self.log()[-3000:]}")
      time.sleep(0.1)
    raise RuntimeError(f"the server did not start:\n{self.log()[-3000:]}")

  def stop(self, timeout=120):
    """SIGTERM, then its exit code."""
    if self.proc.poll() is None:
      self.proc.send_signal(signal.SIGTERM)
    try:
      return self.proc.wait(timeout)
    finally:
      self._log.close()

  def kill(self):
    if self.proc.poll() is None:
      self.proc.kill()
      self.proc.wait()
    self._log.close()

  def cpu_seconds(self):
    """The server's user + system CPU seconds so far."""
    with open(f"/proc/{self.proc.pid}/stat", encoding="utf-8") as f:
      fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

  def status(self, field):
    """A /proc/PID/status memory field in MB."""
    with open(f"/proc/{self.proc.pid}/status", encoding="utf-8") as f:
      for line in f:
        if line.startswith(field + ":"):
          return int(line.split()[1]) / 1024.0
    return None

  def reset_peak(self):
    with open(f"/proc/{self.proc.pid}/clear_refs", "w", encoding="utf-8") as f:
      f.write("5")


# -------------------------------------------------------------- load --


def embeddings_request(sentences, model, encoding="base64"):
  import orjson  # pylint: disable=g-import-not-at-top
  return orjson.dumps({"model": model, "input": sentences,
                       "encoding_format": encoding})


def decode(item):
  """One response item's embedding as float32."""
  embedding = item["embedding"]
  if isinstance(embedding, str):
    return np.frombuffer(base64.b64decode(embedding), "<f4")
  return np.asarray(embedding, np.float32)


class ConnectionClosed(ConnectionError):
  """The server closed the connection before the whole response."""


class _Connection(asyncio.Protocol):
  """One keep-alive HTTP/1.1 connection: a request at a time, the response
  parsed by httptools (the parser uvicorn uses), so that the generator
  spends little of the CPU it shares with the server."""

  def __init__(self):
    import httptools  # pylint: disable=g-import-not-at-top
    self._parser = httptools.HttpResponseParser(self)
    self._transport, self._waiter, self._body = None, None, []
    self.open = True

  def connection_made(self, transport):
    self._transport = transport

  def data_received(self, data):
    try:
      self._parser.feed_data(data)
    except Exception as e:  # pylint: disable=broad-except
      self._fail(e)

  def on_body(self, body):
    self._body.append(body)

  def on_message_complete(self):
    waiter, self._waiter = self._waiter, None
    body, self._body = b"".join(self._body), []
    if waiter is not None and not waiter.done():
      waiter.set_result((self._parser.get_status_code(), body))

  def connection_lost(self, exc):
    self.open = False
    self._fail(ConnectionClosed("closed before the response"))

  def _fail(self, error):
    waiter, self._waiter = self._waiter, None
    if waiter is not None and not waiter.done():
      waiter.set_exception(error)

  async def send(self, raw):
    """(status, body) of one request's raw bytes."""
    self._waiter = asyncio.get_running_loop().create_future()
    self._transport.write(raw)
    return await self._waiter

  def close(self):
    if self._transport is not None:
      self._transport.close()


def _raw_request(host, path, body, api_key):
  auth = f"Authorization: Bearer {api_key}\r\n" if api_key else ""
  return (f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: "
          f"application/json\r\nContent-Length: {len(body)}\r\n{auth}\r\n"
          ).encode() + body


async def _load(url, bodies, clients, requests, keep, stop_on_error,
                api_key):
  import orjson  # pylint: disable=g-import-not-at-top
  host, port = url.split("//", 1)[1].rsplit(":", 1)
  raws = [_raw_request(host, "/v1/embeddings", body, api_key)
          for _, body in bodies]
  latencies, failures, kept = [], {}, []
  answered = [0, 0]  # Requests, sentences.
  next_request = [0]
  loop = asyncio.get_running_loop()

  def fail(kind):
    failures[kind] = failures.get(kind, 0) + 1

  async def connect():
    return (await loop.create_connection(_Connection, host, int(port)))[1]

  async def client(connection):
    while next_request[0] < requests:
      i = next_request[0]
      next_request[0] += 1
      sentences = bodies[i % len(bodies)][0]
      began = time.perf_counter()
      try:
        if connection is None or not connection.open:
          connection = await connect()
        status, data = await connection.send(raws[i % len(raws)])
      except (OSError, asyncio.TimeoutError) as e:
        fail(type(e).__name__)
        connection = None
        if stop_on_error:
          return
        continue
      latencies.append(time.perf_counter() - began)
      if status != 200:
        fail(f"HTTP {status}")
        continue
      answered[0] += 1
      answered[1] += len(sentences)
      if data.count(b'"index"') != len(sentences):
        fail("wrong count")
      elif keep and len(kept) < keep and random.random() < 0.05:
        items = orjson.loads(data)["data"]
        kept.append((sentences, np.stack([decode(x) for x in items])))
    if connection is not None:
      connection.close()

  # Every connection is open before the clock starts: the rows time
  # requests, not TCP handshakes.
  connections = await asyncio.gather(*(connect() for _ in range(clients)),
                                     return_exceptions=True)
  began = time.perf_counter()
  await asyncio.gather(*(client(None if isinstance(c, BaseException) else c)
                         for c in connections))
  seconds = time.perf_counter() - began
  return {"seconds": seconds, "latencies": latencies, "failures": failures,
          "answered": answered[0], "sentences": answered[1], "kept": kept}


def run_load(url, bodies, clients, requests, keep=0, stop_on_error=False,
             api_key=None):
  """`requests` OpenAI embeddings requests (`bodies`: (sentences, JSON
  body) pairs, cycled) from `clients` connections, each sending its next
  request when its last is answered. Returns {"seconds", "latencies" (of
  the requests answered), "failures" ({kind: count}: connection errors,
  HTTP statuses other than 200, a wrong count of embeddings), "answered"
  (200s), "sentences" (in them), "kept" (up to `keep` (sentences, float32
  [n, d]) pairs drawn from the answers)}. `stop_on_error`: a client stops at its first
  connection error."""
  try:
    import uvloop  # pylint: disable=g-import-not-at-top
    run = uvloop.run
  except ImportError:
    run = asyncio.run
  return run(_load(url, bodies, clients, requests, keep, stop_on_error,
                   api_key))


def request_bodies(lines, per_request, model, count=512):
  """`count` (sentences, body) requests of `per_request` lines each, for
  the served model named `model`."""
  out = []
  for i in range(count):
    start = (i * per_request) % max(1, len(lines) - per_request)
    sentences = lines[start:start + per_request]
    out.append((sentences, embeddings_request(sentences, model)))
  return out


def sigterm_under_load(server, bodies, clients=64, after_seconds=3.0,
                       api_key=None):
  """SIGTERM to `server` (a started `Server`) `after_seconds` into a load of
  `clients` connections that each stop at their first connection error.
  Returns (what the clients got (`run_load`'s dict), ((answered, accepted)
  from the server's last line, or None), its exit code)."""
  import threading  # pylint: disable=g-import-not-at-top
  server.wait_listening()
  timer = threading.Timer(after_seconds, server.proc.send_signal,
                          (signal.SIGTERM,))
  timer.start()
  result = run_load(server.url, bodies, clients, 10**9, stop_on_error=True,
                    api_key=api_key)
  code = server.stop()
  stopped = _STOPPED.search(server.log())
  return result, (tuple(map(int, stopped.groups())) if stopped else None,
                  code)
