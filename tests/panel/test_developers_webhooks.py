"""Developers, webhooks: default URL, the secret shown and rotated, test events, delivery log,
redelivery.
"""

import re

import pytest

from gateway.accounts.models.audit import AuditLog
from gateway.extensions import db
from gateway.webhooks.delivery import deliver_webhook
from gateway.webhooks.events import emit_event
from gateway.webhooks.models.webhook import WebhookDelivery
from tests.factories import completed_payment
from tests.panel.conftest import audit_actions, post_form, reloaded
from tests.webhook_support import receiver  # noqa: F401 - fixture

SECRET = re.compile(r'<code id="webhook-secret">([^<]+)</code>')


def deliveries():
    return (
        db.session.execute(db.select(WebhookDelivery).order_by(WebhookDelivery.id)).scalars().all()
    )


@pytest.fixture
def failed(brand, receiver):  # noqa: F811 - the fixture above
    """A payment.completed delivery to the receiver that ran out of attempts."""
    payment = completed_payment(brand=brand, callback_url=receiver.url, reference="ORDER-77")
    delivery = db.session.execute(db.select(WebhookDelivery)).scalar_one()
    delivery.status, delivery.attempts, delivery.next_attempt_at, delivery.response_status = (
        "failed",
        8,
        None,
        500,
    )
    db.session.commit()
    return payment, delivery


def test_the_settings_hide_the_secret_until_asked_and_looking_is_audited(as_admin, brand, admin):
    page = as_admin.get("/panel/developers/webhooks").get_data(as_text=True)
    assert brand.webhook_secret not in page and "Show secret" in page

    shown = post_form(as_admin, "/panel/developers/webhooks/secret")

    assert SECRET.search(shown.get_data(as_text=True)).group(1) == brand.webhook_secret
    assert audit_actions(brand)[-1] == ("webhook_secret.view", admin.email, str(brand.id))
    assert brand.webhook_secret not in as_admin.get("/panel/developers/webhooks").get_data(
        as_text=True
    )


def test_rotating_shows_the_new_secret_that_signs_from_now_on(as_admin, brand, admin):
    old = brand.webhook_secret
    response = post_form(as_admin, "/panel/developers/webhooks/secret/rotate")
    new = SECRET.search(response.get_data(as_text=True)).group(1)
    assert new != old and reloaded(brand).webhook_secret == new
    assert "New secret." in response.get_data(as_text=True)
    entry = db.session.execute(
        db.select(AuditLog).where(AuditLog.action == "webhook_secret.rotate")
    ).scalar_one()
    assert (
        entry.user_email == admin.email
        and new not in str(entry.details)
        and old not in str(entry.details)
    )


def test_saving_the_default_url_is_audited_with_old_and_new(as_admin, brand, admin):
    response = post_form(
        as_admin, "/panel/developers/webhooks/url", {"webhook_url": "https://shop.example/hooks"}
    )
    assert response.status_code == 302
    assert reloaded(brand).webhook_url == "https://shop.example/hooks"
    entry = db.session.execute(
        db.select(AuditLog).where(AuditLog.action == "webhook.url_update")
    ).scalar_one()
    assert entry.details == {"webhook_url": [None, "https://shop.example/hooks"]}


@pytest.mark.parametrize("url", ["shop.example/hooks", "ftp://shop.example/hooks", "https://"])
def test_a_url_that_is_not_absolute_http_is_refused_on_its_field(as_admin, brand, url):
    response = post_form(as_admin, "/panel/developers/webhooks/url", {"webhook_url": url})
    assert response.status_code == 422
    assert (
        'id="webhook_url-error">Enter an absolute http:// or https:// address.'
        in response.get_data(as_text=True)
    )
    assert reloaded(brand).webhook_url is None


def test_an_empty_url_removes_the_default(as_admin, brand):
    brand.webhook_url = "https://shop.example/hooks"
    db.session.commit()
    response = post_form(
        as_admin, "/panel/developers/webhooks/url", {"webhook_url": " "}, follow_redirects=True
    )
    assert "Webhook URL removed." in response.get_data(as_text=True)
    assert reloaded(brand).webhook_url is None


def test_a_private_url_is_refused_on_its_field_where_not_allowed(app, as_admin, brand, monkeypatch):
    monkeypatch.setitem(app.config, "ALLOW_PRIVATE_CALLBACKS", False)
    response = post_form(
        as_admin, "/panel/developers/webhooks/url", {"webhook_url": "http://192.168.1.5/hooks"}
    )
    assert response.status_code == 422
    assert 'id="webhook_url-error">The callback URL resolves to a private' in response.get_data(
        as_text=True
    )
    assert reloaded(brand).webhook_url is None


