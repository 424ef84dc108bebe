"""The fields every export's model card (assets.extra/model_card.json) has."""

import os
import platform

import keras
import tensorflow as tf


def base_model_card(model_type, paper, config, checkpoint, signature):
  """Model card fields every export has; exporters add their own."""
  return {
      "model_type": model_type,
      "paper": paper,
      "training": config.get("training", {}),
      "checkpoint": os.path.basename(checkpoint),
      "signature": {"serving_default": signature},
      "versions": {"tensorflow": tf.__version__, "keras": keras.__version__,
                   "python": platform.python_version()},
  }
