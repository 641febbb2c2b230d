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
