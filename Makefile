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
.PHONY: help install lock results benchmark test test-fast test-slow reproduce-cnmf reproduce-ccf reproduce-lcf reproduce-fnmf reproduce-pcgnmf reproduce-all bench bench-quick crosscheck docs clean

help: ## List the targets
	@grep -E '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  %-18s %s\n", $$1, $$2}'

# The installed packages are byte-compiled by compileall on every core rather than by pip one file after
# another (the same .pyc files, in half the time on two cores), leaving out the packages' own test suites
# (a third of the files, never imported by a run or by our tests); as with pip, a file that does not compile
# is reported and skipped, not fatal. Compiled at install, no test process compiles them again (which it
# would not even keep under PYTHONDONTWRITEBYTECODE).
$(STAMP): $(LOCK) pyproject.toml
	@test -n "$(PYVER)" || { echo "PYTHON=$(PYTHON) is not a working Python interpreter" >&2; exit 1; }
	rm -rf $(VENV)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet pip==$(PIP_VERSION)
	$(PY) -m pip install --quiet --require-hashes --no-deps --no-compile -r $(LOCK)
	$(PY) -m compileall -q -j 0 -x '/tests?/' "$$($(PY) -c 'import sysconfig; print(sysconfig.get_path("purelib"))')" || true
	$(PY) -m pip install --quiet --no-deps -e .
	$(PY) -m pip check
	touch $(STAMP)

install: $(STAMP) ## Create .venv with exactly the versions in requirements.lock, then the project (editable)

lock: ## Refresh requirements.lock from pyproject.toml (keeps pins still allowed; LOCK_ARGS=--upgrade moves all to the newest)
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	$(PYTHON) -m venv "$$tmp" && "$$tmp/bin/pip" install --quiet uv==$(UV_VERSION) && \
	"$$tmp/bin/uv" pip compile pyproject.toml --extra test --extra docs --universal --python-version 3.11 \
		--generate-hashes --custom-compile-command 'make lock' --quiet $(LOCK_ARGS) -o $(LOCK)
	@echo "wrote $(LOCK); the next target run rebuilds .venv from it"

# Before the tests, the checkout's own modules are byte-compiled (a no-op when nothing changed): the suite
# starts many Python processes, and each would otherwise compile src/ anew where the environment
# says not to write .pyc files (PYTHONDONTWRITEBYTECODE), or race to write them where it does not.
COMPILE_CHECKOUT := $(PY) -m compileall -q -j 0 src tools

test: $(STAMP) ## The CI suite: everything but the slow tests (unit + integration), a few minutes
	$(COMPILE_CHECKOUT)
	$(PY) -m pytest -q -m 'not slow'

test-fast: $(STAMP) ## Unit tests only, for quick feedback (skips slow and integration), under two minutes
	$(COMPILE_CHECKOUT)
	$(PY) -m pytest -q -m 'not slow and not integration'

test-slow: $(STAMP) ## End-to-end tests on real data, and cases repeating a path make test runs (marked slow)
	$(COMPILE_CHECKOUT)
	$(PY) -m pytest -q -m slow

# One command per paper: src.reproduce reads the paper's home papers/<paper>/ (sweeps, published numbers,
# report options, papers it depends on) with its settings conf/experiment/<paper>.yaml (experiment=<paper>;
# its own figures in src/presentation/papers/<paper>.py), computes the cells of every selected paper in one
# pool of worker processes (src/running/pool/) into outputs/reproduce/<paper>/, records wall_seconds.txt and writes
# report.md as soon as a paper's cells are in. A paper added there is a target at once; a
# `reproduce-<paper>: ## ...` line lists it in `make help`. REPRODUCE_ARGS is passed on,
# e.g. REPRODUCE_ARGS="--workers 16", or on SLURM
# REPRODUCE_ARGS="--overrides hydra/launcher=submitit_slurm hydra.launcher.partition=cpu".
REPRODUCE_ARGS ?=
PAPERS := $(patsubst papers/%/reproduce.yaml,%,$(wildcard papers/*/reproduce.yaml))
.PHONY: $(PAPERS:%=reproduce-%)
reproduce-cnmf: ## CNMF paper: ORL, Yale, Caltech-101 -> outputs/reproduce/cnmf/report.md
reproduce-ccf: ## CCF paper: Yale, COIL20, MNIST-1000 -> outputs/reproduce/ccf/report.md
reproduce-lcf: ## LCF paper: Yale, ORL, lambda study, toy figure -> outputs/reproduce/lcf/report.md
reproduce-fnmf: ## FNMF paper: ORL 5-20 classes, Caltech-101 colour BoW -> outputs/reproduce/fnmf/report.md
reproduce-cai: ## Deng Cai's GNMF demo: the whole of COIL20, KMeans, NMF, GNMF (NMI) -> outputs/reproduce/cai/report.md
reproduce-pcgnmf: ## PCGNMF paper (inferred objective; reads reproduce-cnmf's ORL/Yale runs): ORL, Yale, COIL20 -> outputs/reproduce/pcgnmf/report.md
reproduce-all: ## All papers in one pool of cells (wall time in outputs/reproduce/all/, schedule in outputs/reproduce/)
$(PAPERS:%=reproduce-%) reproduce-all: reproduce-%: $(STAMP)
	$(PY) -m src.reproduce $* $(REPRODUCE_ARGS)

# python -m src.explain (src/explain.py): each reading of a paper (papers/<paper>/readings.yaml) on the
# primary run's trials, every sweep in one pool of cells like a reproduction's (cells equal to primary ones
# copied) -> outputs/explain/<paper>/report.md; explain-all then rebuilds the scorecard with the readings'
# effects in its cause column. Needs the primary runs (make reproduce-<paper> / reproduce-all).
# EXPLAIN_ARGS is passed on, e.g. EXPLAIN_ARGS="--readings argmax eq41", EXPLAIN_ARGS=--report-only,
# EXPLAIN_ARGS=--dry-run or EXPLAIN_ARGS="--workers 16".
EXPLAIN_ARGS ?=
EXPLAINED := $(patsubst papers/%/readings.yaml,%,$(wildcard papers/*/readings.yaml))
.PHONY: explain-all $(EXPLAINED:%=explain-%)
explain-cai: ## Cai's demo's readings (KMeans step, cluster labels) -> outputs/explain/cai/report.md
explain-ccf: ## CCF paper's readings (SemiGNMF's strength and graph, labels, pixels) -> outputs/explain/ccf/report.md
explain-cnmf: ## CNMF paper's readings (fixed 20/100 iterations, labels, pixels, SemiGNMF oracle) -> outputs/explain/cnmf/report.md
explain-fnmf: ## FNMF paper's readings (every k, lambda per k, wider grid, labels, pixels) -> outputs/explain/fnmf/report.md
explain-lcf: ## LCF paper's readings (V-rule, normalization, stopping, labels, pixels, oracles) -> outputs/explain/lcf/report.md
explain-all: ## Every paper's readings, then the scorecard's causes (outputs/explain/<paper>/report.md, outputs/reproduce/README.md)
$(EXPLAINED:%=explain-%) explain-all: explain-%: $(STAMP)
	$(PY) -m src.explain $* $(EXPLAIN_ARGS)

