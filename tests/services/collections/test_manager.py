"""Collections across processes: a correction published to one reaches every replica and no other collection;
kill -9 while two ingest loses nothing and mixes nothing."""

from __future__ import annotations

import threading
import time

import httpx
import pytest

from app.offline.fit import fit_artifact
from app.services.container import Services
from app.services.documents import DocumentInput
from app.services.search_query import SearchQuery
from tests.conftest import CORPUS, free_port, server_env, start_server, stop_server

WORDS = "cat dog bird plane river city park night joy rain sun tree house road car boat".split()


def text(name: str, n: int) -> str:
    return f"{name} {WORDS[n % 16]} {WORDS[n * 7 % 16]} number{n}"


@pytest.mark.process
def test_kill_9_during_ingestion_into_two_collections_loses_nothing_and_mixes_nothing(tmp_path, redis_url, key_prefix):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = server_env(
        tmp_path,
        port,
        CE_BACKBONE="hashing",
        CE_REDIS_URL=redis_url,
        CE_KEY_PREFIX=key_prefix,
        CE_SNAPSHOT_INTERVAL="1",
        CE_FOLLOW_INTERVAL="0.1",
    )
    acknowledged: dict[str, list[int]] = {"alpha": [], "beta": []}
    in_flight: dict[str, list[int]] = {"alpha": [], "beta": []}

    def ingest(name: str) -> None:
        with httpx.Client(base_url=f"{base}/collections/{name}", timeout=10) as client:
            for first in range(0, 4000, 20):
                batch = list(range(first, first + 20))
                in_flight[name][:] = batch
                docs = [{"id": f"{name}{i}", "text": text(name, i)} for i in batch]
                try:
                    if client.post("/documents", json={"documents": docs}).status_code == 201:
                        acknowledged[name].extend(batch)
                except httpx.TransportError:
                    return  # the server is gone

    proc = start_server(env, base)
    try:
        assert httpx.post(f"{base}/collections", json={"name": "alpha"}).status_code == 201
        assert httpx.post(f"{base}/collections", json={"name": "beta", "pooling": "cls"}).status_code == 201
        writers = [threading.Thread(target=ingest, args=(name,)) for name in acknowledged]
        for w in writers:
            w.start()
        deadline = time.monotonic() + 60
        while min(len(a) for a in acknowledged.values()) < 200 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert min(len(a) for a in acknowledged.values()) >= 200, "ingestion did not get going"
    finally:
        proc.kill()  # SIGKILL mid-ingestion: no shutdown, no final snapshot
        proc.wait()
    for w in writers:
        w.join(timeout=30)

    proc = start_server(env, base)
    try:
        for name, other in (("alpha", "beta"), ("beta", "alpha")):
            collection = f"{base}/collections/{name}"
            count = httpx.get(collection).json()["documents"]
            size = httpx.get(collection).json()["index"]["size"]
            assert len(acknowledged[name]) <= count == size <= len(acknowledged[name]) + len(in_flight[name])
            for i in acknowledged[name][:: max(1, len(acknowledged[name]) // 15)] + [acknowledged[name][-1]]:
                hits = httpx.get(f"{collection}/search", params={"q": text(name, i), "k": 1}).json()["results"]
                assert hits[0]["id"] == f"{name}{i}"
            assert httpx.get(f"{collection}/documents/{other}0").status_code == 404  # nothing of the other one
            hits = httpx.get(f"{collection}/search", params={"q": text(other, 5), "k": 50}).json()["results"]
            assert all(h["id"].startswith(name) for h in hits)
    finally:
        stop_server(proc)


def test_a_correction_published_to_one_collection_rebuilds_its_index_on_every_replica_and_no_other(make_settings):
    settings = make_settings(backbone="hashing", follow_interval=0.05)
    first, second = Services.from_settings(settings), Services.from_settings(settings)
    try:
        for name in ("alpha", "beta"):
            first.collections.create(name, correction="none")
            first.collections.get(name).services.documents.add(
                [DocumentInput(text=text(name, i), id=f"{name}{i}") for i in range(30)]
            )
        replica = second.collections.get("alpha")  # opened by the second process before the publish
        beta = first.collections.get("beta").services.served
        beta_space, default_space = beta.current, first.served.current
        artifact = fit_artifact(first.engine.backbone, CORPUS, "whitening", {"alpha": 0.5, "dim": 8}, progress=False)
        assert first.collections.publish("alpha", artifact).result(30) == artifact.id
        alpha = first.collections.get("alpha")
        assert alpha.describe()["correction"] == artifact.id and alpha.describe()["index"]["dim"] == 8
        found = alpha.services.search.search(SearchQuery(text("alpha", 7), k=1))
        assert found.hits[0].id == "alpha7" and found.space["correction"] == artifact.id
        deadline = time.monotonic() + 10  # the other process follows the collection's settings in Redis
        while replica.services.served.current.correction_id != artifact.id and time.monotonic() < deadline:
            time.sleep(0.05)
        assert (
            replica.services.served.current.correction_id == artifact.id
            and len(replica.services.served.current.dense) == 30
        )
        assert beta.current is beta_space and beta.current.correction_id is None  # untouched: same index object
        assert first.served.current is default_space  # nor is the default collection's
    finally:
        second.close()
        first.close()


def test_a_write_that_lands_after_a_delete_never_reaches_a_collection_made_again_under_that_name(make_settings):
    services = Services.from_settings(make_settings(backbone="hashing"))
    try:
        services.collections.create("cats", correction="none")
        late = services.collections.get("cats").services.documents  # a request holding it while it is deleted
        services.collections.delete("cats")
        late.add([DocumentInput(text="a late write", id="late")])
        services.collections.create("cats", correction="none")
        again = services.collections.get("cats").services
        assert again.documents.count() == 0 and len(again.served.current.dense) == 0
        assert again.search.search(SearchQuery("a late write", k=5)).hits == []
    finally:
        services.close()


def test_a_collection_an_older_release_stored_with_a_crashing_factory_is_refused_not_opened(make_settings):
    """HNSW0 was accepted once and aborted the process on the first request that opened it, after every restart."""
    from dataclasses import replace

    from app.core.errors import Conflict
    from app.services.collections.spec import READY, CollectionSpec

    services = Services.from_settings(make_settings(backbone="hashing"))
    try:
        services.collections.create("fine", wait=None)
        spec = CollectionSpec.from_bytes(services.store.collections.get("fine"))
        services.store.collections.create(
            "old", replace(spec, name="old", index_factory="HNSW0", state=READY).to_bytes()
        )
        with pytest.raises(
            Conflict, match="collection 'old' failed to load: index_factory: HNSW's M 0 is out of bounds"
        ):
            services.collections.get("old", wait=5)
        assert services.collections.get("fine").spec.index_factory == "auto"  # the process serves on
    finally:
        services.close()
