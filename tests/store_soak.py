r"""The store soak: concurrent installs and removals, some killed midway.

Each round starts `--workers` processes at once on one store, each one of:
install an archive (refused if installed), install it with replace, or
remove an entry; each is SIGKILLed with probability `--kill_probability`
at a moment drawn uniformly from the time one install takes alone on this
machine (timed first), so that kills land midway on fast and slow machines
alike. Then the next store command (`Store.installed`, as
`sentzoo models` runs it) lists the store, and the round counts:

  lost             an entry installed before the round (or reported
                   "installed" in it) that no removal of the round touched,
                   and that is not listed (or does not verify);
  false_installed  of those, the ones a worker reported "installed" in this
                   round;
  damaged          a listed entry whose files do not match their sha256;
  leftovers        temporaries in the store after the next command.

The workers install through `archive.install` with its graph check and
scores skipped (they are per archive, not per store, and need TensorFlow:
about 5 s a process); everything that touches the store runs as in
`sentzoo install`.

  python -m tests.store_soak --export_dir=runs/siamese_cbow_demo/export/1 \
      --home=/tmp/soak_home --rounds=200 --workers=8
"""

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from unittest import mock

from sentzoo import archive
from sentzoo import store as store_lib
from sentzoo.common import errors

NAMES = ("soak-a", "soak-b", "soak-c")


def _worker(home, op, target):
  """One store command: exit 0 with "installed NAME" or "removed NAME";
  exit 2 for a refusal."""
  store = store_lib.Store(home)
  try:
    if op == "remove":
      print(f"removed {target}" if store.remove(target) else "absent")
      return
    with mock.patch.object(archive, "_check_graph"), mock.patch.object(
        archive, "_measure", return_value={}):
      name = archive.install(target, store, replace=op == "replace")
    print(f"installed {name}", flush=True)
  except errors.UserError as e:
    print(f"error: {e}", file=sys.stderr)
    sys.exit(2)


def soak(export_dir, home, rounds, workers, kill_probability, seed,
         log=print):
  """Runs the soak; returns the counts."""
  rng = random.Random(seed)
  shutil.rmtree(home, ignore_errors=True)
  archives_dir = home + "-archives"
  os.makedirs(archives_dir, exist_ok=True)
  archives = {name: archive.write(export_dir, name, {}, os.path.join(
      archives_dir, name + archive.SUFFIX)) for name in NAMES}
  environ = dict(os.environ, PYTHONPATH=os.pathsep.join(
      [os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
       os.environ.get("PYTHONPATH", "")]))

  def start(op, target, store_home):
    return subprocess.Popen(
        [sys.executable, "-m", "sentzoo.tests.store_soak", "--worker", op,
         target, "--home", store_home], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, env=environ)

  started = time.monotonic()
  start("install", archives[NAMES[0]], home + "-alone").communicate()
  kill_window = time.monotonic() - started
  shutil.rmtree(home + "-alone", ignore_errors=True)
  store = store_lib.Store(home)
  counts = {"rounds": 0, "commands": 0, "killed": 0, "installed": 0,
            "lost": 0, "false_installed": 0, "damaged": 0, "leftovers": 0}
  present = set()
  for _ in range(rounds):
    jobs = []
    for _ in range(workers):
      name = rng.choice(NAMES)
      op = rng.choice(("install", "replace", "replace", "remove"))
      target = name if op == "remove" else archives[name]
      process = start(op, target, home)
      kill_at = (time.monotonic() + rng.uniform(0, kill_window)
                 if rng.random() < kill_probability else None)
      jobs.append((name, op, process, kill_at))
    while any(p.poll() is None for _, _, p, _ in jobs):
      for _, _, process, kill_at in jobs:
        if kill_at and time.monotonic() >= kill_at and process.poll() is None:
          process.kill()
      time.sleep(0.005)
    removed, reported = set(), set()
    for name, op, process, _ in jobs:
      out, err = process.communicate()
      counts["commands"] += 1
      if process.returncode == -signal.SIGKILL:
        counts["killed"] += 1
      elif process.returncode not in (0, 2):
        raise RuntimeError(f"{op} {name}: exit {process.returncode}\n{err}")
      if op == "remove":
        removed.add(name)
      elif process.returncode == 0 and out.strip() == f"installed {name}":
        reported.add(name)
        counts["installed"] += 1
    listed = set(store.installed())  # The next command.
    for name in sorted(listed):
      try:
        store.verify(name)
      except errors.UserError:
        counts["damaged"] += 1
        listed.discard(name)
    for name in (present | reported) - removed - listed:
      counts["lost"] += 1
      counts["false_installed"] += name in reported
      log(f"round {counts['rounds'] + 1}: lost {name}")
    leftovers = [n for n in os.listdir(home)
                 if n not in (store_lib.LOCK_FILE, store_lib.MODELS_SUBDIR)]
    counts["leftovers"] += len(leftovers)
    present = listed
    counts["rounds"] += 1
    if counts["rounds"] % 10 == 0:
      log(json.dumps(counts))
  return counts


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--worker", nargs=2, metavar=("OP", "TARGET"))
  parser.add_argument("--home", required=True)
  parser.add_argument("--export_dir")
  parser.add_argument("--rounds", type=int, default=200)
  parser.add_argument("--workers", type=int, default=8)
  parser.add_argument("--kill_probability", type=float, default=0.3)
  parser.add_argument("--seed", type=int, default=0)
  args = parser.parse_args(argv)
  if args.worker:
    _worker(args.home, *args.worker)
    return
  counts = soak(args.export_dir, args.home, args.rounds, args.workers,
                args.kill_probability, args.seed)
  print(json.dumps(counts))
  sys.exit(1 if counts["lost"] or counts["damaged"] or counts["leftovers"]
           else 0)


if __name__ == "__main__":
  main()
