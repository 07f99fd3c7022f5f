"""Each dialect end to end: create → checkout → claim → SMS → IPN on the wire → verify → return →
refund.
"""

import hashlib
import hmac
import json
import re
from urllib.parse import parse_qs, urlsplit

import pytest

from gateway.compat.core import provider_label
from gateway.compat.models.compat import CompatPayment
from gateway.extensions import db
from gateway.payments.models.payment import Payment
from gateway.webhooks.models.webhook import WebhookDelivery
from tests.checkout_helpers import submit_trx_id
from tests.compat.conftest import P2_HEADER, P3_HEADER, U_HEADER, compat_row, deliver_ipns
from tests.compat.ipn_receiver import header, header_names
from tests.factories import PaymentFactory, PaymentMethodFactory, bkash_text, ingest

SHOP = "https://shop.example/modules/gateways/callback.php?gw=pay"
METADATA = {"invoiceid": "1042", "extra": {"nested": [1, 2]}}


def create_body(dialect, webhook_url, return_type="GET"):
    """What each dialect's plugin posts to create a payment of 500 BDT."""
    if dialect == "uddoktapay":
        return {
            "full_name": "Rahim Uddin",
            "email": "rahim@example.com",
            "amount": "500",
            "metadata": METADATA,
            "redirect_url": SHOP,
            "cancel_url": "https://shop.example/cancel",
            "webhook_url": webhook_url,
            "return_type": "GET",
        }
    if dialect == "piprapay2":
        return {
            "full_name": "Rahim Uddin",
            "email_mobile": "rahim@example.com",
            "amount": 500,
            "metadata": METADATA,
            "redirect_url": SHOP,
            "cancel_url": "https://shop.example/cancel",
            "webhook_url": webhook_url,
            "return_type": return_type,
            "currency": "BDT",
        }
    return {
        "full_name": "Rahim Uddin",
        "email_address": "rahim@example.com",
        "mobile_number": "01811111111",
        "amount": "500.00",
        "currency": "BDT",
        "return_url": SHOP,
        "webhook_url": webhook_url,
        "metadata": json.dumps(METADATA),
        "return_type": "GET",
    }


CREATE_PATH = {
    "uddoktapay": "/api/checkout-v2",
    "piprapay2": "/api/create-charge",
    "piprapay3": "/api/checkout/redirect",
}
VERIFY_PATH = {
    "uddoktapay": "/api/verify-payment",
    "piprapay2": "/api/verify-payments",
    "piprapay3": "/api/verify-payment",
}
HEADER = {"uddoktapay": U_HEADER, "piprapay2": P2_HEADER, "piprapay3": P3_HEADER}
ID_FIELD = {"uddoktapay": "invoice_id", "piprapay2": "pp_id", "piprapay3": "pp_id"}
COMPLETED = {"uddoktapay": "COMPLETED", "piprapay2": "completed", "piprapay3": "completed"}


def create(client, dialect, secret, body):
    """POST the create call; returns (status, json)."""
    response = client.post(CREATE_PATH[dialect], json=body, headers={HEADER[dialect]: secret})
    return response.status_code, response.get_json()


def checkout_path(url):
    """The path of our checkout URL."""
    return urlsplit(url).path


def pay(client, phone, payment, method, trx_id):
    """The customer claims the TrxID at checkout, then the phone forwards the bKash SMS."""
    assert client.get(f"/checkout/{payment.token}").status_code == 200
    assert submit_trx_id(client, payment, method, trx_id=trx_id).status_code == 303
    result, _ = ingest(phone, bkash_text(amount="500.00", trx_id=trx_id))
    db.session.expire_all()
    assert db.session.get(Payment, payment.id).status == "completed", result


