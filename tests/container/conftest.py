"""The image as a user gets it: built by `make image` (here buildah on a debootstrap base: no Docker engine),
then run with `buildah run` on a data folder of its own. Only `make image-test` (and so CI) runs these."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from app.benchmarks.http import free_port
from tests.conftest import ROOT

IMAGE = "localhost/corrected-embeddings:0.1.0"
BUILDAH = {**os.environ, "BUILDAH_ISOLATION": "chroot"}
KEY = "container-check-key"
APP_UID = 10001  # the image's user


def buildah(*args: str, timeout: float = 120) -> str:
    done = subprocess.run(["buildah", *args], env=BUILDAH, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"buildah {' '.join(args)}: {done.stderr[-2000:]}"
    return done.stdout


@pytest.fixture(scope="session")
def image() -> str:
    """`make image`, timed (a second build reuses every cached layer)."""
    start = time.monotonic()
    build = subprocess.run(["make", "image"], cwd=ROOT, env=BUILDAH, capture_output=True, text=True, timeout=1800)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    print(f"make image: {time.monotonic() - start:.0f} s")
    return IMAGE


@contextmanager
def working_container(image: str, **env: str) -> Iterator[str]:
    """A working container of `image` (its config: user, env, command), removed afterwards."""
    name = f"ce-check-{uuid.uuid4().hex[:8]}"
    buildah("from", "--quiet", "--name", name, image)
    try:
        for key, value in env.items():
            buildah("config", "--env", f"{key}={value}", name)
        yield name
    finally:
        buildah("rm", name)


def run_in(image: str, *command: str) -> str:
    """What `command` prints inside a fresh container of `image`."""
    with working_container(image) as name:
        return buildah("run", "--isolation", "chroot", name, "--", *command)


@dataclass
class Running:
    url: str
    ready_seconds: float
    pids: list[int]

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {KEY}"}, timeout=60)


def image_size(image: str) -> int:
    """Bytes of every file in the image (`buildah images` prints only a rounded figure)."""
    with working_container(image) as name:
        root = buildah("mount", name).strip()
        try:
            return int(subprocess.check_output(["du", "-sb", root], text=True).split()[0])
        finally:
            buildah("umount", name)


def command_of(image: str) -> list[str]:
    """The image's CMD, as `docker run` would start it."""
    config = json.loads(buildah("inspect", "--type", "image", image))
    return config["Docker"]["config"]["Cmd"]


@contextmanager
def running(image: str, data: Path, timeout: float = 120) -> Iterator[Running]:
    """The image's command in a container whose /srv/var is `data`, on the host's network, until /ready is 200."""
    port = free_port()
    with (
        working_container(image, CE_PORT=str(port), CE_API_KEYS=json.dumps([KEY])) as name,
        tempfile.TemporaryFile() as log,
    ):
        start = time.monotonic()
        proc = subprocess.Popen(
            [
                "buildah",
                "run",
                "--isolation",
                "chroot",
                "--network",
                "host",
                "--volume",
                f"{data}:/srv/var",
                name,
                "--",
                *command_of(image),
            ],
            env=BUILDAH,
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
        try:
            url = f"http://127.0.0.1:{port}"
            while not _ready(url):
                if proc.poll() is not None or time.monotonic() - start > timeout:
                    log.seek(0)
                    pytest.fail(f"the container did not become ready:\n{log.read()[-3000:].decode(errors='replace')}")
                time.sleep(0.2)
            yield Running(url, time.monotonic() - start, group_pids(proc.pid))
        finally:
            os.killpg(proc.pid, signal.SIGTERM)  # the service shuts down gracefully, as on `docker stop`
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def _ready(url: str) -> bool:
    try:
        return httpx.get(f"{url}/ready", headers={"Authorization": f"Bearer {KEY}"}, timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


def group_pids(pgid: int) -> list[int]:
    """The processes of one process group (buildah and what it started inside the container)."""
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:
            pids.append(int(stat.parent.name))
    return pids


def owner(pid: int) -> int:
    """The real user id a process runs as."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Uid:"):
            return int(line.split()[1])
    raise AssertionError(f"no Uid line for {pid}")


def command_line(pid: int) -> str:
    return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
