"""What the benchmarks share: one side in a fresh process, the sides
alternating, their medians and ranges, and the record of a run.

Every side runs in its own process, alternating, so that one side's caches
and memory do not help the next. The peak resident memory is the child's own
ru_maxrss, taken by a small launcher process that forks the child and reaps
it with `os.wait4`. Linux carries the high-water mark of the process that
forks (or vforks) across the child's exec, so a child started straight from
a large benchmark process would report that process's peak when it is the
larger; RUSAGE_CHILDREN would be the largest of all children so far.
"""

import dataclasses
import json
import os
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable, Optional, Sequence

from sentzoo.common import errors
from sentzoo.common import resources


@dataclasses.dataclass
class Finished:
  exit_code: int
  peak_rss_mb: float
  seconds: float  # wall clock from its start to its exit
  load_before: float  # 1-min load average just before it started
  output: bytes  # stdout and stderr, interleaved as printed


# argv: the file for the child's ru_maxrss (KiB), then the command. Exits
# as the child did (the same signal if it was killed).
_LAUNCHER = """
import os, signal, sys
pid = os.fork()
if pid == 0:
  try:
    os.execvp(sys.argv[2], sys.argv[2:])
  finally:
    os._exit(127)
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
  f.write(str(usage.ru_maxrss))
if os.WIFSIGNALED(status):
  signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
  os.kill(os.getpid(), os.WTERMSIG(status))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def _launched_child(pid):
  """The pid of the process that the launcher `pid` forked, or None."""
  try:
    with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as f:
      children = f.read().split()
  except OSError:
    return None
  return int(children[0]) if children else None


def _cpu_seconds(pid):
  """utime + stime of a running process (Linux /proc), or None."""
  try:
    with open(f"/proc/{pid}/stat", "rb") as f:
      fields = f.read().rsplit(b")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
  except (OSError, ValueError, IndexError):
    return None


def run(command: Sequence[str], log_path: Optional[str] = None,
        reader: Any = None, stop: Optional[Callable[[], bool]] = None,
        cwd: Optional[str] = None, poll_seconds: float = 0.05) -> Finished:
  """Runs `command` to its exit, or until `stop()` is true (then SIGKILL).

  Its output goes to `log_path` (if given) and, as it arrives, to
  `reader.feed(data, seconds since start, the child's CPU seconds or
  None)`. A non-zero exit before `stop()` is true is a UserError ending
  with the output's tail.
  """
  load = os.getloadavg()[0]
  start = time.perf_counter()
  chunks = []
  log = open(log_path, "wb") if log_path else None  # pylint: disable=consider-using-with
  rss_file = tempfile.NamedTemporaryFile(prefix="child_rss_", delete=False)  # pylint: disable=consider-using-with
  rss_file.close()
  proc = subprocess.Popen(
      [sys.executable, "-S", "-c", _LAUNCHER, rss_file.name, *command],
      stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
      stdin=subprocess.DEVNULL, cwd=cwd,
      env=dict(os.environ, PYTHONUNBUFFERED="1"), start_new_session=True)
  fd = proc.stdout.fileno()
  os.set_blocking(fd, False)
  ended = stopped = False
  child = None
  try:
    while not ended:
      child = child or _launched_child(proc.pid)
      if stop is not None and stop():
        # The child only: the launcher then reaps it and writes its peak.
        # (The whole group if the launcher has not forked it yet.)
        if child:
          os.kill(child, signal.SIGKILL)
        else:
          os.killpg(proc.pid, signal.SIGKILL)
        stopped = True
        break
      time.sleep(poll_seconds)
      new = []
      while True:
        try:
          data = os.read(fd, 1 << 20)
        except BlockingIOError:
          break
        if not data:
          ended = True
          break
        new.append(data)
      if new:
        data = b"".join(new)
        chunks.append(data)
        if log:
          log.write(data)
        if reader is not None:
          reader.feed(data, time.perf_counter() - start,
                      _cpu_seconds(child) if child else None)
    code = proc.wait()
    seconds = time.perf_counter() - start
    with open(rss_file.name, encoding="ascii") as f:
      peak_kib = float(f.read() or 0)
  finally:
    proc.stdout.close()
    os.remove(rss_file.name)
    if log:
      log.close()
  output = b"".join(chunks)
  if code != 0 and not (stopped or stop is not None and stop()):
    tail = output[-3000:].decode("utf-8", "replace")
    raise errors.UserError(f"exit {code}: {shlex.join(command)}\n{tail}")
  return Finished(code, peak_kib / 1024.0, seconds, load, output)


def last_json(output: bytes) -> Optional[dict]:
  """The last line of `output` that starts with "{", parsed; None if none
  (a child's JSON result, among the log lines on its stderr)."""
  lines = [line for line in output.decode("utf-8", "replace").splitlines()
           if line.startswith("{")]
  return json.loads(lines[-1]) if lines else None


def run_json(command: Sequence[str], **kwargs) -> tuple:
  """`run`, for a child that prints a JSON result (`last_json`): (that
  result, `Finished`)."""
  finished = run(command, **kwargs)
  result = last_json(finished.output)
  if result is None:
    raise errors.UserError(f"no JSON result from {shlex.join(command)}:\n"
                           + finished.output[-3000:].decode("utf-8", "replace"))
  return result, finished


class PhaseRecorder:
  """Peak and current RSS of a process, phase by phase.

  `mark(name)` ends the phase `name`: it records the peak RSS since the
  previous mark (VmHWM) and the RSS now, then resets the peak (through
  /proc/self/clear_refs; where it cannot, `resets` is False and every peak
  is the process's so far). Phases of one name merge: the highest peak, the
  last RSS.
  """

  def __init__(self) -> None:
    self.phases: dict = {}  # name -> {"peak_mb", "end_mb", "count"}, in order.
    self.resets = True
    self._reset()

  def _reset(self):
    if not resources.reset_peak_rss():
      self.resets = False

  def mark(self, name):
    peak, now = resources.peak_rss_mb(), resources.current_rss_mb()
    phase = self.phases.setdefault(name, {"peak_mb": 0.0, "count": 0})
    phase["peak_mb"] = max(phase["peak_mb"], peak)
    phase["end_mb"] = now
    phase["count"] += 1
    self._reset()


class Printed(list):
  """Lines printed as they come and kept for the page."""

  def say(self, *lines: str) -> None:
    for line in lines:
      print(line, flush=True)
    self.extend(lines)


def load_averages() -> str:
  """The 1, 5 and 15-minute load averages, as a page shows them."""
  return " ".join(f"{load:.2f}" for load in os.getloadavg())


def alternate(repeats: int, sides: dict) -> dict:
  """Runs `sides` (name -> function of the repeat index: one measurement,
  usually of a fresh process) in order, `repeats` times: {name: [results]}.
  The order is the same in every repeat (A B A B ...)."""
  results: dict = {name: [] for name in sides}
  for repeat in range(repeats):
    for name, side in sides.items():
      results[name].append(side(repeat))
  return results


def summary(values: Sequence[Any]) -> Optional[dict]:
  """{"median", "min", "max"} of measurements; None if any is None."""
  if not values or None in values:
    return None
  return {"median": statistics.median(values), "min": min(values),
          "max": max(values)}


def ratios(numerators: Sequence[float], denominators: Sequence[float]):
  """Per repeat, numerator / denominator (None where either is missing)."""
  return [None if a is None or not b else a / b
          for a, b in zip(numerators, denominators)]


def write_record(folder: str, module: str, argv: Sequence[str],
                 lines: Sequence[str]) -> None:
  """Records a benchmark's run for its page (`make docs` writes it there,
  lab/docs.py): <folder>/command.md, the command, and measured.md, the
  "## Measured" section of `lines`."""
  from lab import tables  # pylint: disable=g-import-not-at-top
  command = shlex.join(["python", "-m", module, *argv])
  tables.write_page(os.path.join(folder, "command.md"),
                    f"Generated by:\n\n```\n{command}\n```\n\n")
  tables.write_page(os.path.join(folder, "measured.md"),
                    "\n".join(["## Measured", "", *lines]) + "\n")
  print(f"recorded {folder}: `make docs` writes its page")
