# Two commands for a newcomer: `make run` and `make test`. Everything else is here for the curious.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
STS := datasets/stsbenchmark
# The share of app/ the suite runs, in-process (servers started as processes are not traced): make test keeps it.
COVERAGE_FLOOR ?= 80

.PHONY: install run test unit fuzz fuzz-factories model-check image image-test lint models eval compare clean

install: $(STAMP)

$(STAMP): pyproject.toml clients/python/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e ".[offline,dev,ray]" -e "clients/python[langchain,llamaindex]"
	touch $(STAMP)

## Serve the default backbone with its correction on 127.0.0.1:8000 (embedded Redis under var/).
run: install
	$(PY) -m app serve

## The whole suite, the linters, the type checker and the Dockerfile lint; prints the coverage and keeps its floor.
test: install
	$(VENV)/bin/ruff check app tests clients
	$(VENV)/bin/mypy app clients/python/corrected_embeddings_client
	$(VENV)/bin/hadolint Dockerfile
	$(PY) -m pytest -n auto --dist loadfile --durations=15 --cov=app --cov-report=term:skip-covered --cov-fail-under=$(COVERAGE_FLOOR)

## The in-process tests alone (no server, CLI or Ray process, no real model): the quick loop while editing.
unit: install
	$(PY) -m pytest -n auto --dist loadfile -m "not process and not model and not container"

## Schemathesis over the whole API on the weight-free backbone, longer than make test's run and with a random seed
## (printed): over 5,000 requests, no server error, no operation whose valid requests are refused.
fuzz: install
	CE_FUZZ_BACKBONE=$${CE_FUZZ_BACKBONE:-hashing} CE_FUZZ_EXAMPLES=$${CE_FUZZ_EXAMPLES:-150} CE_FUZZ_SEED=$${CE_FUZZ_SEED:-$$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')} \
	  $(PY) -m pytest -q -s -p no:cacheprovider tests/integration/test_fuzz.py

## Index factory strings from a fuzzer, through creation and import on a real server (make test sends 2,000):
## every refusal a 422 that says why, every acceptance served, the server alive after each.
fuzz-factories: install
	CE_FACTORY_FUZZ=$${CE_FACTORY_FUZZ:-20000} CE_FUZZ_SEED=$${CE_FUZZ_SEED:-$$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')} \
	  $(PY) -m pytest -q -s -p no:cacheprovider tests/integration/test_factory_fuzz.py

## The integrity invariant, long: random adds, deletes, bursts, pauses, corrections, replicas and kill -9 on real server
## processes, checked after every step (make test runs 510 steps); prints what each seed did.
model-check: install
	CE_MODEL_STEPS=$${CE_MODEL_STEPS:-5000} CE_MODEL_SEEDS=$${CE_MODEL_SEEDS:-1,2,3,4,5} \
	  $(PY) -m pytest -q -s -p no:cacheprovider tests/integration/test_model_based.py

## The service's image (Docker when an engine answers, else buildah on a debootstrap base; both need root here).
image:
	container/build-image

## Build the image, run it, check what it serves and that a restart keeps its documents; prints the build time,
## the image's size, the seconds to /ready and the first request's time (CI runs this too).
image-test: install
	$(PY) -m pytest -m container -s tests/container

lint: install
	$(VENV)/bin/ruff check app tests clients
	$(VENV)/bin/ruff format --check app tests clients
	$(VENV)/bin/hadolint Dockerfile

## Refit the bundled artifacts: fitted on STS-B train, chosen by `auto` on STS-B train + dev; torch, then ONNX int8
## (fitted on its own vectors: a correction is tied to the runtime and quantization that made them).
models: install
	for p in mean cls first_last_avg embedding_avg; do \
	  CE_BACKBONE=huggingface $(PY) -m app fit --corpus $(STS)/sts-train.csv --pooling $$p --method auto \
	    --out models/all-MiniLM-L6-v2/$$p.npz || exit 1; \
	  CE_BACKBONE=onnx CE_QUANTIZE=int8 $(PY) -m app fit --corpus $(STS)/sts-train.csv --pooling $$p --method auto \
	    --out models/all-MiniLM-L6-v2/onnx-int8/$$p.npz || exit 1; \
	done

## STS-B test for every pooling, default backbone (ONNX int8): auto fitted on STS-B train, tuned on STS-B train + dev.
eval: install
	for p in mean cls first_last_avg embedding_avg; do \
	  $(PY) -m app eval --pairs $(STS)/sts-test.csv --fit-corpus $(STS)/sts-train.csv --pooling $$p --method auto --json || exit 1; \
	done

## Every correction (flow and SIF included) x poolings on STS-B test (the README's table: CE_BACKBONE=huggingface make compare).
compare: install
	$(PY) -m app compare

clean:
	rm -rf $(VENV) var build *.egg-info
