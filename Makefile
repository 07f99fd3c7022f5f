# Two commands: `make run` (set up and serve) and `make test` (set up and run every test).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
export FLASK_APP := app.py

.PHONY: run test lint test-sqlite test-sqlite-a test-sqlite-b test-browser test-postgres test-postgres-a test-postgres-b setup setup-prod env-file browser nginx php db bench bench-tools clean

# `make run HOST=0.0.0.0` serves the shop's network; BASE_URL (checkout links, the pairing QR) then follows
# this machine's network address unless BASE_URL is set. The address is looked up only when needed.
HOST ?= 127.0.0.1
PORT ?= 5000
GIVEN_BASE_URL := $(BASE_URL)
LAN_ADDRESS = $(shell { hostname -I 2>/dev/null || ipconfig getifaddr en0 2>/dev/null; } | awk '{print $$1}')
SERVE_HOST = $(if $(filter 0.0.0.0 ::,$(HOST)),$(or $(LAN_ADDRESS),127.0.0.1),$(HOST))
RUN_BASE_URL = $(or $(GIVEN_BASE_URL),http://$(SERVE_HOST):$(PORT))

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(VENV)/.installed: requirements.txt requirements-dev.txt | $(BIN)/python
	$(BIN)/pip install --quiet -r requirements-dev.txt
	touch $@

setup: $(VENV)/.installed

# Production: the runtime requirements only, no test or benchmark packages.
$(VENV)/.installed-prod: requirements.txt | $(BIN)/python
	$(BIN)/pip install --quiet -r requirements.txt
	touch $@

setup-prod: $(VENV)/.installed-prod

# The production environment file, once, with a random SECRET_KEY (deploy/make_env_file.py; never overwrites):
#   sudo make env-file BASE_URL=https://pay.example.com DATABASE_URL=postgresql://… REDIS_URL=redis://…
ENV_FILE ?= /etc/gateway/gateway.env
env-file:
	$(PYTHON) deploy/make_env_file.py $(ENV_FILE)

# Debian's Chromium for the browser tests (Playwright drives it; it never downloads its own),
# and a Bengali font so that the Bangla checkout screenshot shows letters, not boxes.
browser:
	@{ command -v chromium && fc-list :lang=bn | grep -q .; } >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-lohit-beng-bengali >/dev/null; \
	  else sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-lohit-beng-bengali >/dev/null; fi; }

# Debian's nginx for the deployment kit's test (tests/test_deploy_nginx.py runs its own on loopback ports);
# the system service the package starts is stopped and disabled: the tests need the program, not port 80.
nginx:
	@command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx >/dev/null \
	    && { systemctl disable --now nginx || true; } >/dev/null 2>&1; \
	  else sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx >/dev/null \
	    && { sudo systemctl disable --now nginx || true; } >/dev/null 2>&1; fi; }

# Debian's php-cli and php-curl for the plugin dialects' PHP clients (tests/compat/php/, run against a live server).
php:
	@{ command -v php && php -m | grep -qx curl; } >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq php-cli php-curl >/dev/null; \
	  else sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq php-cli php-curl >/dev/null; fi; }

db: setup
	$(BIN)/flask db upgrade
	BASE_URL="$(RUN_BASE_URL)" $(BIN)/flask gateway bootstrap

run: db
	@echo "Gateway on $(RUN_BASE_URL) — panel $(RUN_BASE_URL)/panel/sign-in, API docs $(RUN_BASE_URL)/api/v1/docs"
	@case "$(RUN_BASE_URL)" in \
	  http://127.*|http://localhost*) echo "Only this computer reaches it. For a phone on the shop's network:" \
	    "make run HOST=0.0.0.0 (or set BASE_URL=http://<this machine's address>:$(PORT))";; \
	  *) echo "Phones on the same network reach it there; the pairing QR code carries this address.";; esac
	BASE_URL="$(RUN_BASE_URL)" $(BIN)/flask run --host $(HOST) --port $(PORT)

# The tests' PostgreSQL commits do not wait for the disk (a session default, PGOPTIONS; a test that
# needs production's durable default sets it itself): nothing here outlives a crash of the server.
# Python caches its bytecode, so the suite's many gateway processes (gunicorn, workers) skip
# compiling the gateway anew, even where the environment says not to write it.
TEST_ENV = PGOPTIONS="-c synchronous_commit=off"
unexport PYTHONDONTWRITEBYTECODE

# Each pass has a Redis database and a PostgreSQL database of its own (created on first use), so
# that `make test` can run them side by side; TEST_REDIS_URL / TEST_POSTGRES_URL override both.
POSTGRES_SERVER ?= postgresql+psycopg://postgres@127.0.0.1:5432
REDIS_SERVER ?= redis://127.0.0.1:6379
# Each of the SQLite and PostgreSQL passes runs in two halves of the test files, side by side in
# `make test` (one half's waits on processes overlap the other's work); each half has databases of
# its own. `make test-sqlite` (or test-postgres) runs both halves.
SECOND_HALF = tests/panel tests/sms tests/webhooks tests/invoices tests/links tests/api tests/payments
FIRST_HALF = $(foreach dir,$(SECOND_HALF),--ignore=$(dir))

