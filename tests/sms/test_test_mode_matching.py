"""Live and test never mix in matching: a simulated text (test mode) never pays, holds or touches a
live payment, and a phone's real text never a test payment (sms/pays.py same_mode, the candidates of
sms/claims.py)."""

from datetime import timedelta
from decimal import Decimal

import pytest
from freezegun import freeze_time

from gateway.clock import utcnow
from gateway.devices.models.notification import Notification
from gateway.domain_errors import NotFound
from gateway.extensions import db
from gateway.notifications.models.notification import MerchantNotification
from gateway.payments.amounts import fix_amounts
from gateway.payments.lifecycle import expire_due_payments
from gateway.payments.models.payment import Payment
from gateway.sms.hand_matching import match_sms_by_hand
from gateway.sms.inbox import list_inbound_sms_query, match_candidates
from gateway.sms.matching import heal_matching, submit_claim
from gateway.sms.models.inbound_sms import InboundSms
from gateway.sms.pays import WRONG_MODE, sms_pays_payment
from gateway.sms.simulator import forward_test_text
from gateway.webhooks.models.webhook import WebhookDelivery
from tests.factories import PaymentFactory, bkash_text, forward, reload
from tests.notifications.conftest import configure

TRX = "7K6J5H4G3F"


def simulated(brand, trx_id=TRX, amount="500.00"):
    """A test-mode text through the real ingestion pipeline; the stored row."""
    result = forward_test_text(brand, "bkash", bkash_text(amount, trx_id))
    db.session.expire_all()
    return db.session.execute(
        db.select(InboundSms).where(InboundSms.public_id == result["server_ref"])
    ).scalar_one()


def nothing_happened_to(payment, status="processing"):
    payment = reload(payment)
    assert (payment.status, payment.review_reason, payment.completed_at) == (status, None, None)
    assert db.session.execute(db.select(WebhookDelivery)).scalars().all() == []


def test_the_rule_says_a_test_text_never_pays_a_live_payment_nor_the_reverse():
    live_text, test_text = InboundSms(livemode=True), InboundSms(livemode=False)
    live, test = Payment(livemode=True), Payment(livemode=False)
    for sms, payment in ((test_text, live), (live_text, test)):
        for field, value in {
            "status": "unmatched",
            "provider": "bkash",
            "amount": Decimal("500.00"),
        }.items():
            setattr(sms, field, value)
        payment.status, payment.amount, payment.currency = "processing", Decimal("500.00"), "BDT"
        fix_amounts(payment)
        verdict = sms_pays_payment(sms, payment)
        assert (verdict.pays, verdict.reason) == (False, WRONG_MODE)
    test.amount = Decimal("500.00")
    assert sms_pays_payment(test_text, test).pays


def test_a_simulated_text_does_not_complete_a_live_claim_made_before_it(brand):
    live = PaymentFactory(brand=brand)
    submit_claim(live, "bkash", TRX)

    sms = simulated(brand)

    nothing_happened_to(live)
    assert (sms.livemode, sms.status, sms.payment_id) == (False, "unmatched", None)


def test_a_live_claim_made_after_a_simulated_text_does_not_take_it(brand):
    sms = simulated(brand)
    live = PaymentFactory(brand=brand)

    submit_claim(live, "bkash", TRX)

    nothing_happened_to(live)
    assert reload(sms).payment_id is None


def test_the_periodic_heal_never_pairs_a_simulated_text_with_a_live_claim(brand):
    live = PaymentFactory(brand=brand)
    submit_claim(live, "bkash", TRX)
    sms = simulated(brand)

    assert heal_matching() == 0

    nothing_happened_to(live)
    assert reload(sms).status == "unmatched"


def test_a_simulated_text_is_not_late_money_of_an_expired_live_claim(brand):
    live = PaymentFactory(brand=brand)
    submit_claim(live, "bkash", TRX)
    with freeze_time(utcnow() + timedelta(hours=1)):
        expire_due_payments()
        db.session.execute(db.delete(WebhookDelivery))
        db.session.commit()
        sms = simulated(brand)

    nothing_happened_to(live, status="expired")
    assert (reload(sms).status, reload(sms).payment_id) == ("unmatched", None)


def test_a_simulated_text_of_the_wrong_amount_does_not_hold_a_live_claim_for_review(brand):
    live = PaymentFactory(brand=brand)
    submit_claim(live, "bkash", TRX)

    simulated(brand, amount="499.00")

    nothing_happened_to(live)


