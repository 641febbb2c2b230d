"""FAISS index over corrected vectors, keyed by document id."""

from app.index.faiss_index import VectorIndex

__all__ = ["VectorIndex"]
