"""Completing a batch (a phone's SMS batch) writes exactly what completing its payments one by one
writes, across brands, links, invoices and plugin payments, with one query per listener."""

import json
import secrets
from decimal import Decimal

import pytest

from gateway.compat.core import create_dialect_payment
from gateway.compat.keys import generate_compat_key
from gateway.extensions import db
from gateway.invoices.lifecycle import mark_sent, pay_invoice
from gateway.invoices.models.invoice import Invoice
from gateway.links.models.link import LinkPayment, PaymentLink
from gateway.links.paying import pay_through_link
from gateway.notifications.models.notification import MerchantNotification
from gateway.payments.lifecycle import complete_payment, complete_payments
from gateway.payments.models.payment import Transaction
from gateway.sms.models.outbound_sms import OutboundSms
from gateway.webhooks.models.webhook import WebhookDelivery
from tests.factories import BrandFactory, PaymentFactory
from tests.invoices.conftest import an_invoice
from tests.links.support import make_link
from tests.notifications.conftest import configure

HOOKS_A, HOOKS_B, IPN_URL = (
    "https://a.example/hooks",
    "https://b.example/hooks",
    "https://plugin.example/ipn",
)


def scene():
    """Six open payments: brand A (webhooks, receipts, Telegram told of completions) has a plain
    one, a link's and a plugin's; brand B (webhooks, no settings row) an invoice's and a plain one;
    brand C (nothing set up) a plain one.
    """
    a = BrandFactory(webhook_url=HOOKS_A, receipt_sms_enabled=True)
    b = BrandFactory(webhook_url=HOOKS_B)
    c = BrandFactory()
    configure(a, channels={"payment.completed": ["telegram"]})
    link = make_link(a, usage_limit=1)
    key, _ = generate_compat_key(a, "plugin", "piprapay2")
    invoice = an_invoice(b)
    mark_sent(invoice)
    db.session.commit()
    plugin_row, _ = create_dialect_payment(
        key,
        {"amount": Decimal("500.00"), "currency": "BDT", "webhook_url": IPN_URL},
    )
    payments = [
        PaymentFactory(brand=a, customer_phone="+8801711111111"),
        pay_through_link(link, None, {}),
        plugin_row.payment,
        pay_invoice(invoice),
        PaymentFactory(brand=b),
        PaymentFactory(brand=c, customer_phone="+8801722222222"),
    ]
    db.session.commit()
    return payments


def one_by_one(completions):
    """complete_payment for each, in order: one transaction each."""
    for completion in completions:
        complete_payment(*completion)


def as_one_batch(completions):
    """complete_payments for all of them: one transaction."""
    complete_payments(completions)


def effects(payments):
    """Every row the completions wrote, by the payment's place in the scene, in a stable order."""
    db.session.expire_all()
    place = {payment.id: index for index, payment in enumerate(payments)}
    trx = {t.payment_id: t for t in db.session.execute(db.select(Transaction)).scalars()}
    deliveries = []
    for row in db.session.execute(db.select(WebhookDelivery)).scalars():
        payment, transaction = payments[place[row.payment_id]], trx[row.payment_id]
        # Each body is about its own payment and transaction.
        assert row.transaction_id == transaction.id
        data = json.loads(row.payload).get("data", json.loads(row.payload))
        if "payment_id" in data:
            assert (data["payment_id"], data["trx_id"]) == (payment.public_id, transaction.trx_id)
        deliveries.append((place[row.payment_id], row.event, row.url, row.status))
    notes = db.session.execute(db.select(MerchantNotification)).scalars()
    links = db.session.execute(db.select(PaymentLink)).scalars()
    return {
        "statuses": [payment.status for payment in payments],
        "transactions": sorted((place[p], t.provider, t.provider_trx_id) for p, t in trx.items()),
        "deliveries": sorted(deliveries),
        "receipts": sorted(
            (place[row.payment_id], row.to_number, trx[row.payment_id].trx_id in row.body)
            for row in db.session.execute(db.select(OutboundSms)).scalars()
        ),
        "notifications": sorted(
            (place[int(note.dedupe_key.split(":")[-1])], note.event, len(note.deliveries))
            for note in notes
        ),
        "invoices": [row.status for row in db.session.execute(db.select(Invoice)).scalars()],
        "links": [(link.used_count, [lp.holds_slot for lp in link_rows(link)]) for link in links],
    }


def link_rows(link):
    """The link's payment rows."""
    return db.session.execute(
        db.select(LinkPayment).where(LinkPayment.link_id == link.id)
    ).scalars()


EXPECTED = {
    "statuses": ["completed"] * 6,
    "transactions": [(index, "bkash", f"TRX{index}") for index in range(6)],
    # The plugin's payment also writes its dialect's IPN; brand C has no webhook address.
    "deliveries": [
        (0, "payment.completed", HOOKS_A, "pending"),
        (1, "payment.completed", HOOKS_A, "pending"),
        (1, "payment_link.paid", HOOKS_A, "pending"),
        (2, "compat.piprapay2", IPN_URL, "pending"),
        (2, "payment.completed", HOOKS_A, "pending"),
        (3, "invoice.paid", HOOKS_B, "pending"),
        (3, "payment.completed", HOOKS_B, "pending"),
        (4, "payment.completed", HOOKS_B, "pending"),
    ],
    # Receipts are brand A's choice: its payment with a phone gets one, brand C's does not.
    "receipts": [(0, "+8801711111111", True)],
    # Brand A is told of each of its completions on Telegram; B and C chose nothing.
    "notifications": [(index, "payment.completed", 1) for index in range(3)],
    "invoices": ["paid"],
    "links": [(1, [True])],
}


@pytest.mark.parametrize("complete", [one_by_one, as_one_batch])
def test_a_batch_of_completions_writes_what_one_by_one_completion_writes(app, complete):
    payments = scene()
    complete([(p, "bkash", f"TRX{i}", None) for i, p in enumerate(payments)])
    assert effects(payments) == EXPECTED


def loaded(payments):
    """The payments with their brands read, as ingestion holds them when it completes them."""
    for payment in payments:
        db.session.refresh(payment)
        db.session.refresh(payment.brand)
    return payments


def test_a_batch_of_eight_reads_what_a_batch_of_two_reads(app, sql_statements):
    """Each listener reads once per batch (the brand with a settings row and the one without
    alike), never once per payment."""
    a = BrandFactory(webhook_url=HOOKS_A)
    b = BrandFactory(webhook_url=HOOKS_B)
    configure(a, channels={"payment.completed": []})
    reads = []
    for size in (1, 4):
        payments = loaded([PaymentFactory(brand=brand) for brand in (a, b) for _ in range(size)])
        del sql_statements[:]
        complete_payments([(p, "bkash", secrets.token_hex(5), None) for p in payments])
        reads.append(sum(s.lstrip().upper().startswith("SELECT") for s in sql_statements))
    assert reads[0] == reads[1], reads
