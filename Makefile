# Every target sets itself up: the first use creates .venv and installs the project into it.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.DEFAULT_GOAL := help
.PHONY: help install test test-slow reproduce-cnmf reproduce-ccf reproduce-lcf clean
RUN := $(PY) -m src.run -m
GRID := method.params.alpha=1,10,100,1000
# Records the wall time of a reproduce target in outputs/reproduce/<paper>/wall_seconds.txt
START = mkdir -p outputs/reproduce/$(1) && date +%s > outputs/reproduce/$(1)/.start
STOP = echo $$(( $$(date +%s) - $$(cat outputs/reproduce/$(1)/.start) )) > outputs/reproduce/$(1)/wall_seconds.txt

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

reproduce-cnmf: $(STAMP) ## CNMF paper: ORL, Yale, Caltech-101 -> outputs/reproduce/cnmf/report.md
	$(call START,cnmf)
	$(PY) -m src.data orl yale caltech101
	$(RUN) +experiment=cnmf
	$(RUN) +experiment=cnmf dataset=orl,yale method=ntf
	$(RUN) +experiment=cnmf method=gnmf,semignmf $(GRID)
	$(PY) -m src.cnmf_figures --out outputs/reproduce/cnmf
	$(call STOP,cnmf)
	$(PY) -m src.paper_report cnmf

reproduce-ccf: $(STAMP) ## CCF paper: Yale, COIL20, MNIST-1000 -> outputs/reproduce/ccf/report.md
	$(call START,ccf)
	$(PY) -m src.data yale coil20 mnist1000
	$(RUN) +experiment=ccf
	$(RUN) +experiment=ccf method=semignmf $(GRID)
	$(call STOP,ccf)
	$(PY) -m src.paper_report ccf

reproduce-lcf: $(STAMP) ## LCF paper: Yale, ORL, lambda study, toy figure -> outputs/reproduce/lcf/report.md
	$(call START,lcf)
	$(PY) -m src.data yale orl
	$(RUN) +experiment=lcf
	$(RUN) +experiment=lcf method=lcf method.params.lam=0.3,8,32
	$(RUN) +experiment=lcf method=lcf protocol.ks=[3] method.params.lam=0.0625,0.25,1,2,4,8,16,32,64,256,1024 \
		hydra.sweep.dir=outputs/reproduce/lcf/lambda
	$(PY) -m src.lcf_figures --out outputs/reproduce/lcf
	$(call STOP,lcf)
	$(PY) -m src.paper_report lcf

clean: ## Remove outputs/ (keeps data/ and .venv)
	rm -rf outputs
