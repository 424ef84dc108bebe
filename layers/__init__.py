"""Reusable Keras 3 layers of the sentence-embedding model zoo."""

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
