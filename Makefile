# Two commands do all the set-up on a fresh machine with Python and make:
#   make lab    create .venv if missing, then open the lessons in JupyterLab
#   make test   create .venv if missing, then run every test (doctests, unit tests, nbval)
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PORT   ?= 8888
# JupyterLab refuses to run as root (as in containers) unless told to.
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)

BENCH_STAMP := $(VENV)/.installed-bench

.PHONY: env lab test bench bench-day html clean chromium

env: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (bloomedu)" >/dev/null
	touch $(STAMP)

lab: $(STAMP)
	@echo "Opening the lessons; open the http://127.0.0.1:$(PORT)/lab?token=... URL printed below."
	$(BIN)/jupyter lab --notebook-dir=notebooks --ip=127.0.0.1 --port=$(PORT) --no-browser $(ROOT_FLAG)

# The real-browser test drives Debian's Chromium; install it when missing and we may (root with apt-get).
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "Installing Debian's chromium for the real-browser test"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "chromium is missing: install it (Debian: apt-get install chromium) for tests/test_browser.py"; fi; }

test: $(STAMP) chromium
	$(BIN)/python -m pytest

$(BENCH_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,bench]'
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(BIN)/python -m benchmarks

# Article 1's whole day: 864,000,000 click IDs through one filter (a few minutes, 2 GiB).
bench-day: $(STAMP)
	$(BIN)/python -m benchmarks.day

html: $(STAMP)
	$(BIN)/python -m tools.build_site --out build/html

clean:
	rm -rf $(VENV) build .pytest_cache .hypothesis
