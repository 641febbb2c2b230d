"""The Dockerfile and compose file agree with the app's settings (tests/container/ builds and runs the image)."""

import re

import pytest
import yaml

from app.core.config import Settings
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def compose():
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


@pytest.fixture(scope="module")
def dockerfile():
    return (ROOT / "Dockerfile").read_text()


def setting_env_names() -> set[str]:
    names = {f"CE_{name.upper()}" for name in Settings.model_fields}
    return names | {"REDIS_URL"}


def test_compose_services_healthchecks_and_volume(compose):
    api, redis = compose["services"]["api"], compose["services"]["redis"]
    assert redis["image"].startswith("redis:7")
    assert "--appendonly" in redis["command"] and "yes" in redis["command"]
    assert any(v.endswith(":/data") and v.split(":")[0] in compose["volumes"] for v in redis["volumes"])
    assert api["depends_on"]["redis"]["condition"] == "service_healthy"
    assert "redis-cli" in redis["healthcheck"]["test"]
    assert any("/health" in part for part in api["healthcheck"]["test"])
    # the index snapshots live in the image's data folder, on a named volume too
    data_dir = re.search(r"CE_DATA_DIR=(\S+)", (ROOT / "Dockerfile").read_text()).group(1)
    assert any(v == f"{v.split(':')[0]}:{data_dir}" and v.split(":")[0] in compose["volumes"] for v in api["volumes"])


def env_file(path) -> dict[str, str]:
    lines = [line.strip() for line in path.read_text().splitlines()]
    return dict(line.split("=", 1) for line in lines if line and not line.startswith("#"))


def test_compose_env_is_what_the_app_reads(compose, monkeypatch):
    api = compose["services"]["api"]
    assert api["env_file"] == ["container/keys.env"]  # keys from a file git ignores, made from the example
    assert "container/keys.env" in (ROOT / ".gitignore").read_text().splitlines()
    env = {k: str(v) for k, v in api["environment"].items()} | env_file(ROOT / "container" / "keys.env.example")
    unknown = set(env) - setting_env_names()
    assert not unknown, f"compose sets variables the app does not read: {unknown}"
    assert env["REDIS_URL"].startswith("redis://redis:")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    settings = Settings()  # parsed as the container parses them (JSON lists included): valid values
    with pytest.raises(ValueError, match="CE_API_KEYS"):  # by default the container refuses to serve without keys
        settings.check_exposure()


def test_ports_agree_between_dockerfile_compose_and_settings(compose, dockerfile):
    exposed = re.search(r"^EXPOSE (\d+)", dockerfile, re.M).group(1)
    env_port = re.search(r"CE_PORT=(\d+)", dockerfile).group(1)
    host, container = compose["services"]["api"]["ports"][0].split(":")
    assert exposed == env_port == container == compose["services"]["api"]["environment"]["CE_PORT"]
    assert re.search(rf"127\.0\.0\.1:{exposed}/health", dockerfile)


def test_dockerfile_is_multi_stage_non_root_and_offline(dockerfile):
    assert len(re.findall(r"^FROM ", dockerfile, re.M)) >= 2
    user = re.findall(r"^USER (\S+)", dockerfile, re.M)
    assert user and not user[-1].startswith(("root", "0"))
    assert "HF_HUB_OFFLINE=1" in dockerfile
    # the default target (the last stage) serves the exported graph from the serving venv: no torch is copied in
    serve = dockerfile[dockerfile.rindex("\nFROM ") :]
    assert serve.startswith("\nFROM runtime AS serve") and "/opt/export" not in serve
    assert "CE_ONNX_DIR=/opt/onnx" in serve and "COPY --from=build /opt/onnx /opt/onnx" in serve
    assert re.search(r'^CMD \["python", "-m", "app", "serve"\]', dockerfile, re.M)
    assert re.search(r"^COPY .*models \./models", dockerfile, re.M)
    names = set(re.findall(r"\b(CE_[A-Z_]+)=", dockerfile))
    assert names <= setting_env_names(), names - setting_env_names()
