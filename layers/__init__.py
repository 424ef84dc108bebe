"""Reusable Keras 3 layers of the sentence-embedding model zoo."""

# First: sentzoo/__init__.py quiets TensorFlow's console for sentzoo's own
# programs before TensorFlow is imported (`python -m trainers.x` imports
# this folder as a package of its own, before the module's imports).
import sentzoo  # pylint: disable=unused-import

from sentzoo.layers.cosine_similarity import CosineSimilarity
from sentzoo.layers.masked_average import MaskedAverage
from sentzoo.layers.shared_embedding import SharedEmbedding
from sentzoo.layers.softmax_head import SoftmaxHead

__all__ = [
    "CosineSimilarity",
    "MaskedAverage",
    "SharedEmbedding",
    "SoftmaxHead",
]
