"""Distribution strategies for the trainers: `--strategy`, input sharding.

  --strategy=default       one device (TensorFlow's default strategy).
  --strategy=mirrored      MirroredStrategy over the local GPUs, or over
                           --num_cpu_devices logical CPUs (for tests).
  --strategy=multi_worker  MultiWorkerMirroredStrategy from TF_CONFIG
                           (docs/distributed.md).
  --strategy=parameter_server
                           ParameterServerStrategy from TF_CONFIG: tables
                           split row-wise over the "ps" tasks, steps
                           scheduled on the "worker"s by the "chief".
                           Sent2Vec only (`check_supported`).

`--batch_size` is the GLOBAL batch: each replica computes its loss as its
sum / global batch and the gradients are summed, so a step equals one
device's step on the whole batch and the learning rate does not depend on
the replicas.

Input sharding (`shard_inputs`): with at least as many files as input
pipelines (one per worker), pipeline i reads files i, i + n, ...; with
fewer, every pipeline builds the same deterministic global batches and
keeps its slice (`slice_batches`). `split_batches` then cuts a pipeline's
batch into one consecutive piece per local replica, so no example is seen
twice and one worker's replicas together see one device's batches.
"""

import os
import signal
import sys

from absl import flags
import tensorflow as tf

from sentzoo.common import errors
from sentzoo.common import model_dir as model_dir_lib

DEFAULT = "default"
MIRRORED = "mirrored"
MULTI_WORKER = "multi_worker"
PARAMETER_SERVER = "parameter_server"
STRATEGIES = (DEFAULT, MIRRORED, MULTI_WORKER, PARAMETER_SERVER)
STRATEGY_HELP = (
    "How to distribute training: default (one device), mirrored (all local "
    "GPUs, or --num_cpu_devices logical CPUs), multi_worker "
    "(MultiWorkerMirroredStrategy from TF_CONFIG), parameter_server "
    "(ParameterServerStrategy from TF_CONFIG: tables split over the \"ps\" "
    "tasks, steps scheduled on the \"worker\" tasks by the \"chief\"; "
    "Sent2Vec only). --batch_size is the global batch.")
NUM_CPU_DEVICES_HELP = (
    "With --strategy=mirrored: split the CPU into this many logical devices "
    "and mirror over them (for tests without GPUs); 0: use the GPUs.")


def define_flags(flag_values):
  """--strategy and --num_cpu_devices, for commands without a settings
  dataclass (lab/benchmarks/table_memory.py)."""
  flags.DEFINE_enum("strategy", DEFAULT, list(STRATEGIES), STRATEGY_HELP,
                    flag_values=flag_values)
  flags.DEFINE_integer("num_cpu_devices", 0, NUM_CPU_DEVICES_HELP,
                       lower_bound=0, flag_values=flag_values)


def cluster_task(strategy):
  """(task_type, task_id, cluster spec dict); (None, None, {}) on one
  machine."""
  resolver = getattr(strategy, "cluster_resolver", None)
  if resolver is None:
    return None, None, {}
  spec = resolver.cluster_spec().as_dict()
  return resolver.task_type, resolver.task_id, spec


def is_multi_worker(strategy) -> bool:
  """True when `strategy` spans several worker processes (TF_CONFIG)."""
  return bool(cluster_task(strategy)[2])


def is_chief(strategy) -> bool:
  """The worker that writes the model directory: task "chief", else
  "worker" 0 (TensorFlow's convention); true on one worker."""
  task_type, task_id, spec = cluster_task(strategy)
  if not spec or task_type is None:
    return True
  if task_type == "chief":
    return True
  return task_type == "worker" and task_id == 0 and "chief" not in spec


def worker_dir(model_dir: str, strategy=None) -> str:
  """`model_dir` for the chief, else the scratch `workertemp_<task id>` in
  it (every worker must save checkpoints; only the chief's count)."""
  if is_chief(strategy):
    return model_dir
  return os.path.join(model_dir, f"workertemp_{cluster_task(strategy)[1]}")


