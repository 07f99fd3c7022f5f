"""A payment link's payment paid through bKash's API: the link's payment_link.paid event follows the
completion, as after a matched SMS."""

from gateway.extensions import db
from gateway.payments.models.payment import Payment
from gateway.webhooks.models.event import Event
from tests.links.support import make_link, submit_link
from tests.wallets.bkash_support import bkash_api, pay_through_bkash, standin  # noqa: F401


def test_a_link_s_payment_paid_with_bkash_marks_the_link_paid(client, brand, bkash_api, standin):
    link = make_link(brand)
    assert submit_link(client, link).status_code == 303
    payment = db.session.execute(db.select(Payment)).scalar_one()
    pay_through_bkash(client, payment, bkash_api)
    db.session.refresh(payment)
    assert payment.status == "completed"
    events = db.session.execute(db.select(Event.type).order_by(Event.id)).scalars().all()
    assert events == ["payment.completed", "payment_link.paid"]
