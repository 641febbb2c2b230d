"""/documents: add (201), read and delete (204) by id."""

from __future__ import annotations

from fastapi import APIRouter

from app.api.deps import DocumentsDep
from app.api.routing import BoundedBodyRoute
from app.api.schemas import DocumentOut, DocumentsRequest, DocumentsResponse
from app.services.documents import DocumentInput

router = APIRouter(route_class=BoundedBodyRoute)


@router.post("/documents", response_model=DocumentsResponse, status_code=201)
def add_documents(body: DocumentsRequest, documents: DocumentsDep) -> DocumentsResponse:
    docs = [DocumentInput(text=d.text, id=d.id, metadata=d.metadata) for d in body.documents]
    ids = documents.add(docs)
    return DocumentsResponse(ids=ids, count=len(ids))


@router.get("/documents/{doc_id:path}", response_model=DocumentOut)
def get_document(doc_id: str, documents: DocumentsDep) -> DocumentOut:
    doc = documents.get(doc_id)
    return DocumentOut(id=doc.id, text=doc.text, metadata=doc.metadata)


@router.delete("/documents/{doc_id:path}", status_code=204)
def delete_document(doc_id: str, documents: DocumentsDep) -> None:
    documents.delete(doc_id)
