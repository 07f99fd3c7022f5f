"""The /api-keys API: list, generate (secret shown once), revoke; labels, scopes and brand
isolation.
"""

import pytest

from gateway.accounts.models.api_key import ApiKey
from gateway.accounts.models.idempotency import IdempotencyRecord
from gateway.extensions import db
from tests.bad_input import JSON, assert_refused, body_cases, raw_body, send
from tests.factories import UserFactory

URL = "/api/v1/api-keys"
KEY_FIELDS = [
    "id",
    "label",
    "display_prefix",
    "scopes",
    "created_at",
    "last_used_at",
    "revoked_at",
    "active",
    "livemode",
]


@pytest.fixture
def admin(brand, make_key):
    """Headers of a read+write+admin key with an active super-administrator's address."""
    UserFactory(brand=brand, role="super_admin", email="root@example.com")
    return {
        **make_key(brand, ["read", "write", "admin"]),
        "X-Super-Admin-Email": "root@example.com",
    }


def key_count():
    return db.session.scalar(db.select(db.func.count()).select_from(ApiKey))


def bearer(secret):
    return {"Authorization": f"Bearer {secret}"}


def test_generate_key_returns_201_and_the_secret_once(client, app, admin):
    response = client.post(
        URL, json={"label": "Shop server", "scopes": ["read", "write"]}, headers=admin
    )

    assert response.status_code == 201
    data = response.json["data"]
    assert list(data) == KEY_FIELDS + ["key"]
    assert data["key"].startswith(app.config["API_KEY_PREFIX"])
    assert data["key"].startswith(data["display_prefix"])
    assert len(data["display_prefix"]) < len(data["key"])
    assert (data["label"], data["scopes"], data["active"]) == (
        "Shop server",
        ["read", "write"],
        True,
    )
    assert data["last_used_at"] is None and data["revoked_at"] is None
    assert client.get("/api/v1/payments", headers=bearer(data["key"])).status_code == 200
    listed = client.get(URL, headers=admin).json["data"]
    assert "key" not in listed[0] and data["key"] not in str(listed)


def test_generate_key_accepts_name_for_label_and_defaults_to_read_write(client, admin):
    response = client.post(URL, json={"name": "Plugin"}, headers=admin)

    assert response.status_code == 201
    assert (response.json["data"]["label"], response.json["data"]["scopes"]) == (
        "Plugin",
        ["read", "write"],
    )


def test_generated_scopes_are_deduplicated_in_a_fixed_order(client, admin):
    response = client.post(
        URL, json={"label": "all", "scopes": ["admin", "read", "admin", "write"]}, headers=admin
    )

    assert response.json["data"]["scopes"] == ["read", "write", "admin"]


@pytest.mark.parametrize(
    "body, field",
    [
        ({}, "label"),
        ({"label": ""}, "label"),
        ({"label": "x" * 101}, "label"),
        ({"label": 12}, "label"),
        ({"label": None}, "label"),
        ({"label": "ok", "scopes": ["root"]}, "scopes"),
        ({"label": "ok", "scopes": []}, "scopes"),
        ({"label": "ok", "scopes": "read"}, "scopes"),
        ({"label": "ok", "scopes": None}, "scopes"),
        ({"label": "ok", "scopes": [1]}, "scopes"),
        ({"label": "nul\u0000"}, "label"),
    ],
)
def test_generate_key_refuses_bad_bodies_and_writes_nothing(client, admin, body, field):
    before = key_count()

    response = client.post(URL, json=body, headers=admin)

    assert response.status_code == 422
    assert response.json["code"] == "VALIDATION_ERROR"
    assert any(error["field"].split(".")[0] == field for error in response.json["errors"])
    assert key_count() == before


def test_a_blank_label_is_refused_by_the_service(client, admin):
    response = client.post(URL, json={"label": "   "}, headers=admin)

    assert response.status_code == 422
    assert response.json["errors"][0]["field"] == "label"


def test_labels_are_unique_among_active_keys_only(client, admin):
    first = client.post(URL, json={"label": "twin"}, headers=admin).json["data"]

    taken = client.post(URL, json={"label": "twin"}, headers=admin)
    assert taken.status_code == 409
    assert taken.json["code"] == "LABEL_TAKEN"
    assert taken.json["errors"][0]["field"] == "label"

    assert client.delete(f"{URL}/{first['id']}", headers=admin).status_code == 200
    assert client.post(URL, json={"label": "twin"}, headers=admin).status_code == 201


def test_another_brand_may_use_the_same_label(client, admin, other_brand, make_key):
    UserFactory(brand=other_brand, role="super_admin", email="boss@other.example")
    theirs = {
        **make_key(other_brand, ["read", "write", "admin"]),
        "X-Super-Admin-Email": "boss@other.example",
    }

    assert client.post(URL, json={"label": "same"}, headers=admin).status_code == 201
    assert client.post(URL, json={"label": "same"}, headers=theirs).status_code == 201


