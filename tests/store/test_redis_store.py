"""The store against a real redis-server: what survives a restart."""

from app.store import DocumentRecord, EmbeddedRedis, RedisStore


def test_data_survives_a_redis_restart(tmp_path):
    server = EmbeddedRedis(tmp_path / "r")
    s = RedisStore.from_url(server.start())
    s.documents.put("s", [DocumentRecord("kept", "text", "{}", b"abcd")])
    s.close()
    server.stop()
    again = EmbeddedRedis(tmp_path / "r")
    s = RedisStore.from_url(again.start())
    try:
        assert s.documents.get("s", ["kept"])[0].text == "text"
    finally:
        s.close()
        again.stop()
