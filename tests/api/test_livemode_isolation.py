"""Live and test never mix through /api/v1 (issue 31): a key of one mode never reads, lists,
changes, refunds or counts an object of the other (404 as for another brand's), and every answer
says its mode. Each test runs both ways: the object live and a test key asking, and the reverse.
"""

import csv
import io
from decimal import Decimal
from itertools import count
from urllib.parse import urlsplit

import pytest

from gateway.accounts.api_keys import generate_key
from gateway.extensions import db
from gateway.invoices.lifecycle import mark_sent, pay_invoice
from gateway.invoices.models.invoice import Invoice
from gateway.links.models.link import PaymentLink
from gateway.payments.models.customer import Customer
from gateway.payments.models.payment import Payment, Refund
from tests.bad_input import assert_refused
from tests.checkout_helpers import submit_trx_id
from tests.factories import PaymentFactory, PaymentMethodFactory, UserFactory, completed_payment
from tests.links.support import submit_link

API = "/api/v1"
# The mode of the object under test: the key of that mode owns it, the other mode's key asks.
MODES = [pytest.param(True, id="live-object"), pytest.param(False, id="test-object")]
LABELS = count()


def bearer(brand, livemode, scopes=("read", "write")):
    """Authorization header of a new key of `brand` in this mode."""
    _, secret = generate_key(brand, f"key-{next(LABELS)}", list(scopes), livemode=livemode)
    return {"Authorization": f"Bearer {secret}"}


@pytest.fixture
def keys(brand):
    """{True: a live key's header, False: a test key's header}, both read+write."""
    return {True: bearer(brand, True), False: bearer(brand, False)}


def listed(client, path, headers, field="id"):
    """The `field` of every row a list answers (first page)."""
    response = client.get(f"{API}/{path}", headers=headers)
    assert response.status_code == 200, response.json
    return [row[field] for row in response.json["data"]]


@pytest.mark.parametrize("mode", MODES)
def test_a_payment_is_read_listed_and_cancelled_only_in_its_own_mode(client, keys, mode):
    own, other = keys[mode], keys[not mode]
    created = client.post(
        f"{API}/payments", json={"amount": "500.00", "currency": "BDT"}, headers=own
    )
    assert created.status_code == 201 and created.json["data"]["livemode"] is mode
    payment_id = created.json["data"]["payment_id"]
    assert (
        db.session.execute(
            db.select(Payment.livemode).where(Payment.public_id == payment_id)
        ).scalar_one()
        is mode
    )

    read = client.get(f"{API}/payments/{payment_id}", headers=own)
    assert read.status_code == 200 and read.json["data"]["livemode"] is mode
    assert_refused(
        client.get(f"{API}/payments/{payment_id}", headers=other), 404, "PAYMENT_NOT_FOUND"
    )
    assert listed(client, "payments", own, "payment_id") == [payment_id]
    assert listed(client, "payments", other, "payment_id") == []
    assert_refused(
        client.post(f"{API}/payments/{payment_id}/cancel", headers=other),
        404,
        "PAYMENT_NOT_FOUND",
    )
    db.session.expire_all()
    assert (
        db.session.execute(
            db.select(Payment.status).where(Payment.public_id == payment_id)
        ).scalar_one()
        == "created"
    )
    cancelled = client.post(f"{API}/payments/{payment_id}/cancel", headers=own)
    assert cancelled.status_code == 200 and cancelled.json["data"]["status"] == "cancelled"


