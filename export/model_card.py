"""The fields every export's model card (assets.extra/model_card.json) has."""

import os
import platform

import keras
import tensorflow as tf


def base_model_card(spec, config, checkpoint, signature):
  """Model card fields every export has; exporters add their own.

  `spec`: the model's `models.model_specs.ModelSpec` (its type and paper).
  """
  return {
      "model_type": spec.name,
      "paper": spec.paper,
      "training": config.get("training", {}),
      "checkpoint": os.path.basename(checkpoint),
      "signature": {"serving_default": signature},
      "versions": {"tensorflow": tf.__version__, "keras": keras.__version__,
                   "python": platform.python_version()},
  }
