"""Deleting a brand's test data: every object made in test mode, and nothing live
(docs/testing-your-integration.md)."""

from ..devices.models.device import Device
from ..extensions import db
from ..invoices.models.invoice import Invoice, InvoiceItem
from ..links.models.link import LinkPayment, PaymentLink
from ..payments.models.customer import Customer
from ..payments.models.payment import Payment, Refund, Transaction
from ..sms.models.balance_chain import BalanceChain, BalanceLink
from ..sms.models.inbound_sms import InboundSms
from ..sms.models.outbound_sms import OutboundSms
from ..sms.simulator import TEST_SIMULATOR_ID
from ..webhooks.models.endpoint import WebhookEndpoint
from ..webhooks.models.event import Event
from ..webhooks.models.webhook import WebhookAttempt, WebhookDelivery


def delete_test_data(brand_id):
    """Delete the brand's test payments with everything hanging off them (transactions, refunds,
    webhook deliveries and their attempts, link and plugin records), its test refunds, customers,
    payment links, invoices, events, webhook endpoints (with every delivery to them), outbound
    texts, the simulated texts and the test simulator's balance chains.

    In the caller's transaction, uncommitted (the panel commits it with its audit row); {what:
    rows deleted}. Every statement is narrowed to the brand and to livemode false, or to rows of
    those: a live row is never among them.
    """
    payments = db.select(Payment.id).where(
        Payment.brand_id == brand_id, Payment.livemode.is_(False)
    )
    transactions = db.select(Transaction.id).where(Transaction.payment_id.in_(payments))
    endpoints = db.select(WebhookEndpoint.id).where(
        WebhookEndpoint.brand_id == brand_id, WebhookEndpoint.livemode.is_(False)
    )
    deliveries = db.select(WebhookDelivery.id).where(
        db.or_(
            WebhookDelivery.payment_id.in_(payments),
            WebhookDelivery.endpoint_id.in_(endpoints),
            db.and_(WebhookDelivery.brand_id == brand_id, WebhookDelivery.livemode.is_(False)),
        )
    )
    links = db.select(PaymentLink.id).where(
        PaymentLink.brand_id == brand_id, PaymentLink.livemode.is_(False)
    )
    invoices = db.select(Invoice.id).where(
        Invoice.brand_id == brand_id, Invoice.livemode.is_(False)
    )
    texts = db.select(InboundSms.id).where(
        InboundSms.brand_id == brand_id, InboundSms.livemode.is_(False)
    )
    test_chains = db.select(BalanceChain.id).where(
        BalanceChain.device_id.in_(
            db.select(Device.id).where(
                Device.brand_id == brand_id, Device.device_id == TEST_SIMULATOR_ID
            )
        )
    )
    # The plugin dialects' record of a payment: a front door's table, so read by name
    # (docs/architecture.md, "Boundaries").
    compat_payments = db.metadata.tables["compat_payments"]
    live_invoice_of_customer = (
        db.select(Invoice.id)
        .where(Invoice.customer_id == Customer.id, Invoice.livemode.is_(True))
        .exists()
    )
    steps = (
        (
            "webhook_attempts",
            db.delete(WebhookAttempt).where(WebhookAttempt.delivery_id.in_(deliveries)),
        ),
        (
            "webhook_deliveries",
            db.delete(WebhookDelivery).where(WebhookDelivery.id.in_(deliveries)),
        ),
        (
            "refunds",
            db.delete(Refund).where(
                Refund.brand_id == brand_id,
                db.or_(Refund.livemode.is_(False), Refund.transaction_id.in_(transactions)),
            ),
        ),
        (
            "sms_balance_links",
            db.delete(BalanceLink).where(
                db.or_(BalanceLink.sms_id.in_(texts), BalanceLink.chain_id.in_(test_chains))
            ),
        ),
        ("sms_balance_chains", db.delete(BalanceChain).where(BalanceChain.id.in_(test_chains))),
        ("inbound_sms", db.delete(InboundSms).where(InboundSms.id.in_(texts))),
        (
            "outbound_sms",
            db.delete(OutboundSms).where(
                db.or_(
                    OutboundSms.payment_id.in_(payments),
                    db.and_(OutboundSms.brand_id == brand_id, OutboundSms.livemode.is_(False)),
                )
            ),
        ),
        (
            "compat_payments",
            db.delete(compat_payments).where(compat_payments.c.payment_id.in_(payments)),
        ),
        (
            "payment_link_payments",
            db.delete(LinkPayment).where(
                db.or_(LinkPayment.payment_id.in_(payments), LinkPayment.link_id.in_(links))
            ),
        ),
        ("transactions", db.delete(Transaction).where(Transaction.id.in_(transactions))),
        ("payments", db.delete(Payment).where(Payment.id.in_(payments))),
        ("invoice_items", db.delete(InvoiceItem).where(InvoiceItem.invoice_id.in_(invoices))),
        ("invoices", db.delete(Invoice).where(Invoice.id.in_(invoices))),
        ("payment_links", db.delete(PaymentLink).where(PaymentLink.id.in_(links))),
        (
            "events",
            db.delete(Event).where(Event.brand_id == brand_id, Event.livemode.is_(False)),
        ),
        ("webhook_endpoints", db.delete(WebhookEndpoint).where(WebhookEndpoint.id.in_(endpoints))),
        (
            "customers",
            db.delete(Customer).where(
                Customer.brand_id == brand_id,
                Customer.livemode.is_(False),
                ~live_invoice_of_customer,
            ),
        ),
    )
    deleted = {}
    for name, statement in steps:
        deleted[name] = db.session.execute(
            statement.execution_options(synchronize_session=False)
        ).rowcount
    return deleted
