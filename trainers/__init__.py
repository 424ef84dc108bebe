"""Trainers (`python -m trainers.<model>`) and their train steps."""

# First: sentzoo/__init__.py quiets TensorFlow's console for sentzoo's own
# programs before TensorFlow is imported (`python -m trainers.x` imports
# this folder as a package of its own, before the module's imports).
import sentzoo  # pylint: disable=unused-import
