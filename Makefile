# Every target sets itself up: the first use creates .venv and installs the project into it.
# PYTHON picks the interpreter of .venv (3.11 to 3.13), e.g. `make test PYTHON=python3.12`; a different
# Python version than the one .venv was made with rebuilds .venv.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PYVER := $(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
STAMP := $(VENV)/.installed-py$(PYVER)

# Pinned environment. requirements.lock holds the exact version and sha256 hashes of every package the
# project and its test extra install, for Python 3.11 to 3.13 in one file (environment markers choose the
# numpy/scipy/contourpy builds per Python). It is written by uv (`uv pip compile --universal`: one
# cross-version lock from pyproject.toml, fast, actively maintained; pip-tools can only lock for the Python
# it runs on) and read by plain pip with --require-hashes --no-deps, so installing needs nothing but Python
# and PyPI; uv (pinned below, in a throw-away venv) is needed only to refresh the lock with `make lock`.
# pyproject.toml keeps compatible ranges; the lock is what gets installed. .venv is rebuilt from scratch
# whenever the lock or pyproject.toml changes, so it never keeps a package the lock dropped.
LOCK := requirements.lock
PIP_VERSION := 26.3
UV_VERSION := 0.13.9
LOCK_ARGS ?=

.DEFAULT_GOAL := help
.PHONY: help install lock test test-fast test-slow reproduce-cnmf reproduce-ccf reproduce-lcf reproduce-fnmf reproduce-pcgnmf reproduce-all bench bench-quick crosscheck clean
RUN := $(PY) -m src.run -m
GRID := method.params.alpha=1,10,100,1000
# Records the wall time of a reproduce target in outputs/reproduce/<paper>/wall_seconds.txt
START = mkdir -p outputs/reproduce/$(1) && date +%s > outputs/reproduce/$(1)/.start
STOP = echo $$(( $$(date +%s) - $$(cat outputs/reproduce/$(1)/.start) )) > outputs/reproduce/$(1)/wall_seconds.txt

help: ## List the targets
	@grep -E '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  %-18s %s\n", $$1, $$2}'

$(STAMP): $(LOCK) pyproject.toml
	@test -n "$(PYVER)" || { echo "PYTHON=$(PYTHON) is not a working Python interpreter" >&2; exit 1; }
	rm -rf $(VENV)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet pip==$(PIP_VERSION)
	$(PY) -m pip install --quiet --require-hashes --no-deps -r $(LOCK)
	$(PY) -m pip install --quiet --no-deps -e .
	$(PY) -m pip check
	touch $(STAMP)

install: $(STAMP) ## Create .venv with exactly the versions in requirements.lock, then the project (editable)

lock: ## Refresh requirements.lock from pyproject.toml (keeps pins still allowed; LOCK_ARGS=--upgrade moves all to the newest)
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	$(PYTHON) -m venv "$$tmp" && "$$tmp/bin/pip" install --quiet uv==$(UV_VERSION) && \
	"$$tmp/bin/uv" pip compile pyproject.toml --extra test --universal --python-version 3.11 \
		--generate-hashes --custom-compile-command 'make lock' --quiet $(LOCK_ARGS) -o $(LOCK)
	@echo "wrote $(LOCK); the next target run rebuilds .venv from it"

test: $(STAMP) ## The CI suite: everything but the slow tests (unit + integration), a few minutes
	$(PY) -m pytest -q -m 'not slow'

test-fast: $(STAMP) ## Unit tests only, for quick feedback (skips slow and integration), under a minute
	$(PY) -m pytest -q -m 'not slow and not integration'

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

FARNESS := method=fnmf method.params.farness=0.001,0.003,0.01,0.03
CALTECH_KS := dataset=caltech101_rgb protocol.ks=[2,3,4,5,6,7,8,9,10]
reproduce-fnmf: $(STAMP) ## FNMF paper: ORL 5-20 classes, Caltech-101 colour BoW -> outputs/reproduce/fnmf/report.md
	$(call START,fnmf)
	$(PY) -m src.data orl caltech101_rgb
	$(RUN) +experiment=fnmf
	$(RUN) +experiment=fnmf $(FARNESS)
	$(RUN) +experiment=fnmf $(CALTECH_KS)
	$(RUN) +experiment=fnmf $(CALTECH_KS) $(FARNESS)
	$(call STOP,fnmf)
	$(PY) -m src.paper_report fnmf

# ORL and Yale under the CNMF protocol are the same paired trials as reproduce-cnmf's: their NMF, CNMF,
# GNMF and SemiGNMF rows are read from there (run reproduce-cnmf first); COIL20 is run here.
reproduce-pcgnmf: $(STAMP) ## PCGNMF paper (inferred objective): ORL, Yale, COIL20 -> outputs/reproduce/pcgnmf/report.md
	$(call START,pcgnmf)
	$(PY) -m src.data orl yale coil20
	$(RUN) +experiment=pcgnmf dataset=coil20
	$(RUN) +experiment=pcgnmf dataset=coil20 method=gnmf,semignmf $(GRID)
	$(RUN) +experiment=pcgnmf method=pcgnmf method.params.beta=10,100,1000
	$(call STOP,pcgnmf)
	$(PY) -m src.paper_report pcgnmf --datasets orl yale coil20 \
		--runs outputs/reproduce/pcgnmf/runs outputs/reproduce/cnmf/runs

reproduce-all: $(STAMP) ## All five papers, one after another (wall time in outputs/reproduce/all/)
	$(call START,all)
	$(MAKE) reproduce-cnmf reproduce-ccf reproduce-lcf reproduce-fnmf reproduce-pcgnmf
	$(call STOP,all)

BENCH_ARGS ?=

bench: $(STAMP) ## Speed and scale benchmark, every method -> outputs/bench/bench.md, bench.csv (~25 min; quiet machine)
	$(PY) -m src.data yale coil20 mnist10k mnist
	$(PY) benchmarks/bench.py --out outputs/bench $(BENCH_ARGS)

bench-quick: $(STAMP) ## The benchmark on small sizes and few iterations, to check the script (~3 min)
	$(PY) benchmarks/bench.py --quick --out outputs/bench/quick $(BENCH_ARGS)

# Needs GNU Octave (not installed by the project: apt-get install -y octave). The reference files are fetched
# like the data (REPRO_REFERENCE_MIRROR, else ../reference beside REPRO_DATA_MIRROR, else upstream). Pass
# CROSSCHECK_ARGS=--write-fixtures to refresh tests/fixtures/crosscheck/.
CROSSCHECK_ARGS ?=
crosscheck: $(STAMP) ## Run Deng Cai's reference code in GNU Octave, compare with ours -> outputs/crosscheck/crosscheck.md
	@command -v octave >/dev/null 2>&1 || { echo "make crosscheck: GNU Octave is not installed; install it with: apt-get install -y octave" >&2; exit 1; }
	$(PY) -m src.crosscheck $(CROSSCHECK_ARGS)

clean: ## Remove outputs/ (keeps data/ and .venv)
	rm -rf outputs