def test_a_url_private_by_its_name_is_refused_on_its_field(app, as_admin, brand, monkeypatch):
    monkeypatch.setitem(app.config, "ALLOW_PRIVATE_CALLBACKS", False)
    for url in (
        "http://localhost./hooks",
        "http://metadata.google.internal/",
        "http://127.0.0.1.nip.io/",
    ):
        response = post_form(as_admin, "/panel/developers/webhooks/url", {"webhook_url": url})
        assert response.status_code == 422
        assert 'id="webhook_url-error">The callback URL points to a private' in response.get_data(
            as_text=True
        )
    assert reloaded(brand).webhook_url is None


def test_the_test_event_reaches_the_default_url_signed(as_admin, brand, receiver):  # noqa: F811
    brand.webhook_url = receiver.url
    db.session.commit()
    response = post_form(as_admin, "/panel/developers/webhooks/test")
    [delivery] = deliveries()
    assert response.headers["Location"] == f"/panel/developers/webhook-deliveries/{delivery.id}"
    assert deliver_webhook(delivery.id) == "sent"
    assert receiver.events()[0]["event"] == "webhook.test"
    assert audit_actions(brand)[-1][0] == "webhook.test"


def test_the_test_event_without_a_url_asks_for_one(as_admin):
    response = post_form(as_admin, "/panel/developers/webhooks/test", follow_redirects=True)
    assert "Set a webhook URL first." in response.get_data(as_text=True)
    assert deliveries() == []


def test_staff_read_the_delivery_log_and_its_attempts(as_staff, failed, brand, other_brand):
    emit_event("webhook.test", other_brand, url="https://other.example/theirs")
    db.session.commit()
    listing = as_staff.get("/panel/developers/webhook-deliveries").get_data(as_text=True)
    assert "payment.completed" in listing and "other.example" not in listing
    detail = as_staff.get(f"/panel/developers/webhook-deliveries/{failed[1].id}").get_data(
        as_text=True
    )
    assert "ORDER-77" in detail and "&#34;payment_id&#34;: &#34;" + failed[0].public_id in detail


def test_redelivering_sends_the_event_again_and_logs_the_attempt(
    as_staff, failed, brand, staff, receiver
):  # noqa: F811
    payment, delivery = failed
    response = post_form(as_staff, f"/panel/developers/webhook-deliveries/{delivery.id}/redeliver")
    assert response.status_code == 302
    assert reloaded(delivery).log_status == "retrying"
    assert deliver_webhook(delivery.id) == "sent"  # what the woken worker does

    assert receiver.events()[0]["data"]["payment_id"] == payment.public_id
    html = as_staff.get(f"/panel/developers/webhook-deliveries/{delivery.id}").get_data(
        as_text=True
    )
    assert "badge-success" in html and ">OK</code>" in html
    assert audit_actions(brand)[-1] == ("webhook_delivery.redeliver", staff.email, str(delivery.id))


@pytest.mark.parametrize(
    "url",
    [
        "/panel/developers/webhooks",
        "/panel/developers/webhooks/url",
        "/panel/developers/webhooks/secret",
        "/panel/developers/webhooks/secret/rotate",
        "/panel/developers/webhooks/test",
    ],
)
def test_staff_are_forbidden_the_webhook_settings(as_staff, brand, url):
    secret = brand.webhook_secret
    response = (
        as_staff.get(url)
        if url.endswith("webhooks")
        else post_form(as_staff, url, {"webhook_url": "https://x.example"})
    )
    assert response.status_code == 403
    assert secret not in response.get_data(as_text=True)
    assert (reloaded(brand).webhook_secret, reloaded(brand).webhook_url, deliveries()) == (
        secret,
        None,
        [],
    )


@pytest.mark.parametrize(
    "url",
    [
        "/panel/developers/webhooks/url",
        "/panel/developers/webhooks/secret",
        "/panel/developers/webhooks/secret/rotate",
        "/panel/developers/webhooks/test",
        "/panel/developers/webhook-deliveries/{id}/redeliver",
    ],
)
def test_webhook_forms_without_the_csrf_token_are_refused(as_admin, brand, failed, url):
    secret = brand.webhook_secret
    response = as_admin.post(url.format(id=failed[1].id), data={"webhook_url": "https://x.example"})
    assert response.status_code == 400
    assert secret not in response.get_data(as_text=True)
    assert (reloaded(brand).webhook_secret, reloaded(brand).webhook_url) == (secret, None)
    assert [(d.status, d.attempts) for d in deliveries()] == [("failed", 8)]


def test_another_brands_delivery_reads_as_not_found(as_admin, other_brand):
    delivery = emit_event("webhook.test", other_brand, url="https://other.example/theirs")
    db.session.commit()
    assert as_admin.get(f"/panel/developers/webhook-deliveries/{delivery.id}").status_code == 404
    assert (
        post_form(
            as_admin, f"/panel/developers/webhook-deliveries/{delivery.id}/redeliver"
        ).status_code
        == 404
    )
    assert reloaded(delivery).status == "pending"
