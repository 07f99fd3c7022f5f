"""Test payments never reach the merchant or a customer (issue 31): no "payment completed" or
"needs review" notification on any channel, no receipt SMS; live ones still do."""

from gateway.extensions import db
from gateway.notifications.catalogue import PAYMENT_COMPLETED, PAYMENT_REVIEW
from gateway.sms.models.outbound_sms import OutboundSms
from gateway.sms.settling import give_review_reason
from tests.factories import PaymentFactory, completed_payment
from tests.notifications.conftest import configure, notifications, send_due, sent_texts

CHANNELS = {PAYMENT_COMPLETED: ["telegram"], PAYMENT_REVIEW: ["telegram"]}
PHONE = "+8801712345678"


def test_a_test_payment_completing_or_held_tells_the_merchant_nothing(brand, telegram):
    configure(brand, channels=CHANNELS)
    completed_payment(brand=brand, livemode=False, reference="TEST-1")
    held = PaymentFactory(brand=brand, livemode=False, status="processing", reference="TEST-2")
    give_review_reason([held.id], "The SMS says 450.00; the payment asks 500.00")
    db.session.commit()
    assert notifications(brand) == []

    completed_payment(brand=brand, reference="LIVE-1")
    live_held = PaymentFactory(brand=brand, status="processing", reference="LIVE-2")
    give_review_reason([live_held.id], "The SMS says 450.00; the payment asks 500.00")
    db.session.commit()
    assert [n.event for n in notifications(brand)] == [PAYMENT_COMPLETED, PAYMENT_REVIEW]
    send_due()
    texts = [body["text"] for body in sent_texts(telegram)]
    assert len(texts) == 2 and all("LIVE-" in text and "TEST-" not in text for text in texts)


def test_a_test_payment_sends_no_receipt_sms_and_a_live_one_s_is_live(brand):
    brand.receipt_sms_enabled = True
    db.session.commit()
    completed_payment(brand=brand, livemode=False, customer_phone=PHONE)
    assert db.session.execute(db.select(OutboundSms)).first() is None
    live = completed_payment(brand=brand, customer_phone=PHONE)
    [receipt] = db.session.execute(db.select(OutboundSms)).scalars().all()
    assert (receipt.payment_id, receipt.livemode) == (live.id, True)


def test_failing_test_webhooks_tell_the_merchant_nothing(brand, telegram):
    from gateway.notifications.catalogue import WEBHOOKS_FAILING
    from gateway.notifications.events import notify_webhook_attempt
    from gateway.webhooks.models.webhook import WebhookDelivery

    configure(brand)
    brand.webhook_url = "https://shop.example/hooks"
    for livemode in (False, True):
        completed_payment(brand=brand, livemode=livemode)  # its payment.completed delivery
    db.session.commit()
    test, live = db.session.execute(
        db.select(WebhookDelivery).order_by(WebhookDelivery.id)
    ).scalars()
    assert (test.livemode, live.livemode) == (False, True)

    notify_webhook_attempt(test.id, "failed", 8)
    db.session.commit()
    assert notifications(brand, WEBHOOKS_FAILING) == []
    notify_webhook_attempt(live.id, "failed", 8)
    db.session.commit()
    assert len(notifications(brand, WEBHOOKS_FAILING)) == 1
