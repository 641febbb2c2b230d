"""What a new collection may be: its settings checked before its backbone loads, and completed once it has."""

from __future__ import annotations

import importlib.util
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from app.backbones.architecture import FolderRefused
from app.backbones.catalog import READS_FOLDER, missing_runtime
from app.core.config import Settings
from app.core.errors import ArtifactError, Conflict, InvalidInput
from app.core.names import Pooling
from app.core.search_settings import SearchSettings
from app.correction.artifact import CorrectionArtifact
from app.correction.publication import load_version, resolve_correction
from app.engine.encoder import BatchingEngine
from app.index.factories import check_factory
from app.index.factory_grammar import parse_factory
from app.services.collections.spec import NAME, READY, SEARCH_SETTINGS, CollectionSpec
from app.store.redis_store import RedisStore


def check_encoder(
    settings: Settings, name: str, backbone: str | None, pooling: str | None, model_path: str | None
) -> tuple[str, str, str | None]:
    """The name, and the encoder a new collection asks for, checked against what this service serves (422 if
    not); omitted ones are the service's own."""
    if not NAME.fullmatch(name):
        raise InvalidInput(f"collection name {name!r} must match {NAME.pattern}")
    backbone = backbone or settings.backbone
    allowed = [settings.backbone, *settings.collection_backbones]
    if backbone not in allowed:
        served = ", ".join(allowed)
        raise InvalidInput(f"backbone {backbone!r} is not served here: {served} (CE_COLLECTION_BACKBONES)")
    if pooling is not None and pooling not in set(Pooling):
        raise InvalidInput(f"pooling must be one of {', '.join(Pooling)}, got {pooling!r}")
    model_path = allowed_model(settings, model_path, backbone)
    pooling = pooling or folder_pooling(settings, backbone, model_path)
    why = runnable_here(settings, backbone, pooling, model_path)
    if why:
        raise InvalidInput(why)
    return backbone, pooling, model_path


def runnable_here(settings: Settings, backbone: str, pooling: str, model_path: str | None) -> str | None:
    """Why this install cannot run the encoder (its runtime absent; an ONNX graph it cannot export), or None."""
    why = missing_runtime(backbone)
    if why is None and backbone == "onnx":
        from app.backbones.onnx import missing_graph
        from app.backbones.tokens import default_model_path

        folder = model_path or settings.model_path or default_model_path()
        try:
            why = missing_graph(Path(folder), pooling, settings.quantize, settings.graphs_dir)
        except FolderRefused as exc:  # a folder this install cannot read: said now, not a 500
            why = str(exc)
    return why


def folder_pooling(settings: Settings, backbone: str, model_path: str | None) -> str:
    """The pooling a collection gets when it names none: CE_POOLING when set, else its model folder's own."""
    if "pooling" in settings.model_fields_set or backbone not in READS_FOLDER:
        return settings.pooling
    from app.backbones.folder import read_folder
    from app.backbones.tokens import default_model_path

    try:
        folder = read_folder(Path(model_path or settings.model_path or default_model_path()))
    except FolderRefused as exc:
        raise InvalidInput(str(exc)) from None
    return folder.pooling or settings.pooling


def allowed_model(settings: Settings, model_path: str | None, backbone: str) -> str | None:
    """A model folder CE_COLLECTION_MODELS lists, as it lists it (None: the service's own CE_MODEL_PATH)."""
    if model_path is None:
        return None
    allowed = {str(Path(p).resolve()): str(p) for p in settings.collection_models}
    folder = allowed.get(str(Path(model_path).resolve())) if "\0" not in model_path else None  # NUL: no folder
    if folder is None:
        raise InvalidInput(f"model_path {model_path!r} is not served here (CE_COLLECTION_MODELS)")
    if backbone == "hashing":
        raise InvalidInput("the hashing backbone has no model folder")
    own = settings.model_path
    return None if own is not None and Path(own).resolve() == Path(folder).resolve() else folder


def search_settings(given: dict[str, Any] | None) -> dict[str, Any]:
    """A new collection's search settings: those given, checked as the service's own settings are (422 if not)."""
    given = {k: v for k, v in (given or {}).items() if v is not None and k in SEARCH_SETTINGS}
    try:
        checked = SearchSettings(**given)
    except ValidationError as exc:
        raise InvalidInput(f"search settings: {exc.errors()[0]['msg']}") from None
    return {k: str(getattr(checked, k)) if k in ("search_mode", "fusion") else getattr(checked, k) for k in given}


def complete(spec: CollectionSpec, engine: BatchingEngine, store: RedisStore, models_dir: Path) -> CollectionSpec:
    """A loading collection made ready with what needed its backbone: the index factory checked against its
    dimension, the correction asked for resolved, the backbone's fingerprint (422 if one cannot serve)."""
    try:
        check_factory(engine.backbone.dim, spec.index_factory)
    except Exception as exc:  # faiss says why in many ways; all mean "not a factory string it can build"
        raise InvalidInput(f"index_factory {spec.index_factory!r}: {exc}") from None
    artifact = correction_for(store, engine, spec.requested_correction or "auto", models_dir)
    return replace(
        spec,
        correction=artifact.id if artifact else None,
        fingerprint=engine.backbone.fingerprint,
        state=READY,
        requested_correction=None,
    )


def correction_for(
    store: RedisStore, engine: BatchingEngine, choice: str | None, models_dir: Path
) -> CorrectionArtifact | None:
    """`auto`: the backbone's current (or bundled) correction; `none` or None: raw; or an artifact id in Redis."""
    if choice is None:
        return None
    if choice in ("auto", "none"):
        return resolve_correction(choice, store, engine.backbone, models_dir)
    try:
        return load_version(store, engine.backbone, choice)
    except ArtifactError as exc:
        raise InvalidInput(f"correction {choice!r} cannot serve this collection: {exc}") from None


def failed_to_load(spec: CollectionSpec) -> Conflict:
    """What a request to a collection that failed to load is answered, until it is deleted."""
    return Conflict(f"collection {spec.name!r} failed to load: {spec.error}; delete it and create it again")


def unservable_factory(factory: str | None) -> str | None:
    """Why a factory string is outside the grammar the service owns, or None (its fit to the dimension is checked
    once the backbone is loaded)."""
    if factory is None:
        return None
    try:
        parse_factory(factory)
    except ValueError as exc:
        return f"index_factory: {exc}"
    return None


def check_factory_form(factory: str | None) -> None:
    """422 before anything is stored for a factory string outside the grammar."""
    if (why := unservable_factory(factory)) is not None:
        raise InvalidInput(why)


def check_shards(shards: int, limit: int) -> int:
    """A collection kept in parts: at most `limit` parts (CE_MAX_COLLECTION_SHARDS), and Ray Serve (the `ray` extra)
    to search them (422 otherwise)."""
    if shards > limit:
        raise InvalidInput(f"shards must be at most {limit} (CE_MAX_COLLECTION_SHARDS), got {shards}")
    if shards and importlib.util.find_spec("ray") is None:
        raise InvalidInput("shards need Ray Serve: install the service with its `ray` extra (pip install '.[ray]')")
    return shards
