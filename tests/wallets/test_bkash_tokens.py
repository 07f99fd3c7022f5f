"""bKash's id token is shared by every process (Redis when REDIS_URL is set, else the database),
granted once, refreshed before it expires by whichever process comes first, and renewed when bKash
refuses it."""

import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from flask import current_app

from gateway.clock import utcnow
from gateway.extensions import db
from gateway.wallets import tokens
from gateway.wallets.bkash import CREATE, GRANT, REFRESH, id_token
from gateway.wallets.credentials import opened
from gateway.wallets.models import WalletCredential
from gateway.wallets.tokens import load_token, redis_key, store_token
from tests.checkout_helpers import payment  # noqa: F401 - fixtures
from tests.services import REDIS_URL, redis_client
from tests.wallets.bkash_support import (  # noqa: F401 - fixtures
    bkash_api,
    pay_through_bkash,
    standin,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(params=["database", "redis"])
def token_store(request, app, monkeypatch):
    """Each test runs with the token in the database (no REDIS_URL), then in Redis."""
    if request.param == "redis":
        redis = redis_client()  # skips when the test Redis is not running
        monkeypatch.setitem(app.config, "REDIS_URL", REDIS_URL)
        yield request.param
        redis.delete(*redis.keys("gateway:wallet-token*") or ["none"])
    else:
        yield request.param


def process_env(app, **extra):
    """The environment of another gateway process on the test's database and Redis."""
    config = {
        "SQLALCHEMY_DATABASE_URI": app.config["SQLALCHEMY_DATABASE_URI"],
        "REDIS_URL": app.config.get("REDIS_URL"),
        "SECRET_KEY": app.config["SECRET_KEY"],
    }
    return {**os.environ, "GATEWAY_TEST_CONFIG": json.dumps(config), **extra}


def token_command(method):
    return [sys.executable, "-m", "tests.wallets.token_process", str(method.id)]


def other_process_token(app, method):
    """The id token a second gateway process calls bKash with (tests/wallets/token_process.py)."""
    done = subprocess.run(
        token_command(method),
        cwd=ROOT,
        env=process_env(app),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.strip().splitlines()[-1]


def test_two_processes_renewing_at_once_make_one_grant(
    app, bkash_api, standin, token_store, tmp_path
):
    go = tmp_path / "go"
    standin.grant_delay = 0.5  # both are inside the renewal at once
    processes = [
        subprocess.Popen(
            token_command(bkash_api),
            cwd=ROOT,
            env=process_env(app, GATEWAY_TEST_GO=str(go)),
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    try:
        assert [p.stdout.readline().strip() for p in processes] == ["ready", "ready"]
        go.touch()
        tokens = [p.communicate(timeout=60)[0].strip().splitlines()[-1] for p in processes]
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
    assert tokens[0] == tokens[1]
    assert standin.calls(GRANT) == 1


def our_token(method):
    base_url, secrets = opened(method)
    return id_token(method, base_url, secrets)


def renewal_locked(method):
    """Whether a renewal lock of the method is held (Redis key or token_lock_until)."""
    if current_app.config.get("REDIS_URL"):
        return redis_client().exists(tokens.lock_key(method.id)) == 1
    db.session.expire_all()
    return (
        db.session.execute(
            db.select(WalletCredential.token_lock_until).where(
                WalletCredential.method_id == method.id
            )
        ).scalar()
        is not None
    )


def test_two_processes_share_one_granted_token(app, bkash_api, standin, token_store):
    first = our_token(bkash_api)
    assert not renewal_locked(bkash_api)  # freed once the token was stored
    assert other_process_token(app, bkash_api) == first
    assert standin.calls(GRANT) == 1
    assert standin.calls(REFRESH) == 0


def test_a_token_near_expiry_is_refreshed_once_for_every_process(
    app, bkash_api, standin, token_store
):
    granted = our_token(bkash_api)
    stored = load_token(bkash_api.id)
    # As if 58 of its 60 minutes had passed: within the refresh margin.
    store_token(bkash_api.id, granted, stored["refresh_token"], expires_in=120)
    refreshed = other_process_token(app, bkash_api)
    assert refreshed != granted
    assert standin.calls(REFRESH) == 1
    assert our_token(bkash_api) == refreshed  # this process takes the other's refreshed token
    assert standin.calls(REFRESH) == 1
    assert standin.calls(GRANT) == 1


def test_a_token_bkash_refuses_is_renewed_and_the_call_made_again(
    client, payment, bkash_api, standin, token_store
):
    our_token(bkash_api)
    standin.expire_tokens()  # bKash expired it early: 401 on the next call
    answer = pay_through_bkash(client, payment, bkash_api)
    assert answer.status_code == 303
    assert standin.calls(CREATE) == 2  # refused once, made again with the refreshed token
    assert standin.calls(REFRESH) == 1
    assert standin.calls(GRANT) == 1


def test_the_stored_token_is_sealed(app, bkash_api, standin, token_store):
    token = our_token(bkash_api)
    if token_store == "redis":
        raw = redis_client().get(redis_key(bkash_api.id)).decode()
    else:
        raw = db.session.execute(
            db.select(WalletCredential.token_sealed).where(
                WalletCredential.method_id == bkash_api.id
            )
        ).scalar()
    assert raw and token not in raw


def test_a_renewal_lock_left_by_a_dead_process_delays_but_never_stops_a_grant(
    app, bkash_api, standin, token_store, monkeypatch
):
    monkeypatch.setattr(tokens, "LOCK_WAIT", 0.2)
    if token_store == "redis":
        redis_client().set(tokens.lock_key(bkash_api.id), "dead", px=60_000)
    else:
        db.session.execute(
            db.update(WalletCredential)
            .where(WalletCredential.method_id == bkash_api.id)
            .values(token_lock_until=utcnow() + timedelta(minutes=1))
        )
        db.session.commit()
    assert our_token(bkash_api)
    assert standin.calls(GRANT) == 1
