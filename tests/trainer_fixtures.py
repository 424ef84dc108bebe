"""Helpers of the trainers' tests: run a trainer in this process or as
child processes (a multi-worker cluster among them), read the table it
checkpointed, cut a corpus part short."""

import contextlib
import io
import json
import os

import tensorflow as tf

from sentzoo.tests import local_cluster

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_printed(trainer_module, args):
  """`trainer_module.run(args)` in this process; returns what it printed."""
  out = io.StringIO()
  with contextlib.redirect_stdout(out):
    trainer_module.run(args)
  return out.getvalue()


def child_env(**extra):
  """The environment of a trainer's child process: this checkout first on
  the path, TensorFlow's C++ logs quiet, no data directory or cluster from
  the caller's environment; then `extra`."""
  env = dict(os.environ, PYTHONPATH=REPO_ROOT, TF_CPP_MIN_LOG_LEVEL="2")
  env.pop("SENTZOO_DATA_DIR", None)
  env.pop("TF_CONFIG", None)
  env.update(extra)
  return env


def checkpoint_table(model_dir, name_part):
  """The one variable of the model directory's latest checkpoint whose name
  holds `name_part` (optimizer slots left out)."""
  reader = tf.train.load_checkpoint(os.path.join(model_dir, "checkpoints"))
  names = [n for n in reader.get_variable_to_shape_map()
           if name_part in n and "OPTIMIZER" not in n]
  assert len(names) == 1, names
  return reader.get_tensor(names[0])


def truncate_corpus_part(data_dir, part):
  """Cuts book corpus part `part` of `data_dir` to its first half (a gzip
  without its end); returns its path."""
  path = os.path.join(data_dir, "gutenberg", f"part{part:02d}.txt.gz")
  with open(path, "rb") as f:
    data = f.read()
  with open(path, "wb") as f:
    f.write(data[:len(data) // 2])
  return path


def finish_processes(processes, timeout):
  """[(returncode, stdout, stderr)] of every process, each waited for at
  most `timeout` seconds; kills those left on a timeout or error."""
  try:
    results = []
    for p in processes:
      out, err = p.communicate(timeout=timeout)
      results.append((p.returncode, out, err))
    return results
  finally:
    for p in processes:
      if p.poll() is None:
        p.kill()
        p.communicate()


def start_workers(start, args, dump_dir, count=2):
  """`count` processes `start(args, TF_CONFIG=..., TEST_DUMP_WEIGHTS=...)`
  of one --strategy=multi_worker cluster on free local ports; worker i
  dumps its weights to <dump_dir>/worker<i>.npz."""
  cluster = {"worker": [f"127.0.0.1:{port}"
                        for port in local_cluster.free_ports(count)]}
  return [start(args + ["--strategy=multi_worker"],
                TF_CONFIG=json.dumps({"cluster": cluster,
                                      "task": {"type": "worker",
                                               "index": index}}),
                TEST_DUMP_WEIGHTS=os.path.join(dump_dir, f"worker{index}.npz"))
          for index in range(count)]
