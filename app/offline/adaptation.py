"""One adaptation run from start to summary: the served model loaded, trained on a corpus, scored on held-out tuning
pairs, and written only when it beat where it started; what `python -m app adapt` calls."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.core.config import Settings
from app.offline.adapt import AdaptConfig, AdaptResult, TuningScorer, adapt, held_out_pairs
from app.offline.datasets import read_corpus, read_pairs
from app.offline.regularization import embedding_cosine


@dataclass
class Adapted:
    """The trained model and tokenizer, how training went, and the summary written beside the weights."""

    model: Any
    tokenizer: Any
    result: AdaptResult
    summary: dict[str, Any]

    def refusal(self) -> str:
        """Why the weights are not written: no step beat the starting model."""
        scored = "with the auto correction on top" if self.summary["selected_on"] == "auto" else "raw"
        steps = max((value for step, value in self.result.scores if step > 0), default=None)
        return (
            f"not written: no step beat the starting model on {self.summary['tuned_on']}, {scored} (start "
            f"{self.result.start_score:.2f}, best step {steps}); --force writes it anyway"
        )

    def save(self, out: Path) -> None:
        """A model folder CE_MODEL_PATH serves, with `adapt.json` saying how it was made."""
        out.mkdir(parents=True, exist_ok=True)
        self.model.save_pretrained(out)
        self.tokenizer.save_pretrained(out)
        (out / "adapt.json").write_text(json.dumps(self.summary, indent=2) + "\n")


def adapt_served_model(
    settings: Settings,
    corpus: Path,
    config: AdaptConfig,
    pair_files: list[Path],
    *,
    select: str,
    keep_seen: bool,
    say: Callable[[str], None] = lambda _: None,
) -> Adapted:
    """Train the served model on `corpus`, scoring on `pair_files` (without pairs whose sentences it trains on,
    unless `keep_seen`) raw or with the auto correction on top (`select`); the best step's weights are kept."""
    from transformers import AutoModel, AutoTokenizer

    from app.backbones.tokens import local_model

    folder, _ = local_model(settings)
    path = folder.weights
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = AutoModel.from_pretrained(path, local_files_only=True)
    sentences = read_corpus(corpus)
    pairs, dropped = held_out_pairs([read_pairs(f) for f in pair_files], set() if keep_seen else set(sentences))
    say(f"tuning pairs: {sum(map(len, pairs))} scored, {dropped} dropped (a sentence is in the corpus)")
    score = TuningScorer(model, tokenizer, pairs, config.pooling, select)
    result = adapt(model, tokenizer, sentences, score, config)
    summary = {
        "method": config.method,
        "views": list(config.views),
        "head": config.head,
        "pooling": config.pooling,
        "regularize": config.regularize,
        "reg_weight": config.reg_weight,
        "embedding_cosine": {
            "start": round(result.penalties[0], 6) if result.penalties else None,
            "kept": round(embedding_cosine(model).item(), 6),
        },
        "steps": result.steps,
        "seconds": result.seconds,
        "tuned_on": "+".join(Path(f).name for f in pair_files),
        "tuning_pairs": sum(map(len, pairs)),
        "tuning_pairs_dropped": dropped,
        "start_score": round(result.start_score, 2),
        "best_score": round(result.best_score, 2),
        "best_step": result.best_step,
        "selected_on": select,
        "scores": result.scores,
        "checks": [{"step": step, **row} for (step, _), row in zip(result.scores, score.log, strict=True)],
        "from": str(path),
    }
    return Adapted(model, tokenizer, result, summary)