# python -m src.benchmark (src/benchmark.py): the family benchmark, every method on every data set under one
# protocol in three tracks (unsupervised, 10% and 30% labelled: homes papers/benchmark/<track>/, settings
# experiment=benchmark/<track>), in one pool of cells like a reproduction, copying the cells make
# reproduce-all computed alike -> outputs/benchmark/report.md.
# BENCHMARK_ARGS is passed on, e.g. BENCHMARK_ARGS="--tracks unsupervised", --dry-run or --report-only.
BENCHMARK_ARGS ?=
benchmark: $(STAMP) ## Every method under one protocol, ranked (after reproduce-all, whose cells it copies) -> outputs/benchmark/report.md
	$(PY) -m src.benchmark $(BENCHMARK_ARGS)

# python -m src.presentation.front_page: README.md's results table (between its results markers) and docs/results/
# (the reports, figures and scorecard the site and the README link to) from what the last reproduction left in
# outputs/reproduce/. Run it after make reproduce-all (and explain-all), then commit README.md and docs/results/.
results: $(STAMP) ## README's results table and docs/results/ from the last reproduction (after reproduce-all, explain-all)
	$(PY) -m src.presentation.front_page

BENCH_ARGS ?=

# python -m tools.bench (tools/bench/): every target of the speed issue in one run; BENCH_ARGS is passed on,
# e.g. BENCH_ARGS="--methods nmf nmf_kl --datasets yale coil20".
bench: $(STAMP) ## Speed and scale targets, every method -> outputs/bench/bench.md, bench.csv (~30 min; quiet machine)
	$(PY) -m src.data yale orl coil20 mnist10k mnist
	$(PY) -m tools.bench --out outputs/bench $(BENCH_ARGS)

bench-quick: $(STAMP) ## The benchmark on tiny sizes and few iterations, to check its code (~1 min)
	$(PY) -m src.data yale coil20 mnist10k
	$(PY) -m tools.bench --quick --out outputs/bench/quick $(BENCH_ARGS)

# Needs GNU Octave (not installed by the project: apt-get update && apt-get install -y octave). The reference
# files are fetched like the data (REPRO_REFERENCE_MIRROR, else ../reference beside REPRO_DATA_MIRROR, else
# upstream; docs/crosscheck.md says how a mirror is laid out). Pass CROSSCHECK_ARGS=--write-fixtures to refresh
# tests/fixtures/crosscheck/.
CROSSCHECK_ARGS ?=
crosscheck: $(STAMP) ## Run Deng Cai's reference code in GNU Octave, compare with ours -> outputs/crosscheck/crosscheck.md
	@command -v octave >/dev/null 2>&1 || { echo "make crosscheck: GNU Octave is not installed; install it with: apt-get update && apt-get install -y octave" >&2; exit 1; }
	$(PY) -m tools.crosscheck $(CROSSCHECK_ARGS)

# The documentation site (docs/conf.py): Sphinx, numpydoc, MyST and the PyData theme, from the docs extra of
# pyproject.toml, pinned in requirements.lock like everything else (so `make test` builds the site too).
# Warnings are errors (-W), every cross-reference is checked (-n), every page is read again (-E: no warning
# hides in an unchanged page). Pages that depend on the checkout (papers, estimators) are written into
# docs/_generated/ by docs/_ext/repro_docs.py at each build, from the reproduction `make results` published in
# docs/results/ (else outputs/reproduce/); the gallery runs examples/plot_*.py on the real data sets.
docs: $(STAMP) ## The manual: its pages, the examples (run), the docstrings and the published reproduction -> docs/_build/html/index.html
	$(PY) -m sphinx -E -W --keep-going -n -b html docs docs/_build/html

clean: ## Remove outputs/ (keeps data/ and .venv)
	rm -rf outputs