@pytest.mark.parametrize("mode", MODES)
def test_a_transaction_is_refunded_read_and_listed_only_in_its_own_mode(client, brand, keys, mode):
    own, other = keys[mode], keys[not mode]
    payment = completed_payment(brand=brand, livemode=mode, amount=Decimal("500.00"))
    trx = payment.transaction
    for body in ({"trx_id": trx.trx_id}, {"transaction_id": trx.id}):
        refused = client.post(f"{API}/refunds", json={**body, "amount": "100.00"}, headers=other)
        assert_refused(refused, 404, "TRANSACTION_NOT_FOUND")
    db.session.expire_all()
    assert db.session.get(Payment, payment.id).amount_refunded == 0
    assert db.session.scalar(db.select(db.func.count()).select_from(Refund)) == 0

    made = client.post(
        f"{API}/refunds", json={"trx_id": trx.trx_id, "amount": "100.00"}, headers=own
    )
    assert made.status_code == 201 and made.json["data"]["livemode"] is mode
    refund_id = made.json["data"]["id"]
    assert db.session.get(Refund, refund_id).livemode is mode

    assert client.get(f"{API}/refunds/{refund_id}", headers=own).json["data"]["livemode"] is mode
    assert_refused(client.get(f"{API}/refunds/{refund_id}", headers=other), 404, "REFUND_NOT_FOUND")
    assert listed(client, "refunds", own) == [refund_id]
    assert listed(client, "refunds", other) == []
    assert listed(client, f"refunds?trx_id={trx.trx_id}", other) == []

    read = client.get(f"{API}/transactions/{trx.trx_id}", headers=own)
    assert read.status_code == 200 and read.json["data"]["livemode"] is mode
    assert_refused(
        client.get(f"{API}/transactions/{trx.trx_id}", headers=other),
        404,
        "TRANSACTION_NOT_FOUND",
    )
    assert listed(client, "transactions", own, "trx_id") == [trx.trx_id]
    assert listed(client, "transactions", other, "trx_id") == []


def test_each_mode_has_its_own_customer_for_one_e_mail(client, keys):
    made = {
        mode: client.post(
            f"{API}/customers",
            json={"name": f"Rahim {mode}", "email": "rahim@example.com"},
            headers=keys[mode],
        )
        for mode in (True, False)
    }
    assert [made[mode].status_code for mode in made] == [201, 201]
    ids = {mode: made[mode].json["data"]["id"] for mode in made}
    assert ids[True] != ids[False]
    for mode in (True, False):
        assert made[mode].json["data"]["livemode"] is mode
        by_mail = client.get(f"{API}/customers/rahim@example.com", headers=keys[mode])
        assert by_mail.json["data"]["id"] == ids[mode]
        assert listed(client, "customers", keys[mode]) == [ids[mode]]


@pytest.mark.parametrize("mode", MODES)
def test_a_customer_is_read_changed_and_deleted_only_in_its_own_mode(client, keys, mode):
    own, other = keys[mode], keys[not mode]
    made = client.post(
        f"{API}/customers", json={"name": "Rahim", "phone": "+8801712345678"}, headers=own
    )
    customer_id = made.json["data"]["id"]
    for ident in (customer_id, "+8801712345678"):
        url = f"{API}/customers/{ident}"
        assert_refused(client.get(url, headers=other), 404, "CUSTOMER_NOT_FOUND")
        assert_refused(
            client.patch(url, json={"name": "Karim"}, headers=other), 404, "CUSTOMER_NOT_FOUND"
        )
        assert_refused(client.delete(url, headers=other), 404, "CUSTOMER_NOT_FOUND")
    assert listed(client, "customers", other) == []
    db.session.expire_all()
    assert db.session.get(Customer, customer_id).name == "Rahim"
    assert client.delete(f"{API}/customers/{customer_id}", headers=own).status_code == 200


def test_a_test_payment_never_fills_in_the_live_customer(client, keys):
    live = client.post(
        f"{API}/customers", json={"name": "Rahim", "email": "rahim@example.com"}, headers=keys[True]
    ).json["data"]
    paid = client.post(
        f"{API}/payments",
        json={
            "amount": "10.00",
            "currency": "BDT",
            "customer_name": "Test Person",
            "customer_mail": "rahim@example.com",
            "customer_phone": "+8801812345678",
        },
        headers=keys[False],
    )
    assert paid.status_code == 201
    db.session.expire_all()
    profile = db.session.get(Customer, live["id"])
    assert (profile.name, profile.phone) == ("Rahim", None)
    test_profile = db.session.execute(
        db.select(Customer).where(Customer.livemode.is_(False))
    ).scalar_one()
    assert (test_profile.name, test_profile.email) == ("Test Person", "rahim@example.com")
    payment = db.session.execute(db.select(Payment)).scalar_one()
    assert payment.customer_id == test_profile.id
    live_read = client.get(f"{API}/customers/{live['id']}", headers=keys[True]).json["data"]
    assert live_read["payment_count"] == 0


