"""One Settings class, read from ``CE_*`` environment variables (and ``REDIS_URL``, ``RAY_ADDRESS``): the only place
a setting is named, described and given its default; the README's and docs' tables and `serve --help` are made
from it (core/settings_table.py)."""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from functools import lru_cache
from importlib.resources import files
from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from app.core.access import ApiKey
from app.core.names import Pooling
from app.core.search_settings import SearchSettings


def bundled(*parts: str) -> Path:
    """Data shipped inside the package (corrections, STS-B): found alike in a checkout and in site-packages."""
    return Path(str(files("app").joinpath("bundled", *parts))).resolve()


MAX_REQUEST_ITEMS = 4096  # any list in a request, bounded in the schema itself; CE_MAX_TEXTS is at most this
MODELS_DIR = bundled("models")
STS_DIR = bundled("stsbenchmark")
TUNE_PAIRS = (STS_DIR / "sts-train.csv", STS_DIR / "sts-dev.csv")  # what `--method auto` chooses on by default
BATCH_TOKENS_PER_POSITION = 32  # a forward pass holds at most 32 texts of the longest length (8,192 tokens at 256)
VERIFY_PER_SNAPSHOT, REPLICA_TIMEOUT_PER_FOLLOW = 5, 30  # intervals that follow from the two a deployer sets
RETIRED = {  # settings merged or derived since: the start-up error names what took their place
    **{
        f"CE_{name.upper()}": f"CE_SEARCH='{{\"{name}\": ...}}' (a JSON object)" for name in SearchSettings.model_fields
    },
    "CE_VERIFY_INTERVAL": f"CE_SNAPSHOT_INTERVAL (the full check runs every {VERIFY_PER_SNAPSHOT} snapshot intervals)",
    "CE_REPLICA_TIMEOUT": f"CE_FOLLOW_INTERVAL (a replica is given {REPLICA_TIMEOUT_PER_FOLLOW} follow intervals)",
    "CE_RAY_ADDRESS": "RAY_ADDRESS (Ray's own variable; a shard then reserves one CPU of its node)",
    "CE_SHARD_CPUS": "RAY_ADDRESS (on a Ray cluster each shard reserves one CPU; on a local Ray none)",
    "CE_MODEL_NAME": "CE_MODEL_PATH (a model is served under its folder's name)",
    "CE_TORCH_THREADS": "OMP_NUM_THREADS (torch's own variable; unset: one thread per core)",
    "CE_PACKED": "nothing: BERT-type encoders always run on packed tokens (the same vectors, faster)",
    "CE_PASSAGE_OVERLAP": "CE_PASSAGE_TOKENS (consecutive passages share a fifth of it)",
    "CE_MAX_BATCH_TOKENS": f"CE_MAX_LENGTH (a forward pass holds {BATCH_TOKENS_PER_POSITION} times it)",
    "CE_TUNE_PAIRS": "the commands' --tune-pairs option (default STS-B train + dev)",
}


def setting(default: Any, description: str, group: str, **constraints: Any) -> Any:
    """A field of Settings with the group its tables and `serve --help` list it under."""
    return Field(default, description=description, json_schema_extra={"group": group}, **constraints)


