"""Bearer keys: missing, invalid, revoked, scopes, super-administrator header, storage, last use,
limits.
"""

import hashlib
from datetime import datetime, timedelta, timezone

import pytest
from freezegun import freeze_time
from sqlalchemy import event

from gateway import create_app
from gateway.accounts.api_keys import generate_key
from gateway.accounts.models.api_key import ApiKey
from gateway.extensions import db
from tests.factories import CustomerFactory, UserFactory
from tests.services import redis_client, unavailable

PAYMENTS = "/api/v1/payments"
KEYS = "/api/v1/api-keys"
NEW_PAYMENT = {"amount": "500.00", "currency": "BDT"}


def assert_error(response, status, code):
    assert response.status_code == status, response.get_data(as_text=True)
    assert response.json["success"] is False and response.json["error"] is True
    assert response.json["code"] == code
    assert response.json["message"]


def test_a_request_without_authorization_is_401_missing_token(client, brand):
    assert_error(client.get(PAYMENTS), 401, "MISSING_TOKEN")
    assert_error(client.post(PAYMENTS, json=NEW_PAYMENT), 401, "MISSING_TOKEN")


@pytest.mark.parametrize(
    "header",
    [
        "Bearer gw_live_thisKeyWasNeverIssued000000000000000000000",
        "Bearer ",
        "Bearer",
        "Bearer    ",
        "Bearer not a key",
        "Bearer \u00e9\u00e9",
        "Bearer " + "x" * 10_000,
    ],
)
def test_an_unknown_or_malformed_key_is_401_invalid_token(client, auth, header):
    assert_error(client.get(PAYMENTS, headers={"Authorization": header}), 401, "INVALID_TOKEN")


@pytest.mark.parametrize("scheme", ["Basic", "Token", "Bearer:", "", "Digest"])
def test_a_real_key_under_another_scheme_is_401_invalid_token(client, brand, scheme):
    _, secret = generate_key(brand, "scheme", ["read"])
    header = f"{scheme} {secret}" if scheme else secret

    assert_error(client.get(PAYMENTS, headers={"Authorization": header}), 401, "INVALID_TOKEN")


def test_the_bearer_scheme_is_case_insensitive(client, brand):
    _, secret = generate_key(brand, "case", ["read"])

    assert client.get(PAYMENTS, headers={"Authorization": f"bearer {secret}"}).status_code == 200


def test_a_key_revoked_through_the_api_fails_on_the_very_next_request(client, brand, make_key):
    UserFactory(brand=brand, role="super_admin", email="root@example.com")
    admin = {
        **make_key(brand, ["read", "write", "admin"]),
        "X-Super-Admin-Email": "root@example.com",
    }
    key, secret = generate_key(brand, "soon-revoked", ["read", "write"])
    headers = {"Authorization": f"Bearer {secret}"}
    assert client.get(PAYMENTS, headers=headers).status_code == 200

    assert client.delete(f"{KEYS}/{key.id}", headers=admin).status_code == 200

    assert_error(client.get(PAYMENTS, headers=headers), 401, "INVALID_TOKEN")
    assert_error(client.post(PAYMENTS, json=NEW_PAYMENT, headers=headers), 401, "INVALID_TOKEN")


def test_a_key_revoked_from_the_command_line_fails_on_the_very_next_request(client, runner, brand):
    _, secret = generate_key(brand, "cli-revoked", ["read"])
    headers = {"Authorization": f"Bearer {secret}"}
    assert client.get(PAYMENTS, headers=headers).status_code == 200

    result = runner.invoke(args=["gateway", "revoke-key", "cli-revoked"])

    assert result.exit_code == 0, result.output
    assert_error(client.get(PAYMENTS, headers=headers), 401, "INVALID_TOKEN")


@pytest.mark.parametrize(
    "scopes, method, path, body",
    [
        (["write"], "get", PAYMENTS, None),
        (["write", "admin"], "get", "/api/v1/customers", None),
        (["read"], "post", PAYMENTS, NEW_PAYMENT),
        (["read", "admin"], "post", "/api/v1/customers", {"email": "a@example.com"}),
        (["read"], "patch", "/api/v1/customers/{customer}", {"name": "x"}),
        (["read"], "delete", "/api/v1/customers/{customer}", None),
        (["read"], "post", PAYMENTS + "/00000000-0000-4000-8000-000000000000/cancel", None),
    ],
)
def test_each_method_class_needs_its_scope(client, brand, make_key, scopes, method, path, body):
    customer = CustomerFactory(brand=brand)
    headers = make_key(brand, scopes)
    kwargs = {"json": body} if body is not None else {}

    response = getattr(client, method)(path.format(customer=customer.id), headers=headers, **kwargs)

    assert_error(response, 403, "INSUFFICIENT_SCOPE")
    assert ("read" if method == "get" else "write") in response.json["message"]


