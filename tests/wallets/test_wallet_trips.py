"""A trip to a wallet keeps the amount it was started for, and money a wallet took that did not pay
its payment (another amount, the payment closed first) reaches the merchant: listed, told once,
returned through the wallet or marked handled. Against the bKash and Nagad stand-ins."""

import json
from datetime import timedelta
from decimal import Decimal

import pytest

from gateway.clock import utcnow
from gateway.extensions import db
from gateway.payments.lifecycle import expire_payment
from gateway.payments.methods import update_method
from gateway.payments.models.payment import Transaction
from gateway.payments.refunds import create_refund
from gateway.wallets import settle_started_wallet_payments
from gateway.wallets.bkash import REFUND
from gateway.webhooks.models.event import Event
from tests.checkout_helpers import payment, reloaded, text_of  # noqa: F401 - fixture
from tests.factories import UserFactory
from tests.notifications.conftest import configure, notifications
from tests.panel.conftest import audit_actions, panel_client, post_form, sign_in
from tests.wallets.bkash_support import (  # noqa: F401 - fixtures
    bkash_api,
    choose_at_bkash,
    come_back,
    press_pay_with_bkash,
    standin,
    wallet_page,
)
from tests.wallets.test_nagad_checkout import (  # noqa: F401 - fixtures
    nagad,
    nagad_method,
    quick_nagad,
    reference_of,
    wallet_rows,
)
from tests.wallets.test_nagad_checkout import start as press_pay_with_nagad

UNAPPLIED = "wallets.unapplied_payment"
HOSTILE = '<img src=x onerror="alert(1)">'


@pytest.fixture
def merchant(app, brand):
    """The brand's owner, signed in to the panel."""
    client = panel_client(app)
    assert sign_in(client, UserFactory(brand=brand, role="owner")).status_code == 302
    return client


@pytest.fixture
def told(brand):
    """The brand hears of money that did not apply (Telegram set up)."""
    configure(brand)


def test_the_trip_paid_sets_the_fee_although_another_method_was_started_after_it(
    client, brand, payment, bkash_api, standin, nagad, auth, merchant, told
):
    update_method(bkash_api, fee_fixed=Decimal("10.00"))
    nagad_api = nagad_method(brand, nagad)
    update_method(nagad_api, fee_fixed=Decimal("20.00"))
    at_bkash = wallet_page(press_pay_with_bkash(client, payment, bkash_api))
    reference = reference_of(press_pay_with_nagad(client, payment, nagad_api))
    bkash_trip, nagad_trip = wallet_rows(payment)
    assert (bkash_trip.amount, bkash_trip.fee) == (Decimal("510.00"), Decimal("10.00"))
    assert nagad.checkouts[reference].amount == Decimal("520.00")

    # The customer pays the first trip: what bKash's page asked, not the newer Nagad total.
    answer = come_back(client, choose_at_bkash(at_bkash, "success"))
    assert answer.status_code == 303
    paid = reloaded(payment)
    assert (paid.status, paid.fee, paid.amount_paid) == ("completed", 10, 510)
    assert db.session.execute(db.select(Transaction.fee)).scalar_one() == Decimal("10.00")
    (event,) = db.session.execute(
        db.select(Event.payload).where(Event.type == "payment.completed")
    ).scalars()
    data = json.loads(event)["data"]
    assert (data["fee"], data["amount_paid"]) == ("10.00", "510.00")
    read = client.get(f"/api/v1/payments/{payment.public_id}", headers=auth).get_json()["data"]
    assert (read["fee"], read["amount_paid"]) == ("10.00", "510.00")

    # Then the Nagad trip is paid too: after its payment completed, so it pays nothing.
    back = come_back(client, nagad.callback_for(reference, "Success"))
    assert back.status_code == 303
    db.session.refresh(nagad_trip)
    assert nagad_trip.state == "unapplied"
    assert nagad_trip.paid_amount == Decimal("520.00")
    assert "completed" in nagad_trip.last_error
    assert len(notifications(brand, UNAPPLIED)) == 1
    listed = text_of(merchant.get("/panel/payments/unapplied"))
    assert nagad_trip.provider_trx_id in listed and "520.00" in listed

    # Nagad says no: the money stays listed, with Nagad's reason shown.
    nagad.refuse_refunds = "Cancel window is over"
    refused = post_form(merchant, f"/panel/payments/unapplied/{nagad_trip.id}/refund")
    assert "Cancel window is over" in text_of(merchant.get(refused.headers["Location"]))
    db.session.refresh(nagad_trip)
    assert nagad_trip.state == "unapplied"
    nagad.refuse_refunds = None

    # The merchant returns it through Nagad.
    returned = post_form(merchant, f"/panel/payments/unapplied/{nagad_trip.id}/refund")
    assert returned.status_code == 302
    assert nagad.checkouts[reference].cancelled == Decimal("520.00")
    db.session.refresh(nagad_trip)
    assert nagad_trip.state == "returned"
    assert "payment.wallet_return" in [action for action, *_ in audit_actions(brand)]
    assert "No wallet money is waiting" in text_of(merchant.get("/panel/payments/unapplied"))

    # A refund of the payment itself goes through the trip that paid it: bKash's.
    trx_id = db.session.execute(db.select(Transaction.trx_id)).scalar_one()
    create_refund(brand, trx_id, Decimal("100.00"), "one item back")
    assert standin.payments[bkash_trip.provider_payment_id]["refunded"] == Decimal("100.00")
    assert nagad.checkouts[reference].cancelled == Decimal("520.00")


