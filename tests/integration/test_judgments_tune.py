"""Judgments sent over HTTP tune the ranking in a child process; the choice is published only if the held-out
judgments allow, and a second server on the same Redis ranks with it too."""

from __future__ import annotations

import random
import time

import httpx

from app.backbones import build_backbone
from app.benchmarks.http import free_port
from app.core.config import Settings
from app.correction.publication import write_artifact_file
from app.offline.fit import fit_artifact
from app.store.embedded import EmbeddedRedis
from tests.conftest import CORPUS, server_env, start_server, stop_server

WORDS = "river stone cloud paper window garden silver engine market letter autumn bridge".split()


def corpus(rng: random.Random) -> tuple[list[dict], list[tuple[str, str]]]:
    """300 long documents of common words; 30 of them also hold one made-up word, which a query asks for alone:
    BM25 finds it first, a bag of 60 words' mean barely moves toward it."""
    docs, asked = [], []
    for i in range(300):
        words = rng.choices(WORDS, k=60)
        if i % 10 == 0:
            word = "".join(rng.choices("bcdfghjklmnpqrstvwxz", k=3)) + f"ix{i}"
            words[rng.randrange(60)] = word
            asked.append((word, f"d{i}"))
        docs.append({"id": f"d{i}", "text": " ".join(words)})
    return docs, asked


def wait_for(client: httpx.Client, path: str, done, timeout: float = 120.0) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        body = client.get(path).json()
        if done(body):
            return body
        time.sleep(0.3)
    raise AssertionError(f"{path}: {body}")


def test_judgments_tune_the_search_space_and_the_ranking_and_a_second_server_follows(tmp_path):
    docs, asked = corpus(random.Random(3))
    ports = [free_port(), free_port()]
    models = tmp_path / "models"  # a correction for the weight-free backbone, so the search space has a family
    backbone = build_backbone(Settings(backbone="hashing"))
    write_artifact_file(fit_artifact(backbone, CORPUS, "whitening", {"alpha": 0.5}, progress=False), models / "h.npz")
    extra = {"CE_BACKBONE": "hashing", "CE_FOLLOW_INTERVAL": "0.2", "CE_MAX_TEXTS": "100", "CE_MODELS_DIR": str(models)}
    first = start_server(server_env(tmp_path / "a", ports[0], **extra), f"http://127.0.0.1:{ports[0]}")
    redis_url = EmbeddedRedis(tmp_path / "a" / "data" / "redis").url
    second = start_server(
        server_env(tmp_path / "b", ports[1], CE_REDIS_URL=redis_url, **extra), f"http://127.0.0.1:{ports[1]}"
    )
    a, b = (httpx.Client(base_url=f"http://127.0.0.1:{p}", timeout=60) for p in ports)
    try:
        for start in range(0, len(docs), 100):
            assert a.post("/documents", json={"documents": docs[start : start + 100]}).status_code == 201
        judged = [{"query": w, "id": d, "grade": 1} for w, d in asked]
        judged += [{"query": w, "id": "d1", "grade": 0} for w, _ in asked[:5]]  # judged not relevant
        stored = a.post("/collections/default/judgments", json={"judgments": judged})
        assert stored.status_code == 201 and stored.json()["queries"] == 30, stored.text
        assert len(b.get("/collections/default/judgments").json()["judgments"]) == 35
        assert a.post("/collections/default/tune").status_code == 202
        assert a.post("/collections/default/tune").status_code == 409  # one at a time
        done = wait_for(a, "/collections/default/tune", lambda s: s["state"] != "running")
        assert done["state"] == "done" and done["published"], done
        held = done["held_out"]
        assert held["chosen"]["ndcg_at_10"] >= held["default"]["ndcg_at_10"] and done["queries"]["held_out"] >= 2
        chosen = done["ranking"]
        space = done["search_space"]
        assert set(space["held_out_ndcg_at_10"]) == {"chosen", "served"} and space["served"]["method"] == "whitening"
        chosen_ndcg, served_ndcg = space["held_out_ndcg_at_10"]["chosen"], space["held_out_ndcg_at_10"]["served"]
        assert space["published"] == (space["chosen"] != space["served"] and chosen_ndcg >= served_ndcg)
        print(f"\nspace {space}")
        print(f"\nchosen {chosen['mode']}/{chosen['fusion']}/{chosen['lexical_weight']}, held out {held}")
        found = wait_for(
            b, f"/search?q={asked[0][0]}", lambda r: r["ranking"]["chosen_by"].startswith("judgments"), timeout=10
        )
        assert (found["ranking"]["mode"], found["ranking"]["fusion"]) == (
            chosen["mode"],
            chosen["fusion"] if chosen["mode"] == "hybrid" else None,
        )
        assert found["results"][0]["id"] == asked[0][1]
        assert b.get("/collections/default/tune").json()["state"] == "published"
        assert b.get("/search", params={"q": asked[0][0], "mode": "dense"}).json()["ranking"]["chosen_by"] == "request"
        assert a.delete("/collections/default/tune").status_code == 204
        wait_for(b, f"/search?q={asked[0][0]}", lambda r: r["ranking"]["chosen_by"].startswith("no judgments"), 10)
        assert a.delete("/collections/default/judgments", params={"query": asked[0][0]}).status_code == 204
        assert a.get("/collections/default/judgments").json()["queries"] == 29
        assert a.post("/collections/nope/judgments", json={"judgments": judged[:1]}).status_code == 404
        bad = a.post("/collections/default/judgments", json={"judgments": [{"query": "q", "id": "d", "grade": 11}]})
        assert bad.status_code == 422 and "grade" in bad.text
    finally:
        a.close()
        b.close()
        stop_server(second)
        stop_server(first)
