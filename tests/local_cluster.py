"""Helpers for tests that start trainer or TensorFlow worker processes."""

import socket


def free_ports(count):
  """`count` distinct TCP ports on 127.0.0.1 that were free a moment ago.

  All sockets are bound before any is closed, so the ports differ; another
  process may still take one before the workers bind it (rare; the caller's
  time bound turns that into a test failure, not a hang).
  """
  sockets = [socket.socket() for _ in range(count)]
  try:
    for s in sockets:
      s.bind(("127.0.0.1", 0))
    return [s.getsockname()[1] for s in sockets]
  finally:
    for s in sockets:
      s.close()


_DUMP_SCRIPT = """
import os, runpy
import numpy as np
from sentzoo.trainers import training_loop
_run = training_loop.run
def _run_and_dump(*args, **kwargs):
  outcome = _run(*args, **kwargs)
  items = args[5] if len(args) > 5 else kwargs["checkpoint_items"]
  model = items["model"]
  {save}
  return outcome
training_loop.run = _run_and_dump
runpy.run_module("{module}", run_name="__main__", alter_sys=True)
"""


def trainer_with_dump(module, save):
  """Python source (for `python -c`) running trainer `module` as __main__.

  `training_loop.run` is wrapped so that, once it returns, the statement
  `save` runs with `model` (the trained model of this process: every
  worker's own copy) and `os`, `np` in scope. A test-only hook; no
  production code involved.
  """
  return _DUMP_SCRIPT.format(module=module, save=save)
