"""IPNs: each dialect's notification as an outbox event, its key header at send time, and test
IPNs."""

import json

from flask import current_app

from ..clock import utcnow
from ..extensions import db, rows_by
from ..webhooks import delivery as webhook_delivery
from ..webhooks import events as webhook_events
from ..webhooks.callback_urls import checked_destination
from ..webhooks.models.webhook import WebhookDelivery
from ..webhooks.transport import Outcome, post_body
from .dialects import DIALECTS, dialect_of
from .keys import ipn_key_secret, open_secret
from .models.compat import CompatPayment

EVENT_PREFIX = "compat."


def ipn_event(dialect):
    """The outbox event name of a dialect's IPN, e.g. compat.piprapay2."""
    return EVENT_PREFIX + dialect


def write_ipns(event, emissions):
    """Listener of webhooks' events_emitted: a dialect payment's change becomes its dialect's IPN
    too (one query for the list).
    """
    payments = [e.payment for e in emissions if e.payment is not None]
    if not payments or event == "webhook.test":
        return []
    rows = rows_by(CompatPayment.payment_id, (payment.id for payment in payments))
    wanted = [
        (e, rows[e.payment.id])
        for e in emissions
        if e.payment is not None
        and e.payment.id in rows
        and rows[e.payment.id].webhook_url
        and dialect_of(rows[e.payment.id].dialect).wants_ipn(event)
    ]
    return webhook_events.record_deliveries(
        [
            webhook_events.Record(
                e.brand,
                ipn_event(row.dialect),
                row.webhook_url,
                dialect_of(row.dialect).payment_object(row, ipn_event=event),
                e.payment,
                e.transaction or e.payment.transaction,
            )
            for e, row in wanted
        ]
    )


def ipn_headers(claim):
    """Listener of webhooks' delivery_headers: a dialect IPN carries its key, spelt exactly."""
    if not claim.event.startswith(EVENT_PREFIX):
        return {}
    dialect = DIALECTS.get(claim.event[len(EVENT_PREFIX) :])
    row = db.session.execute(
        db.select(CompatPayment)
        .join(WebhookDelivery, WebhookDelivery.payment_id == CompatPayment.payment_id)
        .where(WebhookDelivery.id == claim.delivery_id)
    ).scalar_one_or_none()
    secret = ipn_key_secret(row.key) if row is not None else None
    return {dialect.IPN_HEADER: secret} if dialect is not None and secret else {}


def sample_body(dialect_name):
    """A test IPN body in the dialect's shape: a made-up completed payment of 10.00 BDT."""
    date = utcnow().strftime("%Y-%m-%d %H:%M:%S")
    common = {"amount": "10.00", "fee": "0.00", "metadata": {"invoiceid": "TEST"}}
    if dialect_name == "uddoktapay":
        return {
            **common,
            "full_name": "Test Customer",
            "email": "test@example.com",
            "charged_amount": "10.00",
            "invoice_id": "TESTINVOICE0000000000",
            "payment_method": "bkash",
            "sender_number": "01700000000",
            "transaction_id": "TEST000000",
            "date": date,
            "status": "COMPLETED",
        }
    if dialect_name == "piprapay2":
        return {
            **common,
            "pp_id": 1000000000,
            "customer_name": "Test Customer",
            "customer_email_mobile": "test@example.com",
            "payment_method": "bKash Personal",
            "refund_amount": "0.00",
            "total": "10.00",
            "currency": "BDT",
            "sender_number": "01700000000",
            "transaction_id": "TEST000000",
            "status": "completed",
            "date": date,
        }
    return {
        **common,
        "pp_id": "1000000000",
        "full_name": "Test Customer",
        "email_address": "test@example.com",
        "mobile_number": "01700000000",
        "gateway": "bKash Personal",
        "discount_amount": "0.00",
        "total": "10.00",
        "local_net_amount": "10.00",
        "currency": "BDT",
        "local_currency": "BDT",
        "sender": "01700000000",
        "transaction_id": "TEST000000",
        "status": "completed",
        "date": utcnow().strftime("%b %d, %Y %I:%M %p"),
    }


def send_test_ipn(key, url):
    """POST a signed test IPN in the key's dialect to `url` through the webhook transport's checks.

    Returns the transport's Outcome (status, body, error); a refused address is an Outcome error.
    """
    refusal, addresses = checked_destination(url)
    if refusal is not None:
        return Outcome(error=refusal)
    body = json.dumps(sample_body(key.dialect), separators=(",", ":")).encode()
    secret = open_secret(key)
    now = str(int(utcnow().timestamp()))
    signature = webhook_delivery.sign_payload(key.brand.webhook_secret, body)
    headers = {
        "Content-Type": "application/json",
        "User-Agent": webhook_delivery.USER_AGENT,
        "X-Service-Signature": signature,
        "X-Service-Timestamp": now,
        "X-Service-Event": ipn_event(key.dialect) + ".test",
    }
    if secret:
        headers[dialect_of(key.dialect).IPN_HEADER] = secret
    return post_body(
        url,
        body,
        headers,
        current_app.config.get("WEBHOOK_CONNECT_TIMEOUT", 5),
        current_app.config.get("WEBHOOK_TIMEOUT", 10),
        addresses=addresses,
    )