class Settings(BaseSettings):
    """Every knob of the service, by group: the tables and `serve --help` list them in this order."""

    model_config = SettingsConfigDict(env_prefix="CE_", extra="ignore", populate_by_name=True)

    backbone: str = setting(
        "onnx",
        "onnx (ONNX Runtime, the weights exported once), huggingface (torch) or hashing (weight-free).",
        "Backbone",
    )
    quantize: Literal["int8", "none"] = setting(
        "int8",
        "onnx: int8 (weights per channel, activations on scales calibrated once, so a text's vector never depends on "
        "its batch) or none (fp32). Part of the fingerprint.",
        "Backbone",
    )
    onnx_dir: Path | None = setting(
        None, "onnx: folder of exported graphs, written on first use; unset: CE_DATA_DIR/onnx.", "Backbone"
    )
    model_path: Path | None = setting(
        None, "A local model folder (a sentence-transformers one, or plain); unset: all-MiniLM-L6-v2.", "Backbone"
    )
    pooling: Pooling = setting(Pooling.MEAN, "Overrides the folder's pooling (unset: its own, else mean).", "Backbone")
    max_length: int = setting(
        256,
        "Tokens per text (unset: the folder's, else 256): /embed truncates, /documents splits longer texts.",
        "Backbone",
        ge=8,
        le=8192,
    )
    batch_size: int = setting(64, "Texts per forward pass, at most (sorted by length).", "Backbone", ge=1, le=4096)
    collection_backbones: list[Literal["onnx", "huggingface", "hashing"]] = setting(
        [], "Backbones a collection may use besides CE_BACKBONE (JSON list), each loaded on first use.", "Backbone"
    )
    collection_models: list[Path] = setting(
        [], "Model folders a collection may use (JSON list; its `model_path`).", "Backbone"
    )
    max_backbones: int = setting(
        0,
        "Backbones kept loaded (0: no limit); past it the least recently used idle one is unloaded with its "
        "collections, which reopen on their next request. The default one stays.",
        "Backbone",
        ge=0,
    )

    correction: str = setting(
        "auto",
        "auto (Redis's current, else the newest matching artifact in CE_MODELS_DIR), none, or a file (pinned for "
        "this process only).",
        "Correction",
    )
    models_dir: Path = setting(
        MODELS_DIR, "Folder scanned for correction artifacts; default the bundled ones.", "Correction"
    )

    search: SearchSettings = setting(
        SearchSettings(),
        "How search ranks and indexes by default: a JSON object of the settings a collection is created with "
        "(search_mode, fusion, lexical_weight, feedback_docs, feedback_weight, lexical_language, lexical_stopwords, "
        'index_probe, index_rerank), e.g. {"fusion": "convex", "lexical_language": "german"}.',
        "Search",
    )
    index_factory: str = setting(
        "auto",
        "FAISS factory string (Flat, HNSW32, IVF4096,Flat, ...: docs/api.md); auto: Flat below 20,000 documents, "
        "IVF up to 2,000,000, IVF of 4-bit PQ codes re-ranked exactly beyond.",
        "Search",
    )
    index_recall: float = setting(
        0.95,
        "recall@10 an approximate index's nprobe / efSearch and re-rank depth are calibrated for.",
        "Search",
        gt=0,
        le=1,
    )
    passage_tokens: int = setting(
        200,
        "A document over the backbone's window is split into passages of this many tokens, on sentence boundaries "
        "(consecutive ones share a fifth).",
        "Search",
        ge=16,
    )

    shards: int = setting(
        0,
        "Split the default collection's dense index into this many shards on Ray Serve (the `ray` extra); 0: one "
        "index here. On a Ray cluster (RAY_ADDRESS) each shard reserves one CPU of its node.",
        "Scale-out",
        ge=0,
        le=64,
    )
    shard_timeout: float = setting(
        2.0, "Seconds a search waits for a shard before answering without it (`partial`).", "Scale-out", gt=0
    )
    max_collection_shards: int = setting(
        16, "Parts a collection may be created with (`shards`, each a shard on Ray); 0: none.", "Scale-out", ge=0, le=64
    )
    ray_address: str | None = setting(
        None,
        "Ray's own variable: the Ray cluster shards run on; unset: a local Ray started with the server.",
        "Scale-out",
        validation_alias=AliasChoices("RAY_ADDRESS"),
    )

    redis_url: str | None = setting(
        None,
        "External Redis (redis+cluster://host:port for a Redis Cluster); unset: an embedded redis-server with its "
        "files in CE_DATA_DIR. REDIS_URL also works.",
        "Store",
        validation_alias=AliasChoices("CE_REDIS_URL", "REDIS_URL"),
    )
    redis_wait_replicas: int | None = setting(
        None,
        "Replicas a write must reach before it is acknowledged (WAIT; else 503, safe to retry); unset: 1 on a "
        "cluster, 0 on one Redis.",
        "Store",
        ge=0,
    )
    data_dir: Path = setting(Path("var"), "Embedded Redis data, index snapshots and fitted artifacts.", "Store")
    key_prefix: str = setting("ce", "Prefix of every Redis key the service writes.", "Store")
    follow_interval: float = setting(
        1.0,
        f"Seconds between checks for other processes' writes and a newly published correction; a replica silent for "
        f"{REPLICA_TIMEOUT_PER_FOLLOW} of them no longer holds the change log back, and rebuilds when it returns.",
        "Store",
        gt=0,
    )
    snapshot_interval: float = setting(
        60.0,
        f"Seconds between snapshots of a changed index; every {VERIFY_PER_SNAPSHOT} of them each stored id is "
        "compared with both indexes (up to 1,000,000 documents) and drift rebuilt.",
        "Store",
        gt=0,
    )

    api_keys: list[ApiKey] = setting(
        [],
        'Bearer tokens (JSON list); empty: no authentication, refused on a non-loopback CE_HOST. {"key": ..., '
        '"scope": "read", "collections": [...]} reads those collections only.',
        "HTTP",
    )
    allow_unauthenticated: bool = setting(
        False, "Serve a non-loopback CE_HOST with no CE_API_KEYS, on purpose (else start-up refuses).", "HTTP"
    )
    host: str = setting("127.0.0.1", "Address uvicorn binds.", "HTTP")
    port: int = setting(8000, "Port uvicorn binds.", "HTTP", ge=1, le=65535)
    request_timeout: float = setting(
        60.0, "Seconds a request waits for its vectors before a 504 (its queued work dropped).", "HTTP", gt=0
    )

    max_texts: int = setting(
        256, "Texts, pairs or documents per request (at most 4096).", "Limits", ge=1, le=MAX_REQUEST_ITEMS
    )
    max_text_chars: int = setting(20_000, "Characters per text.", "Limits", ge=1)
    max_body_bytes: int = setting(8_000_000, "Request body size; larger bodies get 413.", "Limits", ge=1024)
    max_k: int = setting(1000, "Largest k accepted by /search; pages reach 10 times as deep.", "Limits", ge=1)
    max_fits: int = setting(1, "Fits over HTTP running at once; more get 429 with Retry-After.", "Limits", ge=1)
    max_request_tokens: int = setting(
        262_144, "Tokens one request may send to be encoded; more is a 413 before any encoding.", "Limits", ge=256
    )
    round_tokens: int = setting(
        1024,
        "Tokens the encoder takes into one round, shared among waiting requests: a short one waits one round at most.",
        "Limits",
        ge=64,
    )
    max_queue_texts: int = setting(
        2048, "Texts waiting to be encoded past which a request gets 429 with Retry-After.", "Limits", ge=1
    )

    @field_validator("api_keys", mode="before")
    @classmethod
    def _no_blank_key(cls, keys: Any) -> Any:
        """Named by position, as the variable holds them: a blank key would let anyone in."""
        for i, entry in enumerate(keys if isinstance(keys, list) else []):
            key = entry.get("key", "") if isinstance(entry, dict) else entry
            secret = key.get_secret_value() if isinstance(key, SecretStr) else key
            if isinstance(secret, str) and not secret.strip():
                raise ValueError(f"CE_API_KEYS[{i}] is empty; every key must be a non-blank token")
        return keys

    @property
    def graphs_dir(self) -> Path:
        """Where the onnx backbone finds (and, with torch installed, writes) its exported graphs."""
        return self.onnx_dir or self.data_dir / "onnx"

    @property
    def max_batch_tokens(self) -> int:
        """Padded tokens per forward pass: long texts get smaller batches."""
        return BATCH_TOKENS_PER_POSITION * self.max_length

    @property
    def verify_interval(self) -> float:
        """Seconds between full comparisons of the store with the indexes."""
        return VERIFY_PER_SNAPSHOT * self.snapshot_interval

    @property
    def replica_timeout(self) -> float:
        """Seconds a replica's reported change-log position holds the log back."""
        return REPLICA_TIMEOUT_PER_FOLLOW * self.follow_interval

    @property
    def shard_cpus(self) -> float:
        """Logical CPUs a shard reserves: one on a Ray cluster (so shards spread over its nodes), none locally."""
        return 1.0 if self.ray_address else 0.0

    def check_exposure(self) -> None:
        """Refuse to serve an address other machines can reach with no keys, unless that is asked on purpose."""
        loopback = self.host == "localhost" or _is_loopback(self.host)
        if not (self.api_keys or self.allow_unauthenticated or loopback):
            raise ValueError(
                f"CE_HOST={self.host} is reachable from other machines and CE_API_KEYS is empty: set keys "
                "(a JSON list, e.g. CE_API_KEYS='[\"a-long-random-token\"]'), or CE_ALLOW_UNAUTHENTICATED=true to "
                "serve without them on purpose"
            )


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name: only "localhost" is known to stay on this machine
        return False


def variable_of(name: str) -> str:
    """The environment variable a setting is read from."""
    return "RAY_ADDRESS" if name == "ray_address" else f"CE_{name.upper()}"


def unknown_variables(environ: Mapping[str, str]) -> list[str]:
    """CE_* variables no setting reads, each with what replaced it if it was retired: most likely a typo or an old
    name that would otherwise be silently ignored."""
    known = {variable_of(name) for name in Settings.model_fields} | {"CE_REDIS_URL"}
    unknown = sorted(name for name in environ if name.startswith("CE_") and name not in known)
    return [f"{name} (retired; use {RETIRED[name]})" if name in RETIRED else name for name in unknown]


@lru_cache
def get_settings() -> Settings:
    """Settings from the environment, read once per process; an unknown CE_* variable is an error."""
    unknown = unknown_variables(os.environ)
    if unknown:
        raise ValueError(f"unknown setting {', '.join(unknown)}; docs/configuration.md lists them all")
    return Settings()
