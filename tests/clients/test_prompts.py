"""The clients ask for the model's prompts by role: LangChain's and LlamaIndex's queries with the query prompt,
their documents with the document prompt, as the service encodes searches and documents."""

import numpy as np
import pytest

from app.benchmarks.model_folders import Recipe, build
from tests.conftest import serve_app


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return build(Recipe("bert", "mean", False, True, 128), tmp_path_factory.mktemp("prompted-client"))


def test_clients_map_queries_and_documents_to_their_prompts(folder, make_settings):
    from sentence_transformers import SentenceTransformer

    from app.main import create_app
    from corrected_embeddings_client import Client
    from corrected_embeddings_client.langchain import CorrectedEmbeddings
    from corrected_embeddings_client.llamaindex import CorrectedEmbedding

    reference = SentenceTransformer(str(folder))
    text = "guitar"
    query, document = reference.encode_query([text])[0], reference.encode_document([text])[0]
    with serve_app(create_app(make_settings(model_path=folder, quantize="none")), timeout=300) as http:
        url = str(http.base_url).rstrip("/")
        langchain = CorrectedEmbeddings(url)
        llama = CorrectedEmbedding(url)
        pairs = {
            "langchain query": (langchain.embed_query(text), query),
            "langchain document": (langchain.embed_documents([text])[0], document),
            "llamaindex query": (llama.get_query_embedding(text), query),
            "llamaindex document": (llama.get_text_embedding(text), document),
        }
        with Client(url) as client:
            pairs["client query"] = (client.embed(text, prompt_name="query", corrected=False)[0], query)
            score = client.similarity([(text, text)], prompt="query: ")[0]
    for what, (ours, theirs) in pairs.items():
        cosine = float(np.dot(ours, theirs) / np.linalg.norm(ours) / np.linalg.norm(theirs))
        assert cosine > 0.99999, what
    assert score == pytest.approx(1.0)
    assert float(np.dot(query, document)) < 0.9999  # the two prompts give two vectors: the test can tell them apart