def test_read_and_write_scopes_each_open_their_own_methods(client, brand, make_key):
    assert client.get(PAYMENTS, headers=make_key(brand, ["read"])).status_code == 200
    assert (
        client.post(PAYMENTS, json=NEW_PAYMENT, headers=make_key(brand, ["write"])).status_code
        == 201
    )


@pytest.fixture
def key_admin(brand, make_key):
    """A read+write+admin key's header, without the super-administrator header."""
    return make_key(brand, ["read", "write", "admin"])


def test_key_operations_without_the_super_admin_header_are_400(client, key_admin):
    for response in [
        client.get(KEYS, headers=key_admin),
        client.post(KEYS, json={"label": "x"}, headers=key_admin),
        client.get(KEYS, headers={**key_admin, "X-Super-Admin-Email": "  "}),
    ]:
        assert_error(response, 400, "SUPER_ADMIN_EMAIL_REQUIRED")


@pytest.mark.parametrize("who", ["unknown", "inactive", "staff", "malformed"])
def test_key_operations_need_an_active_super_administrator(client, brand, key_admin, who):
    UserFactory(brand=brand, role="super_admin", email="inactive@example.com", active=False)
    UserFactory(brand=brand, role="staff", email="staff@example.com")
    email = {
        "unknown": "nobody@example.com",
        "inactive": "inactive@example.com",
        "staff": "staff@example.com",
        "malformed": "not an address",
    }[who]
    headers = {**key_admin, "X-Super-Admin-Email": email}
    before = db.session.scalar(db.select(db.func.count()).select_from(ApiKey))

    assert_error(client.get(KEYS, headers=headers), 403, "INVALID_SUPER_ADMIN")
    assert_error(
        client.post(KEYS, json={"label": "x"}, headers=headers), 403, "INVALID_SUPER_ADMIN"
    )
    assert_error(client.delete(f"{KEYS}/1", headers=headers), 403, "INVALID_SUPER_ADMIN")
    assert db.session.scalar(db.select(db.func.count()).select_from(ApiKey)) == before


def test_the_super_admin_address_is_matched_without_regard_to_case(client, brand, key_admin):
    UserFactory(brand=brand, role="super_admin", email="root@example.com")

    assert (
        client.get(
            KEYS, headers={**key_admin, "X-Super-Admin-Email": " Root@Example.COM "}
        ).status_code
        == 200
    )


def test_keys_are_stored_only_as_a_hash_with_a_display_prefix(
    client, app, brand, key_admin, monkeypatch
):
    monkeypatch.setitem(app.config, "API_KEY_PREFIX", "shop_test_")
    UserFactory(brand=brand, role="super_admin", email="root@example.com")

    created = client.post(
        KEYS,
        json={"label": "hashed"},
        headers={**key_admin, "X-Super-Admin-Email": "root@example.com"},
    )

    secret = created.json["data"]["key"]
    assert secret.startswith("shop_test_")
    assert len(secret) - len("shop_test_") >= 32  # at least 192 random bits in URL-safe base64
    db.session.expire_all()
    row = db.session.get(ApiKey, created.json["data"]["id"])
    values = [getattr(row, column.key) for column in ApiKey.__table__.columns]
    assert not any(secret in str(value) for value in values)
    assert row.key_hash == hashlib.sha256(secret.encode()).hexdigest()
    assert (
        row.display_prefix
        == created.json["data"]["display_prefix"]
        == secret[: len("shop_test_") + 6]
    )
    assert client.get(PAYMENTS, headers={"Authorization": f"Bearer {secret}"}).status_code == 200


def test_two_keys_never_share_a_secret(brand):
    secrets = {generate_key(brand, f"k{n}", ["read"])[1] for n in range(20)}

    assert len(secrets) == 20


