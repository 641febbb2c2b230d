"""The official `openai` client, unchanged, against the service over real HTTP."""

from __future__ import annotations

import base64

import numpy as np
import openai
import pytest
from pydantic import SecretStr

from app.main import create_app
from tests.conftest import serve_app


@pytest.fixture
def served(hashing_settings):
    settings = hashing_settings.model_copy(update={"api_keys": [SecretStr("sk-local-test")]})
    with serve_app(create_app(settings)) as http:
        client = openai.OpenAI(base_url=f"{str(http.base_url).rstrip('/')}/v1", api_key="sk-local-test", max_retries=0)
        yield client, http


def test_the_official_client_gets_corrected_vectors(served):
    client, http = served
    texts = ["the cat sleeps in the park", "a dog runs at night"]
    result = client.embeddings.create(model="hashing", input=texts)  # the client asks for base64 by default
    ours = http.post("/embed", json={"texts": texts}, headers={"Authorization": "Bearer sk-local-test"}).json()
    assert [d.index for d in result.data] == [0, 1] and result.model == "hashing"
    np.testing.assert_allclose([d.embedding for d in result.data], ours["embeddings"], atol=1e-6)
    assert result.usage.prompt_tokens == result.usage.total_tokens == (6 + 2) + (5 + 2)  # words, and [CLS]/[SEP] each
    single = client.embeddings.create(model="hashing", input="a dog runs at night", encoding_format="float")
    np.testing.assert_allclose(single.data[0].embedding, ours["embeddings"][1], atol=1e-6)
    assert [m.id for m in client.models.list()] == ["hashing"]


def test_dimensions_keep_the_first_whitened_axes(served):
    client, http = served
    full = http.post(
        "/embed",
        json={"texts": ["a child reads"], "normalize": False},
        headers={"Authorization": "Bearer sk-local-test"},
    ).json()["embeddings"][0]
    short = client.embeddings.create(model="hashing", input="a child reads", dimensions=3).data[0].embedding
    expected = np.array(full[:3]) / np.linalg.norm(full[:3])
    np.testing.assert_allclose(short, expected, atol=1e-6)
    with pytest.raises(openai.UnprocessableEntityError, match="dimensions must be within"):
        client.embeddings.create(model="hashing", input="x", dimensions=9)


@pytest.mark.parametrize("method", ["none", "center", "abtt"])
def test_dimensions_on_a_space_not_ordered_by_variance_is_a_400_that_says_why(hashing_settings, method):
    from app.backbones import build_backbone
    from app.correction.publication import write_artifact_file
    from app.offline.fit import fit_artifact
    from tests.conftest import CORPUS

    for bundled in hashing_settings.models_dir.glob("*.npz"):
        bundled.unlink()
    artifact = fit_artifact(build_backbone(hashing_settings), CORPUS, method, {}, progress=False)
    write_artifact_file(artifact, hashing_settings.models_dir / f"{method}.npz")
    with serve_app(create_app(hashing_settings)) as http:
        client = openai.OpenAI(base_url=f"{str(http.base_url).rstrip('/')}/v1", api_key="x", max_retries=0)
        assert http.get("/info").json()["correction"]["method"] == method
        with pytest.raises(openai.BadRequestError, match="not ordered by variance"):
            client.embeddings.create(model="hashing", input="a child reads", dimensions=3)
        assert len(client.embeddings.create(model="hashing", input="a child reads").data[0].embedding) == 64


def test_base64_is_little_endian_float32(served):
    _, http = served
    body = {"model": "hashing", "input": ["a cat"], "encoding_format": "base64"}
    r = http.post("/v1/embeddings", json=body, headers={"Authorization": "Bearer sk-local-test"}).json()
    vector = np.frombuffer(base64.b64decode(r["data"][0]["embedding"]), dtype="<f4")
    assert vector.shape == (8,) and np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-5)


def test_errors_the_client_can_read(served):
    client, _ = served
    with pytest.raises(openai.NotFoundError, match="not served"):
        client.embeddings.create(model="text-embedding-3-small", input="x")
    with pytest.raises(openai.UnprocessableEntityError, match="token arrays"):
        client.embeddings.create(model="hashing", input=[[101, 2023, 102]])
    with pytest.raises(openai.UnprocessableEntityError):
        client.embeddings.create(model="hashing", input=["  "])
    wrong_key = openai.OpenAI(base_url=str(client.base_url), api_key="sk-wrong", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        wrong_key.embeddings.create(model="hashing", input="x")


def test_langchains_openai_embeddings_work_with_the_settings_docs_api_names(served):
    """docs/api.md: `check_embedding_ctx_length=False` (its default sends token arrays of OpenAI's tokenizer, which
    is fetched from the internet); every other setting as it comes, its batches of 1,000 texts included."""
    from langchain_openai import OpenAIEmbeddings

    client, http = served
    embeddings = OpenAIEmbeddings(
        model="hashing",
        base_url=str(client.base_url),
        api_key="sk-local-test",
        check_embedding_ctx_length=False,
        max_retries=0,
    )
    texts = [f"note {i} about the cat in the park" for i in range(1200)]  # two batches: 1,000 and 200
    vectors = embeddings.embed_documents(texts)
    ours = http.post("/embed", json={"texts": texts[995:1003]}, headers={"Authorization": "Bearer sk-local-test"})
    assert len(vectors) == 1200 and len({len(v) for v in vectors}) == 1
    np.testing.assert_allclose(vectors[995:1003], ours.json()["embeddings"], atol=1e-6)
    np.testing.assert_allclose(embeddings.embed_query(texts[7]), vectors[7], atol=1e-6)
