"""One router per resource; `create_app` includes them all."""

from app.api.routes import backups, collections, documents, embeddings, judgments, openai, ops, search

ROUTERS = (
    embeddings.router,
    documents.router,
    search.router,
    ops.router,
    openai.router,
    collections.router,
    judgments.router,
    backups.router,
)
COLLECTION_ROUTERS = (embeddings.router, documents.router, search.router)  # also served under /collections/{name}
