"""Corrected sentence embeddings: a backbone, an offline-fitted correction, similarity and search."""

__version__ = "0.1.0"
