"""Domain errors carry their HTTP status, and those a client should retry say when."""

from __future__ import annotations

import pytest

from app.core import errors


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (errors.InvalidInput, 422),
        (errors.BadRequest, 400),
        (errors.TooLarge, 413),
        (errors.Forbidden, 403),
        (errors.NotFound, 404),
        (errors.Conflict, 409),
        (errors.NotReady, 503),
        (errors.RequestTimeout, 504),
        (errors.Overloaded, 429),
        (errors.StoreUnavailable, 503),
    ],
)
def test_each_error_has_its_status_and_message(error, status):
    exc = error("what happened")
    assert exc.status == status and exc.message == "what happened" and str(exc) == "what happened"


def test_retry_after_only_where_a_retry_will_do():
    assert errors.NotReady("loading").headers is None
    assert errors.NotReady("loading", retry_after=5).headers == {"Retry-After": "5"}
    assert errors.Overloaded("busy").headers == {"Retry-After": "1"}
    assert errors.InvalidInput("bad").headers is None