@pytest.mark.parametrize("mode", MODES)
def test_a_payment_link_is_seen_and_changed_only_in_its_own_mode(client, keys, mode):
    own, other = keys[mode], keys[not mode]
    made = client.post(
        f"{API}/payment-links",
        json={"title": "Eid hamper", "amount": "500.00", "slug": "eid-hamper"},
        headers=own,
    )
    assert made.status_code == 201 and made.json["data"]["livemode"] is mode
    link_id = made.json["data"]["id"]
    for ident in (link_id, "eid-hamper"):
        url = f"{API}/payment-links/{ident}"
        assert_refused(client.get(url, headers=other), 404, "PAYMENT_LINK_NOT_FOUND")
        assert_refused(
            client.patch(url, json={"title": "Mine now"}, headers=other),
            404,
            "PAYMENT_LINK_NOT_FOUND",
        )
        for action in ("disable", "enable"):
            assert_refused(
                client.post(f"{url}/{action}", headers=other), 404, "PAYMENT_LINK_NOT_FOUND"
            )
        assert_refused(client.delete(url, headers=other), 404, "PAYMENT_LINK_NOT_FOUND")
    assert listed(client, "payment-links", other) == []
    assert listed(client, "payment-links", own) == [link_id]
    read = client.get(f"{API}/payment-links/{link_id}", headers=own).json["data"]
    assert (read["title"], read["status"]) == ("Eid hamper", "active")


@pytest.mark.parametrize("mode", MODES)
def test_a_link_takes_payments_of_its_own_mode(client, keys, mode):
    made = client.post(
        f"{API}/payment-links", json={"title": "Eid hamper", "amount": "500.00"}, headers=keys[mode]
    ).json["data"]
    link = db.session.execute(
        db.select(PaymentLink).where(PaymentLink.public_id == made["id"])
    ).scalar_one()
    response = submit_link(client, link)
    assert response.status_code in (302, 303), response.get_data(as_text=True)[:300]
    payment = db.session.execute(db.select(Payment)).scalar_one()
    assert payment.livemode is mode
    assert listed(client, f"payments?payment_link={link.slug}", keys[mode], "payment_id") == [
        payment.public_id
    ]
    assert listed(client, "payments", keys[not mode], "payment_id") == []


@pytest.mark.parametrize("mode", MODES)
def test_an_invoice_is_seen_changed_and_paid_only_in_its_own_mode(client, keys, mode):
    own, other = keys[mode], keys[not mode]
    made = client.post(
        f"{API}/invoices",
        json={
            "customer": {"name": "Rahim", "email": "rahim@example.com"},
            "items": [{"description": "Design", "quantity": "2", "unit_price": "500.00"}],
        },
        headers=own,
    )
    assert made.status_code == 201 and made.json["data"]["livemode"] is mode
    invoice_id = made.json["data"]["invoice_id"]
    url = f"{API}/invoices/{invoice_id}"
    assert_refused(client.get(url, headers=other), 404, "INVOICE_NOT_FOUND")
    assert_refused(
        client.patch(url, json={"notes": "mine"}, headers=other), 404, "INVOICE_NOT_FOUND"
    )
    assert_refused(client.post(f"{url}/void", headers=other), 404, "INVOICE_NOT_FOUND")
    assert_refused(
        client.post(f"{url}/send", json={"channels": ["email"]}, headers=other),
        404,
        "INVOICE_NOT_FOUND",
    )
    assert listed(client, "invoices", other, "invoice_id") == []
    assert listed(client, "invoices", own, "invoice_id") == [invoice_id]
    invoice = db.session.execute(
        db.select(Invoice).where(Invoice.public_id == invoice_id)
    ).scalar_one()
    assert (invoice.status, invoice.notes, invoice.customer.livemode) == ("draft", None, mode)
    mark_sent(invoice)
    payment = pay_invoice(invoice)
    assert payment.livemode is mode  # a test invoice is paid by a test payment
    assert listed(client, f"payments?invoice={invoice_id}", other, "payment_id") == []


