"""The fields every export's model card (assets.extra/model_card.json) has.

Exporters add their own fields; the averaging encoders
(`export.averaging_encoder`: Sent2Vec, Siamese CBOW, a quantised
PARAGRAM-PHRASE) add "quantization" (`export.table_quantization.
model_card_entry`): the table's storage mode ("none", "float16", "int8"),
its shape and bytes, and "inference_only": true for a quantised table,
which has no trainable variables and cannot be fine-tuned.
"""

import os
import platform

import keras
import tensorflow as tf


def encoder_signature(dim):
  """The card's "signature" of a sentence encoder's serving_default."""
  return {"inputs": {"sentences": "tf.string [batch]"},
          "outputs": {"embeddings": f"float32 [batch, {dim}]"}}


def base_model_card(spec, config, checkpoint, signature):
  """`spec`: the model's `models.model_specs.ModelSpec` (type and paper)."""
  return {
      "model_type": spec.name,
      "paper": spec.paper,
      "training": config.get("training", {}),
      "checkpoint": os.path.basename(checkpoint),
      "signature": {"serving_default": signature},
      "versions": {"tensorflow": tf.__version__, "keras": keras.__version__,
                   "python": platform.python_version()},
  }
