"""/documents: add (201), read and delete (204) by id; list a page, count, read, delete and re-label many at once, by
ids or by a filter."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from app.api.deps import DocumentsDep
from app.api.document_set_schemas import (
    MAX_PAGE,
    CountRequest,
    CountResponse,
    DeleteRequest,
    DeleteResponse,
    DocumentPage,
    DocumentsFound,
    IdsRequest,
    MetadataRequest,
    MetadataResponse,
)
from app.api.filter_schemas import filter_in_url
from app.api.openapi import json_parameter
from app.api.routing import BoundedBodyRoute
from app.api.schemas import DocumentOut, DocumentsRequest, DocumentsResponse
from app.index.metadata_filter import parse
from app.services.documents import Document, DocumentInput

router = APIRouter(route_class=BoundedBodyRoute)


def _out(docs: list[Document]) -> list[DocumentOut]:
    return [DocumentOut(id=d.id, text=d.text, metadata=d.metadata) for d in docs]


@router.post("/documents", response_model=DocumentsResponse, status_code=201)
def add_documents(body: DocumentsRequest, documents: DocumentsDep) -> DocumentsResponse:
    docs = [DocumentInput(text=d.text, id=d.id, metadata=d.metadata) for d in body.documents]
    ids = documents.add(docs)
    return DocumentsResponse(ids=ids, count=len(ids))


@router.get("/documents", response_model=DocumentPage)
def list_documents(
    documents: DocumentsDep,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE, description="Documents in this page.")] = 100,
    cursor: Annotated[str | None, Query(description="The previous page's next_cursor.")] = None,
    filter: Annotated[
        str | None,
        Query(
            description="Only documents this filter selects, as JSON (see /search).",
            json_schema_extra=json_parameter({"type": "object"}),
        ),
    ] = None,
) -> DocumentPage:
    """A page of the collection's documents in id order (as the served index holds them)."""
    page, next_cursor = documents.page(limit, cursor, filter_in_url(filter) if filter is not None else None)
    return DocumentPage(documents=_out(page), next_cursor=next_cursor)


@router.post("/documents/count", response_model=CountResponse)
def count_documents(body: CountRequest, documents: DocumentsDep) -> CountResponse:
    return CountResponse(count=documents.count(parse(body.filter) if body.filter else None))


@router.post("/documents/get", response_model=DocumentsFound)
def get_documents(body: IdsRequest, documents: DocumentsDep) -> DocumentsFound:
    found, missing = documents.get_many(body.ids)
    return DocumentsFound(documents=_out(found), missing=missing)


@router.post("/documents/delete", response_model=DeleteResponse)
def delete_documents(body: DeleteRequest, documents: DocumentsDep) -> DeleteResponse:
    where = parse(body.filter) if body.filter else None
    return DeleteResponse(deleted=documents.delete_many(body.ids, where))


@router.post("/documents/metadata", response_model=MetadataResponse)
def update_metadata(body: MetadataRequest, documents: DocumentsDep) -> MetadataResponse:
    """Each document's metadata replaced (or merged into), its text and vectors kept: nothing is encoded again."""
    return MetadataResponse(ids=documents.update_metadata(body.updates(), merge=body.merge))


@router.get("/documents/{doc_id:path}", response_model=DocumentOut)
def get_document(doc_id: str, documents: DocumentsDep) -> DocumentOut:
    doc = documents.get(doc_id)
    return DocumentOut(id=doc.id, text=doc.text, metadata=doc.metadata)


@router.delete("/documents/{doc_id:path}", status_code=204)
def delete_document(doc_id: str, documents: DocumentsDep) -> None:
    documents.delete(doc_id)