def prepare_worker_dir(model_dir, strategy, flag_values):
  """Creates `worker_dir` with the run's flags as flags.txt; returns it."""
  out_dir = worker_dir(model_dir, strategy)
  os.makedirs(out_dir, exist_ok=True)
  model_dir_lib.write_text_atomically(
      os.path.join(out_dir, model_dir_lib.FLAGS_FILE),
      flag_values.flags_into_string())
  return out_dir


def configure_cpu_devices(num_devices):
  """Splits the first CPU into `num_devices` logical devices (only possible
  before TensorFlow's runtime starts); returns their names."""
  cpu = tf.config.list_physical_devices("CPU")[0]
  try:
    tf.config.set_logical_device_configuration(
        cpu, [tf.config.LogicalDeviceConfiguration()] * num_devices)
  except RuntimeError as e:
    current = tf.config.get_logical_device_configuration(cpu) or [None]
    if len(current) != num_devices:
      raise errors.UserError(
          f"cannot split the CPU into {num_devices} devices once TensorFlow "
          f"has started ({e})") from e
  return [f"/cpu:{i}" for i in range(num_devices)]


def make_strategy(name, num_cpu_devices):
  """The strategy --strategy names; call it before any TensorFlow op runs
  (logical CPU devices can only be configured then). A parameter_server
  "worker" or "ps" task serves here and never returns."""
  if name == DEFAULT:
    return tf.distribute.get_strategy()
  if name == MIRRORED:
    if num_cpu_devices:
      return tf.distribute.MirroredStrategy(
          configure_cpu_devices(num_cpu_devices))
    return tf.distribute.MirroredStrategy()
  if name in (MULTI_WORKER, PARAMETER_SERVER):
    if not os.environ.get("TF_CONFIG"):
      raise errors.UserError(
          f"--strategy={name} needs the TF_CONFIG environment variable "
          "(see docs/distributed.md)")
    if num_cpu_devices:
      raise errors.UserError(
          "--num_cpu_devices applies to --strategy=mirrored only")
  if name == MULTI_WORKER:
    return tf.distribute.MultiWorkerMirroredStrategy()
  if name == PARAMETER_SERVER:
    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    check_parameter_server_cluster(resolver.cluster_spec().as_dict())
    if resolver.task_type in ("worker", "ps"):
      serve_cluster_task(resolver)
    if resolver.task_type != "chief":
      raise errors.UserError(
          "--strategy=parameter_server: TF_CONFIG's task type must be "
          f"chief, worker or ps, not {resolver.task_type!r}")
    return parameter_server_strategy(resolver)
  raise errors.UserError(f"unknown --strategy={name!r}")


def check_parameter_server_cluster(cluster):
  """Raises `errors.UserError` unless `cluster` (a cluster spec as a dict of
  job name -> addresses) has one chief, workers and parameter servers."""
  missing = [job for job in ("chief", "worker", "ps") if not cluster.get(job)]
  if missing:
    raise errors.UserError(
        "--strategy=parameter_server needs a cluster of one \"chief\", "
        "\"worker\" tasks and \"ps\" (parameter server) tasks; TF_CONFIG "
        f"names no {' and no '.join(repr(job) for job in missing)}")
  if len(cluster["chief"]) != 1:
    raise errors.UserError(
        "--strategy=parameter_server: TF_CONFIG must name exactly one chief")


def parameter_server_strategy(cluster_resolver):
  """A ParameterServerStrategy that splits every table into one shard of
  contiguous rows per "ps" task (scalars stay whole); for the chief."""
  num_ps = len(cluster_resolver.cluster_spec().as_dict()["ps"])
  return tf.distribute.ParameterServerStrategy(
      cluster_resolver,
      variable_partitioner=(
          tf.distribute.experimental.partitioners.FixedShardsPartitioner(
              num_ps)))


