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

.PHONY: run test setup setup-test browser bench serve-prod clean

# Marker files make setup cheap when nothing changed.
$(VENV)/.installed: requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --disable-pip-version-check -r requirements.txt
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed requirements-test.txt
	$(PIP) install --quiet --disable-pip-version-check -r requirements-test.txt
	touch $@

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --silent
	touch $@

setup: $(VENV)/.installed node_modules/.installed

setup-test: setup $(VENV)/.installed-test browser

# Debian's chromium drives the Playwright tests; `playwright install` needs the
# internet and is never used. CHROMIUM_PATH points at another browser.
browser:
	@bash scripts/ensure-browser.sh

run: setup
	@echo "BPE Playground: http://$(HOST):$(PORT)/"
	$(PY) -m flask --app webapp run --host $(HOST) --port $(PORT)

test: setup-test
	$(PY) -m pytest

bench: setup $(VENV)/.installed-test
	$(PY) benchmarks/bench_engine.py

clean:
	rm -rf $(VENV) node_modules .pytest_cache .hypothesis test-artifacts
