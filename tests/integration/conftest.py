"""The integration tests use the command line's fixtures: the CLI as a child process, its corpora and pair files."""

from tests.cli.conftest import corpus, embedded_redis_cleanup, env, graded_pairs, pairs  # noqa: F401