def test_live_totals_never_count_test_payments_and_the_reverse(client, brand, keys):
    completed_payment(brand=brand, livemode=True, amount=Decimal("500.00"))
    completed_payment(brand=brand, livemode=False, amount=Decimal("700.00"))
    PaymentFactory(brand=brand, livemode=False, amount=Decimal("900.00"))
    summaries = {
        mode: client.get(f"{API}/dashboard/summary", headers=keys[mode]).json["data"]
        for mode in (True, False)
    }
    live, test = summaries[True], summaries[False]
    assert (live["livemode"], test["livemode"]) == (True, False)
    assert (live["total_count"], test["total_count"]) == (1, 2)
    assert live["completed_volume"]["BDT"] == "500.00"
    assert test["completed_volume"]["BDT"] == "700.00"
    assert live["counts"]["created"] == 0 and test["counts"]["created"] == 1
    assert live["today"]["count"] == 1 and live["today"]["volume"]["BDT"] == "500.00"
    assert test["today"]["volume"]["BDT"] == "700.00"
    assert live["windows"]["today"]["total_count"] == 1


def csv_column(client, path, headers, column):
    """One column of an export's rows."""
    response = client.get(f"{API}/exports/{path}", headers=headers)
    assert response.status_code == 200
    rows = list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))
    return [row[column] for row in rows]


@pytest.mark.parametrize("mode", MODES)
def test_exports_hold_only_the_keys_mode(client, brand, keys, mode):
    payment = completed_payment(brand=brand, livemode=mode, amount=Decimal("500.00"))
    refund = client.post(
        f"{API}/refunds", json={"trx_id": payment.transaction.trx_id}, headers=keys[mode]
    ).json["data"]
    invoice = client.post(
        f"{API}/invoices",
        json={
            "customer": {"email": "rahim@example.com"},
            "items": [{"description": "Design", "quantity": "1", "unit_price": "5.00"}],
        },
        headers=keys[mode],
    ).json["data"]
    for key_mode, expected in ((mode, True), (not mode, False)):
        headers = keys[key_mode]
        payments = csv_column(client, "payments.csv", headers, "payment_id")
        refunds = csv_column(client, "refunds.csv", headers, "refund_id")
        invoices = csv_column(client, "invoices.csv", headers, "invoice_id")
        assert payments == ([payment.public_id] if expected else [])
        assert refunds == ([str(refund["id"])] if expected else [])
        assert invoices == ([invoice["invoice_id"]] if expected else [])


def test_a_live_key_lists_both_modes_a_test_key_its_own_and_each_makes_its_own(client, brand):
    UserFactory(brand=brand, role="super_admin", email="root@example.com")
    admin = {"X-Super-Admin-Email": "root@example.com"}
    live = {**bearer(brand, True, ("read", "write", "admin")), **admin}
    test = {**bearer(brand, False, ("read", "write", "admin")), **admin}
    made = client.post(f"{API}/api-keys", json={"label": "ci", "scopes": ["read"]}, headers=test)
    assert made.status_code == 201
    data = made.json["data"]
    assert data["livemode"] is False and data["key"].startswith("gw_test_")
    assert data["display_prefix"].startswith("gw_test_")
    for headers, modes in ((live, [False, False, True]), (test, [False, False])):
        rows = client.get(f"{API}/api-keys", headers=headers).json["data"]
        assert sorted(row["livemode"] for row in rows) == modes
    # The new test key works, in test mode.
    created = client.post(
        f"{API}/payments",
        json={"amount": "5.00", "currency": "BDT"},
        headers={"Authorization": f"Bearer {data['key']}"},
    )
    assert created.status_code == 403  # read scope only: refused before anything is made
    listed_ok = client.get(f"{API}/payments", headers={"Authorization": f"Bearer {data['key']}"})
    assert listed_ok.status_code == 200 and listed_ok.json["data"] == []


