"""Distribution strategies for the trainers: `--strategy`, input sharding.

Flags (defined in a command's flags by `define_flags`):
  --strategy=default       one device (the first GPU if any, else the CPU).
  --strategy=mirrored      `tf.distribute.MirroredStrategy` over all local
                           GPUs; with --num_cpu_devices=N over N logical CPU
                           devices instead (for tests on machines without
                           GPUs: it shows that the code distributes, not a
                           speed-up).
  --strategy=multi_worker  `tf.distribute.MultiWorkerMirroredStrategy`,
                           configured by the TF_CONFIG environment variable
                           (one process per machine; see docs/distributed.md).
  --strategy=parameter_server
                           `tf.distribute.ParameterServerStrategy` from
                           TF_CONFIG (a "chief", "worker"s and "ps"es): every
                           table of two or more rows is split row-wise into
                           one shard per parameter server
                           (`FixedShardsPartitioner`), the chief schedules
                           steps on the workers with a `tf.distribute.
                           coordinator.ClusterCoordinator`, and a worker
                           reads and updates only the rows its step touches.
                           The worker and ps processes only serve
                           (`serve_cluster_task`). Sent2Vec only; the other
                           trainers refuse it (`check_supported`).

Global batch semantics: the trainer's `--batch_size` is the GLOBAL batch, the
examples that make one optimizer step. Each of the
`strategy.num_replicas_in_sync` replicas gets `batch_size / replicas` of them
(it must divide), computes its loss as sum over its examples / global batch
(`tf.nn.compute_average_loss(per_example, global_batch_size=batch_size)`),
and the gradients are summed over replicas. The step is therefore the same
as one device's step on the whole global batch, and the learning rate does
not change with the number of replicas.

Input sharding (`shard_inputs`): `distribute_datasets_from_function` calls
the trainer's dataset function once per input pipeline (one per worker). With
at least as many files as pipelines, pipeline i reads files i, i + n, ...
(no file is read twice). With fewer files, every pipeline builds the same
deterministic stream of global batches and keeps only its slice of every
batch (`slice_batches`). Either way no two pipelines ever see the same
example, and within a pipeline `split_batches` cuts each pipeline batch into
one consecutive piece per local replica (so on one worker the replicas
together see exactly the batches one device would).
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
  """Defines --strategy and --num_cpu_devices in `flag_values`."""
  flags.DEFINE_enum("strategy", DEFAULT, list(STRATEGIES), STRATEGY_HELP,
                    flag_values=flag_values)
  flags.DEFINE_integer("num_cpu_devices", 0, NUM_CPU_DEVICES_HELP,
                       lower_bound=0, flag_values=flag_values)



def cluster_task(strategy):
  """(task_type, task_id, cluster spec dict) of a strategy's
  `cluster_resolver`; (None, None, {}) where it has none (one machine)."""
  resolver = getattr(strategy, "cluster_resolver", None)
  if resolver is None:
    return None, None, {}
  spec = resolver.cluster_spec().as_dict()
  return resolver.task_type, resolver.task_id, spec


def is_multi_worker(strategy) -> bool:
  """True when `strategy` spans several worker processes (TF_CONFIG)."""
  return bool(cluster_task(strategy)[2])


def is_chief(strategy) -> bool:
  """The worker that writes the model directory: always true on one worker.

  With TF_CONFIG the chief is task "chief" if the cluster has one, else
  "worker" 0 (TensorFlow's convention).
  """
  task_type, task_id, spec = cluster_task(strategy)
  if not spec or task_type is None:
    return True
  if task_type == "chief":
    return True
  return task_type == "worker" and task_id == 0 and "chief" not in spec


def worker_dir(model_dir: str, strategy=None) -> str:
  """Where this worker writes: `model_dir` for the chief, else a scratch
  subfolder `model_dir/workertemp_<task id>` (all workers must save
  checkpoints, only the chief's count)."""
  if is_chief(strategy):
    return model_dir
  return os.path.join(model_dir, f"workertemp_{cluster_task(strategy)[1]}")


def prepare_worker_dir(model_dir, strategy, flag_values):
  """Creates this worker's output folder and writes `flags.txt` into it.

  `flags.txt` holds `flag_values` (the run's parsed flags) as a flagfile.

  Checkpoints are read from `model_dir`; everything else a worker writes
  goes to `worker_dir(model_dir, strategy)` (the model dir itself for the
  chief), so workers never overwrite the chief's files. Returns that folder.
  """
  out_dir = worker_dir(model_dir, strategy)
  os.makedirs(out_dir, exist_ok=True)
  model_dir_lib.write_text_atomically(
      os.path.join(out_dir, model_dir_lib.FLAGS_FILE),
      flag_values.flags_into_string())
  return out_dir


def configure_cpu_devices(num_devices):
  """Splits the first CPU into `num_devices` logical devices.

  Must run before TensorFlow initialises its runtime (before the first op,
  variable or strategy is created); raises `errors.UserError` otherwise.
  Returns the logical device names.
  """
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
  """The strategy `--strategy` names (the default strategy: one device).

  Call it first thing in `main`, before any TensorFlow op runs (logical CPU
  devices can only be configured then).

  With PARAMETER_SERVER, only the "chief" task gets a strategy: a
  "worker" or "ps" task serves the cluster until it is killed
  (`serve_cluster_task`, which does not return).

  Args:
    name: one of STRATEGIES (--strategy).
    num_cpu_devices: logical CPUs to mirror over (--num_cpu_devices).

  Returns:
    a `tf.distribute.Strategy`: for DEFAULT, TensorFlow's default strategy
    (one device), so that every trainer runs one code path.
  """
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
  """A ParameterServerStrategy that shards every table over the "ps" tasks.

  `FixedShardsPartitioner(number of ps)`: a variable of n >= 2 rows becomes
  a `ShardedVariable` of one shard per parameter server, contiguous row
  ranges (the first n mod ps shards get one row more: 1,000 rows over 2 ps
  are [500, d] and [500, d]); scalars stay whole on one ps. This process
  must be the cluster's "chief" (the coordinator); creating the strategy
  connects it to every task of the cluster.
  """
  num_ps = len(cluster_resolver.cluster_spec().as_dict()["ps"])
  return tf.distribute.ParameterServerStrategy(
      cluster_resolver,
      variable_partitioner=(
          tf.distribute.experimental.partitioners.FixedShardsPartitioner(
              num_ps)))


def serve_cluster_task(cluster_resolver):
  """Runs this "worker" or "ps" task's TensorFlow server; never returns.

  A parameter server holds its shard of every table; a worker runs the
  steps the chief schedules on it. Neither reads data or flags besides
  TF_CONFIG: both only serve until they are killed.
  """
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
  """Raises `errors.UserError` when a trainer cannot run --strategy=name.

  Only trainers whose tables can be sharded (Sent2Vec: lookups and sparse
  updates through `ShardedVariable`) take PARAMETER_SERVER.
  """
  if name == PARAMETER_SERVER and not supports_parameter_server:
    raise errors.UserError(
        f"--strategy=parameter_server is not supported by the {trainer_name} "
        "trainer (only Sent2Vec shards its tables); use default, mirrored or "
        "multi_worker")


def exit_process(code):
  """Flushes stdout/stderr and ends the process with `code` at once.

  The parameter-server chief's command line ends this way: in TensorFlow
  2.21, once a worker has died, the `ClusterCoordinator`'s recovery thread
  blocks in `update_server_def` while holding a lock that the
  coordinator's destructor takes at interpreter exit, so the chief would
  hang after training instead of exiting (measured: with a worker killed
  mid-run, a chief finished its 400 steps, then hung in that destructor,
  and was still hanging a minute after the worker had been restarted).
  """
  sys.stdout.flush()
  sys.stderr.flush()
  os._exit(code)  # pylint: disable=protected-access


def parameter_server_memory(source_rows, target_rows, dim, num_ps,
                            block_rows=0, bytes_per_number=4):
  """Bytes per process of a Sent2Vec run with tables over `num_ps` servers.

  Args:
    source_rows, target_rows: rows of the source table (words + n-gram
      buckets + 1 padding row) and of the target table (words + 1).
    dim: d, floats per row.
    num_ps: parameter servers.
    block_rows: at most how many table rows one step reads (distinct source
      and target rows, plus each target's positive and negative rows); a
      worker holds them, its updates and the step's [rows, d] temporaries.
    bytes_per_number: 4 (float32; plain SGD keeps no optimizer slots).

  Returns:
    dict of bytes: "source", "target" (whole tables), "per_ps" (the largest
    shard of each table, summed: FixedShardsPartitioner gives the first
    rows mod num_ps shards one row more), "worker" (block_rows rows),
    "mirrored_replica" (both whole tables: what every replica of mirrored
    or multi_worker holds).
  """
  row = dim * bytes_per_number
  largest_shard = lambda rows: -(-rows // num_ps)  # Ceiling division.
  return {"source": source_rows * row, "target": target_rows * row,
          "per_ps": (largest_shard(source_rows)
                     + largest_shard(target_rows)) * row,
          "worker": block_rows * row,
          "mirrored_replica": (source_rows + target_rows) * row}


def is_one_device(strategy):
  """True for TensorFlow's default strategy (one device, no replicas to
  synchronise: a step may update variables inside a nested or compiled
  function)."""
  with strategy.scope():
    return not tf.distribute.has_strategy()


def num_input_pipelines(strategy):
  """Input pipelines `distribute_datasets_from_function` makes: one per
  worker process."""
  if is_parameter_server(strategy):
    # Parameter servers: the chief reads the input, steps carry their block.
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
  """Files of pipeline `pipeline_id`: every num_pipelines-th, or None when
  there are fewer files than pipelines (then shard the data instead)."""
  if len(files) < num_pipelines:
    return None
  return list(files)[pipeline_id::num_pipelines]


def shard_inputs(files, input_context):
  """How one input pipeline reads: (files, data_shard).

  data_shard is None when the pipeline reads only its own files, else
  (num_pipelines, pipeline_id) for `slice_batches` over all files.
  """
  n = input_context.num_input_pipelines
  i = input_context.input_pipeline_id
  own = shard_files(files, n, i)
  if own is not None:
    return own, None
  return list(files), (n, i)


def slice_batches(dataset, num_shards, index):
  """Keeps slice `index` of `num_shards` equal slices (axis 0) of every batch.

  The batch size must be a multiple of `num_shards`. Used when every
  pipeline builds the same deterministic batches (data sharding).
  """
  def take(*batch):
    parts = []
    for t in batch:
      size = tf.shape(t)[0] // num_shards
      parts.append(t[index * size:(index + 1) * size])
    return parts[0] if len(parts) == 1 else tuple(parts)

  return dataset.map(take)


def split_batches(dataset, pieces):
  """Cuts every batch (axis 0) into `pieces` consecutive equal batches.

  `distribute_datasets_from_function` hands a pipeline's consecutive
  elements to its local replicas in turn, so the replicas of one step
  together get exactly the original batch. The batch size must be a
  multiple of `pieces`.
  """
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


# The paper's Wikipedia and Twitter Sent2Vec models (Pagliardini et al.
# 2018, Table 5: dimension, negatives; Appendix C: words and sentences).
# The paper states no vocabulary or bucket counts; the rows come from the
# released model files of epfml/sent2vec (its README: wiki unigrams 5 GB at
# 600 dims, wiki bigrams 16 GB, twitter unigrams 13 GB, twitter bigrams
# 23 GB, all 700 dims): a file holds (source rows + target rows) x d
# float32. A unigram file is 2 V rows (no buckets), so V = bytes / (8 d);
# a bigram file of the same corpus then has bytes / (4 d) - 2 V buckets.
# Rounded file sizes (GB taken as 1e9 bytes): estimates to 2-3 digits.
PAPER_SENT2VEC_MODELS = (
    # (name, d, file bytes, unigram file bytes of the corpus at its d,
    #  unigram d, words per sentence)
    ("Wikipedia uni", 600, 5e9, 5e9, 600, 1.7e9 / 69e6),
    ("Wikipedia uni+bi", 700, 16e9, 5e9, 600, 1.7e9 / 69e6),
    ("Twitter uni", 700, 13e9, 13e9, 700, 19.7e9 / 1.2e9),
    ("Twitter uni+bi", 700, 23e9, 13e9, 700, 19.7e9 / 1.2e9),
)


def paper_memory_table(num_ps=(2, 4, 8), block_lines=64, num_negatives=10):
  """The docs' table of bytes per process for PAPER_SENT2VEC_MODELS.

  A worker's rows per step are bounded by a block of `block_lines`
  sentences of the corpus's mean length L: source entries (words and, for
  uni+bi, L - 1 bigrams per sentence), plus each target's positive and
  `num_negatives` negative rows (every word a target, independent
  negatives: the largest case). Returns markdown lines.
  """
  mb = lambda n: f"{n / 1e6:,.0f} MB"
  lines = ["| model | d | words V | buckets B | source + target tables | "
           "mirrored: per replica | "
           + " | ".join(f"per ps, {n} ps" for n in num_ps)
           + f" | worker, {block_lines}-line block |",
           "|---" * (6 + len(num_ps) + 1) + "|"]
  for name, dim, file_bytes, unigram_bytes, unigram_dim, length in (
      PAPER_SENT2VEC_MODELS):
    words = round(unigram_bytes / (8 * unigram_dim))
    buckets = 0
    if file_bytes != unigram_bytes:
      buckets = round(file_bytes / (4 * dim)) - 2 * words
    entries = length if buckets == 0 else 2 * length - 1
    block_rows = round(block_lines * (entries + length * (1 + num_negatives)))
    sizes = [parameter_server_memory(words + buckets + 1, words + 1, dim, n,
                                     block_rows) for n in num_ps]
    lines.append(
        f"| {name} | {dim} | {words / 1e6:.2f}M | {buckets / 1e6:.2f}M | "
        f"{mb(sizes[0]['source'] + sizes[0]['target'])} | "
        f"{mb(sizes[0]['mirrored_replica'])} | "
        + " | ".join(mb(size["per_ps"]) for size in sizes)
        + f" | {mb(sizes[0]['worker'])} ({block_rows:,} rows) |")
  return lines
