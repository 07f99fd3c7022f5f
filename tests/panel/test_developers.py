"""Developers, API keys tab: generate (shown once), list, revoke with confirmation; roles, CSRF,
brands.
"""

import json
import re

import pytest

from gateway.accounts.api_keys import generate_key
from gateway.accounts.models.api_key import ApiKey
from gateway.accounts.models.audit import AuditLog
from gateway.extensions import db
from tests.panel.conftest import audit_actions, post_form

SECRET = re.compile(r'<code id="new-api-key">([^<]+)</code>')


def api_status(client, secret):
    """What the API answers a key: (status, error code or None)."""
    response = client.get("/api/v1/payments", headers={"Authorization": f"Bearer {secret}"})
    return response.status_code, (response.get_json() or {}).get("code")


def test_generating_shows_the_key_once_and_it_works_against_the_api(as_admin, brand, admin):
    response = post_form(
        as_admin,
        "/panel/developers/api-keys",
        {"label": "Shop server", "scopes": ["read", "write"]},
    )
    html = response.get_data(as_text=True)
    assert response.status_code == 200
    secret = SECRET.search(html).group(1)
    assert secret.startswith("gw_live_") and 'data-copy="new-api-key"' in html
    key = db.session.execute(db.select(ApiKey)).scalar_one()
    assert (key.label, key.scopes, secret.startswith(key.display_prefix)) == (
        "Shop server",
        "read,write",
        True,
    )
    assert api_status(as_admin, secret) == (200, None)
    assert audit_actions(brand)[-1] == ("api_key.generate", admin.email, str(key.id))
    assert secret not in json.dumps(
        [entry.details for entry in db.session.execute(db.select(AuditLog)).scalars()]
    )

    listing = as_admin.get("/panel/developers/api-keys").get_data(as_text=True)
    assert secret not in listing
    assert (
        "Shop server" in listing
        and f"{key.display_prefix}…" in listing
        and '>read</span><span class="badge">write<' in listing
    )


@pytest.mark.parametrize(
    "data, field, says",
    [
        ({"label": "", "scopes": ["read"]}, "label", "This field is required."),
        ({"label": "Shop server"}, None, "Choose at least one scope."),
        ({"label": "Taken", "scopes": ["read"]}, "label", "Labels are unique among active keys."),
    ],
)
def test_a_refused_key_says_why_and_nothing_is_made(as_admin, brand, data, field, says):
    generate_key(brand, "Taken", ["read"])
    response = post_form(as_admin, "/panel/developers/api-keys", data)
    assert response.status_code in (409, 422)
    assert says in response.get_data(as_text=True) and not SECRET.search(
        response.get_data(as_text=True)
    )
    assert db.session.execute(db.select(db.func.count()).select_from(ApiKey)).scalar() == 1


def test_revoking_by_label_asks_for_the_label_again_then_the_api_refuses_the_key(
    as_admin, brand, admin
):
    key, secret = generate_key(brand, "Shop server", ["read"])
    confirm = as_admin.get("/panel/developers/api-keys/revoke?label=Shop+server")
    assert confirm.status_code == 200 and "Revoke the key “Shop server”?" in confirm.get_data(
        as_text=True
    )

    wrong = post_form(
        as_admin,
        "/panel/developers/api-keys/revoke",
        {"label": "Shop server", "confirm_label": "shop"},
    )
    assert wrong.status_code == 422 and "This is not the key's label." in wrong.get_data(
        as_text=True
    )
    assert api_status(as_admin, secret) == (200, None)

    done = post_form(
        as_admin,
        "/panel/developers/api-keys/revoke",
        {"label": "Shop server", "confirm_label": "Shop server"},
    )
    assert done.status_code == 302 and done.headers["Location"] == "/panel/developers/api-keys"
    assert api_status(as_admin, secret) == (401, "INVALID_TOKEN")
    assert audit_actions(brand)[-1] == ("api_key.revoke", admin.email, str(key.id))
    assert "Revoked" in as_admin.get("/panel/developers/api-keys").get_data(as_text=True)


def test_a_revoked_or_unknown_label_has_nothing_to_confirm(as_admin, brand):
    generate_key(brand, "Old", ["read"])
    post_form(
        as_admin, "/panel/developers/api-keys/revoke", {"label": "Old", "confirm_label": "Old"}
    )
    assert as_admin.get("/panel/developers/api-keys/revoke?label=Old").status_code == 404
    assert as_admin.get("/panel/developers/api-keys/revoke?label=Nope").status_code == 404


def test_another_brands_keys_are_neither_listed_nor_revoked(as_admin, other_brand):
    _, secret = generate_key(other_brand, "Their server", ["read"])
    assert "Their server" not in as_admin.get("/panel/developers/api-keys").get_data(as_text=True)
    assert as_admin.get("/panel/developers/api-keys/revoke?label=Their+server").status_code == 404
    response = post_form(
        as_admin,
        "/panel/developers/api-keys/revoke",
        {"label": "Their server", "confirm_label": "Their server"},
    )
    assert response.status_code == 404
    assert api_status(as_admin, secret) == (200, None)


@pytest.mark.parametrize(
    "method, url",
    [
        ("get", "/panel/developers"),
        ("get", "/panel/developers/api-keys"),
        ("post", "/panel/developers/api-keys"),
        ("get", "/panel/developers/api-keys/revoke?label=Shop+server"),
        ("post", "/panel/developers/api-keys/revoke"),
    ],
)
def test_staff_are_forbidden_the_keys(as_staff, brand, method, url):
    _, secret = generate_key(brand, "Shop server", ["read"])
    data = {"label": "Shop server", "confirm_label": "Shop server", "scopes": ["read"]}
    response = post_form(as_staff, url, data) if method == "post" else as_staff.get(url)
    assert response.status_code == 403
    assert api_status(as_staff, secret) == (200, None)
    assert db.session.execute(db.select(db.func.count()).select_from(ApiKey)).scalar() == 1


def test_the_sidebar_shows_developers_links_by_role(as_staff, client, admin):
    staff_html = as_staff.get("/panel/dashboard").get_data(as_text=True)
    assert 'href="/panel/developers/webhook-deliveries"' in staff_html
    assert (
        'href="/panel/developers/api-keys"' not in staff_html
        and 'href="/panel/developers/webhooks"' not in staff_html
    )


@pytest.mark.parametrize("url", ["/panel/developers/api-keys", "/panel/developers/api-keys/revoke"])
def test_key_forms_without_the_csrf_token_are_refused(as_admin, brand, url):
    _, secret = generate_key(brand, "Shop server", ["read"])
    response = as_admin.post(
        url, data={"label": "Shop server", "confirm_label": "Shop server", "scopes": ["read"]}
    )
    assert response.status_code == 400
    assert api_status(as_admin, secret) == (200, None)
    assert db.session.execute(db.select(db.func.count()).select_from(ApiKey)).scalar() == 1
