# Two commands: `make run` (set up and serve) and `make test` (set up and run every test).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
export FLASK_APP := app.py

.PHONY: run test test-sqlite test-postgres setup browser db bench bench-tools clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(VENV)/.installed: requirements.txt requirements-dev.txt | $(BIN)/python
	$(BIN)/pip install --quiet -r requirements-dev.txt
	touch $@

setup: $(VENV)/.installed

# Debian's Chromium for the browser tests (Playwright drives it; it never downloads its own),
# and a Bengali font so that the Bangla checkout screenshot shows letters, not boxes.
browser:
	@{ command -v chromium && fc-list :lang=bn | grep -q .; } >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-lohit-beng-bengali >/dev/null; \
	  else sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-lohit-beng-bengali >/dev/null; fi; }

db: setup
	$(BIN)/flask db upgrade
	$(BIN)/flask gateway bootstrap

run: db
	@echo "Gateway on http://127.0.0.1:5000 — API docs at http://127.0.0.1:5000/api/v1/docs"
	$(BIN)/flask run --host 127.0.0.1 --port 5000

test-sqlite: setup browser
	TEST_DB=sqlite $(BIN)/python -m pytest

test-postgres: setup browser
	TEST_DB=postgres $(BIN)/python -m pytest

# The whole suite on the embedded SQLite, then again on PostgreSQL.
test: test-sqlite test-postgres

# wrk, from Debian, drives the API benchmark from a second process.
bench-tools:
	@command -v wrk >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; \
	  else sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; fi; }

# Every benchmark, each printing its figures (Redis db 4 must be idle for the webhook one).
bench: setup bench-tools
	$(BIN)/python bench/api_load.py
	$(BIN)/python bench/webhooks.py --redis-url redis://127.0.0.1:6379/4
	$(BIN)/python bench/sms_ingest.py
	$(BIN)/python bench/soak.py --minutes 1

clean:
	rm -rf $(VENV) .pytest_cache