def serve_cluster_task(cluster_resolver):
  """Runs this "worker" or "ps" task's TensorFlow server until killed."""
  task_type, task_id = cluster_resolver.task_type, cluster_resolver.task_id
  server = tf.distribute.Server(
      cluster_resolver.cluster_spec(), job_name=task_type,
      task_index=task_id, protocol=cluster_resolver.rpc_layer or "grpc",
      start=True)
  print(f"parameter_server: serving as {task_type} {task_id} at "
        f"{server.target}; stop it when the chief has finished", flush=True)
  # It serves until it is killed: SIGINT and SIGTERM end it at once (a
  # KeyboardInterrupt would wait for `join`, which never returns).
  for signum in (signal.SIGINT, signal.SIGTERM):
    signal.signal(signum, signal.SIG_DFL)
  server.join()


def is_parameter_server(strategy):
  """True for a `tf.distribute.ParameterServerStrategy` (the chief's)."""
  return isinstance(strategy, tf.distribute.ParameterServerStrategy)


def check_supported(name, trainer_name, supports_parameter_server):
  """Refuses --strategy=parameter_server for a trainer whose tables cannot
  be sharded (all but Sent2Vec)."""
  if name == PARAMETER_SERVER and not supports_parameter_server:
    raise errors.UserError(
        f"--strategy=parameter_server is not supported by the {trainer_name} "
        "trainer (only Sent2Vec shards its tables); use default, mirrored or "
        "multi_worker")


def exit_process(code):
  """Ends the process with `code` at once, output flushed: the
  parameter-server chief's ending. In TF 2.21, once a worker has died, the
  coordinator's recovery thread holds a lock its destructor takes at
  interpreter exit, so the chief would hang after training."""
  sys.stdout.flush()
  sys.stderr.flush()
  os._exit(code)  # pylint: disable=protected-access


def is_one_device(strategy):
  """True for TensorFlow's default strategy (one device: a step may update
  variables inside a nested or compiled function)."""
  with strategy.scope():
    return not tf.distribute.has_strategy()


def num_input_pipelines(strategy):
  """Input pipelines: one per worker process (one for parameter servers,
  where the chief reads the input)."""
  if is_parameter_server(strategy):
    return 1
  spec = cluster_task(strategy)[2]
  return max(1, len(spec.get("chief", [])) + len(spec.get("worker", [])))


def check_global_batch(batch_size, strategy):
  """Raises `errors.UserError` unless the replicas split the batch evenly."""
  replicas = strategy.num_replicas_in_sync
  if batch_size % replicas:
    raise errors.UserError(
        f"--batch_size={batch_size} (the global batch) must be a multiple of "
        f"the {replicas} replicas")
  return batch_size // replicas


def shard_files(files, num_pipelines, pipeline_id):
  """Every num_pipelines-th file from `pipeline_id`; None when there are
  fewer files than pipelines."""
  if len(files) < num_pipelines:
    return None
  return list(files)[pipeline_id::num_pipelines]


def shard_inputs(files, input_context):
  """(files, data_shard) of one pipeline: its own files and None, or all
  files and (num_pipelines, pipeline_id) for `slice_batches`."""
  n = input_context.num_input_pipelines
  i = input_context.input_pipeline_id
  own = shard_files(files, n, i)
  if own is not None:
    return own, None
  return list(files), (n, i)


def slice_batches(dataset, num_shards, index):
  """Keeps slice `index` of `num_shards` equal slices (axis 0) of every
  batch."""
  def take(*batch):
    parts = []
    for t in batch:
      size = tf.shape(t)[0] // num_shards
      parts.append(t[index * size:(index + 1) * size])
    return parts[0] if len(parts) == 1 else tuple(parts)

  return dataset.map(take)


def split_batches(dataset, pieces):
  """Cuts every batch (axis 0) into `pieces` consecutive equal batches:
  the pipeline's consecutive elements go to its local replicas in turn,
  so one step's replicas together get the original batch."""
  if pieces == 1:
    return dataset

  def split(*batch):
    parts = []
    for t in batch:
      shape = tf.shape(t)
      parts.append(tf.reshape(
          t, tf.concat([[pieces, shape[0] // pieces], shape[1:]], 0)))
    return tf.data.Dataset.from_tensor_slices(
        parts[0] if len(parts) == 1 else tuple(parts))

  return dataset.flat_map(split)


def replicas_per_pipeline(input_context):
  return (input_context.num_replicas_in_sync
          // input_context.num_input_pipelines)
