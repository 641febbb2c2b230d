"""/collections: create, list, describe and delete collections; their documents, search and similarity live
under /collections/{name}/ (the same routes as the default collection's, see `create_app`)."""

from __future__ import annotations

from fastapi import APIRouter

from app.api.deps import ServicesDep
from app.api.schemas import CollectionIn, CollectionList, CollectionOut, FitRequest, FitStatus
from app.core.errors import BadRequest
from app.services.collection_spec import DEFAULT, SEARCH_SETTINGS

router = APIRouter()


@router.post("/collections", response_model=CollectionOut, status_code=201)
def create_collection(body: CollectionIn, services: ServicesDep) -> dict:
    """A new collection; a backbone not loaded yet is loaded now (the first time can take a while)."""
    collection = services.collections.create(body.name, backbone=body.backbone, pooling=body.pooling,
                                             correction=body.correction, index_factory=body.index_factory,
                                             model_path=body.model_path,
                                             search=body.model_dump(include=set(SEARCH_SETTINGS)))  # fmt: skip
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


@router.post("/collections/{name}/fit", response_model=FitStatus, status_code=202)
def start_fit(name: str, body: FitRequest, services: ServicesDep) -> dict:
    """Fit a correction on the collection's stored documents in a child process, then serve it there; 409 while
    one runs. Poll GET for progress; every server's index is rebuilt once it is published."""
    if name == DEFAULT:
        raise BadRequest(
            "the default collection's correction is fitted with `python -m app fit --corpus ... --publish`"
        )
    services.collections.get(name)  # 404 for an unknown collection
    return services.fits.start(name, body.method, body.params())


@router.get("/collections/{name}/fit", response_model=FitStatus, response_model_exclude_none=True)
def fit_status(name: str, services: ServicesDep) -> dict:
    """The last fit started here for this collection: running (with its progress bar's figures), done, failed."""
    return services.fits.status(name)
