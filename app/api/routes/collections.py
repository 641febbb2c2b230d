"""/collections: create, list, describe and delete collections; their documents, search and similarity live
under /collections/{name}/ (the same routes as the default collection's, see `create_app`)."""

from __future__ import annotations

from fastapi import APIRouter

from app.api.deps import ServicesDep
from app.api.schemas import CollectionIn, CollectionList, CollectionOut

router = APIRouter()


@router.post("/collections", response_model=CollectionOut, status_code=201)
def create_collection(body: CollectionIn, services: ServicesDep) -> dict:
    """A new collection; a backbone not loaded yet is loaded now (the first time can take a while)."""
    collection = services.collections.create(body.name, backbone=body.backbone, pooling=body.pooling,
                                             correction=body.correction, index_factory=body.index_factory)  # fmt: skip
    return collection.describe()


@router.get("/collections", response_model=CollectionList)
def list_collections(services: ServicesDep) -> dict:
    return {"collections": services.collections.describe_all()}


@router.get("/collections/{name}", response_model=CollectionOut)
def get_collection(name: str, services: ServicesDep) -> dict:
    return services.collections.get(name).describe()


@router.delete("/collections/{name}", status_code=204)
def delete_collection(name: str, services: ServicesDep) -> None:
    services.collections.delete(name)
