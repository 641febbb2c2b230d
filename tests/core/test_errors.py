"""Domain errors say what went wrong and, when a retry will likely mend it, after how long; no HTTP in them."""

from __future__ import annotations

import pytest

from app.core import errors

KINDS = [
    errors.InvalidInput,
    errors.BadRequest,
    errors.TooLarge,
    errors.Forbidden,
    errors.NotFound,
    errors.Conflict,
    errors.NotReady,
    errors.RequestTimeout,
    errors.Overloaded,
    errors.StoreUnavailable,
    errors.ArtifactError,
]


@pytest.mark.parametrize("error", KINDS)
def test_each_error_has_its_own_type_and_message_and_no_status(error):
    exc = error("what happened")
    assert exc.message == "what happened" and str(exc) == "what happened" and exc.type != errors.ServiceError.type
    assert not hasattr(exc, "status") and not hasattr(exc, "headers")


def test_retry_after_only_where_a_retry_will_do():
    assert errors.NotReady("loading").retry_after is None
    assert errors.NotReady("loading", retry_after=5).retry_after == 5
    assert errors.Overloaded("busy").retry_after == 1
    assert errors.InvalidInput("bad").retry_after is None
    assert len({kind.type for kind in KINDS}) == len(KINDS)
