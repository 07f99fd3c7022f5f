"""Refunds in each dialect through the native refunds, and what a compatibility key may do."""

from gateway.accounts.models.audit import AuditLog
from gateway.compat.keys import generate_compat_key, revoke_compat_key
from gateway.compat.models.compat import CompatKey, CompatPayment
from gateway.extensions import db
from gateway.payments.lifecycle import complete_payment
from gateway.payments.models.payment import Payment, Refund
from tests.compat.conftest import P3_HEADER, U_HEADER, deliver_ipns
from tests.compat.test_compat_errors import P3_BODY, U_BODY, refusal


def paid(client, path, header, secret, body):
    """Create through the dialect and complete the payment as a matched SMS would."""
    assert client.post(path, json=body, headers={header: secret}).status_code == 200
    row = (
        db.session.execute(db.select(CompatPayment).order_by(CompatPayment.id.desc()))
        .scalars()
        .first()
    )
    complete_payment(
        row.payment, provider="bkash", provider_trx_id="7X6Y5Z4W3V", sender_number="01799999999"
    )
    return row


def test_u_refunds_by_provider_trx_id_in_parts_then_refuses_more(client, compat_key):
    secret = compat_key("uddoktapay")
    row = paid(client, "/api/checkout-v2", U_HEADER, secret, U_BODY)
    body = {
        "transaction_id": "7X6Y5Z4W3V",
        "payment_method": "bkash",
        "amount": 4,
        "product_name": "Hosting",
        "reason": "downgrade",
    }
    first = client.post("/api/refund-payment", json=body, headers={U_HEADER: secret})
    assert first.status_code == 200 and first.get_json()["status"] is True
    rest = client.post(
        "/api/refund-payment", json={**body, "amount": "6.00"}, headers={U_HEADER: secret}
    )
    assert rest.get_json()["status"] is True
    again = client.post(
        "/api/refund-payment", json={**body, "amount": "1"}, headers={U_HEADER: secret}
    )
    assert refusal("uddoktapay", again)[0] == 400
    db.session.expire_all()
    assert db.session.get(Payment, row.payment_id).status == "refunded"
    assert [
        r.amount for r in db.session.execute(db.select(Refund).order_by(Refund.id)).scalars()
    ] == [4, 6]
    verify = client.post(
        "/api/verify-payment", json={"invoice_id": row.external_id}, headers={U_HEADER: secret}
    )
    assert verify.get_json()["status"] == "COMPLETED"  # UddoktaPay has no refunded state
    key = db.session.execute(db.select(CompatKey)).scalar_one()
    audited = db.session.execute(
        db.select(AuditLog).where(AuditLog.action == "payment.refund").order_by(AuditLog.id)
    ).scalars()
    assert [(a.user_email, a.target_id, a.details) for a in audited] == [
        (
            f"Compatibility key #{key.id}",
            db.session.get(Payment, row.payment_id).public_id,
            {"refund_id": refund.id, "amount": amount, "reason": "downgrade", "via": "compat"},
        )
        for refund, amount in zip(
            db.session.execute(db.select(Refund).order_by(Refund.id)).scalars(),
            ("4.00", "6.00"),
            strict=True,
        )
    ]


def test_p3_refund_is_whole_answers_refunded_and_tells_the_ipn(client, compat_key, ipn_receiver):
    secret = compat_key("piprapay3")
    row = paid(
        client,
        "/api/checkout/redirect",
        P3_HEADER,
        secret,
        {**P3_BODY, "webhook_url": ipn_receiver.url},
    )
    refund = client.post(
        "/api/refund-payment", json={"pp_id": row.external_id}, headers={P3_HEADER: secret}
    )
    assert refund.status_code == 200
    answer = refund.get_json()
    assert answer["status"] == "refunded" and answer["pp_id"] == row.external_id
    assert answer["sender"] == "01799999999" and answer["transaction_id"] == "7X6Y5Z4W3V"
    completed, refunded = deliver_ipns(ipn_receiver, 2)
    assert completed["json"]["status"] == "completed" and refunded["json"]["status"] == "refunded"
    again = client.post(
        "/api/refund-payment", json={"pp_id": row.external_id}, headers={P3_HEADER: secret}
    )
    assert refusal("piprapay3", again) == (400, "REFUND_FAILED")


