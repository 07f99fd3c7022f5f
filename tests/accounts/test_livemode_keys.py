"""Test keys beside live keys (issue 31): their prefix follows API_KEY_PREFIX, the commands print
them alone on the last line, and each key acts in its own mode."""

import re

import pytest

from gateway.accounts.api_keys import generate_key, prefix_of_test_keys
from gateway.accounts.models.api_key import ApiKey
from gateway.compat.models.compat import CompatKey
from gateway.extensions import db
from gateway.payments.models.payment import Payment
from tests.compat.conftest import P2_HEADER, P3_HEADER, U_HEADER
from tests.compat.test_compat_errors import P2_BODY, P3_BODY, U_BODY

SECRET = r"[A-Za-z0-9_-]{32,}"


def invoke(runner, *args):
    result = runner.invoke(args=["gateway", *args])
    assert result.exit_code == 0, result.output
    return result


def last_line(result):
    return result.output.strip().splitlines()[-1]


@pytest.mark.parametrize(
    "prefix, expected",
    [
        ("gw_live_", "gw_test_"),
        ("shop_live_", "shop_test_"),
        ("olive_live_", "olive_test_"),  # the last "live" is the mode
        ("shop_", "shop_test_"),
        ("up_", "up_test_"),
        ("", "test_"),
    ],
)
def test_the_test_prefix_follows_the_configured_one(prefix, expected):
    assert prefix_of_test_keys(prefix) == expected


def test_a_custom_prefix_makes_live_and_test_keys_that_work_each_in_its_mode(
    app, client, brand, monkeypatch
):
    monkeypatch.setitem(app.config, "API_KEY_PREFIX", "shop_live_")
    live, live_secret = generate_key(brand, "server", ["read", "write"])
    test, test_secret = generate_key(brand, "laptop", ["read", "write"], livemode=False)
    assert re.fullmatch("shop_live_" + SECRET, live_secret) and live.livemode is True
    assert re.fullmatch("shop_test_" + SECRET, test_secret) and test.livemode is False
    assert test.display_prefix == test_secret[: len("shop_test_") + 6]
    made = client.post(
        "/api/v1/payments",
        json={"amount": "5.00", "currency": "BDT"},
        headers={"Authorization": f"Bearer {test_secret}"},
    )
    assert made.status_code == 201 and made.json["data"]["livemode"] is False
    assert db.session.execute(db.select(Payment.livemode)).scalar_one() is False


def test_without_live_in_the_prefix_a_test_key_adds_test(app, brand, monkeypatch):
    monkeypatch.setitem(app.config, "API_KEY_PREFIX", "acme_")
    _, secret = generate_key(brand, "laptop", ["read"], livemode=False)
    assert re.fullmatch("acme_test_" + SECRET, secret)


def test_create_key_test_prints_a_working_test_key_alone_on_the_last_line(runner, client, brand):
    result = invoke(runner, "create-key", "--label", "laptop", "--test")
    key = last_line(result)
    assert re.fullmatch("gw_test_" + SECRET, key)
    assert "test key 'laptop'" in result.output
    row = db.session.execute(db.select(ApiKey)).scalar_one()
    assert (row.label, row.livemode) == ("laptop", False)
    headers = {"Authorization": f"Bearer {key}"}
    made = client.post(
        "/api/v1/payments", json={"amount": "5.00", "currency": "BDT"}, headers=headers
    )
    assert made.status_code == 201 and made.json["data"]["livemode"] is False


def test_create_key_without_test_still_makes_a_live_key(runner, brand):
    key = last_line(invoke(runner, "create-key", "--label", "server"))
    assert re.fullmatch("gw_live_" + SECRET, key)
    assert db.session.execute(db.select(ApiKey.livemode)).scalar_one() is True


@pytest.mark.parametrize(
    "dialect, path, header, body, prefix",
    [
        ("uddoktapay", "/api/checkout-v2", U_HEADER, U_BODY, "up_test_"),
        ("piprapay2", "/api/create-charge", P2_HEADER, P2_BODY, "pp2_test_"),
        ("piprapay3", "/api/checkout/redirect", P3_HEADER, P3_BODY, "pp3_test_"),
    ],
)
def test_create_compat_key_test_prints_a_test_key_that_makes_test_payments(
    runner, client, brand, dialect, path, header, body, prefix
):
    result = invoke(runner, "create-compat-key", "--dialect", dialect, "--label", "shop", "--test")
    key = last_line(result)
    assert re.fullmatch(prefix + SECRET, key)
    assert db.session.execute(db.select(CompatKey.livemode)).scalar_one() is False
    listed = invoke(runner, "list-compat-keys").output
    assert listed.rstrip().endswith("\ttest")
    assert client.post(path, json=body, headers={header: key}).status_code == 200
    assert db.session.execute(db.select(Payment.livemode)).scalar_one() is False
