"""`flask gateway bootstrap|create-admin|create-key|revoke-key`: what they print, write and
refuse."""

import re

import pytest

from gateway.accounts.models.api_key import ApiKey
from gateway.accounts.models.brand import Brand
from gateway.accounts.models.user import User
from gateway.extensions import db
from tests.local_servers import free_port

PAYMENTS = "/api/v1/payments"


def counts():
    db.session.expire_all()
    return tuple(
        db.session.scalar(db.select(db.func.count()).select_from(model))
        for model in (Brand, User, ApiKey)
    )


def last_line(result):
    return result.output.strip().splitlines()[-1]


def invoke(runner, *args):
    return runner.invoke(args=["gateway", *args])


@pytest.fixture
def bootstrapped(runner):
    result = invoke(runner, "bootstrap")
    assert result.exit_code == 0, result.output
    return result


def test_bootstrap_prints_the_admin_login_password_and_a_working_key(runner, client, app):
    result = invoke(runner, "bootstrap")

    assert result.exit_code == 0, result.output
    login = re.search(r"Admin login:\s+(\S+)", result.output).group(1)
    password = re.search(r"Password:\s+(\S+)", result.output).group(1)
    key = last_line(result)
    assert login == "admin@example.com"
    assert re.fullmatch(re.escape(app.config["API_KEY_PREFIX"]) + r"[A-Za-z0-9_-]{32,}", key)
    admin = db.session.execute(db.select(User)).scalar_one()
    assert admin.check_password(password) and admin.role == "owner"
    headers = {"Authorization": f"Bearer {key}"}
    assert client.get(PAYMENTS, headers=headers).status_code == 200
    assert (
        client.post(
            PAYMENTS, json={"amount": "1.00", "currency": "BDT"}, headers=headers
        ).status_code
        == 201
    )
    # The first key reads and writes; managing keys needs the admin scope, given only with
    # --admin-key.
    keys = client.get("/api/v1/api-keys", headers={**headers, "X-Super-Admin-Email": login})
    assert keys.status_code == 403 and keys.json["code"] == "INSUFFICIENT_SCOPE"
    assert db.session.execute(db.select(ApiKey.scopes)).scalar_one() == "read,write"


def test_bootstrap_with_admin_key_gives_the_first_key_the_admin_scope(runner, client):
    result = invoke(runner, "bootstrap", "--admin-key")

    assert result.exit_code == 0, result.output
    headers = {
        "Authorization": f"Bearer {last_line(result)}",
        "X-Super-Admin-Email": "admin@example.com",
    }
    keys = client.get("/api/v1/api-keys", headers=headers)
    assert keys.status_code == 200 and keys.json["data"][0]["scopes"] == ["read", "write", "admin"]
    assert "scopes read, write, admin" in result.output


def test_bootstrap_prints_the_brands_webhook_secret_once(runner):
    result = invoke(runner, "bootstrap")

    assert result.exit_code == 0, result.output
    secret = db.session.execute(db.select(Brand.webhook_secret)).scalar_one()
    assert re.fullmatch(r"whsec_[0-9a-f]{64}", secret)
    assert result.output.count(secret) == 1
    assert secret not in invoke(runner, "bootstrap").output


def test_bootstrap_again_changes_nothing(runner, bootstrapped):
    before = counts()

    again = invoke(runner, "bootstrap")

    assert again.exit_code == 0
    assert "nothing changed" in again.output
    assert counts() == before
    assert last_line(bootstrapped) not in again.output


def test_a_failure_while_creating_the_key_leaves_no_brand_and_no_user(runner, monkeypatch):
    import gateway.accounts.brands

    def key_creation_fails(*args, **kwargs):
        raise RuntimeError("the database went away")

    with monkeypatch.context() as patch:
        patch.setattr(gateway.accounts.brands, "add_key", key_creation_fails)
        failed = invoke(runner, "bootstrap")

    assert failed.exit_code != 0
    assert counts() == (0, 0, 0)
    again = invoke(runner, "bootstrap")
    assert again.exit_code == 0, again.output
    assert "nothing changed" not in again.output
    assert counts() == (1, 1, 1)


def test_a_bootstrap_step_that_fails_is_reported_and_the_key_still_shown(
    runner, client, monkeypatch
):
    import gateway.cli.core

    def demo_method_fails(brand):
        raise RuntimeError("no demo number today")

    monkeypatch.setattr(gateway.cli.core, "BOOTSTRAP_HOOKS", [demo_method_fails])

    result = invoke(runner, "bootstrap")

    assert result.exit_code == 0, result.output
    assert "no demo number today" in result.output
    assert counts() == (1, 1, 1)
    assert (
        client.get(PAYMENTS, headers={"Authorization": f"Bearer {last_line(result)}"}).status_code
        == 200
    )


def test_bootstrap_takes_the_admin_address_and_password(runner):
    result = invoke(
        runner, "bootstrap", "--email", "Owner@Shop.example", "--password", "a long secret"
    )

    assert result.exit_code == 0, result.output
    assert db.session.execute(db.select(User)).scalar_one().check_password("a long secret")
    assert "owner@shop.example" in result.output


@pytest.mark.parametrize(
    "args, message",
    [(["--email", "not-an-address"], "e-mail"), (["--password", "short"], "8 characters")],
)
def test_bootstrap_refuses_bad_input_and_writes_nothing(runner, args, message):
    result = invoke(runner, "bootstrap", *args)

    assert result.exit_code != 0
    assert message in result.output
    assert counts() == (0, 0, 0)