def test_a_real_text_does_not_complete_a_test_claim(brand, phone):
    test = PaymentFactory(brand=brand, livemode=False)
    submit_claim(test, "bkash", TRX)

    sms = forward(phone, bkash_text("500.00", TRX))

    nothing_happened_to(test)
    assert (sms.livemode, sms.status, sms.payment_id) == (True, "unmatched", None)


def test_a_test_claim_made_after_a_real_text_does_not_take_it(brand, phone):
    sms = forward(phone, bkash_text("500.00", TRX))
    test = PaymentFactory(brand=brand, livemode=False)

    submit_claim(test, "bkash", TRX)

    nothing_happened_to(test)
    assert reload(sms).payment_id is None


def test_a_simulated_text_pays_its_own_test_claim(brand):
    test = PaymentFactory(brand=brand, livemode=False)
    submit_claim(test, "bkash", TRX)

    sms = simulated(brand)

    assert reload(test).status == "completed"
    assert (sms.status, sms.payment_id) == ("matched", test.id)


@pytest.mark.parametrize("may_override", [False, True])
def test_nobody_matches_a_simulated_text_to_a_live_payment_by_hand(brand, may_override):
    sms = simulated(brand)
    live = PaymentFactory(brand=brand)

    assert match_candidates(sms) == []
    with pytest.raises(NotFound):
        match_sms_by_hand(sms, live, reason="trust me", may_override=may_override)

    nothing_happened_to(live, status="created")
    assert reload(sms).payment_id is None


def test_nobody_matches_a_real_text_to_a_test_payment_by_hand(brand, phone):
    sms = forward(phone, bkash_text("500.00", TRX))
    test = PaymentFactory(brand=brand, livemode=False)

    assert match_candidates(sms) == []
    with pytest.raises(NotFound):
        match_sms_by_hand(sms, test, reason="trust me", may_override=True)

    nothing_happened_to(test, status="created")


def test_simulated_texts_stay_out_of_the_live_inbox_and_in_the_test_one(brand, phone):
    real = forward(phone, bkash_text("300.00", "1A2B3C4D5E"))
    fake = simulated(brand)

    live_rows = db.session.execute(list_inbound_sms_query(brand, {})).scalars().all()
    test_rows = (
        db.session.execute(list_inbound_sms_query(brand, {}, livemode=False)).scalars().all()
    )

    assert [sms.id for sms in live_rows] == [real.id]
    assert [sms.id for sms in test_rows] == [fake.id]


def merchant_events():
    return list(
        db.session.execute(
            db.select(MerchantNotification.event).order_by(MerchantNotification.id)
        ).scalars()
    )


def phone_notices():
    """What the brand's phones were told, but for their own pairing."""
    return list(
        db.session.execute(
            db.select(Notification.kind).where(Notification.kind != "device.paired")
        ).scalars()
    )


def told_by_telegram(brand):
    """The brand wants payments completed and held for review by Telegram (set up)."""
    configure(brand, channels={"payment.completed": ["telegram"], "payment.review": ["telegram"]})


def test_a_test_payment_tells_the_merchant_nothing(brand, phone):
    told_by_telegram(brand)
    completed = PaymentFactory(brand=brand, livemode=False)
    submit_claim(completed, "bkash", TRX)
    simulated(brand)
    held = PaymentFactory(brand=brand, livemode=False)
    submit_claim(held, "bkash", "9Z8Y7X6W5V")
    simulated(brand, trx_id="9Z8Y7X6W5V", amount="10.00")

    assert reload(completed).status == "completed"
    assert reload(held).review_reason
    assert merchant_events() == []
    assert phone_notices() == []


def test_a_live_payment_still_tells_the_merchant(brand, phone):
    told_by_telegram(brand)
    live = PaymentFactory(brand=brand)
    submit_claim(live, "bkash", TRX)

    forward(phone, bkash_text("500.00", TRX))

    assert reload(live).status == "completed"
    assert merchant_events() == ["payment.completed"]
    held = PaymentFactory(brand=brand)
    submit_claim(held, "bkash", "9Z8Y7X6W5V")
    forward(phone, bkash_text("10.00", "9Z8Y7X6W5V", balance="1510.00"))
    assert reload(held).review_reason
    assert phone_notices() == ["payment.review"]
    assert merchant_events() == ["payment.completed", "payment.review"]
