"""What the API changes is audited like the panel's changes: key creation and revocation, refunds;
and a key never hands out a scope it lacks."""

from decimal import Decimal

import pytest

from gateway.accounts.models.api_key import ApiKey
from gateway.accounts.models.audit import AuditLog
from gateway.extensions import db
from gateway.payments.models.payment import Refund
from tests.factories import UserFactory, completed_payment

KEYS = "/api/v1/api-keys"


@pytest.fixture
def admin(brand, make_key):
    """Headers of a read+write+admin key with an active super-administrator's address."""
    UserFactory(brand=brand, role="super_admin", email="root@example.com")
    return {
        **make_key(brand, ["read", "write", "admin"]),
        "X-Super-Admin-Email": "root@example.com",
    }


def audit_entries():
    return db.session.execute(db.select(AuditLog).order_by(AuditLog.id)).scalars().all()


def key_count():
    return db.session.scalar(db.select(db.func.count()).select_from(ApiKey))


def test_creating_and_revoking_a_key_through_the_api_is_audited(client, brand, admin):
    created = client.post(
        KEYS,
        json={"label": "Plugin", "scopes": ["read"]},
        headers={**admin, "User-Agent": "shop-server/1.0"},
    ).json["data"]
    assert client.delete(f"{KEYS}/{created['id']}", headers=admin).status_code == 200
    generate, revoke = audit_entries()
    assert (generate.action, generate.target_type, generate.target_id) == (
        "api_key.generate",
        "api key",
        str(created["id"]),
    )
    assert generate.brand_id == brand.id and generate.user_email == "root@example.com"
    assert generate.details["label"] == "Plugin" and generate.details["scopes"] == "read"
    assert generate.details["via"] == "api" and generate.user_agent == "shop-server/1.0"
    assert generate.ip_address == "127.0.0.1"
    assert created["key"] not in str(generate.details)  # never the secret
    assert (revoke.action, revoke.target_id, revoke.user_email) == (
        "api_key.revoke",
        str(created["id"]),
        "root@example.com",
    )


def test_a_refund_through_the_api_is_audited(client, brand, auth):
    payment = completed_payment(brand=brand, amount=Decimal("500.00"))
    response = client.post(
        "/api/v1/refunds",
        json={"trx_id": payment.transaction.trx_id, "amount": "120.50", "reason": "Damaged"},
        headers={**auth, "Idempotency-Key": "refund-1"},
    )
    assert response.status_code == 201
    [entry] = audit_entries()
    assert (entry.action, entry.target_type, entry.target_id) == (
        "payment.refund",
        "payment",
        payment.public_id,
    )
    assert entry.brand_id == brand.id and entry.user_email.startswith("API key #")
    assert entry.details["refund_id"] == response.json["data"]["id"]
    assert entry.details["amount"] == "120.50" and entry.details["reason"] == "Damaged"


def test_a_refund_whose_audit_entry_cannot_be_written_is_not_made(
    app, client, brand, auth, monkeypatch
):
    from gateway.payments import refunds as payment_refunds

    def broken_audit(*args, **kwargs):
        raise RuntimeError("the audit log is unavailable")

    monkeypatch.setattr(payment_refunds, "record_audit", broken_audit)
    payment = completed_payment(brand=brand, amount=Decimal("500.00"))
    response = client.post(
        "/api/v1/refunds", json={"trx_id": payment.transaction.trx_id}, headers=auth
    )
    assert response.status_code == 500
    db.session.expire_all()
    assert db.session.scalar(db.select(db.func.count()).select_from(Refund)) == 0
    assert payment.transaction.amount_refunded == Decimal("0")


@pytest.mark.parametrize(
    "scopes, asked",
    [
        (["write", "admin"], {"label": "sneaky", "scopes": ["read", "write"]}),
        (["write", "admin"], {"label": "default scopes are read and write"}),
        (["read", "write", "admin"], None),
    ],
)
def test_a_key_cannot_create_a_key_with_a_scope_it_lacks(client, brand, make_key, scopes, asked):
    UserFactory(brand=brand, role="super_admin", email="root@example.com")
    headers = {**make_key(brand, scopes), "X-Super-Admin-Email": "root@example.com"}
    before = key_count()
    if asked is None:  # a key holding every scope may hand each out
        asked = {"label": "all", "scopes": ["read", "write", "admin"]}
        assert client.post(KEYS, json=asked, headers=headers).status_code == 201
        return
    response = client.post(KEYS, json=asked, headers=headers)
    assert response.status_code == 403
    assert response.json["code"] == "INSUFFICIENT_SCOPE"
    assert key_count() == before and audit_entries() == []
