"""Tests of trainers/distribution.py: flags, strategies, input sharding."""

import os
import shutil
import subprocess
import sys
import tempfile
import types
from unittest import mock

from absl import flags
import numpy as np
import tensorflow as tf

from sentzoo.common import errors
from sentzoo.trainers import distribution

FLAGS = flags.FlagValues()
distribution.define_flags(FLAGS)
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _fake_strategy(cluster, task_type, task_id, replicas=1):
  resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(
      tf.train.ClusterSpec(cluster), task_type=task_type, task_id=task_id)
  return types.SimpleNamespace(cluster_resolver=resolver,
                               num_replicas_in_sync=replicas)


def _pipeline_ids(dataset_fn, num_pipelines, replicas_per_pipeline):
  """Per pipeline, the example ids each of its replicas gets, step by step."""
  result = []
  for pipeline in range(num_pipelines):
    context = tf.distribute.InputContext(
        num_input_pipelines=num_pipelines, input_pipeline_id=pipeline,
        num_replicas_in_sync=num_pipelines * replicas_per_pipeline)
    result.append([b.numpy() for b in dataset_fn(context)])
  return result


class FlagsTest(tf.test.TestCase):

  def test_defaults(self):
    self.assertEqual(FLAGS["strategy"].default, distribution.DEFAULT)
    self.assertEqual(FLAGS["num_cpu_devices"].default, 0)

  def test_parses_the_four_strategies_and_rejects_others(self):
    for name in ("default", "mirrored", "multi_worker", "parameter_server"):
      FLAGS["strategy"].parse(name)
      self.assertEqual(FLAGS["strategy"].value, name)
    with self.assertRaises(flags.IllegalFlagValueError):
      FLAGS["strategy"].parse("central_storage")
    FLAGS["strategy"].parse("default")
    for name in distribution.STRATEGIES:
      self.assertIn(name, FLAGS["strategy"].help)
      self.assertIn(f"--strategy={name}", distribution.__doc__)

  def test_default_is_one_device(self):
    strategy = distribution.make_strategy("default", 0)
    self.assertIs(strategy, tf.distribute.get_strategy())
    self.assertEqual(strategy.num_replicas_in_sync, 1)
    self.assertEqual(distribution.num_input_pipelines(strategy), 1)
    self.assertTrue(distribution.is_chief(strategy))

  def test_user_errors(self):
    with mock.patch.dict(os.environ, {}, clear=False):
      os.environ.pop("TF_CONFIG", None)
      with self.assertRaisesRegex(errors.UserError, "TF_CONFIG"):
        distribution.make_strategy("multi_worker", 0)
    with mock.patch.dict(os.environ, {"TF_CONFIG": "{}"}):
      with self.assertRaisesRegex(errors.UserError, "mirrored only"):
        distribution.make_strategy("multi_worker", 2)
    with self.assertRaisesRegex(errors.UserError, "multiple of"):
      distribution.check_global_batch(
          10, types.SimpleNamespace(num_replicas_in_sync=3))
    self.assertEqual(distribution.check_global_batch(
        12, types.SimpleNamespace(num_replicas_in_sync=3)), 4)

  def test_parameter_server_user_errors(self):
    with mock.patch.dict(os.environ, {}, clear=False):
      os.environ.pop("TF_CONFIG", None)
      with self.assertRaisesRegex(errors.UserError, "TF_CONFIG"):
        distribution.make_strategy("parameter_server", 0)
    with self.assertRaisesRegex(errors.UserError, "names no 'chief' and no "
                                "'ps'"):
      distribution.check_parameter_server_cluster(
          {"worker": ["127.0.0.1:1"]})
    with self.assertRaisesRegex(errors.UserError, "exactly one chief"):
      distribution.check_parameter_server_cluster(
          {"chief": ["a:1", "b:1"], "worker": ["c:1"], "ps": ["d:1"]})
    distribution.check_parameter_server_cluster(
        {"chief": ["a:1"], "worker": ["c:1"], "ps": ["d:1"]})
    with self.assertRaisesRegex(
        errors.UserError, "^--strategy=parameter_server is not supported by "
        "the CHARAGRAM trainer"):
      distribution.check_supported("parameter_server", "CHARAGRAM", False)
    distribution.check_supported("parameter_server", "Sent2Vec", True)
    distribution.check_supported("mirrored", "CHARAGRAM", False)


class ClusterTest(tf.test.TestCase):

  def test_chief_and_worker_dirs(self):
    workers = {"worker": ["a:1", "b:2", "c:3"]}
    first = _fake_strategy(workers, "worker", 0)
    second = _fake_strategy(workers, "worker", 2)
    self.assertTrue(distribution.is_chief(first))
    self.assertFalse(distribution.is_chief(second))
    self.assertEqual(distribution.worker_dir("/m", first), "/m")
    self.assertEqual(distribution.worker_dir("/m", second),
                     "/m/workertemp_2")
    self.assertEqual(distribution.num_input_pipelines(first), 3)
    with_chief = {"chief": ["a:1"], "worker": ["b:2", "c:3"]}
    self.assertTrue(distribution.is_chief(
        _fake_strategy(with_chief, "chief", 0)))
    self.assertFalse(distribution.is_chief(
        _fake_strategy(with_chief, "worker", 0)))
    self.assertEqual(distribution.num_input_pipelines(
        _fake_strategy(with_chief, "worker", 1)), 3)
    self.assertTrue(distribution.is_multi_worker(first))

  def test_prepare_worker_dir_writes_flags_where_the_worker_writes(self):
    FLAGS.unparse_flags()
    self.addCleanup(FLAGS.unparse_flags)
    FLAGS(["prog", "--strategy=default"])
    root = tempfile.mkdtemp()
    self.addCleanup(shutil.rmtree, root)
    workers = {"worker": ["a:1", "b:2"]}
    for strategy, expected in (
        (None, root),
        (_fake_strategy(workers, "worker", 0), root),
        (_fake_strategy(workers, "worker", 1),
         os.path.join(root, "workertemp_1"))):
      out_dir = distribution.prepare_worker_dir(root, strategy, FLAGS)
      self.assertEqual(out_dir, expected)
      with open(os.path.join(out_dir, "flags.txt")) as f:
        self.assertIn("--strategy=", f.read())


