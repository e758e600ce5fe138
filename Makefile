# Every target sets itself up: the first use creates .venv and installs the project into it.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.DEFAULT_GOAL := help
.PHONY: help install test test-slow reproduce-cnmf multirun-demo clean

help: ## List the targets
	@grep -E '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  %-18s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP) ## Create .venv and install the project with its test extra

test: $(STAMP) ## Fast property tests (the default suite)
	$(PY) -m pytest -q

test-slow: $(STAMP) ## End-to-end tests on real data (marked slow)
	$(PY) -m pytest -q -m slow

reproduce-cnmf: $(STAMP) ## CNMF paper: ORL, Yale, Caltech-101 -> outputs/reproduce/cnmf/
	$(PY) -m src.run -m +experiment=cnmf
	$(PY) -m src.report outputs/reproduce/cnmf/runs --out outputs/reproduce/cnmf

clean: ## Remove outputs/ (keeps data/ and .venv)
	rm -rf outputs
