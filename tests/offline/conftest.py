"""The ingestion test runs `python -m app index`: it takes the command line's fixtures."""

from tests.cli.conftest import corpus, embedded_redis_cleanup, env  # noqa: F401
