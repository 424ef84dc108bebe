"""Reusable Keras 3 layers of the sentence-embedding model zoo."""

from layers.cosine_similarity import CosineSimilarity
from layers.masked_average import MaskedAverage
from layers.shared_embedding import SharedEmbedding
from layers.softmax_head import SoftmaxHead

__all__ = [
    "CosineSimilarity",
    "MaskedAverage",
    "SharedEmbedding",
    "SoftmaxHead",
]
