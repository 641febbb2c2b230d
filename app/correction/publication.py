"""Where correction artifacts live (files and Redis) and the rule that picks the one to serve."""

from __future__ import annotations

import logging
from dataclasses import asdict
from pathlib import Path
from typing import Any

from app.backbones.base import Backbone
from app.core.errors import ArtifactError
from app.correction.artifact import ArtifactFormatError, CorrectionArtifact
from app.correction.pipeline import Correction
from app.correction.sif import WEIGHTS_KEY as SIF_WEIGHTS
from app.store.redis_store import RedisStore

log = logging.getLogger(__name__)
SUFFIX = ".npz"


def read_artifact_file(path: Path) -> CorrectionArtifact:
    """Load and verify an artifact file."""
    path = Path(path)
    if not path.is_file():
        raise ArtifactError(f"correction artifact not found: {path}")
    try:
        return CorrectionArtifact.from_bytes(path.read_bytes())
    except ArtifactFormatError as exc:
        raise ArtifactError(f"{path}: {exc}") from exc


def write_artifact_file(artifact: CorrectionArtifact, path: Path) -> Path:
    """Write atomically (temporary file, then rename) so a reader never sees half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_bytes(artifact.to_bytes())
    tmp.replace(path)
    return path


def differs(artifact: CorrectionArtifact, backbone: Backbone) -> str:
    """Which part of the two fingerprints differs, as far as the artifact recorded its parts."""
    fitted: dict[str, Any] = dict(artifact.extra.get("backbone") or {})
    serving: dict[str, Any] = dict(getattr(backbone, "fingerprint_parts", None) or {})
    if not fitted:  # fitted before the parts were kept: what BackboneRef holds
        fitted = {k: v for k, v in asdict(artifact.backbone).items() if k != "fingerprint"}
        serving = {"name": backbone.name, "pooling": backbone.pooling, "dim": backbone.dim}
    fields = sorted(k for k in fitted.keys() & serving.keys() if str(fitted[k]) != str(serving[k]))
    fields += sorted(fitted.keys() ^ serving.keys())
    if not fields:
        return "their weights, length, prompts or runtime differ"
    return "; ".join(f"{k}: {fitted.get(k, '-')} fitted, {serving.get(k, '-')} serving" for k in fields)


def check_compatible(artifact: CorrectionArtifact, backbone: Backbone) -> None:
    """Refuse an artifact fitted on another backbone, pooling, length or dimension."""
    ref = artifact.backbone
    if ref.fingerprint != backbone.fingerprint:
        raise ArtifactError(
            f"artifact {artifact.id} was fitted on backbone {ref.name}/{ref.pooling} "
            f"(fingerprint {ref.fingerprint}), not on the serving {backbone.name}/{backbone.pooling} "
            f"(fingerprint {backbone.fingerprint}): {differs(artifact, backbone)}; refit it with `python -m app fit`"
        )
    if ref.dim != backbone.dim or artifact.mu.shape[0] != backbone.dim:
        raise ArtifactError(f"artifact {artifact.id} expects dim {ref.dim}, backbone has {backbone.dim}")
    weights = artifact.arrays.get(SIF_WEIGHTS)
    if weights is not None and weights.shape != (backbone.vocab_size,):
        raise ArtifactError(
            f"artifact {artifact.id} weighs {weights.shape} tokens; the backbone's vocabulary has {backbone.vocab_size}"
        )


def find_bundled(models_dir: Path, backbone: Backbone) -> CorrectionArtifact | None:
    """The newest valid artifact in `models_dir` fitted on exactly this backbone, if any."""
    matches = []
    for path in sorted(Path(models_dir).glob(f"**/*{SUFFIX}")):
        try:
            art = read_artifact_file(path)
        except ArtifactError as exc:
            log.warning("skipping %s", exc)
            continue
        if art.backbone.fingerprint == backbone.fingerprint:
            matches.append(art)
    return max(matches, key=lambda a: a.created_at, default=None)


def publish(store: RedisStore, artifact: CorrectionArtifact, *, make_current: bool = True) -> None:
    """Cache the artifact in Redis under its version; move `current` to it in the same transaction."""
    store.artifacts.put(artifact.backbone.fingerprint, artifact.id, artifact.to_bytes(), make_current=make_current)


def load_current(store: RedisStore, backbone: Backbone) -> CorrectionArtifact | None:
    """The artifact Redis marks as current for this backbone, verified."""
    artifact_id = store.artifacts.current_id(backbone.fingerprint)
    return None if artifact_id is None else load_version(store, backbone, artifact_id)


def load_version(store: RedisStore, backbone: Backbone, artifact_id: str) -> CorrectionArtifact:
    """A version Redis keeps for this backbone, verified (ArtifactError if absent, corrupt or foreign)."""
    data = store.artifacts.get(backbone.fingerprint, artifact_id)
    if data is None:
        raise ArtifactError(f"redis holds no artifact {artifact_id} for backbone {backbone.fingerprint}")
    try:
        artifact = CorrectionArtifact.from_bytes(data)
    except ArtifactFormatError as exc:
        raise ArtifactError(f"artifact {artifact_id} in redis: {exc}") from exc
    check_compatible(artifact, backbone)
    return artifact


def resolve_correction(
    choice: str, store: RedisStore, backbone: Backbone, models_dir: Path
) -> CorrectionArtifact | None:
    """`none`: no correction. A file: that artifact, for this process only (kept in Redis as a version, but
    `current`, which every other replica follows, does not move). `auto`: Redis current, else bundled."""
    if choice == "none":
        return None
    if choice != "auto":
        given = read_artifact_file(Path(choice))
        check_compatible(given, backbone)
        publish(store, given, make_current=False)
        return given
    artifact: CorrectionArtifact | None
    try:
        artifact = load_current(store, backbone)
    except ArtifactError as exc:
        log.error("refusing the current artifact in redis: %s", exc)
        artifact = newest_valid_version(store, backbone)
    if artifact is not None:
        return artifact
    artifact = find_bundled(models_dir, backbone)
    if artifact is not None:
        log.info("publishing bundled artifact %s to redis", artifact.id)
        publish(store, artifact)
    else:
        log.warning("no correction artifact for backbone %s; serving raw vectors", backbone.fingerprint)
    return artifact


def newest_valid_version(store: RedisStore, backbone: Backbone) -> CorrectionArtifact | None:
    """The newest version in Redis that loads and fits this backbone: what served before a bad publish."""
    for artifact_id in reversed(store.artifacts.versions(backbone.fingerprint)):
        data = store.artifacts.get(backbone.fingerprint, artifact_id)
        try:
            artifact = CorrectionArtifact.from_bytes(data or b"")
            check_compatible(artifact, backbone)
        except (ArtifactFormatError, ArtifactError):
            continue
        log.warning("serving %s, the newest valid version in redis", artifact.id)
        return artifact
    return None


class PublishedFollower:
    """What a running service follows: the correction Redis marks current, when it is not the one served.

    Only `CE_CORRECTION=auto` follows Redis; `none` and a pinned file stay as configured. An artifact that
    fails to load is refused and said once, not at every follow, while the served one keeps serving.
    """

    def __init__(self, choice: str, store: RedisStore, backbone: Backbone):
        self.choice = choice
        self.store = store
        self.backbone = backbone
        self._refused: str | None = None

    def __call__(self, serving_id: str | None) -> Correction | None:
        if self.choice != "auto":
            return None
        current = self.store.artifacts.current_id(self.backbone.fingerprint)
        if not current or current in (serving_id, self._refused):
            return None
        try:
            artifact = load_current(self.store, self.backbone)
        except ArtifactError as exc:
            log.error("refusing the published artifact; %s keeps serving: %s", serving_id, exc)
            self._refused = current
            return None
        return Correction(artifact) if artifact is not None and artifact.id == current else None
