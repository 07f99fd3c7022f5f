"""TRUSTED_PROXIES: behind N reverse proxies the client's address comes from X-Forwarded-For; with 0
it is ignored.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from flask import request

from gateway import create_app
from gateway.extensions import db

ROOT = Path(__file__).resolve().parent.parent
PROXY = "10.0.0.5"
CLIENT = "203.0.113.7"


def app_with(app, trusted_proxies):
    """An app on the test database with TRUSTED_PROXIES set, and a page that echoes what it sees of
    the client.
    """
    proxied = create_app(
        {
            "APP_ENV": "testing",
            "SQLALCHEMY_DATABASE_URI": app.config["SQLALCHEMY_DATABASE_URI"],
            "REDIS_URL": None,
            "RATELIMIT_ENABLED": False,
            "TRUSTED_PROXIES": trusted_proxies,
        }
    )

    @proxied.get("/_test/whoami")
    def whoami():
        return {"remote_addr": request.remote_addr, "scheme": request.scheme}

    return proxied


@pytest.fixture
def whoami(app):
    """Ask an app with a given TRUSTED_PROXIES who the client is, as a proxy at PROXY forwarding
    CLIENT.
    """
    built = []

    def ask(trusted_proxies):
        proxied = app_with(app, trusted_proxies)
        built.append(proxied)
        return (
            proxied.test_client()
            .get(
                "/_test/whoami",
                headers={"X-Forwarded-For": CLIENT, "X-Forwarded-Proto": "https"},
                environ_base={"REMOTE_ADDR": PROXY},
            )
            .get_json()
        )

    yield ask
    for proxied in built:
        with proxied.app_context():
            db.session.remove()
            db.engine.dispose()


def test_with_one_trusted_proxy_remote_addr_comes_from_x_forwarded_for(whoami):
    assert whoami(1) == {"remote_addr": CLIENT, "scheme": "https"}


def test_with_no_trusted_proxy_x_forwarded_for_is_ignored(whoami):
    assert whoami(0) == {"remote_addr": PROXY, "scheme": "http"}


def test_trusted_proxies_is_off_by_default(app):
    assert app.config["TRUSTED_PROXIES"] == 0


@pytest.mark.parametrize("value, expected", [(None, 0), ("1", 1), ("2", 2)])
def test_trusted_proxies_is_read_from_the_environment(value, expected):
    env = {key: val for key, val in os.environ.items() if key != "TRUSTED_PROXIES"}
    if value is not None:
        env["TRUSTED_PROXIES"] = value
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import config; print(config.load_settings()[0]['TRUSTED_PROXIES'])",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert int(out) == expected