@pytest.mark.parametrize("dialect", ["uddoktapay", "piprapay2", "piprapay3"])
def test_a_dialect_payment_goes_from_create_to_ipn_verify_return_and_refund(
    client, brand, bkash, phone, compat_key, ipn_receiver, dialect
):
    secret = compat_key(dialect)
    status, created = create(client, dialect, secret, create_body(dialect, ipn_receiver.url))
    assert status == 200, created
    if dialect == "uddoktapay":
        assert created["status"] is True and created["message"] == "Payment Url"
        url = created["payment_url"]
        row = db.session.execute(db.select(CompatPayment)).scalar_one()
        external_id = row.external_id
    elif dialect == "piprapay2":
        assert created["status"] is True and isinstance(created["pp_id"], int)
        url, external_id = created["pp_url"], created["pp_id"]
    else:
        assert set(created) == {"pp_id", "pp_url"} and re.fullmatch(r"\d+", created["pp_id"])
        url, external_id = created["pp_url"], created["pp_id"]
    assert re.fullmatch(r"http://localhost[^ ]*/checkout/[\w-]+", url) or "/checkout/" in url
    row = compat_row(external_id)
    payment = row.payment
    assert payment.amount == 500 and payment.reference == "1042"

    pay(client, phone, payment, bkash, "8N7A6B5C4D")

    [ipn] = deliver_ipns(ipn_receiver, 1)
    assert ipn["path"] == "/ipn?from=gateway"
    assert header(ipn, "Content-Type") == "application/json"
    assert header(ipn, HEADER[dialect]) == secret, header_names(ipn)
    signature = hmac.new(brand.webhook_secret.encode(), ipn["raw"], hashlib.sha256).hexdigest()
    assert header(ipn, "X-Service-Signature") == signature
    assert header(ipn, "X-Service-Timestamp").isdigit()
    assert ipn["json"]["status"] == COMPLETED[dialect]
    assert ipn["json"]["metadata"] == METADATA
    assert ipn["json"][ID_FIELD[dialect]] == external_id

    verified = client.post(
        VERIFY_PATH[dialect],
        json={ID_FIELD[dialect]: external_id},
        headers={HEADER[dialect]: secret},
    )
    assert verified.status_code == 200
    body = verified.get_json()
    assert body == ipn["json"], "the IPN carries the verify object"
    assert body["status"] == COMPLETED[dialect] and body["amount"] == "500.00"
    assert body["fee"] == "0.00" and body["transaction_id"] == "8N7A6B5C4D"
    if dialect == "uddoktapay":
        assert body["payment_method"] == "bkash" and body["charged_amount"] == "500.00"
        assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", body["date"])
        assert body["full_name"] == "Rahim Uddin" and body["email"] == "rahim@example.com"
    elif dialect == "piprapay2":
        assert body["payment_method"] == "bKash Personal" and body["total"] == "500.00"
        assert body["refund_amount"] == "0.00" and body["currency"] == "BDT"
        assert body["customer_email_mobile"] == "rahim@example.com"
    else:
        assert body["gateway"] == "bKash Personal" and body["mobile_number"] == "01811111111"
        assert re.fullmatch(r"[A-Z][a-z]{2} \d\d, \d{4} \d\d:\d\d [AP]M", body["date"])

    # The checkout sends the paid customer back through our return to the dialect's query.
    waiting = client.get(f"/checkout/{payment.token}/wait")
    assert waiting.status_code == 302
    back = client.get(urlsplit(waiting.headers["Location"]).path)
    assert back.status_code == 303
    location = urlsplit(back.headers["Location"])
    query = parse_qs(location.query)
    assert location.netloc == "shop.example" and query["gw"] == ["pay"]
    if dialect == "uddoktapay":
        assert query["invoice_id"] == [external_id]
    elif dialect == "piprapay2":
        assert query["pp_id"] == [str(external_id)]
    else:
        assert query["pp_status"] == ["completed"] and query["transaction_ref"] == [external_id]


def test_p2_post_return_is_a_self_submitting_form_with_a_button(
    client, bkash, phone, compat_key, ipn_receiver
):
    secret = compat_key("piprapay2")
    status, created = create(
        client, "piprapay2", secret, create_body("piprapay2", ipn_receiver.url, "POST")
    )
    assert status == 200
    row = compat_row(created["pp_id"])
    pay(client, phone, row.payment, bkash, "9B8C7D6E5F")
    page = client.get(f"/compat/return/{row.return_token}")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert (
        '<form id="back" method="post" '
        'action="https://shop.example/modules/gateways/callback.php?gw=pay">' in html
    )
    assert f'<input type="hidden" name="pp_id" value="{created["pp_id"]}">' in html
    assert '<button type="submit">' in html and ".submit()" in html
    nonce = re.search(r'<script nonce="([^"]+)">', html).group(1)
    assert f"script-src 'nonce-{nonce}'" in page.headers["Content-Security-Policy"]


@pytest.mark.parametrize("dialect", ["uddoktapay", "piprapay2", "piprapay3"])
def test_a_cancel_sends_the_customer_to_the_dialect_cancel_address(
    client, bkash, compat_key, ipn_receiver, dialect
):
    from tests.checkout_helpers import cancel

    secret = compat_key(dialect)
    status, created = create(client, dialect, secret, create_body(dialect, ipn_receiver.url))
    row = db.session.execute(db.select(CompatPayment)).scalar_one()
    response = cancel(client, row.payment)
    assert response.status_code == 303
    back = client.get(urlsplit(response.headers["Location"]).path)
    location = urlsplit(back.headers["Location"])
    query = parse_qs(location.query)
    if dialect == "piprapay3":
        assert location.path == "/modules/gateways/callback.php"
        assert query["pp_status"] == ["failed"] and query["transaction_ref"] == [row.external_id]
    else:
        assert location.path == "/cancel"
        assert query[ID_FIELD[dialect]] == [row.external_id]
    [ipn] = deliver_ipns(ipn_receiver, 1)
    failed = {"uddoktapay": "FAILED", "piprapay2": "failed", "piprapay3": "failed"}
    assert ipn["json"]["status"] == failed[dialect]
    assert (
        db.session.execute(db.select(db.func.count()).select_from(WebhookDelivery)).scalar_one()
        == 1
    )


@pytest.mark.parametrize("provider, named", [("manual", "Manual"), ("bank", "Bank")])
def test_a_manual_or_bank_payment_is_named_once_in_the_dialects(brand, provider, named):
    PaymentMethodFactory(brand=brand, provider=provider, kind=provider)
    payment = PaymentFactory(brand=brand, status="completed", provider=provider)
    assert provider_label(payment, with_kind=True) == named  # was "Manual Manual"
