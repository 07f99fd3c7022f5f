"""The one state machine: every listed move works through write_status, every other one is
refused."""

import uuid
from decimal import Decimal

import pytest

from gateway import states
from gateway.clock import utcnow
from gateway.extensions import db
from gateway.payments.models.payment import Payment, Refund
from gateway.sms.models.inbound_sms import InboundSms
from gateway.sms.models.outbound_sms import OutboundSms
from gateway.states import (
    DELIVERY,
    INBOUND_SMS,
    MACHINES,
    OUTBOUND_SMS,
    PAYMENT,
    REFUND,
    TRANSACTION,
    IllegalTransition,
    payment_in_review,
    write_status,
)
from gateway.webhooks.models.webhook import WebhookDelivery
from tests.factories import PaymentFactory, completed_payment


def a_payment(brand):
    """A payment row to move through every status."""
    return PaymentFactory(brand=brand)


def a_transaction(brand):
    """A completed payment's transaction."""
    return completed_payment(brand=brand).transaction


def a_refund(brand):
    """A refund row on a completed payment's transaction."""
    transaction = completed_payment(brand=brand).transaction
    refund = Refund(
        brand_id=brand.id, transaction_id=transaction.id, amount=Decimal("1.00"), status="completed"
    )
    db.session.add(refund)
    db.session.commit()
    return refund


def a_delivery(brand):
    """A webhook delivery row as the outbox writes it."""
    now = utcnow()
    row = WebhookDelivery(
        brand_id=brand.id,
        event="payment.completed",
        event_id=f"evt_{uuid.uuid4().hex}",
        url="https://shop.example/hooks",
        payload="{}",
        status="pending",
        attempts=0,
        next_attempt_at=now,
        created_at=now,
        updated_at=now,
    )
    db.session.add(row)
    db.session.commit()
    return row


def an_inbound_sms(brand):
    """A stored text."""
    row = InboundSms(
        public_id=str(uuid.uuid4()),
        brand_id=brand.id,
        sender="bKash",
        body="hello",
        content_hash=uuid.uuid4().hex,
        incoming=False,
        status="unmatched",
    )
    db.session.add(row)
    db.session.commit()
    return row


def an_outbound_sms(brand):
    """A queued outbound text."""
    row = OutboundSms(
        brand_id=brand.id,
        to_number="+8801712345678",
        body="Paid",
        status="pending",
        attempts=0,
        next_attempt_at=utcnow(),
    )
    db.session.add(row)
    db.session.commit()
    return row


def an_outbound_mail(brand):
    """A queued e-mail."""
    from gateway.mail.outbox import send_mail

    row = send_mail(brand.id, "customer@example.com", "Invoice", "Body")
    db.session.commit()
    return row


def a_notification_delivery(brand):
    """A notification waiting for its channel."""
    from gateway.notifications.models.notification import (
        MerchantNotification,
        NotificationDelivery,
    )

    note = MerchantNotification(brand_id=brand.id, event="test", subject="Hi", text="Hello")
    note.deliveries = [
        NotificationDelivery(brand_id=brand.id, channel="telegram", next_attempt_at=utcnow())
    ]
    db.session.add(note)
    db.session.commit()
    return note.deliveries[0]


def an_invoice(brand):
    """A draft invoice."""
    from tests.invoices.conftest import an_invoice as draft

    return draft(brand)


ROWS = {
    PAYMENT: a_payment,
    TRANSACTION: a_transaction,
    REFUND: a_refund,
    DELIVERY: a_delivery,
    INBOUND_SMS: an_inbound_sms,
    OUTBOUND_SMS: an_outbound_sms,
    states.OUTBOUND_MAIL: an_outbound_mail,
    states.NOTIFICATION_DELIVERY: a_notification_delivery,
    states.INVOICE: an_invoice,
}
ALL_PAIRS = [
    pytest.param(machine, f, t, id=f"{machine.name}:{f}->{t}")
    for machine in MACHINES
    for f in machine.statuses
    for t in machine.statuses
]


def put_in(row, status):
    """Set up: the row in `status`, committed (a test arrangement, not a move)."""
    row.status = status
    db.session.commit()


def status_of(row):
    """The row's status as committed now."""
    db.session.expire_all()
    return db.session.get(type(row), row.id).status


@pytest.mark.parametrize("machine,from_state,to_state", ALL_PAIRS)
def test_write_status_allows_exactly_the_listed_moves(brand, machine, from_state, to_state):
    row = ROWS[machine](brand)
    put_in(row, from_state)
    table = machine.table
    if machine.allows(from_state, to_state):
        assert write_status(machine, (table.c.id == row.id,), (from_state,), to_state) == 1
        db.session.commit()
        assert status_of(row) == to_state
    else:
        with pytest.raises(IllegalTransition):
            write_status(machine, (table.c.id == row.id,), (from_state,), to_state)
        db.session.rollback()
        assert status_of(row) == from_state


