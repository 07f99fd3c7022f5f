"""Per-event channel choice, the companion app's feed as a channel, the review and webhook hooks."""

from gateway.devices.tokens import access_token
from gateway.extensions import db
from gateway.notifications.catalogue import (
    PAYMENT_COMPLETED,
    PAYMENT_REVIEW,
    SMS_UNCLAIMED,
    WEBHOOKS_FAILING,
)
from gateway.notifications.events import notify_webhook_attempt
from gateway.notifications.settings import settings_for
from gateway.sms.settling import give_review_reason
from tests.factories import PaymentFactory, completed_payment, paired_device
from tests.notifications.conftest import configure, deliveries, notifications, send_due, sent_texts


def test_each_event_goes_only_to_the_channels_chosen_for_it(brand, telegram, other_brand):
    configure(brand, channels={PAYMENT_COMPLETED: ["app"], PAYMENT_REVIEW: ["telegram"]})
    configure(other_brand, channels={PAYMENT_COMPLETED: []})
    paired_device(brand)  # the app channel needs a phone to tell

    completed_payment(brand=brand)
    completed_payment(brand=other_brand)
    held = PaymentFactory(brand=brand, status="processing", reference="ORDER-R")
    give_review_reason([held.id], "The SMS says 450.00; the payment asks 500.00")
    db.session.commit()

    assert [(d.notification.event, d.channel) for d in deliveries(brand)] == [
        (PAYMENT_COMPLETED, "app"),
        (PAYMENT_REVIEW, "telegram"),
    ]
    assert deliveries(other_brand) == []
    send_due()
    [body] = sent_texts(telegram)
    assert body["text"].startswith("Payment ORDER-R needs review (500.00 BDT)")
    assert "The SMS says 450.00" in body["text"]


def test_unsaved_settings_use_the_defaults_and_skip_channels_not_set_up(brand):
    settings = settings_for(brand.id)
    assert settings.offline_minutes == 15 and settings.channels == {}
    completed_payment(brand=brand)  # payment.completed is off by default
    held = PaymentFactory(brand=brand, status="processing")
    # e-mail and Telegram by default: neither is set up
    give_review_reason([held.id], "Amount differs")
    db.session.commit()
    assert notifications(brand) == []


def test_the_app_channel_is_the_phones_own_notifications_feed(client, brand):
    configure(brand, channels={PAYMENT_COMPLETED: ["app"], SMS_UNCLAIMED: ["app"]})
    device, _, _ = paired_device(brand)
    completed_payment(brand=brand, reference="ORDER-5")
    send_due()

    feed = client.get(
        "/api/mobile/v1/notifications",
        headers={"Authorization": f"Bearer {access_token(device)}"},
    ).get_json()["data"]
    assert [(n["type"], n["title"]) for n in feed if n["type"] != "device.paired"] == [
        (PAYMENT_COMPLETED, "Payment ORDER-5 completed: 500.00 BDT")
    ]
    assert deliveries(brand)[0].status == "sent"


def test_failing_webhooks_tell_the_merchant_once_an_hour(brand, telegram):
    from gateway.webhooks.events import emit_event

    configure(brand)
    brand.webhook_url = "https://shop.example/hooks"
    payment = completed_payment(brand=brand)
    db.session.commit()
    emit_event("payment.completed", brand, payment=payment, transaction=payment.transaction)
    db.session.commit()
    from gateway.webhooks.models.webhook import WebhookDelivery

    delivery = db.session.execute(db.select(WebhookDelivery)).scalars().first()
    for status, attempts in (("pending", 1), ("pending", 3), ("pending", 4), ("failed", 8)):
        notify_webhook_attempt(delivery.id, status, attempts)
    db.session.commit()
    [told] = notifications(brand, WEBHOOKS_FAILING)
    assert told.subject == "Webhook deliveries to shop.example are failing"
    assert "failed 3 attempts in a row" in told.text


def test_an_email_reaches_the_local_smtp_server(brand, smtp_server):
    from gateway.mail.models.mail import OutboundMail
    from gateway.mail.sending import deliver_mail

    smtp_server.configure(brand)
    configure(
        brand,
        channels={PAYMENT_COMPLETED: ["email"]},
        email_to="owner@shop.example, books@shop.example",
    )
    payment = completed_payment(brand=brand, reference="ORDER-12")
    send_due()
    assert [d.status for d in deliveries(brand)] == ["sent"]  # handed to the e-mail outbox
    for mail_id in db.session.execute(db.select(OutboundMail.id)).scalars().all():
        assert deliver_mail(mail_id) == "sent"

    messages = smtp_server.wait_for(2)
    assert sorted(m["To"] for m in messages) == ["books@shop.example", "owner@shop.example"]
    assert {m["Subject"] for m in messages} == {"Payment ORDER-12 completed: 500.00 BDT"}
    body = messages[0].get_body(("plain",)).get_content()
    assert f"/panel/payments/{payment.public_id}" in body


def test_email_and_app_are_not_channels_until_smtp_is_set_up_and_a_phone_paired(brand):
    configure(brand, channels={PAYMENT_COMPLETED: ["email", "app"]}, email_to="owner@shop.example")
    completed_payment(brand=brand)
    assert deliveries(brand) == []


def test_a_forwarder_alone_is_no_app_channel_it_reads_no_notifications(brand):
    from gateway.devices.forwarders import create_forwarder

    create_forwarder(brand, "android-sms-gateway", "Gateway phone")
    configure(brand, channels={PAYMENT_COMPLETED: ["app"]})
    completed_payment(brand=brand)
    assert deliveries(brand) == []


def test_a_text_with_the_wrong_amount_tells_the_merchant_once_through_matching(brand, telegram):
    from decimal import Decimal

    from gateway.sms.matching import submit_claim
    from tests.factories import bkash_text, forward_from

    configure(brand)  # the defaults: review by e-mail and Telegram
    payment = PaymentFactory(brand=brand, amount=Decimal("500.00"), reference="ORDER-44")
    submit_claim(payment, "bkash", "8N7A6B5C4D")
    forward_from(brand, bkash_text("400.00", "8N7A6B5C4D"))
    forward_from(brand, bkash_text("400.00", "8N7A6B5C4D"))  # the same text again: no second one
    send_due()

    [body] = sent_texts(telegram)
    assert body["text"].startswith("Payment ORDER-44 needs review (500.00 BDT)")
    assert "SMS amount 400.00 differs from 500.00" in body["text"]


def test_a_completion_nobody_is_told_about_costs_one_select(brand, sql_statements):
    payment = PaymentFactory(brand=brand)
    from gateway.payments.lifecycle import complete_payment

    del sql_statements[:]
    complete_payment(payment, provider="bkash", provider_trx_id="8N7A6B5C4D")

    ours = [s for s in sql_statements if "notification" in s.lower() or "SAVEPOINT" in s]
    assert len(ours) == 1 and ours[0].lstrip().upper().startswith("SELECT")
    assert "notification_settings" in ours[0]
