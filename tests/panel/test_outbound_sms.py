"""The outbound SMS page: the queue with attempts and errors, queueing a message, retrying a failed
one.
"""

import pytest

from gateway.extensions import db
from gateway.sms.models.outbound_sms import OutboundSms
from gateway.sms.outbound import queue_sms
from tests.panel.conftest import audit_actions, csrf_token, post_form, reloaded


def message(brand, status="pending", to="+8801712345678", body="Your order shipped", **values):
    """A message of the brand's queue in a given state."""
    row = queue_sms(brand, to, body)
    for name, value in {"status": status, **values}.items():
        setattr(row, name, value)
    db.session.commit()
    return row


def queued_bodies():
    return db.session.execute(db.select(OutboundSms.body).order_by(OutboundSms.id)).scalars().all()


def test_staff_see_the_queue_with_attempts_and_the_last_error(as_staff, brand, other_brand):
    message(brand, "failed", attempts=5, last_error="No SIM in slot 1")
    message(brand, "sent", body="Receipt ORDER-3")
    message(other_brand, body="Their message")
    html = as_staff.get("/panel/outbound-sms").get_data(as_text=True)
    assert "No SIM in slot 1" in html and "5 attempts" in html and "Receipt ORDER-3" in html
    assert "Their message" not in html
    assert html.count(">Retry</button>") == 1


def test_the_queue_filters_by_status(as_staff, brand):
    message(brand, "failed", body="Failed one")
    message(brand, "sent", body="Sent one")
    html = as_staff.get("/panel/outbound-sms?status=failed").get_data(as_text=True)
    assert "Failed one" in html and "Sent one" not in html


def test_queueing_a_message_stores_it_in_e164_and_is_audited(as_staff, brand, staff):
    response = post_form(
        as_staff, "/panel/outbound-sms", {"to": "01712345678", "body": "Your order shipped"}
    )
    assert response.status_code == 302
    row = db.session.execute(db.select(OutboundSms)).scalar_one()
    assert (row.to_number, row.body, row.shown_status) == (
        "+8801712345678",
        "Your order shipped",
        "queued",
    )
    assert audit_actions(brand)[-1] == ("outbound_sms.queue", staff.email, str(row.id))


@pytest.mark.parametrize(
    "data, field",
    [
        ({"to": "not a phone", "body": "Hi"}, "to"),
        ({"to": "01712345678", "body": ""}, "body"),
        ({"to": "01712345678", "body": "x" * 1001}, "body"),
    ],
)
def test_a_bad_message_is_refused_on_its_field(as_staff, data, field):
    response = post_form(as_staff, "/panel/outbound-sms", data)
    assert response.status_code == 422
    assert f'id="{field}-error"' in response.get_data(as_text=True)
    assert queued_bodies() == []


def test_retrying_a_failed_message_queues_it_again_and_is_audited(as_staff, brand, staff):
    failed = message(brand, "failed", attempts=5, last_error="No SIM")
    response = post_form(as_staff, f"/panel/outbound-sms/{failed.id}/retry", follow_redirects=True)
    assert "queued again" in response.get_data(as_text=True)
    assert reloaded(failed).shown_status == "queued"
    assert audit_actions(brand)[-1] == ("outbound_sms.retry", staff.email, str(failed.id))


def test_only_a_failed_message_can_be_retried(as_staff, brand):
    sent = message(brand, "sent")
    response = post_form(as_staff, f"/panel/outbound-sms/{sent.id}/retry", follow_redirects=True)
    assert "Only a failed message can be retried; this one is sent." in response.get_data(
        as_text=True
    )
    assert reloaded(sent).status == "sent"


@pytest.mark.parametrize("url", ["/panel/outbound-sms", "/panel/outbound-sms/{id}/retry"])
def test_outbound_forms_without_the_csrf_token_are_refused(as_staff, brand, url):
    failed = message(brand, "failed")
    response = as_staff.post(url.format(id=failed.id), data={"to": "01712345678", "body": "Sneaky"})
    assert response.status_code == 400
    assert reloaded(failed).status == "failed" and queued_bodies() == ["Your order shipped"]


def test_another_brands_message_cannot_be_retried(as_staff, other_brand):
    theirs = message(other_brand, "failed")
    assert post_form(as_staff, f"/panel/outbound-sms/{theirs.id}/retry").status_code == 404
    assert reloaded(theirs).status == "failed"


def view_test_data(client):
    """Turn on the panel's "Viewing test data" switch."""
    answer = client.post(
        "/panel/test-mode",
        data={"view": "test", "back": "/panel/outbound-sms", "csrf_token": csrf_token(client)},
    )
    assert answer.status_code == 303


def test_the_queue_shows_the_mode_the_panel_shows(as_staff, brand):
    message(brand, "failed", body="Live receipt ORDER-1")
    message(brand, "failed", body="Test text TEST-1", livemode=False)

    live_page = as_staff.get("/panel/outbound-sms").get_data(as_text=True)
    assert "Live receipt ORDER-1" in live_page and "Test text TEST-1" not in live_page
    assert live_page.count(">Retry</button>") == 1
    view_test_data(as_staff)
    test_page = as_staff.get("/panel/outbound-sms").get_data(as_text=True)
    assert "Test text TEST-1" in test_page and "Live receipt ORDER-1" not in test_page
    assert test_page.count(">Retry</button>") == 1


def test_viewing_test_data_queues_test_texts_and_cannot_retry_a_live_one(as_staff, brand):
    live = message(brand, "failed", attempts=5, last_error="No SIM")
    view_test_data(as_staff)

    assert post_form(as_staff, f"/panel/outbound-sms/{live.id}/retry").status_code == 404
    assert (reloaded(live).status, reloaded(live).attempts) == ("failed", 5)
    post_form(as_staff, "/panel/outbound-sms", {"to": "01712345678", "body": "Test text"})
    queued = db.session.execute(
        db.select(OutboundSms).where(OutboundSms.body == "Test text")
    ).scalar_one()
    assert queued.livemode is False
