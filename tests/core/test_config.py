"""Settings: a CE_* variable no setting reads is named, and an address others can reach wants keys."""

from __future__ import annotations

import pytest

from app.core.config import Settings, unknown_variables


def test_a_mistyped_variable_is_found_and_the_known_ones_are_not():
    environ = {"CE_POLING": "cls", "CE_POOLING": "cls", "REDIS_URL": "x", "CE_REDIS_URL": "x", "HOME": "/"}
    assert unknown_variables(environ) == ["CE_POLING"]


@pytest.mark.parametrize(
    ("host", "keys", "on_purpose", "refused"),
    [
        ("127.0.0.1", [], False, False),
        ("localhost", [], False, False),
        ("::1", [], False, False),
        ("0.0.0.0", [], False, True),
        ("0.0.0.0", ["a-key"], False, False),
        ("0.0.0.0", [], True, False),
        ("example.org", [], False, True),
    ],
)
def test_serving_other_machines_without_keys_is_refused_unless_asked(host, keys, on_purpose, refused):
    settings = Settings(host=host, api_keys=keys, allow_unauthenticated=on_purpose)
    if refused:
        with pytest.raises(ValueError, match="CE_API_KEYS"):
            settings.check_exposure()
    else:
        settings.check_exposure()


def test_scoped_keys_are_read_from_json_and_a_blank_one_is_named_by_position(monkeypatch):
    monkeypatch.setenv("CE_API_KEYS", '["a", {"key": "b", "scope": "read", "collections": ["t"]}]')
    first, second = Settings().api_keys
    assert (first.scope, first.collections) == ("write", None) and (second.scope, second.collections) == (
        "read",
        ("t",),
    )
    monkeypatch.setenv("CE_API_KEYS", '["a", {"key": " "}]')
    with pytest.raises(ValueError, match=r"CE_API_KEYS\[1\] is empty"):
        Settings()


@pytest.mark.parametrize(
    ("old", "named"),
    [
        ("CE_FUSION", "CE_SEARCH='{\"fusion\": ...}'"),
        ("CE_INDEX_PROBE", "CE_SEARCH='{\"index_probe\": ...}'"),
        ("CE_VERIFY_INTERVAL", "CE_SNAPSHOT_INTERVAL"),
        ("CE_RAY_ADDRESS", "RAY_ADDRESS"),
        ("CE_TUNE_PAIRS", "--tune-pairs"),
    ],
)
def test_a_retired_variable_stops_the_start_and_names_its_replacement(monkeypatch, old, named):
    from app.core.config import get_settings

    get_settings.cache_clear()
    monkeypatch.setenv(old, "1")
    try:
        with pytest.raises(ValueError, match="retired") as refused:
            get_settings()
    finally:
        get_settings.cache_clear()
    assert old in str(refused.value) and named in str(refused.value)


def test_intervals_follow_from_the_two_a_deployer_sets():
    settings = Settings(follow_interval=0.5, snapshot_interval=10, max_length=128)
    assert (settings.replica_timeout, settings.verify_interval, settings.max_batch_tokens) == (15.0, 50.0, 4096)
    assert Settings(ray_address="10.0.0.1:6379").shard_cpus == 1.0 and Settings().shard_cpus == 0.0
