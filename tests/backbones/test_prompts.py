"""A model's prompts: chosen as sentence-transformers chooses them, and carried end to end over HTTP: what /embed,
/similarity and /v1/embeddings are asked for, documents with the document prompt, searches with the query prompt,
while stored texts and the lexical index never see one."""

import numpy as np
import pytest

from app.backbones.prompts import NO_PROMPTS, Prompts, prompted, with_prompt
from app.benchmarks.model_folders import Recipe, build
from app.core.errors import InvalidInput
from tests.conftest import error_of, serve_app


def test_a_literal_beats_a_name_which_beats_the_default():
    prompts = Prompts({"query": "q: ", "passage": "p: ", "nli": "n: "}, default_name="nli")
    assert prompts.text() == "n: " and prompts.text("query") == "q: " and prompts.text("query", "x ") == "x "
    assert (prompts.query, prompts.document) == ("q: ", "p: ")  # "passage" stands for documents, as in ST
    assert prompts.text("document") == "p: "  # the roles always answer, whatever the model calls them
    with pytest.raises(InvalidInput, match="prompt_name 'summary': this model's prompts are nli, passage, query"):
        prompts.text("summary")
    assert (NO_PROMPTS.text("query"), NO_PROMPTS.text("document"), NO_PROMPTS.text()) == ("", "", "")
    with pytest.raises(InvalidInput, match="prompts are none"):
        NO_PROMPTS.text("nli")


def test_with_prompt_passes_other_arguments_on():
    seen = []
    encode = with_prompt(lambda texts, weights=None: seen.append((texts, weights)) or np.zeros(1), "q: ")
    encode(["a", "b"], "w")
    assert seen == [(["q: a", "q: b"], "w")] and prompted("", ["a"]) == ["a"]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return build(Recipe("bert", "mean", False, True, 128), tmp_path_factory.mktemp("prompted"))


def _cos(a, b) -> float:
    a, b = np.asarray(a), np.asarray(b)
    return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))


def test_prompts_from_request_to_index_over_http(folder, make_settings):
    from sentence_transformers import SentenceTransformer

    from app.main import create_app

    reference = SentenceTransformer(str(folder))
    long_text = " ".join(["corrected embeddings keep their meaning under whitening"] * 40)  # several passages
    docs = [{"id": "long", "text": long_text}, {"id": "cat", "text": "The cat sat on the mat."}]
    settings = make_settings(model_path=folder, quantize="none")
    with serve_app(create_app(settings), timeout=300) as client:
        info = client.get("/info").json()["model"]
        assert info["prompts"] == {"query": "query: ", "document": "passage: "} and info["pooling"] == "mean"
        texts = ["A man plays the guitar.", "Who plays the guitar?"]
        for name in ("query", "document"):
            vectors = client.post("/embed", json={"texts": texts, "corrected": False, "prompt_name": name}).json()
            theirs = reference.encode(texts, prompt_name=name)
            assert min(_cos(a, b) for a, b in zip(vectors["embeddings"], theirs, strict=True)) >= 0.99999
        literal = client.post("/embed", json={"texts": texts[:1], "prompt": "query: "}).json()["embeddings"][0]
        named = client.post("/embed", json={"texts": texts[:1], "prompt_name": "query"}).json()["embeddings"][0]
        plain = client.post("/embed", json={"texts": texts[:1]}).json()["embeddings"][0]
        assert _cos(literal, named) > 0.99999 and _cos(plain, named) < 0.9999  # none by default: it has no default
        model = client.get("/v1/models").json()["data"][0]["id"]
        openai = client.post("/v1/embeddings", json={"input": texts[:1], "model": model, "prompt_name": "query"})
        assert _cos(openai.json()["data"][0]["embedding"], named) > 0.99999
        pair = client.post("/similarity", json={"pairs": [texts], "prompt_name": "query"}).json()["scores"][0]
        assert pair == pytest.approx(_cos(*reference.encode(texts, prompt_name="query")), abs=1e-5)
        error_of(client.post("/embed", json={"texts": texts, "prompt_name": "summary"}), 422)
        error_of(client.post("/embed", json={"texts": texts, "prompt_name": "query", "prompt": "q: "}), 422)

        assert client.post("/documents", json={"documents": docs}).status_code == 201
        assert client.get("/documents/long").json()["text"] == long_text  # no prompt in what is stored
        hits = client.post("/search", json={"q": "a cat on a mat", "k": 2, "mode": "dense"}).json()["results"]
        expected = _cos(reference.encode_query("a cat on a mat"), reference.encode_document(docs[1]["text"]))
        assert hits[0]["id"] == "cat" and hits[0]["score"] == pytest.approx(expected, abs=1e-4)
        lexical = client.post("/search", json={"q": "passage query", "k": 2, "mode": "lexical"}).json()
        assert lexical["results"] == []  # the prompts' words are in no index
