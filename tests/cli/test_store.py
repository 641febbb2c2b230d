"""`copy-store`: a dataset written before the cluster, on one Redis, moved onto a cluster and read there."""

import json

import pytest
import redis

from app.store import RedisStore
from tests.cli.conftest import run_cli
from tests.store.test_migration import NAMED, write_layout_1


@pytest.mark.process
def test_an_old_dataset_moves_onto_a_cluster_and_a_second_copy_is_refused(redis_url, redis_cluster, key_prefix):
    write_layout_1(redis.Redis.from_url(redis_url), key_prefix, docs=300)
    env = {"CE_KEY_PREFIX": key_prefix, "CE_REDIS_URL": redis_cluster.url}
    run = run_cli("copy-store", "--source", redis_url, env=env)
    assert run.returncode == 0, run.stderr
    figures = json.loads(run.stdout.strip().splitlines()[-1])
    assert figures["documents"] == 600 and figures["copied"] == figures["source_keys"]
    store = RedisStore.from_url(redis_cluster.url, prefix=key_prefix)
    assert store.documents.count(NAMED) == 300 and store.judgments.all(NAMED) == [("q", "d:1", 2)]
    again = run_cli("copy-store", "--source", redis_url, env=env)
    assert again.returncode == 2 and "--force copies over them" in again.stderr
    assert run_cli("copy-store", "--source", redis_url, "--force", env=env).returncode == 0
    assert run_cli("copy-store", "--help", env=env).returncode == 0
