# Two commands for a newcomer: `make run` and `make test`. Everything else is here for the curious.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
STS := datasets/stsbenchmark

.PHONY: install run test lint models eval clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e ".[dev]"
	touch $(STAMP)

## Serve the default backbone with its correction on 127.0.0.1:8000 (embedded Redis under var/).
run: install
	$(PY) -m app serve

## The whole suite, the linters and the Dockerfile lint.
test: install
	$(VENV)/bin/ruff check app tests
	$(VENV)/bin/hadolint Dockerfile
	$(PY) -m pytest

lint: install
	$(VENV)/bin/ruff check app tests
	$(VENV)/bin/ruff format --check app tests
	$(VENV)/bin/hadolint Dockerfile

## Refit the bundled artifacts of the default backbone on STS-B train (parameters chosen on STS-B dev).
models: install
	$(PY) -m app fit --corpus $(STS)/sts-train.csv --pooling mean --alpha 0.1 --dim 256 --out models/all-MiniLM-L6-v2/mean.npz
	$(PY) -m app fit --corpus $(STS)/sts-train.csv --pooling cls --alpha 0.25 --out models/all-MiniLM-L6-v2/cls.npz
	$(PY) -m app fit --corpus $(STS)/sts-train.csv --pooling first_last_avg --alpha 0.1 --out models/all-MiniLM-L6-v2/first_last_avg.npz
	$(PY) -m app fit --corpus $(STS)/sts-train.csv --pooling embedding_avg --alpha 0.4 --out models/all-MiniLM-L6-v2/embedding_avg.npz

## STS-B test, whitening fitted on STS-B train, for every pooling.
eval: install
	for p in mean cls first_last_avg embedding_avg; do \
	  $(PY) -m app eval --pairs $(STS)/sts-test.csv --fit-corpus $(STS)/sts-train.csv --pooling $$p --alpha 0.5 --json; \
	done

clean:
	rm -rf $(VENV) var build *.egg-info
