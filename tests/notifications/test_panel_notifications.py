"""The Notifications page: the event × channel grid, Telegram, thresholds, the test button, failures
shown.
"""

import pytest

from gateway.extensions import db
from gateway.notifications.catalogue import PAYMENT_COMPLETED, PAYMENT_REVIEW, PHONE_OFFLINE, TEST
from gateway.notifications.settings import settings_for, telegram_token
from tests.factories import completed_payment
from tests.notifications.conftest import (
    BOT_TOKEN,
    CHAT_ID,
    configure,
    deliveries,
    notifications,
    send_due,
    sent_texts,
)
from tests.panel.conftest import (  # noqa: F401 - fixtures
    admin,
    as_admin,
    as_staff,
    audit_actions,
    client,
    post_form,
    staff,
)

FORM = {
    "email_to": "",
    "telegram_token": BOT_TOKEN,
    "telegram_chat_id": CHAT_ID,
    "offline_minutes": "20",
    "waiting_minutes": "30",
    "unclaimed_minutes": "60",
    "notify_back_online": "y",
}


def test_the_grid_saves_the_channels_of_each_event_and_seals_the_token(as_admin, brand, admin):
    response = post_form(
        as_admin,
        "/panel/notifications",
        {
            **FORM,
            f"channel-{PAYMENT_COMPLETED}-telegram": "1",
            f"channel-{PHONE_OFFLINE}-telegram": "1",
            f"channel-{PHONE_OFFLINE}-app": "1",  # not offered: ignored
        },
    )
    assert response.status_code == 302
    db.session.expire_all()
    settings = settings_for(brand.id)
    assert settings.channels[PAYMENT_COMPLETED] == ["telegram"]
    assert settings.channels[PHONE_OFFLINE] == ["telegram"]
    assert settings.channels[PAYMENT_REVIEW] == []
    assert settings.offline_minutes == 20
    assert BOT_TOKEN not in settings.telegram_token_sealed
    assert telegram_token(settings) == BOT_TOKEN
    assert audit_actions(brand)[-1] == ("notification_settings.update", admin.email, str(brand.id))

    html = as_admin.get("/panel/notifications").get_data(as_text=True)
    assert BOT_TOKEN not in html and "A bot token is saved." in html
    assert f'name="channel-{PAYMENT_COMPLETED}-telegram" value="1" checked' in html
    assert f'name="channel-{PAYMENT_REVIEW}-telegram" value="1">' in html


@pytest.mark.parametrize(
    "field, value",
    [
        ("offline_minutes", "1"),
        ("unclaimed_minutes", "999999"),
        ("telegram_chat_id", "not a chat"),
        ("telegram_token", "123:short"),
        ("email_to", "owner@, nobody"),
        ("email_to", "owner@shop.example, ops@shop.local"),  # refused by the mail outbox
    ],
)
def test_bad_settings_are_refused_naming_the_field(as_admin, brand, field, value):
    response = post_form(as_admin, "/panel/notifications", {**FORM, field: value})
    assert response.status_code == 422
    html = response.get_data(as_text=True)
    assert f'id="{field}-error"' in html
    db.session.expire_all()
    assert db.session.execute(db.text("SELECT count(*) FROM notification_settings")).scalar() == 0


def test_a_recipient_the_mail_outbox_refuses_is_named_and_nothing_is_saved(as_admin, brand):
    form = {**FORM, "email_to": "owner@shop.example, ops@shop.local"}
    response = post_form(as_admin, "/panel/notifications", form)
    assert response.status_code == 422
    html = response.get_data(as_text=True)
    assert 'id="email_to-error"' in html and "ops@shop.local: Not a valid e-mail address" in html
    db.session.expire_all()
    assert settings_for(brand.id).email_to is None


def test_recipients_are_stored_in_the_mail_outboxs_normal_form(as_admin, brand):
    form = {**FORM, "email_to": "Owner@SHOP.Example; books@shop.example, Owner@shop.example"}
    assert post_form(as_admin, "/panel/notifications", form).status_code == 302
    db.session.expire_all()
    assert settings_for(brand.id).email_to == "Owner@shop.example, books@shop.example"