@pytest.fixture
def api_key_updates(app):
    """The UPDATE statements that touch api_keys, as the database receives them."""
    seen = []

    def record(conn, cursor, statement, parameters, context, executemany):
        if statement.lstrip().upper().startswith("UPDATE API_KEYS"):
            seen.append(statement)

    event.listen(db.engine, "before_cursor_execute", record)
    yield seen
    event.remove(db.engine, "before_cursor_execute", record)


def test_last_used_at_is_written_at_most_once_a_minute(client, brand, api_key_updates):
    key, secret = generate_key(brand, "usage", ["read"])
    headers = {"Authorization": f"Bearer {secret}"}
    start = datetime(2030, 5, 1, 10, 0, 0, tzinfo=timezone.utc)

    def last_used():
        db.session.expire_all()
        return db.session.get(ApiKey, key.id).last_used_at

    assert last_used() is None
    with freeze_time(start) as frozen:
        assert client.get(PAYMENTS, headers=headers).status_code == 200
        assert last_used() == start
        assert len(api_key_updates) == 1

        frozen.tick(timedelta(seconds=30))
        client.get(PAYMENTS, headers=headers)
        frozen.tick(timedelta(seconds=29))
        client.get(PAYMENTS, headers=headers)
        assert last_used() == start
        assert len(api_key_updates) == 1

        frozen.tick(timedelta(seconds=2))
        client.get(PAYMENTS, headers=headers)
        assert last_used() == start + timedelta(seconds=61)
        assert len(api_key_updates) == 2


def test_every_response_carries_its_own_request_id(client, auth):
    responses = [
        client.get(PAYMENTS, headers=auth),
        client.get(PAYMENTS),
        client.get("/api/v1/nowhere", headers=auth),
        client.post(PAYMENTS, json={}, headers=auth),
        client.post(PAYMENTS, json=NEW_PAYMENT, headers=auth),
        client.delete(PAYMENTS, headers=auth),
        client.get("/healthz"),
    ]

    ids = [response.headers.get("X-Request-ID") for response in responses]
    assert all(ids)
    assert len(set(ids)) == len(ids)


def test_a_sane_incoming_request_id_is_echoed_and_a_wild_one_replaced(client, auth):
    echoed = client.get(PAYMENTS, headers={**auth, "X-Request-ID": "trace-123-abc"})
    replaced = client.get(PAYMENTS, headers={**auth, "X-Request-ID": "<script>" + "x" * 100})

    assert echoed.headers["X-Request-ID"] == "trace-123-abc"
    assert replaced.headers["X-Request-ID"] != "<script>" + "x" * 100
    assert replaced.headers["X-Request-ID"].isalnum()


@pytest.mark.parametrize(
    "method, path, status, code",
    [
        ("get", "/api/v1/nowhere", 404, "NOT_FOUND"),
        ("get", "/api/v1/payments/a/b/c", 404, "NOT_FOUND"),
        ("post", "/api/v2/payments", 404, "NOT_FOUND"),
        ("delete", PAYMENTS, 405, "METHOD_NOT_ALLOWED"),
        ("put", "/api/v1/customers", 405, "METHOD_NOT_ALLOWED"),
        ("patch", PAYMENTS, 405, "METHOD_NOT_ALLOWED"),
    ],
)
def test_unknown_api_routes_answer_in_the_envelope(client, auth, method, path, status, code):
    for headers in (auth, {}):
        assert_error(getattr(client, method)(path, headers=headers), status, code)


def rate_limited_app(app, **overrides):
    """A second application over the same database, with a 3-per-minute limit switched on."""
    return create_app(
        {
            "APP_ENV": "testing",
            "SQLALCHEMY_DATABASE_URI": app.config["SQLALCHEMY_DATABASE_URI"],
            "RATELIMIT_ENABLED": True,
            "API_RATE_LIMIT": "3/minute",
            "REDIS_URL": None,
            "SERVER_NAME": None,
            **overrides,
        }
    )


@pytest.fixture
def limited_apps(app):
    """Build rate-limited apps; their connections are closed after the test."""
    built = []

    def build(**overrides):
        built.append(rate_limited_app(app, **overrides))
        return built[-1]

    yield build
    for other in built:
        with other.app_context():
            db.session.remove()
            db.engine.dispose()


