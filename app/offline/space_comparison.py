"""Search quality on one judged collection, raw against a correction's space, exact and on the served index kind:
what `eval-search` reports without `--mode`."""

from __future__ import annotations

from typing import Any

from app.backbones.base import Backbone
from app.core.config import Settings
from app.correction.artifact import CorrectionArtifact
from app.correction.pipeline import Correction
from app.offline.encoding import corrected_vectors
from app.offline.retrieval import compare
from app.offline.search_tuning import JudgedSet

METRICS = ("ndcg_at_10", "recall_at_100", "mrr_at_10")


def compare_spaces(
    settings: Settings, backbone: Backbone, judged: JudgedSet, artifact: CorrectionArtifact | None, space: str
) -> dict[str, Any]:
    """Each metric x100 raw and in `artifact`'s search space (or its similarity space), exact and on the index kind
    CE_INDEX_FACTORY names, each change with a paired-bootstrap 95% interval."""
    fixed = None if artifact is None else Correction(artifact).search if space == "search" else Correction(artifact)
    collection = judged.collection
    docs, queries = (
        corrected_vectors(backbone, fixed, texts, raw, desc=what)
        for texts, raw, what in (
            (collection.doc_texts, judged.docs, "documents"),
            (collection.query_texts, judged.queries, "queries"),
        )
    )
    figures = compare(
        judged.judgments,
        (judged.docs, judged.queries),
        (docs, queries),
        factory=settings.index_factory,
        recall=settings.index_recall,
    )
    return {
        "data": judged.name,
        "backbone": backbone.name,
        "pooling": backbone.pooling,
        "correction": artifact.id if artifact else None,
        "space": space,
        "search_space": fixed.describe_search() if fixed and space == "search" else None,
        **figures,
    }


def comparison_lines(result: dict[str, Any]) -> list[str]:
    """What `eval-search` prints for a reader, from its figures."""
    described = result["search_space"]
    searched = f", search space {described['method']} ({described['dim']} dims)" if described else ""
    lines = [
        f"{result['backbone']} {result['pooling']} on {result['data']} ({result['n_queries']} queries, "
        f"{result['n_docs']} documents), correction {result['correction']}{searched}:"
    ]
    for metric in METRICS:
        low, high = result[f"{metric}_change_95"]
        lines.append(
            f"  {metric}: raw {result[f'raw_{metric}']:.2f}, corrected {result[metric]:.2f} "
            f"(change 95% [{low:+.2f}, {high:+.2f}]); index {result[f'index_raw_{metric}']:.2f} / "
            f"{result[f'index_{metric}']:.2f}"
        )
    return lines