@pytest.mark.parametrize("machine", [m for m in MACHINES if m.pairs()], ids=lambda m: m.name)
def test_a_move_from_a_state_the_row_has_left_changes_nothing(brand, machine):
    from_state, to_state = machine.pairs()[0]
    row = ROWS[machine](brand)
    elsewhere = next(s for s in machine.statuses if s != from_state)
    put_in(row, elsewhere)
    assert write_status(machine, (machine.table.c.id == row.id,), (from_state,), to_state) == 0
    assert status_of(row) == elsewhere


def test_the_payment_table_is_the_contracts_with_the_documented_amendments():
    assert set(PAYMENT.pairs()) == {
        ("created", "processing"),
        ("created", "completed"),
        ("created", "cancelled"),
        ("created", "expired"),
        ("processing", "completed"),
        ("processing", "cancelled"),
        ("processing", "expired"),
        ("processing", "failed"),
        ("completed", "partially_refunded"),
        ("completed", "refunded"),
        ("partially_refunded", "partially_refunded"),
        ("partially_refunded", "refunded"),
        # docs/payment-states.md, "Amendments to the contract":
        ("processing", "created"),
        ("cancelled", "completed"),
        ("expired", "completed"),
    }


def test_a_refund_is_recorded_completed_and_never_moves():
    assert REFUND.statuses == ("completed",) and REFUND.pairs() == []


def named_statuses(prefix):
    """The words of states.py's constants named `<prefix>_<WORD>` (PAYMENT_COMPLETED...)."""
    return {
        value
        for name, value in vars(states).items()
        if name.startswith(prefix + "_")
        and name[len(prefix) + 1 :].isupper()
        and isinstance(value, str)
    }


@pytest.mark.parametrize("prefix", ["PAYMENT", "TRANSACTION", "REFUND", "INVOICE"])
def test_each_status_word_is_named_once_in_states(prefix):
    """The code writes PAYMENT_COMPLETED, never "completed": each machine's words have a name."""
    assert named_statuses(prefix) == set(getattr(states, prefix).statuses)


def test_an_inbound_sms_status_words_are_named_in_states():
    from gateway.sms.models.inbound_sms import SMS_STATUSES

    assert named_statuses("SMS") == set(states.INBOUND_SMS.statuses) == set(SMS_STATUSES)


def test_a_links_status_words_are_named_in_states():
    from gateway.links.models.link import DELETED, LINK_STATUSES

    assert named_statuses("LINK") == {*LINK_STATUSES, DELETED} == {"active", "disabled", "deleted"}


def test_every_status_the_models_know_is_in_the_tables():
    from gateway.payments.models.payment import PAYMENT_STATUSES
    from gateway.sms.models.inbound_sms import SMS_STATUSES
    from gateway.states import OUTBOX_STATUSES

    assert set(PAYMENT.statuses) == set(PAYMENT_STATUSES)
    assert set(DELIVERY.statuses) == set(OUTBOX_STATUSES)
    assert set(INBOUND_SMS.statuses) == set(SMS_STATUSES)
    for outbox in (OUTBOUND_SMS, states.OUTBOUND_MAIL, states.NOTIFICATION_DELIVERY):
        assert set(outbox.statuses) == set(OUTBOX_STATUSES)
    from gateway.invoices.models.invoice import INVOICE_STATUSES

    assert set(states.INVOICE.statuses) == set(INVOICE_STATUSES)


def test_a_statement_built_once_is_checked_against_the_table():
    table = WebhookDelivery.__table__
    states.guarded_update(DELIVERY, table, ("pending",), ("sent",))
    with pytest.raises(IllegalTransition):
        states.guarded_update(DELIVERY, table, ("sent",), ("failed",))


def test_in_review_is_a_processing_payment_held_with_a_reason(brand, app):
    held = PaymentFactory(brand=brand, status="processing", review_reason="Amount differs")
    live = PaymentFactory(brand=brand, status="processing")
    cancelled = PaymentFactory(
        brand=brand, status="cancelled", review_reason="Paid after the payment was cancelled"
    )
    assert [payment_in_review(p) for p in (held, live, cancelled)] == [True, False, False]
    in_sql = (
        db.session.execute(db.select(Payment.id).where(states.payment_in_review_sql()))
        .scalars()
        .all()
    )
    assert in_sql == [held.id]
    template = app.jinja_env.from_string("{{ p is in_review }}")
    assert [template.render(p=p) for p in (held, live, cancelled)] == ["True", "False", "False"]
