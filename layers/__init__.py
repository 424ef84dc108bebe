"""Reusable Keras 3 layers of the sentence-embedding model zoo."""

# One module per file, and the folder's own path (sentzoo/__init__.py).
import sentzoo  # pylint: disable=g-bad-import-order
__path__ = sentzoo._subpackage_path(__name__, __path__)  # pylint: disable=protected-access

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
