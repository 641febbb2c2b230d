"""The fitted correction as a versioned, checksummed artifact: its format and its checksum, nothing else."""

from __future__ import annotations

import hashlib
import io
import json
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

import numpy as np

from app.correction.search_space import check_search_arrays

FORMAT_VERSION = 1


class ArtifactFormatError(ValueError):
    """Raised when bytes are not a valid artifact or their checksum does not match."""


@dataclass(frozen=True)
class BackboneRef:
    """What produced the vectors a correction was fitted on."""

    name: str
    fingerprint: str
    dim: int
    pooling: str


@dataclass(frozen=True)
class CorpusRef:
    """Which corpus the correction was fitted on: size and content hash."""

    size: int
    sha256: str
    source: str = ""


ID_DECIMALS = 6  # float noise below this (another CPU's LAPACK: +-1e-15 where 0 is meant) does not rename a fit


def _hashed(value: Any, exact: bool = False) -> bytes:
    """A float array's values to ID_DECIMALS, each zero positive (`exact`: as they are, the ids made before)."""
    value = np.asarray(value)
    if np.issubdtype(value.dtype, np.floating) and not exact:
        value = np.round(value.astype(np.float64), ID_DECIMALS) + 0.0
    return np.ascontiguousarray(value).tobytes()


def content_id(artifact: CorrectionArtifact, *, exact: bool = False) -> str:
    """`{method}-{hash}` of what the correction is: refitting the same thing, here or elsewhere, gives the same id."""
    a = artifact
    content = hashlib.sha256(_hashed(a.mu, exact) + _hashed(a.W, exact))
    for name, value in sorted(a.arrays.items()):
        content.update(name.encode() + _hashed(value, exact))
    content.update(json.dumps([a.method, a.params, asdict(a.backbone), asdict(a.corpus)], sort_keys=True).encode())
    return f"{a.method}-{content.hexdigest()[:12]}"


@dataclass(frozen=True)
class CorrectionArtifact:
    """mu and W of `y = (x - mu) @ W`, with everything needed to trust and trace them."""

    method: str
    params: dict[str, Any]
    backbone: BackboneRef
    corpus: CorpusRef
    mu: np.ndarray = field(repr=False)
    W: np.ndarray = field(repr=False)
    created_at: str = ""
    id: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    arrays: dict[str, Any] = field(
        default_factory=dict, repr=False
    )  # flow and SIF stages before (x - mu) @ W; search's own map

    @classmethod
    def create(
        cls,
        *,
        method: str,
        params: dict[str, Any],
        backbone: BackboneRef,
        corpus: CorpusRef,
        mu: np.ndarray,
        W: np.ndarray,
        extra: dict[str, Any] | None = None,
        arrays: dict[str, np.ndarray] | None = None,
    ) -> CorrectionArtifact:
        """A new artifact; its id is a content hash, so refitting the same thing gives the same id."""
        mu = np.ascontiguousarray(mu, dtype=np.float32)
        W = np.ascontiguousarray(W, dtype=np.float32)
        if mu.shape != (backbone.dim,) or W.ndim != 2 or W.shape[0] != backbone.dim:
            raise ValueError(f"mu {mu.shape} and W {W.shape} do not fit backbone dim {backbone.dim}")
        arrays = {k: np.ascontiguousarray(v) for k, v in sorted((arrays or {}).items())}
        made = cls(
            method=method,
            params=dict(params),
            backbone=backbone,
            corpus=corpus,
            mu=mu,
            W=W,
            created_at=datetime.now(UTC).isoformat(timespec="seconds"),
            extra=dict(extra or {}),
            arrays=arrays,
        )
        return replace(made, id=content_id(made))

    @property
    def out_dim(self) -> int:
        return int(self.W.shape[1])

    def metadata(self) -> dict[str, Any]:
        """Everything but the arrays, JSON-ready; what /info and the store's index show."""
        return {
            "format": FORMAT_VERSION,
            "id": self.id,
            "method": self.method,
            "params": self.params,
            "backbone": asdict(self.backbone),
            "corpus": asdict(self.corpus),
            "created_at": self.created_at,
            "in_dim": self.backbone.dim,
            "out_dim": self.out_dim,
            "extra": self.extra,
        }

    def checksum(self) -> str:
        """SHA-256 over the arrays and the canonical metadata."""
        meta = json.dumps(self.metadata(), sort_keys=True).encode()
        digest = hashlib.sha256(self.mu.tobytes() + self.W.tobytes() + meta)
        for name, value in sorted(self.arrays.items()):
            digest.update(name.encode() + np.ascontiguousarray(value).tobytes())
        return digest.hexdigest()

    def to_bytes(self) -> bytes:
        """An .npz holding mu, W and the metadata with its checksum."""
        meta = {**self.metadata(), "checksum": self.checksum()}
        buf = io.BytesIO()
        meta_bytes = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
        np.savez(buf, mu=self.mu, W=self.W, meta=meta_bytes, **{f"a:{k}": v for k, v in self.arrays.items()})
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> CorrectionArtifact:
        """Parse and verify; raises ArtifactFormatError on anything corrupt."""
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as z:
                mu, W, meta = z["mu"], z["W"], json.loads(z["meta"].tobytes().decode())
                arrays = {k[2:]: z[k] for k in z.files if k.startswith("a:")}
            art = cls(
                method=meta["method"],
                params=meta["params"],
                backbone=BackboneRef(**meta["backbone"]),
                corpus=CorpusRef(**meta["corpus"]),
                mu=mu.astype(np.float32, copy=False),
                W=W.astype(np.float32, copy=False),
                created_at=meta["created_at"],
                id=meta["id"],
                extra=meta.get("extra", {}),
                arrays=arrays,
            )
        except ArtifactFormatError:
            raise
        except Exception as exc:  # np.load and json raise many kinds; all mean "not an artifact"
            raise ArtifactFormatError(f"not a correction artifact: {exc}") from exc
        if meta.get("format") != FORMAT_VERSION:
            raise ArtifactFormatError(f"unsupported artifact format {meta.get('format')!r}")
        if art.checksum() != meta.get("checksum"):
            raise ArtifactFormatError(f"checksum mismatch for artifact {meta.get('id')!r}: file is corrupt")
        art.check_structure()
        return art

    def check_structure(self) -> None:
        """What a checksum cannot vouch for (anyone can reseal a file): shapes that fit, finite numbers, and an
        id that is the hash of the content, so one id never names two different corrections."""
        dim = self.backbone.dim
        if self.mu.shape != (dim,) or self.W.ndim != 2 or self.W.shape[0] != dim or self.W.shape[1] < 1:
            raise ArtifactFormatError(
                f"artifact {self.id!r}: mu {self.mu.shape} and W {self.W.shape} are not the shape of a map "
                f"from dim {dim}"
            )
        for name, value in {"mu": self.mu, "W": self.W, **self.arrays}.items():
            if np.issubdtype(value.dtype, np.floating) and not np.isfinite(value).all():
                raise ArtifactFormatError(f"artifact {self.id!r}: {name} holds values that are not finite")
        if why := check_search_arrays(self.arrays, dim):
            raise ArtifactFormatError(f"artifact {self.id!r}: {why}")
        expected = content_id(self)
        if self.id not in (expected, content_id(self, exact=True)):  # exact: an artifact made before rounding
            raise ArtifactFormatError(f"artifact {self.id!r}: its id is not the hash of its content ({expected})")