# The whole suite on the embedded SQLite but for the browser tests and the files that mostly wait on
# processes of their own (`beside_browser` in tests/conftest.py): test-browser runs those.
SQLITE_TESTS = -m "not browser and not beside_browser"
test-sqlite: test-sqlite-a test-sqlite-b
test-sqlite-a: setup nginx php
	$(TEST_ENV) TEST_DB=sqlite TEST_POSTGRES_URL="$${TEST_POSTGRES_URL:-$(POSTGRES_SERVER)/test_sqlite_pass}" \
	  TEST_REDIS_URL="$${TEST_REDIS_URL:-$(REDIS_SERVER)/15}" \
	  $(BIN)/python -m pytest $(SQLITE_TESTS) $(FIRST_HALF)
test-sqlite-b: setup nginx php
	$(TEST_ENV) TEST_DB=sqlite TEST_POSTGRES_URL="$${TEST_POSTGRES_URL:-$(POSTGRES_SERVER)/test_sqlite_b}" \
	  TEST_REDIS_URL="$${TEST_REDIS_URL:-$(REDIS_SERVER)/12}" \
	  $(BIN)/python -m pytest $(SQLITE_TESTS) $(SECOND_HALF)

# The browser tests (headless Chromium), once, on SQLite: they mostly wait on the browser; beside them
# the SQLite run of the files that mostly wait on processes of their own (the deployment kit, workers,
# php, a nested pytest). nginx for those and the production test over https
# (tests/browser/test_production_https_browser.py), php for the plugins' PHP clients.
test-browser: setup browser nginx php
	$(TEST_ENV) TEST_DB=sqlite TEST_POSTGRES_URL="$${TEST_POSTGRES_URL:-$(POSTGRES_SERVER)/test_browser_pass}" \
	  TEST_REDIS_URL="$${TEST_REDIS_URL:-$(REDIS_SERVER)/14}" \
	  $(BIN)/python -m pytest -m "browser or beside_browser"

# What the engine can change only: the browser and engine-independent tests already ran on SQLite.
POSTGRES_TESTS = -m "not browser and not engine_independent"
test-postgres: test-postgres-a test-postgres-b
test-postgres-a: setup
	$(TEST_ENV) TEST_DB=postgres TEST_POSTGRES_URL="$${TEST_POSTGRES_URL:-$(POSTGRES_SERVER)/test}" \
	  TEST_REDIS_URL="$${TEST_REDIS_URL:-$(REDIS_SERVER)/13}" \
	  $(BIN)/python -m pytest $(POSTGRES_TESTS) $(FIRST_HALF)
test-postgres-b: setup
	$(TEST_ENV) TEST_DB=postgres TEST_POSTGRES_URL="$${TEST_POSTGRES_URL:-$(POSTGRES_SERVER)/test_postgres_b}" \
	  TEST_REDIS_URL="$${TEST_REDIS_URL:-$(REDIS_SERVER)/11}" \
	  $(BIN)/python -m pytest $(POSTGRES_TESTS) $(SECOND_HALF)

# Ruff's lint and format check (settings in pyproject.toml); `ruff format .` fixes the layout.
lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# The lint, then three passes side by side: the suite on the embedded SQLite, the browser tests, and
# everything the engine can change again on PostgreSQL; each pass's output is printed whole when it
# ends. The browser pass mostly waits, so the two cores stay busy.
test: lint browser nginx php
	$(MAKE) --no-print-directory -j5 --output-sync=target \
	  test-sqlite-a test-sqlite-b test-browser test-postgres-a test-postgres-b

# wrk, from Debian, drives the API benchmark from a second process.
bench-tools:
	@command -v wrk >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; \
	  else sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; fi; }

# Every benchmark, each printing its figures and targets (Redis db 4 must be idle for the webhook one);
# a missed target fails `make bench` at the end, after every benchmark has printed.
BENCH_POSTGRES ?= postgresql+psycopg://postgres@127.0.0.1:5432/gw_bench
bench: setup bench-tools
	@status=0; \
	$(BIN)/python bench/api_load.py --postgres-url $(BENCH_POSTGRES) || status=1; \
	$(BIN)/python bench/webhooks.py --redis-url redis://127.0.0.1:6379/4 || status=1; \
	$(BIN)/python bench/webhooks.py --redis-url redis://127.0.0.1:6379/4 --database-url $(BENCH_POSTGRES) || status=1; \
	$(BIN)/python bench/webhooks.py --redis-url redis://127.0.0.1:6379/4 --database-url $(BENCH_POSTGRES) --workers 2 || status=1; \
	$(BIN)/python bench/sms_ingest.py || status=1; \
	$(BIN)/python bench/soak.py --minutes 1 || status=1; \
	exit $$status

# The browser tests write their screenshots to build/screenshots/ (ignored); this copies them into docs/.
.PHONY: screenshots
screenshots: setup browser
	rm -rf build/screenshots
	$(BIN)/python -m pytest -m browser tests/browser
	mkdir -p docs/screenshots
	cp build/screenshots/*.png docs/screenshots/

clean:
	rm -rf $(VENV) .pytest_cache
