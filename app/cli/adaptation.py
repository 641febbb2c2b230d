"""`adapt`: training the backbone on a corpus (SimCSE, ConSERT, the embedding regularizer), written only if it
helps."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Literal

import typer

from app.cli.options import EXIT_BAD_INPUT, CorpusOpt, PoolingOpt, TuneOpt, fail, guarded, settings_for
from app.core.config import TUNE_PAIRS


@guarded
def adapt_backbone(
    corpus: CorpusOpt,
    out: Annotated[Path, typer.Option(help="Folder for the adapted model: serve it with CE_MODEL_PATH.")],
    method: Annotated[
        Literal["simcse", "consert", "none"],
        typer.Option(help="simcse: dropout views; consert: augmented; none: the regularizer alone."),
    ] = "simcse",
    regularize: Annotated[
        Literal["none", "embedding"],
        typer.Option(help="embedding: add Gao et al.'s penalty on the mean cosine between word-embedding rows."),
    ] = "none",
    reg_weight: Annotated[float, typer.Option(min=0, help="The regularizer's weight in the loss.")] = 1.0,
    pooling: PoolingOpt = None,
    epochs: Annotated[int, typer.Option(min=1, help="Passes over the corpus.")] = 1,
    batch_size: Annotated[int, typer.Option(min=2, help="Sentences per step (each one's negatives).")] = 64,
    lr: Annotated[float, typer.Option(min=0, help="AdamW learning rate.")] = 3e-5,
    seconds: Annotated[float | None, typer.Option(min=1, help="Stop training after this long.")] = None,
    eval_steps: Annotated[
        int | None, typer.Option(min=1, help="Also score on the tuning pairs every this many steps.")
    ] = None,
    max_length: Annotated[int, typer.Option(min=8, help="Tokens per training sentence.")] = 64,
    augment: Annotated[
        str | None,
        typer.Option(
            help="Views, comma-separated: dropout, shuffle, token-cutoff, feature-cutoff; default: "
            "dropout (simcse), shuffle,feature-cutoff (consert)."
        ),
    ] = None,
    head: Annotated[
        Literal["none", "mlp"],
        typer.Option(help="mlp: train through SimCSE's dense + tanh head, saved without it."),
    ] = "none",
    tune_pairs: TuneOpt = None,
    select: Annotated[
        Literal["auto", "raw"],
        typer.Option(help="Keep the weights best with the auto correction on top (what is served) or raw."),
    ] = "auto",
    force: Annotated[bool, typer.Option(help="Write the adapted model even if it did not beat the start.")] = False,
    keep_seen_pairs: Annotated[
        bool,
        typer.Option(
            help="Also score on tuning pairs whose sentences are in the corpus (dropped by default: the "
            "model trains on them, so a gain there is not a gain)."
        ),
    ] = False,
) -> None:
    """Adapt the backbone to a corpus without labels; keeps the weights that score best on the tuning pairs (with
    the auto correction on top, by default) and refuses to write them unless they beat the starting model (or
    --force). Prints the folder."""
    from transformers import AutoModel, AutoTokenizer

    from app.backbones.tokens import local_model
    from app.offline.adapt import AdaptConfig, TuningScorer, adapt, held_out_pairs
    from app.offline.datasets import read_corpus, read_pairs
    from app.offline.regularization import embedding_cosine

    settings = settings_for(pooling)
    views = tuple(a.strip() for a in (augment or "").split(",") if a.strip())
    config = AdaptConfig(
        method,
        settings.pooling,
        epochs,
        batch_size,
        lr,
        max_length=max_length,
        seconds=seconds,
        eval_steps=eval_steps,
        augment=views,
        head=head,
        regularize=regularize,
        reg_weight=reg_weight,
    )
    config.views  # noqa: B018 - an unknown augmentation, or nothing to train, stops here, before any training
    path, _ = local_model(settings)
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = AutoModel.from_pretrained(path, local_files_only=True)
    files = tune_pairs or list(TUNE_PAIRS)
    sentences = read_corpus(corpus)
    pairs, dropped = held_out_pairs([read_pairs(f) for f in files], set() if keep_seen_pairs else set(sentences))
    typer.echo(
        f"tuning pairs: {sum(map(len, pairs))} scored, {dropped} dropped (a sentence is in the corpus)", err=True
    )
    score = TuningScorer(model, tokenizer, pairs, config.pooling, select)
    result = adapt(model, tokenizer, sentences, score, config)
    cosine = {
        "start": round(result.penalties[0], 6) if result.penalties else None,
        "kept": round(embedding_cosine(model).item(), 6),
    }
    summary = {
        "method": method,
        "views": list(config.views),
        "head": head,
        "pooling": config.pooling,
        "regularize": regularize,
        "reg_weight": reg_weight,
        "embedding_cosine": cosine,
        "steps": result.steps,
        "seconds": result.seconds,
        "tuned_on": "+".join(Path(f).name for f in files),
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
    typer.echo(json.dumps(summary), err=True)
    if not result.improved and not force:
        scored = "with the auto correction on top" if select == "auto" else "raw"
        steps = max((value for step, value in result.scores if step > 0), default=None)
        raise fail(
            f"not written: no step beat the starting model on {summary['tuned_on']}, {scored} (start "
            f"{result.start_score:.2f}, best step {steps}); --force writes it anyway",
            EXIT_BAD_INPUT,
        )
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    (out / "adapt.json").write_text(json.dumps(summary, indent=2) + "\n")
    typer.echo(str(out))
