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
