"""One collection's served index and services, wired alike for every collection: a server's live index, a writer's
empty one, or a sharded server's keys with the shards' dense list."""

from __future__ import annotations

from app.engine.pool import engine_for
from app.index.key_index import KeyIndex
from app.index.live import LiveIndex
from app.index.writer import WriterIndex
from app.services.collections.wiring import open_collection_services
from app.services.documents import DocumentInput


def no_publication(serving_id):
    return None


def test_a_server_a_writer_and_a_sharded_server_are_wired_from_the_same_function(make_settings, store):
    settings = make_settings(backbone="hashing")
    engine = engine_for(settings)
    opened = []
    try:
        server = open_collection_services(settings, engine, store, None, "k", no_publication)
        writer = open_collection_services(settings, engine, store, None, "k", no_publication, search=False)
        sharded_list = object()  # the shards' dense source: only passed on here
        sharded = open_collection_services(settings, engine, store, None, "k2", no_publication, dense=sharded_list)
        opened += [server, writer, sharded]
        assert isinstance(server.served, LiveIndex) and isinstance(writer.served, WriterIndex)
        assert server.search.dense is not sharded_list and sharded.search.dense is sharded_list
        assert isinstance(sharded.served.current.dense, KeyIndex)  # the shards hold the vectors
        writer.documents.add([DocumentInput("a cat", "c")])
        assert server.documents.get("c").text == "a cat"  # one store, one collection key
        assert server.embedding is not writer.embedding and server.embedding.engine is writer.embedding.engine
    finally:
        for services in opened:
            services.close()
        engine.close()
