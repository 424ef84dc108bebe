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

from absl import flags
import tensorflow as tf

from sentzoo.common import errors
from sentzoo.common import model_dir as model_dir_lib
from sentzoo.trainers import training_loop

DEFAULT = "default"
MIRRORED = "mirrored"
MULTI_WORKER = "multi_worker"


def define_flags(flag_values):
  """Defines --strategy and --num_cpu_devices in `flag_values`."""
  flags.DEFINE_enum("strategy", DEFAULT, [DEFAULT, MIRRORED, MULTI_WORKER],
                    "How to distribute training: default (one device), "
                    "mirrored (all local GPUs, or --num_cpu_devices logical "
                    "CPUs), multi_worker (MultiWorkerMirroredStrategy from "
                    "TF_CONFIG). --batch_size is the global batch.",
                    flag_values=flag_values)
  flags.DEFINE_integer("num_cpu_devices", 0, "With --strategy=mirrored: "
                       "split the CPU into this many logical devices and "
                       "mirror over them (for tests without GPUs); 0: use "
                       "the GPUs.", lower_bound=0, flag_values=flag_values)



def prepare_worker_dir(model_dir, strategy, flag_values):
  """Creates this worker's output folder and writes `flags.txt` into it.

  `flags.txt` holds `flag_values` (the run's parsed flags) as a flagfile.

  Checkpoints are read from `model_dir`; everything else a worker writes
  goes to `worker_dir(model_dir, strategy)` (the model dir itself for the
  chief), so workers never overwrite the chief's files. Returns that folder.
  """
  out_dir = training_loop.worker_dir(model_dir, strategy)
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
  """The strategy `--strategy` names, or None for the default (one device).

  Call it first thing in `main`, before any TensorFlow op runs (logical CPU
  devices can only be configured then).

  Args:
    name: DEFAULT, MIRRORED or MULTI_WORKER (--strategy).
    num_cpu_devices: logical CPUs to mirror over (--num_cpu_devices).

  Returns:
    a `tf.distribute.Strategy`, or None for one device (the trainers then run
    the single-device path of `training_loop.run`).
  """
  if num_cpu_devices < 0:
    raise errors.UserError("--num_cpu_devices must be >= 0")
  if name == DEFAULT:
    return None
  if name == MIRRORED:
    if num_cpu_devices:
      return tf.distribute.MirroredStrategy(
          configure_cpu_devices(num_cpu_devices))
    return tf.distribute.MirroredStrategy()
  if name == MULTI_WORKER:
    if not os.environ.get("TF_CONFIG"):
      raise errors.UserError(
          "--strategy=multi_worker needs the TF_CONFIG environment variable "
          "(see docs/distributed.md)")
    if num_cpu_devices:
      raise errors.UserError(
          "--num_cpu_devices applies to --strategy=mirrored only")
    return tf.distribute.MultiWorkerMirroredStrategy()
  raise errors.UserError(f"unknown --strategy={name!r}")


def scope(strategy):
  """`strategy.scope()`, or a no-op context for the default (None)."""
  if strategy is None:
    return tf.distribute.get_strategy().scope()
  return strategy.scope()


def num_replicas(strategy):
  return 1 if strategy is None else strategy.num_replicas_in_sync


def num_input_pipelines(strategy):
  """Input pipelines `distribute_datasets_from_function` makes: one per
  worker process."""
  if strategy is None:
    return 1
  resolver = getattr(strategy, "cluster_resolver", None)
  if resolver is None:
    return 1
  spec = resolver.cluster_spec().as_dict()
  return max(1, len(spec.get("chief", [])) + len(spec.get("worker", [])))


def check_global_batch(batch_size, strategy):
  """Raises `errors.UserError` unless the replicas split the batch evenly."""
  replicas = num_replicas(strategy)
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