def test_list_keys_shows_the_brands_keys_newest_first_without_secrets(
    client, brand, other_brand, admin, make_key
):
    make_key(other_brand, ["read"])
    client.post(URL, json={"label": "newest"}, headers=admin)

    response = client.get(URL, headers=admin)

    assert response.status_code == 200
    rows = response.json["data"]
    assert [row["label"] for row in rows][0] == "newest"
    assert {row["label"] for row in rows} == {"newest", "key-0"}
    assert all(list(row) == KEY_FIELDS for row in rows)
    assert "key_hash" not in response.get_data(as_text=True)


def test_revoke_key_by_id_takes_effect_on_the_next_request(client, admin):
    created = client.post(URL, json={"label": "doomed", "scopes": ["read"]}, headers=admin).json[
        "data"
    ]
    assert client.get("/api/v1/payments", headers=bearer(created["key"])).status_code == 200

    response = client.delete(f"{URL}/{created['id']}", headers=admin)

    assert response.status_code == 200
    assert response.json["success"] is True
    assert (response.json["data"]["id"], response.json["data"]["active"]) == (created["id"], False)
    assert response.json["data"]["revoked_at"] is not None
    after = client.get("/api/v1/payments", headers=bearer(created["key"]))
    assert (after.status_code, after.json["code"]) == (401, "INVALID_TOKEN")
    listed = {row["id"]: row for row in client.get(URL, headers=admin).json["data"]}
    assert listed[created["id"]]["active"] is False


def test_revoking_twice_or_an_unknown_id_is_404(client, admin):
    created = client.post(URL, json={"label": "once"}, headers=admin).json["data"]
    client.delete(f"{URL}/{created['id']}", headers=admin)

    for path in [f"{URL}/{created['id']}", f"{URL}/999999"]:
        response = client.delete(path, headers=admin)
        assert (response.status_code, response.json["code"]) == (404, "API_KEY_NOT_FOUND")
    response = client.delete(f"{URL}/not-a-number", headers=admin)
    assert (response.status_code, response.json["success"]) == (404, False)


def test_a_key_of_another_brand_cannot_be_revoked(client, admin, other_brand, make_key):
    theirs = make_key(other_brand, ["read"])
    their_id = db.session.execute(
        db.select(ApiKey.id).where(ApiKey.brand_id == other_brand.id)
    ).scalar_one()

    response = client.delete(f"{URL}/{their_id}", headers=admin)

    assert response.status_code == 404
    assert client.get("/api/v1/payments", headers=theirs).status_code == 200


def test_another_brands_super_admin_email_is_refused_403_invalid_super_admin(
    client, brand, other_brand, make_key
):
    UserFactory(brand=other_brand, role="super_admin", email="boss@other.example")
    mine = {
        **make_key(brand, ["read", "write", "admin"]),
        "X-Super-Admin-Email": "Boss@Other.example",
    }

    for response in [
        client.get(URL, headers=mine),
        client.post(URL, json={"label": "hijack"}, headers=mine),
        client.delete(f"{URL}/1", headers=mine),
    ]:
        assert (response.status_code, response.json["code"]) == (403, "INVALID_SUPER_ADMIN")
    assert key_count() == 1


def test_key_operations_need_write_and_admin(client, brand, make_key):
    UserFactory(brand=brand, role="super_admin", email="root@example.com")
    header = {"X-Super-Admin-Email": "root@example.com"}
    for scopes in (["read", "write"], ["read", "admin"], ["admin"]):
        headers = {**make_key(brand, scopes), **header}
        for response in [
            client.get(URL, headers=headers),
            client.post(URL, json={"label": "x"}, headers=headers),
            client.delete(f"{URL}/1", headers=headers),
        ]:
            assert (response.status_code, response.json["code"]) == (403, "INSUFFICIENT_SCOPE"), (
                scopes
            )
    assert key_count() == 3


def test_an_idempotency_key_never_stores_the_secret(client, admin):
    headers = {**admin, "Idempotency-Key": "create-key-1"}

    first = client.post(URL, json={"label": "retry-safe"}, headers=headers)
    again = client.post(URL, json={"label": "retry-safe"}, headers=headers)

    assert first.status_code == 201
    assert again.status_code == 409  # the label, not a replay that would show the secret twice
    assert db.session.scalar(db.select(db.func.count()).select_from(IdempotencyRecord)) == 0
    secret = first.json["data"]["key"]
    assert (
        db.session.scalar(
            db.select(db.func.count()).select_from(ApiKey).where(ApiKey.key_hash == secret)
        )
        == 0
    )


