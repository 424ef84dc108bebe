"""Helpers for tests that start several TensorFlow worker processes."""

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
