"""Writes SavedModels as `<export_dir>/<integer version>/`, atomically."""

import json
import os
import re
import shutil

import tensorflow as tf

from sentzoo.export import serving_requests

_VERSION = re.compile(r"^\d+$")
MODEL_CARD = os.path.join("assets.extra", "model_card.json")


def existing_versions(export_dir):
  """Integer version folders under `export_dir`, ascending."""
  if not os.path.isdir(export_dir):
    return []
  return sorted(int(n) for n in os.listdir(export_dir) if _VERSION.match(n))


def write(module, export_dir, version=None):
  """Saves `module` (with `serve` as `serving_default`) as a new version.

  The SavedModel is written to a hidden temporary folder next to the final
  one and renamed into place, so TF Serving or a reader never sees a half
  written version, and a failed export leaves no version folder.

  Args:
    module: a tf.Module with a `serve` tf.function (string inputs, named
      outputs) and a `metadata` dict. The export also gets a TF Serving
      warm-up file with one request for `serve`.
    export_dir: the model's base folder (TF Serving's `model_base_path`).
    version: integer version; default one more than the highest present.

  Returns:
    The path of the new version folder.
  """
  os.makedirs(export_dir, exist_ok=True)
  if version is None:
    version = (existing_versions(export_dir) or [0])[-1] + 1
  final = os.path.join(export_dir, str(int(version)))
  if os.path.exists(final):
    raise FileExistsError(f"export version {final} already exists")
  tmp = os.path.join(export_dir, f".tmp-{int(version)}-{os.getpid()}")
  shutil.rmtree(tmp, ignore_errors=True)
  try:
    tf.saved_model.save(
        module, tmp,
        signatures={"serving_default": module.serve.get_concrete_function()})
    card_path = os.path.join(tmp, MODEL_CARD)
    os.makedirs(os.path.dirname(card_path), exist_ok=True)
    with open(card_path, "w", encoding="utf-8") as f:
      json.dump(module.metadata, f, indent=2, sort_keys=True)
    serving_requests.write_warmup_file(
        tmp, serving_requests.warmup_inputs(module.serve),
        model_name=os.path.basename(os.path.abspath(export_dir)))
    os.rename(tmp, final)
  finally:
    shutil.rmtree(tmp, ignore_errors=True)
  return final