def test_the_fourth_request_in_a_minute_is_429_with_retry_after_per_key(
    limited_apps, brand, make_key
):
    limited = limited_apps().test_client()
    first, second = make_key(brand, ["read"]), make_key(brand, ["read"])

    assert [limited.get(PAYMENTS, headers=first).status_code for _ in range(3)] == [200, 200, 200]
    refused = limited.get(PAYMENTS, headers=first)

    assert_error(refused, 429, "RATE_LIMITED")
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    assert refused.headers["X-Request-ID"]
    assert limited.get(PAYMENTS, headers=second).status_code == 200
    assert limited.post(PAYMENTS, json=NEW_PAYMENT, headers=first).status_code == 429


def test_without_redis_a_keys_request_rate_counts_per_process_not_in_the_database(
    limited_apps, brand, make_key
):
    """A throughput cap, not a guard against guessing: no database write on every API request."""
    from gateway.accounts.models.rate_limit import RateLimitCounter

    auth = make_key(brand, ["read"])
    one, other = limited_apps().test_client(), limited_apps().test_client()

    assert [one.get(PAYMENTS, headers=auth).status_code for _ in range(4)] == [200] * 3 + [429]
    assert other.get(PAYMENTS, headers=auth).status_code == 200  # another process's own count
    assert (
        db.session.execute(db.select(db.func.count()).select_from(RateLimitCounter)).scalar() == 0
    )


def test_one_key_spelled_differently_still_has_one_limit(limited_apps, brand, make_key):
    limited = limited_apps().test_client()
    secret = make_key(brand, ["read"])["Authorization"].removeprefix("Bearer ")
    spellings = [f"Bearer {secret}", f"bearer {secret}", f"BEARER {secret}", f"Bearer  {secret}"]
    answers = [
        limited.get(PAYMENTS, headers={"Authorization": header}).status_code for header in spellings
    ]
    # The bucket is the key the header resolves to, not the header's bytes.
    assert answers == [200, 200, 200, 429]


def test_made_up_keys_from_one_address_share_one_limit(limited_apps, brand, make_key):
    limited = limited_apps(
        API_RATE_LIMIT="100/minute", API_AUTH_FAILURE_LIMIT="3/minute"
    ).test_client()
    made_up = [{"Authorization": f"Bearer gw_live_made-up-{number}"} for number in range(5)]

    assert [limited.get(PAYMENTS, headers=headers).status_code for headers in made_up[:3]] == [
        401,
        401,
        401,
    ]
    refused = limited.get(PAYMENTS, headers=made_up[3])

    assert_error(refused, 429, "RATE_LIMITED")
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    assert "made-up" not in refused.get_data(as_text=True)
    # A real key from the same address is not held back, and another address is counted on its own.
    assert limited.get(PAYMENTS, headers=make_key(brand, ["read"])).status_code == 200
    elsewhere = limited.get(
        PAYMENTS, headers=made_up[4], environ_base={"REMOTE_ADDR": "198.51.100.7"}
    )
    assert_error(elsewhere, 401, "INVALID_TOKEN")


def test_a_valid_key_does_not_count_against_the_refused_key_limit(limited_apps, brand, make_key):
    limited = limited_apps(
        API_RATE_LIMIT="100/minute", API_AUTH_FAILURE_LIMIT="1/minute"
    ).test_client()
    headers = make_key(brand, ["read"])

    assert [limited.get(PAYMENTS, headers=headers).status_code for _ in range(5)] == [200] * 5
    assert_error(
        limited.get(PAYMENTS, headers={"Authorization": "Bearer made-up"}), 401, "INVALID_TOKEN"
    )


def test_rate_limits_are_off_when_disabled(client, auth):
    assert {client.get(PAYMENTS, headers=auth).status_code for _ in range(10)} == {200}


def test_with_redis_the_limit_is_shared_between_processes(limited_apps, brand, make_key):
    from tests.services import REDIS_URL

    try:
        redis = redis_client()
    except Exception as error:  # noqa: BLE001 - any failure to reach Redis
        unavailable("Redis", error)
    redis.flushdb()
    one = limited_apps(REDIS_URL=REDIS_URL).test_client()
    two = limited_apps(REDIS_URL=REDIS_URL).test_client()
    headers = make_key(brand, ["read"])

    assert [one.get(PAYMENTS, headers=headers).status_code for _ in range(3)] == [200, 200, 200]
    assert_error(two.get(PAYMENTS, headers=headers), 429, "RATE_LIMITED")
    assert redis.keys("*")  # the counter lives in Redis, not in either process

    redis.flushdb()
    assert two.get(PAYMENTS, headers=headers).status_code == 200