def test_a_key_reads_only_its_own_brands_payments(client, brand, other_brand, compat_key):
    mine = compat_key("piprapay3")
    theirs = compat_key("piprapay3", of_brand=other_brand)
    created = client.post(
        "/api/checkout/redirect", json=P3_BODY, headers={P3_HEADER: mine}
    ).get_json()
    verify = client.post(
        "/api/verify-payment", json={"pp_id": created["pp_id"]}, headers={P3_HEADER: theirs}
    )
    assert refusal("piprapay3", verify) == (400, "INVALID_PP_ID")
    refund = client.post(
        "/api/refund-payment", json={"pp_id": created["pp_id"]}, headers={P3_HEADER: theirs}
    )
    assert refusal("piprapay3", refund) == (400, "INVALID_PP_ID")
    ok = client.post(
        "/api/verify-payment", json={"pp_id": created["pp_id"]}, headers={P3_HEADER: mine}
    )
    assert ok.status_code == 200 and ok.get_json()["status"] == "initiated"


def test_a_revoked_key_stops_working_and_the_secret_is_stored_only_hashed(client, brand):
    key, secret = generate_compat_key(brand, "woo", "uddoktapay")
    row = db.session.get(CompatKey, key.id)
    assert secret not in (row.key_hash, row.secret_sealed, row.display_prefix)
    assert secret.startswith(row.display_prefix)
    assert (
        client.post("/api/checkout-v2", json=U_BODY, headers={U_HEADER: secret}).status_code == 200
    )
    revoke_compat_key(brand, key.id)
    refused = client.post("/api/checkout-v2", json=U_BODY, headers={U_HEADER: secret})
    assert refusal("uddoktapay", refused) == (401, "Invalid API key.")


def test_a_compatibility_key_opens_nothing_of_the_native_api(client, compat_key):
    secret = compat_key("uddoktapay")
    for method, path in (
        ("get", "/api/v1/payments"),
        ("post", "/api/v1/payments"),
        ("get", "/api/v1/api-keys"),
    ):
        response = getattr(client, method)(
            path, headers={"Authorization": f"Bearer {secret}"}, json={}
        )
        assert response.status_code == 401
        assert response.get_json()["code"] == "INVALID_TOKEN"


def test_header_names_are_matched_case_insensitively(client, compat_key):
    secret = compat_key("uddoktapay")
    response = client.post(
        "/api/checkout-v2/mfs", json=U_BODY, headers={"rt-uddoktapay-api-key": secret}
    )
    assert response.status_code == 200 and response.get_json()["payment_url"]


def test_two_payments_drawing_the_same_dialect_id_at_once_both_get_one(
    client, compat_key, monkeypatch
):
    """The id is checked free, then inserted: a rival inserting it meanwhile makes this one draw
    again.
    """
    from gateway.compat import core

    secret = compat_key("piprapay3")
    first = client.post("/api/checkout/redirect", json=P3_BODY, headers={P3_HEADER: secret})
    taken = first.get_json()["pp_id"]
    draws = iter([taken, "2000000002"])
    monkeypatch.setattr(core, "new_external_id", lambda brand, dialect: next(draws))
    second = client.post("/api/checkout/redirect", json=P3_BODY, headers={P3_HEADER: secret})
    assert second.status_code == 200 and second.get_json()["pp_id"] == "2000000002"
    ids = db.session.execute(db.select(CompatPayment.external_id)).scalars().all()
    assert sorted(ids) == sorted([taken, "2000000002"])
    assert db.session.execute(db.select(db.func.count()).select_from(Payment)).scalar_one() == 2


def test_an_expired_dialect_payment_tells_its_ipn_failed(client, compat_key, ipn_receiver):
    from datetime import timedelta

    from freezegun import freeze_time

    from gateway.clock import utcnow
    from gateway.payments.lifecycle import expire_due_payments

    secret = compat_key("piprapay3")
    body = {**P3_BODY, "webhook_url": ipn_receiver.url}
    pp_id = client.post(
        "/api/checkout/redirect", json=body, headers={P3_HEADER: secret}
    ).get_json()["pp_id"]
    with freeze_time(utcnow() + timedelta(days=2)):
        assert len(expire_due_payments()) == 1
        [ipn] = deliver_ipns(ipn_receiver, 1)
    assert (ipn["json"]["pp_id"], ipn["json"]["status"]) == (pp_id, "failed")
    verify = client.post("/api/verify-payment", json={"pp_id": pp_id}, headers={P3_HEADER: secret})
    assert verify.get_json()["status"] == "failed"
