# The two quick-start commands: `make demo` and `make test`. Both create .venv when it is missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DOCS_STAMP := $(VENV)/.installed-docs

.PHONY: demo test test-fast docs docs-check bench reproduce screenshots scale-out clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# pycanon, the tests' outside verifier, pins exact versions of numpy, pandas and typer that would
# downgrade ours; it needs only numpy and pandas at run time, so it comes without its pins.
# anonymeter (the report's attacks) pins numpy<1.27 but runs on ours; its other needs (pandas,
# scikit-learn, numba, joblib, scipy) are ours already, so it comes without its pins too;
# 1.1 needs polars besides, so it stays below 1.1.
# The install builds the compiled extension (setup.py: a C compiler is needed, as for any source
# install; a changed C source installs again) and ends by compiling the numba kernels into numba's
# cache beside the sources (incrowd warmup), so that no command compiles on its first run.
$(STAMP): $(BIN)/python pyproject.toml setup.py $(wildcard src/incrowd/_native/*.c src/incrowd/_native/*.h)
	$(BIN)/python -m pip install --quiet -e ".[test,web,dask,bench]"
	$(BIN)/python -m pip install --quiet --no-deps "pycanon>=1.3.6"
	$(BIN)/python -m pip install --quiet --no-deps "anonymeter>=1.0,<1.1"
	$(BIN)/incrowd warmup --quiet
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/incrowd demo

test: $(STAMP)
	$(BIN)/python -m pytest -q -n auto --maxprocesses=4 --dist worksteal --durations=20

# the quick tier while working: everything but the tests marked slow (under 3 minutes on 2 cores)
test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -n auto --maxprocesses=4 --dist worksteal -m "not slow"

# the documentation site and the lint and type checks (extras docs and lint)
$(DOCS_STAMP): $(STAMP) pyproject.toml
	$(BIN)/python -m pip install --quiet -e ".[docs,lint]"
	touch $(DOCS_STAMP)

# serve the site at http://127.0.0.1:8000, rebuilt on every change
docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve

# what CI checks after the tests: the site builds without a warning, ruff and mypy are clean
docs-check: $(DOCS_STAMP)
	$(BIN)/python docs/gen_cli.py --check
	$(BIN)/python docs/gen_spec.py --check
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir build/site
	$(BIN)/python docs/check_api_pages.py build/site
	$(BIN)/ruff check src
	$(BIN)/mypy

reproduce: $(STAMP)
	$(BIN)/python bench/reproduce_mdav.py
	$(BIN)/python bench/reproduce_ona.py
	$(BIN)/python bench/reproduce_mondrian.py
	$(BIN)/python bench/reproduce_table6.py
	$(BIN)/python bench/reproduce_incremental.py
	$(BIN)/python bench/reproduce_negotiation.py

# the timing suite over the public API (bench/suite/: median of 5 calls after a warm-up that
# compiles, printed as one table; `bench/suite/run.py --quick` checks it in seconds), then the
# whole-process benches, which rewrite their sections of docs/performance.md; sdcMicro side by
# side only with RLIB=DIR, sdcMicro built there by ../shared/peers/sdcMicro/build.sh DIR
bench: $(STAMP)
	$(BIN)/python bench/suite/run.py
	$(BIN)/python bench/bench_first_run.py
	$(BIN)/python bench/startup.py
	$(BIN)/python bench/bench_memory.py
	if [ -n "$(RLIB)" ]; then $(BIN)/python bench/bench_sdcmicro.py --rlib "$(RLIB)"; fi

# MONA on 10,000,000 rows in process and on 2 Dask workers (about 15 minutes): docs/scale-out.md
scale-out: $(STAMP)
	$(BIN)/python bench/scale_out.py

# the browser tests save each page at 1280x800 (needs Debian's chromium)
screenshots: $(STAMP)
	INCROWD_SCREENSHOTS=docs/figures $(BIN)/python -m pytest -q tests/test_web_e2e.py

clean:
	rm -rf $(VENV) build site src/*.egg-info .pytest_cache
