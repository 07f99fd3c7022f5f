"""The slot rules of docs/payment-links.md, on the services alone (no HTTP)."""

from datetime import timedelta

import pytest

from gateway.clock import utcnow
from gateway.domain_errors import ValidationFailed
from gateway.extensions import db
from gateway.links.errors import LinkUnavailable
from gateway.links.links import update_link
from gateway.links.models.link import LinkPayment, PaymentLink
from gateway.links.paying import pay_through_link
from gateway.payments.lifecycle import complete_payment, expire_due_payments, fail_payment
from gateway.webhooks.models.webhook import WebhookDelivery
from tests.factories import completed_payment
from tests.links.support import make_link


def state(link):
    db.session.expire_all()
    rows = db.session.execute(db.select(LinkPayment).order_by(LinkPayment.id)).scalars().all()
    return db.session.get(PaymentLink, link.id).used_count, [row.holds_slot for row in rows]


def test_late_money_for_an_expired_payment_retakes_its_slot_only_while_the_limit_allows(brand):
    link = make_link(brand, usage_limit=1, callback_url="http://127.0.0.1:9/hooks")
    first = pay_through_link(link, None, {})
    expire_due_payments(now=utcnow() + timedelta(hours=2))
    second = pay_through_link(link, None, {})
    db.session.refresh(second)
    assert state(link) == (1, [False, True])

    complete_payment(first, "bkash", "LATE000001", from_states=("expired",))

    # The money was received: the payment completes, without a slot, and the limit holds.
    assert state(link) == (1, [False, True])
    with pytest.raises(LinkUnavailable) as refused:
        pay_through_link(link, None, {})
    assert refused.value.reason == "used_up"
    assert second.status == "created"
    events = db.session.execute(db.select(WebhookDelivery.event)).scalars().all()
    assert events.count("payment_link.paid") == 1


def test_late_money_retakes_a_free_slot(brand):
    link = make_link(brand, usage_limit=2)
    payment = pay_through_link(link, None, {})
    expire_due_payments(now=utcnow() + timedelta(hours=2))
    assert state(link) == (0, [False])

    complete_payment(payment, "bkash", "LATE000002", from_states=("expired",))

    assert state(link) == (1, [True])


def test_a_failed_payment_gives_its_slot_back_and_closing_twice_gives_back_once(brand):
    link = make_link(brand, usage_limit=3)
    pay_through_link(link, None, {})
    other = pay_through_link(link, None, {})
    db.session.execute(
        db.update(type(other)).where(type(other).id == other.id).values(status="processing")
    )
    db.session.commit()
    db.session.refresh(other)

    fail_payment(other, "no money")
    from gateway.links.paying import link_payment_closed

    link_payment_closed(other)  # a second close of the same payment
    db.session.commit()

    assert state(link) == (1, [True, False])


def test_a_plain_payment_sends_no_link_event(brand):
    completed_payment(brand=brand, callback_url="http://127.0.0.1:9/hooks")
    events = db.session.execute(db.select(WebhookDelivery.event)).scalars().all()
    assert events == ["payment.completed"]


def test_the_limit_cannot_be_set_below_the_slots_held(brand):
    link = make_link(brand, usage_limit=5)
    pay_through_link(link, None, {})
    pay_through_link(link, None, {})

    with pytest.raises(ValidationFailed) as refused:
        update_link(link, {"usage_limit": 1})

    assert refused.value.errors[0]["field"] == "usage_limit"
    assert state(link)[0] == 2
    assert update_link(link, {"usage_limit": 2}).usage_limit == 2


def test_a_limit_lowered_while_a_payer_takes_a_slot_is_refused_by_the_database(brand):
    from gateway.extensions import commit_without_expiring

    link = make_link(brand, usage_limit=5)
    pay_through_link(link, None, {})
    stale = db.session.get(PaymentLink, link.id)
    assert stale.used_count == 1  # what the panel read
    commit_without_expiring()
    with db.engine.begin() as connection:  # meanwhile a payer takes a second slot
        connection.execute(
            db.update(PaymentLink).where(PaymentLink.id == link.id).values(used_count=2)
        )

    with pytest.raises(ValidationFailed) as refused:
        update_link(stale, {"usage_limit": 1})

    assert refused.value.errors[0]["field"] == "usage_limit"
    db.session.expire_all()
    assert (db.session.get(PaymentLink, link.id).usage_limit, state(link)[0]) == (5, 2)
