"""/collections: create, list, describe and delete collections; their documents, search and similarity live
under /collections/{name}/ (the same routes as the default collection's, see `create_app`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from app.api.access import requester
from app.api.collection_schemas import CollectionIn, CollectionList, CollectionOut, FitRequest, FitStatus
from app.api.deps import CollectionName, ServicesDep
from app.core.errors import Conflict
from app.index.live import live
from app.services.collections.manager import OPEN_WAIT
from app.services.collections.spec import DEFAULT, SEARCH_SETTINGS

router = APIRouter()


@router.post("/collections", response_model=CollectionOut, status_code=201)
def create_collection(body: CollectionIn, services: ServicesDep) -> dict[str, Any]:
    """A new collection, answered at once: `ready` when its backbone is loaded here, else `loading` while it loads
    in the background (then `ready`, or `failed` with the reason); meanwhile its routes answer 503 Retry-After."""
    return services.collections.create(
        body.name,
        backbone=body.backbone,
        pooling=body.pooling,
        correction=body.correction,
        index_factory=body.index_factory,
        model_path=body.model_path,
        shards=body.shards,
        search=body.model_dump(include=set(SEARCH_SETTINGS)),
        wait=0,
    )


@router.get("/collections", response_model=CollectionList)
def list_collections(services: ServicesDep, request: Request) -> dict[str, Any]:
    """Every collection, or those a key limited to some may use."""
    key = requester(request)
    listed = services.collections.describe_all()
    return {"collections": [c for c in listed if key is None or key.covers(c["name"])]}


@router.get("/collections/{name}", response_model=CollectionOut)
def get_collection(name: CollectionName, services: ServicesDep) -> dict[str, Any]:
    """The collection as it serves here (opened for it, if that takes a moment), else its state and progress."""
    return services.collections.describe(name)


@router.delete("/collections/{name}", status_code=204)
def delete_collection(name: CollectionName, services: ServicesDep) -> None:
    """The collection and everything of it: documents, indexes, corrections, and a fit or tune of it running here."""
    services.collections.delete(name)
    services.fits.forget(name)
    services.tunes.forget(name)


@router.post("/collections/{name}/fit", response_model=FitStatus, status_code=202)
def start_fit(name: CollectionName, body: FitRequest, services: ServicesDep) -> dict[str, Any]:
    """Fit a correction on the collection's stored documents in a child process, then serve it there; 409 while
    one runs. Poll GET for progress; every server's index is rebuilt once it is published."""
    if name == DEFAULT:
        raise Conflict(  # as deleting it is: the default collection is the service's own, managed from the CLI
            "the default collection's correction is fitted with `python -m app fit --corpus ... --publish`"
        )
    if services.collections.get(name, wait=OPEN_WAIT).spec.shards:  # 404 unknown, 409 failed, 503 still loading
        raise Conflict(f"collection {name!r} is kept in parts: it serves the correction it was created with")
    return services.fits.start(name, body.method, body.params())


@router.get("/collections/{name}/fit", response_model=FitStatus, response_model_exclude_none=True)
def fit_status(name: CollectionName, services: ServicesDep) -> dict[str, Any]:
    """The last fit started here for this collection: running (with its progress bar's figures), done, failed."""
    return services.fits.status(name)


@router.post("/collections/{name}/verify")
def verify_collection(name: CollectionName, services: ServicesDep, repair: bool = False) -> dict[str, Any]:
    """Every stored id and passage against this server's dense and lexical index (what `python -m app verify --url`
    asks); with `repair`, indexes that differ are rebuilt from the store in the background."""
    opened = services.collections.get(name, wait=OPEN_WAIT).services
    if opened.shards is not None:
        raise Conflict(
            f"collection {name!r} is kept in parts: each of its shards verifies its own part as it follows it"
        )
    served = live(opened.served)
    check = served.verify()
    report = {"collection": name, **check.describe()}
    if check.drift:
        report["repair"] = "rebuild started" if repair else "not asked"
        if repair:
            served.rebuild(served.current.correction, f"verify --repair: {check.summary()}")
    return report
