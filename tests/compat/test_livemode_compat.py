"""Live and test never mix in the plugin dialects (issue 31): a dialect's test key makes test
payments, and a key of one mode verifies or refunds a payment of the other exactly as it would an
id that does not exist. Each dialect, both ways."""

from itertools import count

import pytest

from gateway.compat.keys import generate_compat_key
from gateway.compat.models.compat import CompatPayment
from gateway.extensions import db
from gateway.payments.lifecycle import complete_payment
from gateway.payments.models.payment import Payment, Refund
from tests.compat.conftest import P2_HEADER, P3_HEADER, U_HEADER
from tests.compat.test_compat_errors import P2_BODY, P3_BODY, U_BODY, refusal

MODES = [pytest.param(True, id="live-payment"), pytest.param(False, id="test-payment")]
LABELS = count()
PROVIDER_TRX = "7X6Y5Z4W3V"


def key_of(brand, dialect, livemode):
    """A new compatibility key's secret, of this dialect and mode."""
    _, secret = generate_compat_key(brand, f"plugin-{next(LABELS)}", dialect, livemode=livemode)
    return secret


def paid_through(client, path, header, secret, body):
    """A payment made through the dialect, then completed as a matched SMS would: (the dialect's
    answer, the payment)."""
    created = client.post(path, json=body, headers={header: secret})
    assert created.status_code == 200, created.get_json()
    row = db.session.execute(db.select(Payment).order_by(Payment.id.desc()).limit(1)).scalar_one()
    complete_payment(row, provider="bkash", provider_trx_id=PROVIDER_TRX)
    return created.get_json(), row


def nothing_refunded(payment):
    db.session.expire_all()
    assert db.session.get(Payment, payment.id).amount_refunded == 0
    assert db.session.scalar(db.select(db.func.count()).select_from(Refund)) == 0


@pytest.mark.parametrize("mode", MODES)
def test_uddoktapay_verifies_and_refunds_only_its_own_modes_payments(client, brand, mode):
    own, other = (key_of(brand, "uddoktapay", m) for m in (mode, not mode))
    _, payment = paid_through(client, "/api/checkout-v2", U_HEADER, own, U_BODY)
    assert payment.livemode is mode
    invoice_id = db.session.execute(db.select(CompatPayment.external_id)).scalar_one()

    def ask(path, body, secret):
        return client.post(path, json=body, headers={U_HEADER: secret})

    unknown = refusal("uddoktapay", ask("/api/verify-payment", {"invoice_id": "NOPE"}, other))
    crossed = ask("/api/verify-payment", {"invoice_id": invoice_id}, other)
    assert refusal("uddoktapay", crossed) == unknown
    for body in ({"transaction_id": PROVIDER_TRX}, {"invoice_id": invoice_id}):
        refused = ask("/api/refund-payment", {**body, "amount": "1"}, other)
        assert refusal("uddoktapay", refused)[0] == 404
    nothing_refunded(payment)

    verified = ask("/api/verify-payment", {"invoice_id": invoice_id}, own)
    assert verified.status_code == 200 and verified.get_json()["status"] == "COMPLETED"
    refund = ask("/api/refund-payment", {"transaction_id": PROVIDER_TRX, "amount": "4"}, own)
    assert refund.get_json()["status"] is True
    assert db.session.execute(db.select(Refund.livemode)).scalar_one() is mode


@pytest.mark.parametrize("mode", MODES)
def test_piprapay2_verifies_only_its_own_modes_payments(client, brand, mode):
    own, other = (key_of(brand, "piprapay2", m) for m in (mode, not mode))
    created, payment = paid_through(client, "/api/create-charge", P2_HEADER, own, P2_BODY)
    assert payment.livemode is mode

    def verify(pp_id, secret):
        return client.post(
            "/api/verify-payments", json={"pp_id": pp_id}, headers={P2_HEADER: secret}
        )

    unknown = refusal("piprapay2", verify(123, other))
    assert refusal("piprapay2", verify(created["pp_id"], other)) == unknown
    ok = verify(created["pp_id"], own)
    assert ok.status_code == 200 and ok.get_json()["status"] == "completed"


@pytest.mark.parametrize("mode", MODES)
def test_piprapay3_verifies_and_refunds_only_its_own_modes_payments(client, brand, mode):
    own, other = (key_of(brand, "piprapay3", m) for m in (mode, not mode))
    created, payment = paid_through(client, "/api/checkout/redirect", P3_HEADER, own, P3_BODY)
    assert payment.livemode is mode
    pp_id = created["pp_id"]

    def ask(path, secret, ident=pp_id):
        return client.post(path, json={"pp_id": ident}, headers={P3_HEADER: secret})

    for path in ("/api/verify-payment", "/api/refund-payment"):
        assert refusal("piprapay3", ask(path, other)) == refusal(
            "piprapay3", ask(path, other, "123")
        )
    nothing_refunded(payment)
    assert ask("/api/verify-payment", own).get_json()["status"] == "completed"
    refunded = ask("/api/refund-payment", own)
    assert refunded.status_code == 200 and refunded.get_json()["status"] == "refunded"
    assert db.session.execute(db.select(Refund.livemode)).scalar_one() is mode


def test_a_test_key_of_one_dialect_is_still_refused_on_another(client, brand):
    secret = key_of(brand, "piprapay3", False)
    refused = client.post("/api/checkout-v2", json=U_BODY, headers={U_HEADER: secret})
    assert refusal("uddoktapay", refused)[0] == 401
    assert db.session.scalar(db.select(db.func.count()).select_from(Payment)) == 0


def test_bad_input_with_a_test_key_keeps_each_dialects_shape(client, brand):
    for dialect, path, header in (
        ("uddoktapay", "/api/checkout-v2", U_HEADER),
        ("piprapay2", "/api/create-charge", P2_HEADER),
        ("piprapay3", "/api/checkout/redirect", P3_HEADER),
    ):
        secret = key_of(brand, dialect, False)
        status, _ = refusal(
            dialect, client.post(path, json={"amount": "abc"}, headers={header: secret})
        )
        assert 400 <= status < 500
    assert db.session.scalar(db.select(db.func.count()).select_from(Payment)) == 0