@pytest.mark.parametrize("mode", MODES)
def test_an_idempotency_key_never_replays_the_other_modes_answer(client, keys, mode):
    body = {"amount": "500.00", "currency": "BDT"}
    first = client.post(
        f"{API}/payments", json=body, headers={**keys[mode], "Idempotency-Key": "order-1"}
    )
    assert first.status_code == 201
    crossed = client.post(
        f"{API}/payments", json=body, headers={**keys[not mode], "Idempotency-Key": "order-1"}
    )
    assert_refused(crossed, 422, "IDEMPOTENCY_KEY_REUSED")
    assert first.json["data"]["payment_id"] not in crossed.get_data(as_text=True)
    again = client.post(
        f"{API}/payments", json=body, headers={**keys[mode], "Idempotency-Key": "order-1"}
    )
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert again.json == first.json
    assert db.session.scalar(db.select(db.func.count()).select_from(Payment)) == 1


BAD_TEST_KEY_REQUESTS = [
    ("post", "payments", {"amount": "abc", "currency": "BDT"}, "amount"),
    ("post", "payments", {"amount": "5.00", "currency": "XYZ"}, "currency"),
    ("post", "refunds", {}, "trx_id"),
    ("post", "refunds", {"trx_id": "TRXNOPE", "amount": "-1"}, "amount"),
    ("post", "customers", {"name": "x"}, "email"),
    ("post", "payment-links", {"amount": "5.00"}, "title"),
    ("post", "invoices", {"items": []}, "items"),
]


@pytest.mark.parametrize("method, path, body, field", BAD_TEST_KEY_REQUESTS)
def test_bad_input_with_a_test_key_keeps_the_envelope_and_writes_nothing(
    client, keys, method, path, body, field
):
    response = getattr(client, method)(f"{API}/{path}", json=body, headers=keys[False])
    assert_refused(response, 422, "VALIDATION_ERROR", field)
    for model in (Payment, Refund, Customer, Invoice):
        assert db.session.scalar(db.select(db.func.count()).select_from(model)) == 0


def test_test_invoices_are_numbered_apart_and_leave_no_gap_in_the_live_numbers(client, keys):
    body = {
        "customer": {"email": "rahim@example.com"},
        "items": [{"description": "Design", "quantity": "1", "unit_price": "5.00"}],
    }
    numbers = [
        client.post(f"{API}/invoices", json=body, headers=keys[mode]).json["data"]["number"]
        for mode in (True, False, False, True)
    ]
    assert numbers == ["INV-0001", "INV-TEST-0001", "INV-TEST-0002", "INV-0002"]


def test_a_test_payments_checkout_still_takes_its_claim(client, brand, keys):
    method = PaymentMethodFactory(brand=brand, number="01712345678")
    made = client.post(
        f"{API}/payments", json={"amount": "500.00", "currency": "BDT"}, headers=keys[False]
    ).json["data"]
    payment = db.session.execute(db.select(Payment)).scalar_one()
    page = client.get(urlsplit(made["checkout_url"]).path)
    # The page offers the simulate buttons instead of the number (docs/testing-your-integration.md);
    # a claim posted anyway still takes the real path.
    assert page.status_code == 200 and "Simulate a matching SMS" in page.get_data(as_text=True)
    assert "01712345678" not in page.get_data(as_text=True)
    claimed = submit_trx_id(client, payment, method)
    assert claimed.status_code in (302, 303)
    db.session.expire_all()
    assert (payment.status, payment.livemode) == ("processing", False)
