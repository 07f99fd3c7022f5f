"""A payment made through each compatibility dialect and paid through a wallet's own API (bKash's
tokenized checkout, Nagad's merchant API) answers as an SMS-paid one does: the dialect's verify
call says completed with the method, the wallet's TrxID, the amount and the fee; its IPN reaches a
real receiver with the key header and our signature; the customer lands on the dialect's return
address; the dialect's refund is made at the wallet. And an invoice paid through bKash's API turns
paid."""

import hashlib
import hmac
import re
from decimal import Decimal
from urllib.parse import parse_qs, urlsplit

import pytest

from gateway.compat.models.compat import CompatKey, CompatPayment
from gateway.extensions import db
from gateway.invoices.lifecycle import mark_sent, paying_payment
from gateway.invoices.models.invoice import Invoice
from gateway.payments.models.payment import Payment
from gateway.wallets.credentials import add_api_method
from tests.checkout_helpers import csrf_token
from tests.compat.conftest import bkash as bkash_number  # noqa: F401
from tests.compat.conftest import compat_key, deliver_ipns, ipn_receiver  # noqa: F401
from tests.compat.ipn_receiver import header, header_names
from tests.compat.test_compat_flow import (
    COMPLETED,
    HEADER,
    ID_FIELD,
    METADATA,
    VERIFY_PATH,
    create,
    create_body,
)
from tests.invoices.conftest import an_invoice
from tests.wallet_standins.bkash import CREDENTIALS, BkashStandIn
from tests.wallet_standins.nagad import NagadStandIn
from tests.wallets.bkash_support import choose_at_bkash, come_back, wallet_page

FEE = Decimal("10.00")  # the API method's fixed fee: the customer pays 510.00 for 500.00


@pytest.fixture
def bkash_standin():
    with BkashStandIn() as server:
        yield server


@pytest.fixture(scope="module")
def nagad_standin():
    with NagadStandIn().running() as standin:
        yield standin


def api_method(brand, provider, standin):
    """The brand's API method of `provider`, pointed at its stand-in, with a fixed fee."""
    if provider == "bkash":
        method = add_api_method(brand, "bkash", standin.base_url, CREDENTIALS)
    else:
        secrets = {
            "merchant_id": standin.merchant_id,
            "merchant_private_key": standin.merchant_private_pem,
            "wallet_public_key": standin.nagad_public_pem,
        }
        method = add_api_method(brand, "nagad", standin.origin, secrets)
    method.fee_fixed = FEE
    db.session.commit()
    return method


def pay_in_wallet(client, payment, method, standin):
    """The customer presses the wallet's button, pays on its page and comes back: our answer to the
    callback, and the wallet's TrxID."""
    started = client.post(
        f"/checkout/{payment.token}/wallet/{method.id}",
        data={"csrf_token": csrf_token(client, payment)},
    )
    page = wallet_page(started)
    reference = urlsplit(page).path.rsplit("/", 1)[1]
    if method.provider == "bkash":
        answer = come_back(client, choose_at_bkash(page, "success"))
        return answer, standin.payments[reference]["trxID"]
    answer = come_back(client, standin.callback_for(reference, "Success"))
    return answer, standin.checkouts[reference].issuer_ref


