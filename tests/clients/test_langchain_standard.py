"""LangChain's own standard suites (langchain-tests, pinned in pyproject), subclassed as its documentation says."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from langchain_core.vectorstores import VectorStore
from langchain_tests.integration_tests import EmbeddingsIntegrationTests, VectorStoreIntegrationTests

from corrected_embeddings_client.langchain import CorrectedEmbeddings, CorrectedVectorStore
from tests.clients.conftest import API_KEY


class TestCorrectedEmbeddings(EmbeddingsIntegrationTests):
    @pytest.fixture(autouse=True)
    def _server(self, server_url):
        self.server_url = server_url

    @property
    def embeddings_class(self) -> type[CorrectedEmbeddings]:
        return CorrectedEmbeddings

    @property
    def embedding_model_params(self) -> dict:
        return {"base_url": self.server_url, "api_key": API_KEY}


class TestCorrectedVectorStore(VectorStoreIntegrationTests):
    @pytest.fixture()
    def vectorstore(self, server_url, collection) -> Iterator[VectorStore]:  # type: ignore[override]
        """Empty: a collection of its own per test, deleted after it. The server encodes, so no embeddings are
        passed."""
        yield CorrectedVectorStore(server_url, API_KEY, collection=collection)


def test_from_texts_and_a_retriever_with_a_filter_and_a_mode(server_url, collection):
    store = CorrectedVectorStore.from_texts(
        ["the printer on floor 3 is jammed", "paper is stuck in the printer", "the coffee machine is empty"],
        metadatas=[{"floor": 3}, {"floor": 2}, {"floor": 3}],
        ids=["t1", "t2", "t3"],
        base_url=server_url,
        api_key=API_KEY,
        collection=collection,
    )
    retriever = store.as_retriever(search_kwargs={"k": 2, "filter": {"floor": 3}, "mode": "lexical"})
    assert [d.id for d in retriever.invoke("printer jammed")] == ["t1"]  # t3 has no word of it; t2 is floor 2
    scored = store.similarity_search_with_relevance_scores("paper stuck in a printer", k=3, mode="dense")
    assert scored[0][0].id == "t2" and 0.5 < scored[0][1] <= 1.0 and scored[0][1] > scored[-1][1]
