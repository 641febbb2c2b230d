"""A client for the corrected-embeddings service: `Client` (sync), `AsyncClient`, and in
`corrected_embeddings_client.langchain` the LangChain Embeddings and VectorStore."""

from corrected_embeddings_client.aio import AsyncClient
from corrected_embeddings_client.client import Client
from corrected_embeddings_client.errors import (
    Conflict,
    Forbidden,
    InvalidRequest,
    NotFound,
    ServiceError,
    Unauthorized,
    Unavailable,
)
from corrected_embeddings_client.models import Document, SearchHit, SearchResult, Tokens

__all__ = [
    "AsyncClient",
    "Client",
    "Conflict",
    "Document",
    "Forbidden",
    "InvalidRequest",
    "NotFound",
    "SearchHit",
    "SearchResult",
    "ServiceError",
    "Tokens",
    "Unauthorized",
    "Unavailable",
]