def test_the_test_button_queues_a_test_that_reaches_telegram(as_admin, brand, telegram):
    configure(brand)
    response = post_form(as_admin, "/panel/notifications/test", follow_redirects=True)
    assert "A test is on its way" in response.get_data(as_text=True)
    assert sent_texts(telegram) == []  # never sent on the request
    send_due()
    [body] = sent_texts(telegram)
    assert body["text"].startswith("Test notification from your payment gateway")
    assert [n.event for n in notifications(brand)] == [TEST]


def test_the_test_button_says_when_no_channel_is_set_up(as_admin, brand):
    response = post_form(as_admin, "/panel/notifications/test", follow_redirects=True)
    assert "No channel is set up yet" in response.get_data(as_text=True)


def test_a_failed_notification_is_shown_and_can_be_sent_again(
    app, as_admin, brand, closed_port_base, monkeypatch
):
    from dataclasses import replace

    from gateway.notifications import sending
    from gateway.outbox.schedule import RetrySchedule

    monkeypatch.setattr(sending, "OUTBOX", replace(sending.OUTBOX, schedule=RetrySchedule(())))
    configure(brand, channels={PAYMENT_COMPLETED: ["telegram"]})
    completed_payment(brand=brand, reference="ORDER-3")
    send_due()
    [delivery] = deliveries(brand)
    assert delivery.status == "failed"

    html = as_admin.get("/panel/notifications").get_data(as_text=True)
    assert "1 notification could not be sent" in html
    assert "Payment ORDER-3 completed" in html and "Telegram could not be reached" in html

    post_form(as_admin, f"/panel/notifications/deliveries/{delivery.id}/retry")
    db.session.expire_all()
    assert deliveries(brand)[0].status == "pending"


def test_staff_cannot_open_the_notification_settings(as_staff):
    assert as_staff.get("/panel/notifications").status_code == 403


def test_the_notifications_page_in_bangla(as_admin, brand):
    html = as_admin.get("/panel/notifications?lang=bn").get_data(as_text=True)
    assert "কী কোথায় পাঠানো হবে" in html and "টেলিগ্রাম" in html
    assert "একটি ফোন অফলাইন হয়েছে" in html and "নোটিফিকেশন সেটিংস সংরক্ষণ করুন" in html
    assert "What to send where" not in html and "A phone went offline" not in html


def test_every_notifications_action_needs_a_csrf_token_and_a_super_administrator(
    as_admin, client, brand, staff, telegram
):
    from tests.panel.conftest import panel_client, sign_in

    configure(brand)
    for url in ("/panel/notifications", "/panel/notifications/test"):
        assert as_admin.post(url, data={**FORM, "email_to": "x@shop.example"}).status_code == 400
    staff_client = panel_client(client.application)
    sign_in(staff_client, staff)
    token_page = staff_client.get("/panel/account/password").get_data(as_text=True)
    token = token_page.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
    for url in ("/panel/notifications", "/panel/notifications/test"):
        answer = staff_client.post(url, data={**FORM, "email_to": "x@shop", "csrf_token": token})
        assert answer.status_code == 403
    db.session.expire_all()
    assert settings_for(brand.id).email_to is None and notifications(brand) == []
    assert client.application.test_client().get("/panel/notifications").status_code == 302


def test_what_a_phone_names_itself_is_escaped_on_the_page_and_sent_as_plain_text(
    as_admin, brand, telegram
):
    from datetime import timedelta

    from freezegun import freeze_time

    from gateway.clock import utcnow
    from gateway.notifications.watch import sweep_notifications
    from tests.factories import paired_device

    configure(brand)
    device, _, _ = paired_device(brand, name='<img src=x onerror="alert(1)">')
    device.last_heartbeat_at = utcnow() - timedelta(hours=1)
    db.session.commit()
    with freeze_time(utcnow()):
        sweep_notifications()
    send_due()

    html = as_admin.get("/panel/notifications").get_data(as_text=True)
    assert '<img src=x onerror="alert(1)">' not in html
    assert "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;" in html
    [body] = sent_texts(telegram)
    assert "parse_mode" not in body  # plain text: Telegram renders no markup from it
    assert body["text"].startswith('Phone <img src=x onerror="alert(1)"> is offline')
