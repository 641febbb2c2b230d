"""/collections/{name}/judgments and /tune: relevance judgments sent over HTTP, and the ranking chosen on them by a
`tune` child process (like a fit), published so that every replica ranks that way."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from app.api.deps import CollectionName, ServicesDep
from app.api.judgment_schemas import JudgmentsIn, JudgmentsOut, TuneStatus
from app.core.errors import Conflict, NotFound
from app.services.collections.manager import OPEN_WAIT
from app.services.container import Services

router = APIRouter()


def _key(services: Services, name: str) -> str:
    return services.collections.get(name, wait=OPEN_WAIT).services.served.collection_key  # 404 unknown, 503 loading


@router.post("/collections/{name}/judgments", response_model=JudgmentsOut, status_code=201)
def add_judgments(name: CollectionName, body: JudgmentsIn, services: ServicesDep) -> dict[str, Any]:
    """Add or replace (query, document id, grade) judgments; grade 0 says not relevant."""
    key = _key(services, name)
    services.store.judgments.put(key, [(j.query, j.id, j.grade) for j in body.judgments])
    return _listed(services, key)


@router.get("/collections/{name}/judgments", response_model=JudgmentsOut)
def list_judgments(name: CollectionName, services: ServicesDep) -> dict[str, Any]:
    return _listed(services, _key(services, name))


@router.delete("/collections/{name}/judgments", status_code=204)
def delete_judgments(name: CollectionName, services: ServicesDep, query: str | None = None) -> None:
    """One query's judgments (`?query=`), or all of them."""
    if services.store.judgments.delete(_key(services, name), query) == 0 and query is not None:
        raise NotFound(f"no judgments for query {query!r}")


def _listed(services: Services, key: str) -> dict[str, Any]:
    judged = services.store.judgments.all(key)
    return {
        "judgments": [{"query": q, "id": d, "grade": g} for q, d, g in judged],
        "queries": len({q for q, _, _ in judged}),
    }


@router.post("/collections/{name}/tune", response_model=TuneStatus, response_model_exclude_none=True, status_code=202)
def start_tune(name: CollectionName, services: ServicesDep) -> dict[str, Any]:
    """Choose the ranking on the stored judgments in a child process; 409 while one runs. Poll GET; when the
    held-out judgments allow, the choice is published and every replica ranks with it."""
    if services.collections.get(name, wait=OPEN_WAIT).spec.shards:  # 404 unknown, 503 loading
        raise Conflict(f"collection {name!r} is kept in parts: its ranking is tuned on a collection kept whole")
    return services.tunes.start_with(name, [])


@router.get("/collections/{name}/tune", response_model=TuneStatus, response_model_exclude_none=True)
def tune_status(name: CollectionName, services: ServicesDep) -> dict[str, Any]:
    """The tune started here (running, done with its record, failed), else the ranking published for the
    collection (by any server), else 404."""
    try:
        return services.tunes.status(name)
    except NotFound:
        record = services.store.judgments.published_ranking(_key(services, name))
        if record is None:
            raise
        return {"collection": name, "state": "published", **record}


@router.delete("/collections/{name}/tune", status_code=204)
def unpublish_tune(name: CollectionName, services: ServicesDep) -> None:
    """Back to the collection's settings and rule: the tuned ranking is dropped (the judgments stay)."""
    services.store.judgments.publish_ranking(_key(services, name), None)