def test_bkash_paid_another_amount_is_listed_told_once_and_returned(
    client, brand, payment, bkash_api, standin, merchant, told
):
    standin.tamper_amount = "5.00"  # what bKash says it took
    at_bkash = wallet_page(press_pay_with_bkash(client, payment, bkash_api))
    callback = choose_at_bkash(at_bkash, "success")
    answer = come_back(client, callback)
    assert "The wallet took your money, but it could not pay this payment" in text_of(answer)
    assert "The shop has been told and will return it to you." in text_of(answer)
    (trip,) = wallet_rows(payment)
    assert (trip.state, trip.paid_amount) == ("unapplied", Decimal("5.00"))
    come_back(client, callback)  # a replayed callback
    settle_started_wallet_payments(now=utcnow() + timedelta(minutes=2))
    (note,) = notifications(brand, UNAPPLIED)
    assert trip.provider_trx_id in note.text and "5.00" in note.text
    assert note.subject.startswith("bKash: ") and "your bKash merchant account" in note.text
    assert reloaded(payment).status == "created"

    page = text_of(merchant.get(f"/panel/payments/{payment.public_id}"))
    assert "not applied to this payment" in page and "The wallet was paid 5.00" in page
    post_form(merchant, f"/panel/payments/unapplied/{trip.id}/refund")
    assert standin.payments[trip.provider_payment_id]["refunded"] == Decimal("5.00")
    db.session.refresh(trip)
    assert trip.state == "returned"
    # A second press (another tab) returns nothing twice.
    again = post_form(merchant, f"/panel/payments/unapplied/{trip.id}/refund")
    assert again.status_code == 404
    assert standin.calls(REFUND) == 1


def test_paid_after_expiry_is_shown_escaped_and_can_be_marked_handled(
    client, brand, payment, bkash_api, standin, merchant, told
):
    press_pay_with_bkash(client, payment, bkash_api)  # the customer is slow
    assert expire_payment(reloaded(payment))
    db.session.commit()
    (trip,) = wallet_rows(payment)
    standin.payments[trip.provider_payment_id].update(transactionStatus="Completed", trxID=HOSTILE)
    later = utcnow() + timedelta(minutes=2)
    assert [o.status for o in settle_started_wallet_payments(now=later)] == ["unapplied"]
    assert settle_started_wallet_payments(now=later) == []
    db.session.refresh(trip)
    assert trip.state == "unapplied" and "expired" in trip.last_error
    assert len(notifications(brand, UNAPPLIED)) == 1

    for url in ("/panel/payments/unapplied", f"/panel/payments/{payment.public_id}"):
        body = merchant.get(url).get_data(as_text=True)
        assert HOSTILE not in body and "&lt;img src=x" in body
    post_form(merchant, f"/panel/payments/unapplied/{trip.id}/handled")
    db.session.refresh(trip)
    assert trip.state == "handled"
    assert "not applied to this payment" not in text_of(
        merchant.get(f"/panel/payments/{payment.public_id}")
    )
    assert standin.calls(REFUND) == 0