def test_create_admin_makes_a_staff_user_by_default(runner, bootstrapped):
    result = invoke(
        runner, "create-admin", "--email", " Clerk@Shop.example ", "--password", "long enough"
    )

    assert result.exit_code == 0, result.output
    clerk = db.session.execute(
        db.select(User).where(User.email == "clerk@shop.example")
    ).scalar_one()
    assert clerk.role == "staff" and clerk.active and clerk.check_password("long enough")


def test_create_admin_super_admin_can_authorise_key_operations(runner, client):
    key = last_line(invoke(runner, "bootstrap", "--admin-key"))

    result = invoke(
        runner,
        "create-admin",
        "--email",
        "boss@shop.example",
        "--password",
        "long enough",
        "--super-admin",
    )

    assert result.exit_code == 0, result.output
    headers = {"Authorization": f"Bearer {key}", "X-Super-Admin-Email": "boss@shop.example"}
    assert client.get("/api/v1/api-keys", headers=headers).status_code == 200


@pytest.mark.parametrize(
    "email, password, message",
    [
        ("admin@example.com", "long enough", "already exists"),
        ("ADMIN@example.com", "long enough", "already exists"),
        ("not-an-address", "long enough", "Not an e-mail address"),
        ("clerk@", "long enough", "Not an e-mail address"),
        ("@shop.example", "long enough", "Not an e-mail address"),
        ("cl erk@shop.example", "long enough", "Not an e-mail address"),
        ("clerk@shop.example", "short", "at least 8 characters"),
    ],
)
def test_create_admin_refuses_bad_input_with_a_clear_message(
    runner, bootstrapped, email, password, message
):
    before = counts()

    result = invoke(runner, "create-admin", "--email", email, "--password", password)

    assert result.exit_code != 0
    assert message in result.output
    assert "Traceback" not in result.output
    assert counts() == before


def test_create_admin_before_bootstrap_says_what_to_do(runner):
    result = invoke(
        runner, "create-admin", "--email", "a@shop.example", "--password", "long enough"
    )

    assert result.exit_code != 0
    assert "bootstrap" in result.output


def test_create_key_prints_the_key_alone_on_the_last_line(runner, client, app, bootstrapped):
    result = invoke(runner, "create-key", "--label", "plugin", "--scopes", "read")

    assert result.exit_code == 0, result.output
    key = last_line(result)
    assert re.fullmatch(re.escape(app.config["API_KEY_PREFIX"]) + r"[A-Za-z0-9_-]{32,}", key)
    headers = {"Authorization": f"Bearer {key}"}
    assert client.get(PAYMENTS, headers=headers).status_code == 200
    refused = client.post(PAYMENTS, json={"amount": "1.00", "currency": "BDT"}, headers=headers)
    assert refused.json["code"] == "INSUFFICIENT_SCOPE"
    stored = db.session.execute(db.select(ApiKey).where(ApiKey.label == "plugin")).scalar_one()
    assert stored.scopes == "read"


def test_create_key_defaults_to_read_and_write(runner, bootstrapped):
    assert invoke(runner, "create-key", "--label", "default-scopes").exit_code == 0

    assert (
        db.session.execute(
            db.select(ApiKey.scopes).where(ApiKey.label == "default-scopes")
        ).scalar_one()
        == "read,write"
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (["--label", "bad", "--scopes", "root"], "Scopes must be drawn from"),
        (["--label", "bad", "--scopes", "read,superuser"], "Scopes must be drawn from"),
        (["--label", "bad", "--scopes", ","], "Scopes must be drawn from"),
        (["--label", "default"], "already labelled"),
        (["--label", " "], "label"),
    ],
)
def test_create_key_refuses_bad_input(runner, bootstrapped, args, message):
    before = counts()

    result = invoke(runner, "create-key", *args)

    assert result.exit_code != 0
    assert message in result.output
    assert counts() == before


def test_revoke_key_stops_the_key_and_an_unknown_label_fails(runner, client, bootstrapped):
    key = last_line(bootstrapped)

    assert invoke(runner, "revoke-key", "default").exit_code == 0
    assert client.get(PAYMENTS, headers={"Authorization": f"Bearer {key}"}).status_code == 401

    for label in ("default", "never-made"):
        result = invoke(runner, "revoke-key", label)
        assert result.exit_code != 0
        assert "No active key" in result.output


def test_rotate_webhook_secret_refuses_an_overlap_beyond_ten_years(runner, bootstrapped):
    brand = db.session.execute(db.select(Brand)).scalar_one()
    secret = brand.webhook_secret

    result = invoke(runner, "rotate-webhook-secret", "--overlap", "99999999999999")

    assert result.exit_code == 2 and "0<=x<=315360000" in result.output
    db.session.expire_all()
    assert brand.webhook_secret == secret


def test_simulate_sms_over_http_with_no_gateway_listening_says_so(
    app, runner, bootstrapped, monkeypatch
):
    base = f"http://127.0.0.1:{free_port()}"
    monkeypatch.setitem(app.config, "BASE_URL", base)

    result = invoke(
        runner,
        *("simulate-sms", "--provider", "bkash", "--amount", "500.00", "--trx-id", "8N7A6B5C4D"),
        *("--via", "http"),
    )

    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.exception
    assert f"No gateway answered at {base} (ConnectionError)" in result.output
    assert "--via local" in result.output
