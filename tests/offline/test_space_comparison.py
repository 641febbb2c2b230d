"""`eval-search` without --mode: raw against a correction's space on one judged collection, and what it prints."""

from __future__ import annotations

import numpy as np

from app.backbones.hashing import HashingBackbone
from app.core.config import Settings
from app.offline.retrieval import JudgedCorpus, Judgments
from app.offline.search_tuning import JudgedSet
from app.offline.space_comparison import compare_spaces, comparison_lines
from tests.conftest import CORPUS


def test_a_correction_that_removes_a_shared_offset_is_scored_above_raw_and_printed(artifact_factory):
    backbone = HashingBackbone(dim=16)
    texts = CORPUS[:60]
    rng = np.random.default_rng(0)
    docs = rng.standard_normal((60, 16)) + 6.0  # one direction every vector shares hides what tells them apart
    queries = docs[:15] + 1.2 * rng.standard_normal((15, 16))  # query i is about document i
    collection = JudgedCorpus(
        [f"d{i}" for i in range(60)],
        texts,
        [f"q{i}" for i in range(15)],
        texts[:15],
        {f"q{i}": {f"d{i}": 1} for i in range(15)},
    )
    judged = JudgedSet("toy", collection, docs, queries, Judgments.of(collection))
    artifact = artifact_factory(docs, fingerprint=backbone.fingerprint, alpha=0.5)
    result = compare_spaces(Settings(index_factory="Flat"), backbone, judged, artifact, "similarity")
    assert (result["data"], result["correction"], result["space"], result["search_space"]) == (
        "toy",
        artifact.id,
        "similarity",
        None,
    )
    assert result["n_queries"] == 15 and result["ndcg_at_10"] > result["raw_ndcg_at_10"]
    lines = comparison_lines(result)
    assert lines[0] == f"hashing mean on toy (15 queries, 60 documents), correction {artifact.id}:"
    assert [line.split(":")[0].strip() for line in lines[1:]] == ["ndcg_at_10", "recall_at_100", "mrr_at_10"]