@pytest.mark.parametrize(
    "dialect, provider",
    [
        ("uddoktapay", "bkash"),
        ("piprapay2", "bkash"),
        ("piprapay3", "bkash"),
        ("piprapay3", "nagad"),
    ],
)
def test_a_dialect_payment_paid_through_a_wallet_api_is_told_as_the_dialect_tells_it(
    request,
    client,
    brand,
    bkash_number,  # noqa: F811 - an SMS-paid bKash number beside the API method
    compat_key,  # noqa: F811
    ipn_receiver,  # noqa: F811
    dialect,
    provider,
):
    if provider == "bkash":
        standin = request.getfixturevalue("bkash_standin")
    else:
        standin = request.getfixturevalue("nagad_standin")
    method = api_method(brand, provider, standin)
    secret = compat_key(dialect)
    status, created = create(client, dialect, secret, create_body(dialect, ipn_receiver.url))
    assert status == 200, created
    url = created.get("payment_url") or created["pp_url"]
    # UddoktaPay's create answers no id: the one dialect row there is.
    row = db.session.execute(db.select(CompatPayment)).scalar_one()
    payment = row.payment
    assert urlsplit(url).path == f"/checkout/{payment.token}"
    assert client.get(urlsplit(url).path).status_code == 200

    back, trx_id = pay_in_wallet(client, payment, method, standin)
    db.session.refresh(payment)
    assert payment.status == "completed" and payment.provider_trx_id == trx_id

    # The customer goes from the wallet's callback to our return, then to the shop the dialect's
    # way, as after an SMS.
    assert back.status_code == 303
    ours = urlsplit(back.headers["Location"])
    assert ours.path == f"/compat/return/{row.return_token}"
    shop = client.get(ours.path)
    assert shop.status_code == 303
    location = urlsplit(shop.headers["Location"])
    query = parse_qs(location.query)
    assert (location.netloc, location.path) == ("shop.example", "/modules/gateways/callback.php")
    assert query["gw"] == ["pay"]
    if dialect == "piprapay3":
        assert query["pp_status"] == ["completed"]
        assert query["transaction_ref"] == [row.external_id]
    else:
        assert query[ID_FIELD[dialect]] == [row.external_id]

    [ipn] = deliver_ipns(ipn_receiver, 1)
    assert header(ipn, "Content-Type") == "application/json"
    assert header(ipn, HEADER[dialect]) == secret, header_names(ipn)
    signature = hmac.new(brand.webhook_secret.encode(), ipn["raw"], hashlib.sha256).hexdigest()
    assert header(ipn, "X-Service-Signature") == signature

    verified = client.post(
        VERIFY_PATH[dialect],
        json={ID_FIELD[dialect]: created.get("pp_id", row.external_id)},
        headers={HEADER[dialect]: secret},
    )
    assert verified.status_code == 200
    body = verified.get_json()
    assert body == ipn["json"], "the IPN carries the verify object"
    assert body["status"] == COMPLETED[dialect] and body["metadata"] == METADATA
    assert body["transaction_id"] == trx_id
    assert (body["amount"], body["fee"]) == ("500.00", "10.00")
    # bKash names the wallet that paid (customerMsisdn); Nagad only a masked one, no number.
    sender = standin.customer_msisdn if provider == "bkash" else None
    assert body["sender" if dialect == "piprapay3" else "sender_number"] == sender
    name = {"bkash": "bKash", "nagad": "Nagad"}[provider]
    if dialect == "uddoktapay":
        assert body["payment_method"] == provider and body["charged_amount"] == "510.00"
    elif dialect == "piprapay2":
        assert body["payment_method"] == f"{name} API"
        assert (body["total"], body["refund_amount"]) == ("510.00", "0.00")
    else:
        assert body["gateway"] == f"{name} API"
        assert (body["total"], body["local_net_amount"]) == ("510.00", "510.00")

    # The dialect's refund is made at the wallet (PipraPay 2.x has no refund call).
    if dialect == "piprapay2":
        return
    asked = (
        {"transaction_id": trx_id, "amount": "200"}
        if dialect == "uddoktapay"
        else {"pp_id": row.external_id}
    )
    refunded = client.post("/api/refund-payment", json=asked, headers={HEADER[dialect]: secret})
    assert refunded.status_code == 200, refunded.get_json()
    if dialect == "uddoktapay":
        assert refunded.get_json() == {"status": True, "message": "Refund completed"}
        assert refunded_at_wallet(standin, trx_id) == Decimal("200.00")
    else:  # all of the amount; the fee stays with the shop (brands.refund_fee off)
        assert refunded.get_json()["status"] == "refunded"
        assert refunded_at_wallet(standin, trx_id) == Decimal("500.00")


def refunded_at_wallet(standin, trx_id):
    """What the wallet's stand-in has given back of the payment with that TrxID."""
    if isinstance(standin, BkashStandIn):
        return next(p["refunded"] for p in standin.payments.values() if p["trxID"] == trx_id)
    return next(c.cancelled for c in standin.checkouts.values() if c.issuer_ref == trx_id)


def test_an_invoice_paid_through_bkash_s_api_turns_paid_with_its_trx_id(
    client, brand, bkash_standin
):
    method = api_method(brand, "bkash", bkash_standin)
    invoice = an_invoice(brand)
    mark_sent(invoice)
    db.session.commit()
    path = f"/invoice/{invoice.token}"
    page = client.get(path).get_data(as_text=True)
    token = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
    paying = client.post(f"{path}/pay", data={"csrf_token": token})
    assert paying.status_code == 303
    payment = db.session.execute(db.select(Payment)).scalar_one()
    assert paying.headers["Location"] == f"/checkout/{payment.token}"

    back, trx_id = pay_in_wallet(client, payment, method, bkash_standin)
    assert back.status_code == 303
    paid = db.session.execute(db.select(Invoice)).scalar_one()
    db.session.refresh(paid)
    assert paid.status == "paid" and paid.paid_at is not None
    assert paying_payment(paid).provider_trx_id == trx_id
    assert trx_id in client.get(path).get_data(as_text=True)


def test_a_dialect_refund_left_pending_is_audited_as_the_compatibility_key_s(
    app,
    client,
    brand,
    compat_key,
    ipn_receiver,
    bkash_standin,
    monkeypatch,  # noqa: F811
):
    from gateway.wallets.models import WalletRefund
    from tests.wallets.test_bkash_refunds import pending_audits

    method = api_method(brand, "bkash", bkash_standin)
    secret = compat_key("uddoktapay")
    status, _ = create(client, "uddoktapay", secret, create_body("uddoktapay", ipn_receiver.url))
    assert status == 200
    payment = db.session.execute(db.select(CompatPayment)).scalar_one().payment
    _, trx_id = pay_in_wallet(client, payment, method, bkash_standin)
    monkeypatch.setitem(app.config, "WALLET_HTTP_TIMEOUT", 0.5)
    bkash_standin.refund_delay = 2
    asked = {"transaction_id": trx_id, "amount": "200", "reason": "one item back"}
    left = client.post("/api/refund-payment", json=asked, headers={HEADER["uddoktapay"]: secret})
    bkash_standin.refund_delay = 0
    assert "did not answer the refund in time" in left.get_data(as_text=True)
    db.session.expire_all()
    attempt = db.session.execute(db.select(WalletRefund)).scalar_one()
    key = db.session.execute(db.select(CompatKey)).scalar_one()
    assert pending_audits() == [
        (
            None,
            f"Compatibility key #{key.id}",
            "payment",
            payment.public_id,
            {
                "wallet_refund_id": attempt.id,
                "amount": "200.00",
                "reason": "one item back",
                "wallet": "bKash",
            },
        )
    ]
