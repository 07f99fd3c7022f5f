"""One log line per request (id, method, path, status, duration) on stderr, and never a key, token
or password.
"""

import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gateway import create_app
from gateway.extensions import db
from tests.factories import PaymentFactory

ROOT = Path(__file__).resolve().parent.parent
LINE = re.compile(
    r"request_id=(?P<id>\S+) method=(?P<method>\S+) path=(?P<path>\S+) status=(?P<status>\d+) "
    r"duration_ms=(?P<ms>\d+\.\d)"
)


@pytest.fixture
def request_lines(caplog):
    """The request-log lines written from here on, parsed."""
    caplog.set_level(logging.INFO, logger="gateway.requests")

    def lines():
        return [
            LINE.fullmatch(record.getMessage()).groupdict()
            for record in caplog.records
            if record.name == "gateway.requests"
        ]

    return lines


@pytest.fixture
def root_level():
    """LOG_LEVEL sets the root logger's level; put it back for the tests after."""
    before = logging.getLogger().level
    yield
    logging.getLogger().setLevel(before)


def test_each_request_logs_one_line_with_its_request_id_method_path_status_and_duration(
    client, request_lines
):
    answer = client.get("/healthz", headers={"X-Request-ID": "abc-123"})

    [line] = request_lines()
    assert answer.headers["X-Request-ID"] == "abc-123"
    assert line["id"] == "abc-123" and line["method"] == "GET" and line["path"] == "/healthz"
    assert line["status"] == "200" and float(line["ms"]) >= 0


def test_a_request_without_an_id_is_logged_with_the_one_it_was_given(client, request_lines, brand):
    answer = client.get("/api/v1/payments")

    [line] = request_lines()
    assert line["id"] == answer.headers["X-Request-ID"] and line["status"] == "401"


def test_the_log_holds_no_authorization_header_query_string_password_or_checkout_token(
    client, request_lines, caplog, brand, make_key
):
    auth = make_key(brand)
    payment = PaymentFactory(brand=brand)
    client.get("/api/v1/payments?api_key=secret-in-query", headers=auth)
    client.post("/panel/sign-in", data={"email": "a@b.c", "password": "hunter2-password"})
    client.get(f"/checkout/{payment.token}")

    paths = [line["path"] for line in request_lines()]
    assert paths == ["/api/v1/payments", "/panel/sign-in", "/checkout/[redacted]"]
    secret = auth["Authorization"].split()[1]
    for leaked in (secret, "secret-in-query", "hunter2-password", payment.token):
        assert leaked not in caplog.text


def test_log_level_warning_silences_the_request_log(app, caplog, root_level):
    served = create_app(
        {
            "APP_ENV": "testing",
            "SQLALCHEMY_DATABASE_URI": app.config["SQLALCHEMY_DATABASE_URI"],
            "LOG_LEVEL": "warning",
        }
    )
    try:
        caplog.handler.setLevel(logging.NOTSET)
        served.test_client().get("/healthz")
    finally:
        with served.app_context():
            db.engine.dispose()

    assert served.config["LOG_LEVEL"] == "WARNING"
    assert not [record for record in caplog.records if record.name == "gateway.requests"]


def test_a_served_request_is_logged_to_stderr_and_nothing_to_stdout(tmp_path):
    script = (
        "from gateway import create_app; app = create_app({'APP_ENV': 'testing'}); "
        "app.test_client().get('/healthz', headers={'X-Request-ID': 'from-the-shell'})"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "LOG_LEVEL": "INFO"},
    )

    assert (
        "gateway.requests: request_id=from-the-shell method=GET path=/healthz status=200"
        in done.stderr
    )
    assert done.stdout == ""
