"""Whether an int8 graph keeps its model: checked against its fp32 source when it is made, on the bundled STS-B dev
pairs (never a correction's test split), and kept beside it, so a backbone serves int8 only where it holds."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from app.backbones.static_scales import BATCH, model_inputs
from app.backbones.tokens import Tokenizer
from app.core.config import STS_DIR

if TYPE_CHECKING:
    from app.backbones.folder import ModelFolder

CHECK_PAIRS = STS_DIR / "sts-dev.csv"
PASSAGES, PASSAGE_SENTENCES = 40, 16  # long inputs too: int8 error grows with length
# The bar: every text's centred cosine to its fp32 vector at least this, and STS-B dev within this many points.
MIN_CENTRED_COSINE = 0.95
MAX_STS_DROP = 1.0


@dataclass(frozen=True)
class Int8Check:
    """Int8 against fp32: the lowest and mean cosine of each text's two vectors, centred on the fp32 mean (a narrow
    cone hides nothing), and both graphs' Spearman x100 on STS-B dev."""

    lowest_cosine: float
    mean_cosine: float
    sts_fp32: float
    sts_int8: float
    texts: int

    @property
    def keeps(self) -> bool:
        return self.lowest_cosine >= MIN_CENTRED_COSINE and self.sts_int8 >= self.sts_fp32 - MAX_STS_DROP

    @property
    def reason(self) -> str:
        """What the check found, in words: why int8 is served, or why fp32 is."""
        verdict = "keeps the model" if self.keeps else "falls short"
        return (
            f"{verdict}: lowest centred cosine to fp32 {self.lowest_cosine:.4f} over {self.texts} texts (bar "
            f"{MIN_CENTRED_COSINE}), STS-B dev {self.sts_int8:.2f} against fp32 {self.sts_fp32:.2f} (at most "
            f"{MAX_STS_DROP} lower)"
        )

    def summary(self) -> dict[str, object]:
        return {**asdict(self), "keeps": self.keeps}


def check_texts() -> tuple[list[str], list[str], list[float]]:
    """STS-B dev's pairs (left, right, score)."""
    rows = [line.rstrip("\n").split("\t") for line in CHECK_PAIRS.read_text(encoding="utf-8").splitlines()]
    rows = [r for r in rows if len(r) >= 7]
    return [r[5] for r in rows], [r[6] for r in rows], [float(r[4]) for r in rows]


def _vectors(graph: Path, tokens: Tokenizer, texts: list[str], folder: ModelFolder | None) -> np.ndarray:
    import onnxruntime as ort

    from app.backbones.folder import apply_heads

    session = ort.InferenceSession(str(graph), providers=["CPUExecutionProvider"])
    names = {i.name for i in session.get_inputs()}
    ids = tokens.ids(texts)
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))  # little padding
    out = np.empty((len(ids), 0), dtype=np.float32)
    for start in range(0, len(order), BATCH):
        rows = order[start : start + BATCH]
        pooled = np.asarray(session.run(None, model_inputs([ids[i] for i in rows], tokens.pad_id, names))[0])
        vectors = apply_heads(folder, pooled) if folder is not None else pooled
        if out.shape[1] == 0:
            out = np.empty((len(ids), vectors.shape[1]), dtype=np.float32)
        out[rows] = vectors
    return out


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Each row's cosine to the same row of the other."""
    norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    return np.asarray(np.einsum("ij,ij->i", a, b) / np.maximum(norms, 1e-12))


def graph_agreement(first: Path, second: Path, tokens: Tokenizer, texts: list[str]) -> float:
    """The lowest cosine between two graphs' vectors of the same texts."""
    return float(cosines(_vectors(first, tokens, texts, None), _vectors(second, tokens, texts, None)).min())


def _spearman(vectors: np.ndarray, n: int, scores: list[float]) -> float:
    from scipy.stats import spearmanr  # only where a graph is made: serving never imports scipy.stats

    return float(spearmanr(cosines(vectors[:n], vectors[n : 2 * n]), scores).statistic * 100)


def check_int8(fp32: Path, int8: Path, folder: ModelFolder, max_length: int = 512) -> Int8Check:
    """The int8 graph against its fp32 source, through the folder's heads."""
    from app.backbones.architecture import read_architecture

    left, right, scores = check_texts()
    rng = np.random.default_rng(0)
    passages = [" ".join(rng.choice(left, PASSAGE_SENTENCES)) for _ in range(PASSAGES)]
    positions = read_architecture(folder.weights).positions
    tokens = Tokenizer(
        folder.weights, min(max_length, positions, folder.max_length or max_length), lower_case=folder.lower_case
    )
    texts = [*left, *right, *passages]
    a, b = _vectors(fp32, tokens, texts, folder), _vectors(int8, tokens, texts, folder)
    mean = a.mean(axis=0)
    centred = cosines(a - mean, b - mean)
    n = len(left)
    return Int8Check(
        lowest_cosine=round(float(centred.min()), 4),
        mean_cosine=round(float(centred.mean()), 4),
        sts_fp32=round(_spearman(a, n, scores), 2),
        sts_int8=round(_spearman(b, n, scores), 2),
        texts=len(texts),
    )


def check_path(graph: Path) -> Path:
    return graph.with_name(graph.name.removesuffix(".onnx") + ".check.json")


def write_check(graph: Path, check: Int8Check) -> None:
    check_path(graph).write_text(json.dumps(asdict(check)))


def read_check(graph: Path) -> Int8Check | None:
    """The verdict kept beside an int8 graph; None for a graph made before checks were kept."""
    path = check_path(graph)
    return Int8Check(**json.loads(path.read_text())) if path.is_file() else None