class ShardingTest(tf.test.TestCase):

  def test_file_shards_are_disjoint_and_complete(self):
    for num_files in range(0, 8):
      files = [f"f{i}" for i in range(num_files)]
      for pipelines in range(1, 6):
        shards = [distribution.shard_files(files, pipelines, i)
                  for i in range(pipelines)]
        if num_files < pipelines:
          self.assertTrue(all(s is None for s in shards))
          continue
        seen = [f for s in shards for f in s]
        self.assertCountEqual(seen, files)
        self.assertTrue(all(shards))  # Every pipeline has a file.

  def test_shard_inputs_falls_back_to_data_sharding(self):
    context = tf.distribute.InputContext(3, 1, 3)
    self.assertEqual(distribution.shard_inputs(["a", "b", "c", "d"], context),
                     (["b"], None))
    self.assertEqual(distribution.shard_inputs(["a", "b"], context),
                     (["a", "b"], (3, 1)))

  def test_data_sharding_never_duplicates_examples(self):
    batch, steps = 12, 5
    ids = np.arange(batch * steps * 3).reshape(steps, batch, 3)
    for pipelines in (1, 2, 3):
      for replicas in (1, 2):
        if batch % (pipelines * replicas):
          continue

        def dataset_fn(context):
          # The same deterministic global batches in every pipeline.
          dataset = tf.data.Dataset.from_tensor_slices(ids)
          dataset = distribution.slice_batches(
              dataset, context.num_input_pipelines, context.input_pipeline_id)
          return distribution.split_batches(
              dataset, distribution.replicas_per_pipeline(context))

        per_pipeline = _pipeline_ids(dataset_fn, pipelines, replicas)
        seen = np.concatenate([np.concatenate(b) for b in per_pipeline])
        self.assertEqual(len(np.unique(seen[:, 0])), len(seen))
        self.assertAllEqual(np.sort(seen[:, 0]), ids[:, :, 0].ravel())
        for batches in per_pipeline:
          self.assertLen(batches, steps * replicas)
          for b in batches:
            self.assertEqual(b.shape, (batch // pipelines // replicas, 3))
        # Step t's per-replica batches together are global batch t.
        for t in range(steps):
          step = np.concatenate([
              b for batches in per_pipeline
              for b in batches[t * replicas:(t + 1) * replicas]])
          self.assertAllEqual(step, ids[t])

  def test_split_batches_keeps_order_and_variable_lengths(self):
    dataset = tf.data.Dataset.range(3).map(
        lambda i: tf.fill([4, tf.cast(i + 1, tf.int32)], i))
    parts = [b.numpy() for b in distribution.split_batches(dataset, 2)]
    self.assertLen(parts, 6)
    self.assertEqual([p.shape for p in parts],
                     [(2, 1), (2, 1), (2, 2), (2, 2), (2, 3), (2, 3)])
    self.assertEqual([int(p[0, 0]) for p in parts], [0, 0, 1, 1, 2, 2])


class MirroredOnCpusTest(tf.test.TestCase):

  def test_logical_cpus_in_a_fresh_process(self):
    # Logical devices can only be configured before TensorFlow starts, so
    # this runs in its own process.
    code = r"""
import tensorflow as tf
from sentzoo.common import errors
from sentzoo.trainers import distribution
strategy = distribution.make_strategy("mirrored", 2)
print("replicas", strategy.num_replicas_in_sync)
def dataset_fn(context):
  d = tf.data.Dataset.range(8).batch(4)
  return distribution.split_batches(
      d, distribution.replicas_per_pipeline(context))
for batch in strategy.distribute_datasets_from_function(dataset_fn):
  print("step", [t.numpy().tolist()
                 for t in strategy.experimental_local_results(batch)])
try:
  distribution.configure_cpu_devices(3)
except errors.UserError as e:
  print("late:", e)
"""
    env = dict(os.environ, PYTHONPATH=REPO_ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT,
                            env=env, capture_output=True, text=True,
                            timeout=300)
    self.assertEqual(result.returncode, 0, result.stderr[-3000:])
    self.assertIn("replicas 2", result.stdout)
    self.assertIn("step [[0, 1], [2, 3]]", result.stdout)
    self.assertIn("step [[4, 5], [6, 7]]", result.stdout)
    self.assertIn("late: cannot split the CPU", result.stdout)


if __name__ == "__main__":
  tf.test.main()
