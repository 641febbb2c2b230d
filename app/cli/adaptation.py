"""`adapt`: training the backbone on a corpus (SimCSE, ConSERT, the embedding regularizer), written only if it
helps."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Annotated, Literal

import typer

from app.cli.options import EXIT_BAD_INPUT, CorpusOpt, PoolingOpt, TuneOpt, fail, guarded, settings_for
from app.core.config import TUNE_PAIRS

OutOpt = Annotated[Path, typer.Option(help="Folder for the adapted model: serve it with CE_MODEL_PATH.")]
MethodOpt = Annotated[
    Literal["simcse", "consert", "none"],
    typer.Option(help="simcse: dropout views; consert: augmented; none: the regularizer alone."),
]
RegularizeOpt = Annotated[
    Literal["none", "embedding"],
    typer.Option(help="embedding: add Gao et al.'s penalty on the mean cosine between word-embedding rows."),
]
RegWeightOpt = Annotated[float, typer.Option(min=0, help="The regularizer's weight in the loss.")]
EpochsOpt = Annotated[int, typer.Option(min=1, help="Passes over the corpus.")]
BatchOpt = Annotated[int, typer.Option(min=2, help="Sentences per step (each one's negatives).")]
LrOpt = Annotated[float, typer.Option(min=0, help="AdamW learning rate.")]
SecondsOpt = Annotated[float | None, typer.Option(min=1, help="Stop training after this long.")]
EvalStepsOpt = Annotated[int | None, typer.Option(min=1, help="Also score on the tuning pairs every this many steps.")]
MaxLengthOpt = Annotated[int, typer.Option(min=8, help="Tokens per training sentence.")]
AugmentOpt = Annotated[
    str | None,
    typer.Option(
        help="Views, comma-separated: dropout, shuffle, token-cutoff, feature-cutoff; default: "
        "dropout (simcse), shuffle,feature-cutoff (consert)."
    ),
]
HeadOpt = Annotated[
    Literal["none", "mlp"], typer.Option(help="mlp: train through SimCSE's dense + tanh head, saved without it.")
]
SelectOpt = Annotated[
    Literal["auto", "raw"],
    typer.Option(help="Keep the weights best with the auto correction on top (what is served) or raw."),
]
ForceOpt = Annotated[bool, typer.Option(help="Write the adapted model even if it did not beat the start.")]
KeepSeenOpt = Annotated[
    bool,
    typer.Option(
        help="Also score on tuning pairs whose sentences are in the corpus (dropped by default: the "
        "model trains on them, so a gain there is not a gain)."
    ),
]


@guarded
def adapt_backbone(
    corpus: CorpusOpt,
    out: OutOpt,
    method: MethodOpt = "simcse",
    regularize: RegularizeOpt = "none",
    reg_weight: RegWeightOpt = 1.0,
    pooling: PoolingOpt = None,
    epochs: EpochsOpt = 1,
    batch_size: BatchOpt = 64,
    lr: LrOpt = 3e-5,
    seconds: SecondsOpt = None,
    eval_steps: EvalStepsOpt = None,
    max_length: MaxLengthOpt = 64,
    augment: AugmentOpt = None,
    head: HeadOpt = "none",
    tune_pairs: TuneOpt = None,
    select: SelectOpt = "auto",
    force: ForceOpt = False,
    keep_seen_pairs: KeepSeenOpt = False,
) -> None:
    """Adapt the backbone to a corpus without labels; keeps the weights that score best on the tuning pairs (with
    the auto correction on top, by default) and refuses to write them unless they beat the starting model (or
    --force). Prints the folder."""
    from app.offline.adapt import AdaptConfig
    from app.offline.adaptation import adapt_served_model

    settings = settings_for(pooling)
    config = AdaptConfig(
        method,
        settings.pooling,
        epochs,
        batch_size,
        lr,
        max_length=max_length,
        seconds=seconds,
        eval_steps=eval_steps,
        augment=tuple(a.strip() for a in (augment or "").split(",") if a.strip()),
        head=head,
        regularize=regularize,
        reg_weight=reg_weight,
    )
    config.views  # noqa: B018 - an unknown augmentation, or nothing to train, stops here, before any training
    say = partial(typer.echo, err=True)
    files = tune_pairs or list(TUNE_PAIRS)
    adapted = adapt_served_model(settings, corpus, config, files, select=select, keep_seen=keep_seen_pairs, say=say)
    say(json.dumps(adapted.summary))
    if not adapted.result.improved and not force:
        raise fail(adapted.refusal(), EXIT_BAD_INPUT)
    adapted.save(out)
    typer.echo(str(out))