# --- the wall of bad bodies -------------------------------------------------------------------

GOOD = {"label": "Shop server", "scopes": ["read", "write"]}
BAD_LABELS = [
    ("missing", None),
    ("null", "null"),
    ("empty", '""'),
    ("blank", '"   "'),
    ("too long", '"' + "x" * 101 + '"'),
    ("huge", '"' + "x" * 100_000 + '"'),
    ("number", "12"),
    ("-1 number", "-1"),
    ("0 number", "0"),
    ("1.001 number", "1.001"),
    ("1e3 number", "1e3"),
    ("NaN literal", "NaN"),
    ("Infinity literal", "Infinity"),
    ("huge number", "1" + "0" * 40),
    ("bool", "true"),
    ("list", '["label"]'),
    ("object", '{"a": 1}'),
    ("nul", '"nul\\u0000"'),
    ("lone surrogate", '"\\ud800"'),
]
BAD_SCOPES = [
    ("null", "null"),
    ("empty list", "[]"),
    ("string", '"read"'),
    ("comma string", '"read,write"'),
    ("unknown", '["root"]'),
    ("one unknown", '["read", "root"]'),
    ("upper case", '["READ"]'),
    ("empty item", '[""]'),
    ("number item", "[1]"),
    ("-1", '["-1"]'),
    ("0", "[0]"),
    ("1.001", "[1.001]"),
    ("1e3", '["1e3"]'),
    ("NaN", '["NaN"]'),
    ("NaN literal", "[NaN]"),
    ("huge item", '["' + "r" * 100_000 + '"]'),
    ("nested list", '[["read"]]'),
    ("object", '{"read": true}'),
    ("number", "7"),
    ("nul item", '["read\\u0000"]'),
    ("many unknown", "[" + ", ".join(['"x"'] * 10_000) + "]"),
]
# (id, body, content type, status, code, field at fault)
BAD_KEY_BODIES = (
    body_cases(GOOD, "label")
    + [
        ("no body", None, None, 422, "VALIDATION_ERROR", "label"),
        ("empty object", "{}", JSON, 422, "VALIDATION_ERROR", "label"),
        (
            "name alias bad",
            raw_body(GOOD, label=None, name="42"),
            JSON,
            422,
            "VALIDATION_ERROR",
            "label",
        ),
    ]
    + [
        (f"label {label}", raw_body(GOOD, label=raw), JSON, 422, "VALIDATION_ERROR", "label")
        for label, raw in BAD_LABELS
    ]
    + [
        (f"scopes {label}", raw_body(GOOD, scopes=raw), JSON, 422, "VALIDATION_ERROR", "scopes")
        for label, raw in BAD_SCOPES
    ]
)


@pytest.mark.parametrize(
    "body, content_type, status, code, field",
    [case[1:] for case in BAD_KEY_BODIES],
    ids=[case[0] for case in BAD_KEY_BODIES],
)
def test_bad_key_bodies_are_refused_in_the_envelope_and_write_nothing(
    client, admin, body, content_type, status, code, field
):
    before = key_count()

    response = send(client, "post", URL, admin, body, content_type)

    assert_refused(response, status, code, field)
    assert key_count() == before


# --- the service rules, without HTTP ------------------------------------------------------------


def test_revoke_key_by_label_or_id_and_find_active_key_forgets_it(brand):
    from gateway.accounts.api_keys import find_active_key, generate_key, revoke_key

    by_label, label_secret = generate_key(brand, "by-label", ["read"])
    by_id, id_secret = generate_key(brand, "by-id", ["read"])
    assert find_active_key(label_secret).id == by_label.id

    revoke_key(brand, label="by-label")
    revoke_key(brand, key_id=by_id.id)

    assert find_active_key(label_secret) is None
    assert find_active_key(id_secret) is None


def test_revoke_key_only_sees_its_own_brands_keys(brand, other_brand):
    from gateway.accounts.api_keys import find_active_key, generate_key, revoke_key
    from gateway.domain_errors import DomainError

    _, secret = generate_key(other_brand, "theirs", ["read"])

    with pytest.raises(DomainError) as raised:
        revoke_key(brand, label="theirs")

    assert raised.value.code == "API_KEY_NOT_FOUND"
    assert find_active_key(secret) is not None


@pytest.mark.parametrize("scopes", [[], ["read", "sudo"], "", "read,,root"])
def test_generate_key_refuses_unknown_or_no_scopes(brand, scopes):
    from gateway.accounts.api_keys import generate_key
    from gateway.domain_errors import DomainError

    with pytest.raises(DomainError) as raised:
        generate_key(brand, "bad-scopes", scopes)

    assert raised.value.errors[0]["field"] == "scopes"
    assert key_count() == 0
