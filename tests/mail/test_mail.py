"""E-mail: the outbox row, the job that sends it over SMTP to a real local server, retries,
settings.
"""

from datetime import timedelta

import pytest
from freezegun import freeze_time

from gateway.clock import utcnow
from gateway.domain_errors import InvalidState, ValidationFailed
from gateway.extensions import db
from gateway.mail.models.mail import MailSettings, OutboundMail
from gateway.mail.outbox import RETRY, retry_mail, send_mail
from gateway.mail.sending import deliver_mail
from gateway.mail.settings import get_mail_settings, open_password, save_mail_settings
from gateway.outbox.sweep import sweep_outbox
from tests.local_servers import free_port, smtp_serving
from tests.panel.conftest import audit_actions, post_form

PDF = b"%PDF-1.4 pretend invoice\n"


def test_an_email_with_an_attachment_reaches_the_smtp_server(brand, smtp_server):
    smtp_server.configure(brand)
    mail = send_mail(
        brand.id,
        "Customer@Example.COM",
        "Invoice INV-0001",
        "Please find your invoice attached.",
        html="<p>Please find your <b>invoice</b> attached.</p>",
        attachments=[("INV-0001.pdf", "application/pdf", PDF)],
    )
    db.session.commit()
    assert deliver_mail(mail.id) == "sent"

    (message,) = smtp_server.wait_for(1)
    assert message["To"] == "Customer@example.com"
    assert message["Subject"] == "Invoice INV-0001"
    (sender,) = message["From"].addresses
    assert (sender.display_name, sender.addr_spec) == ("Test Shop", "billing@shop.example")
    assert message.get_body(("plain",)).get_content().strip() == (
        "Please find your invoice attached."
    )
    assert "<b>invoice</b>" in message.get_body(("html",)).get_content()
    (attachment,) = list(message.iter_attachments())
    assert attachment.get_filename() == "INV-0001.pdf"
    assert attachment.get_content_type() == "application/pdf"
    assert attachment.get_content() == PDF
    db.session.refresh(mail)
    assert (mail.status, mail.attempts, mail.last_error) == ("sent", 1, None)
    assert mail.sent_at is not None


def test_nothing_is_sent_when_the_work_that_asked_for_it_rolls_back(brand, smtp_server):
    smtp_server.configure(brand)
    send_mail(brand.id, "a@example.com", "Hello", "Body")
    db.session.rollback()
    assert db.session.execute(db.select(OutboundMail)).scalars().all() == []
    assert sweep_outbox() == 0
    assert smtp_server.messages == []


def test_a_second_run_of_the_same_job_sends_nothing_twice(brand, smtp_server):
    smtp_server.configure(brand)
    mail = send_mail(brand.id, "a@example.com", "Hello", "Body")
    db.session.commit()
    assert deliver_mail(mail.id) == "sent"
    assert deliver_mail(mail.id) is None
    assert len(smtp_server.wait_for(1)) == 1


@pytest.mark.parametrize("address", ["", "not-an-address", "a@", "two@@example.com"])
def test_a_bad_recipient_is_refused_naming_the_field(brand, address):
    with pytest.raises(ValidationFailed) as refused:
        send_mail(brand.id, address, "Hello", "Body")
    assert refused.value.errors[0]["field"] == "to"


def test_an_unreachable_server_is_retried_with_backoff_then_fails_visibly(brand):
    save_mail_settings(
        brand,
        {
            "host": "127.0.0.1",
            "port": free_port(),
            "security": "none",
            "from_address": "billing@shop.example",
        },
    )
    mail = send_mail(brand.id, "a@example.com", "Hello", "Body")
    db.session.commit()
    start = utcnow()
    with freeze_time(start) as clock:
        for attempt in range(1, RETRY.max_attempts + 1):
            status = deliver_mail(mail.id)
            db.session.refresh(mail)
            assert mail.attempts == attempt
            assert "Could not talk to 127.0.0.1" in mail.last_error
            if attempt < RETRY.max_attempts:
                assert status == "pending"
                assert mail.next_attempt_at == utcnow() + RETRY.delays[attempt - 1]
                assert deliver_mail(mail.id) is None  # not due yet
                clock.tick(RETRY.delays[attempt - 1])
            else:
                assert status == "failed"
    queued = send_mail(brand.id, "b@example.com", "x", "y")
    db.session.commit()
    with pytest.raises(InvalidState):
        retry_mail(brand.id, queued.id)
    assert retry_mail(brand.id, mail.id).shown_status == "queued"


def test_a_failure_then_the_server_comes_back(brand):
    port = free_port()
    save_mail_settings(
        brand,
        {
            "host": "127.0.0.1",
            "port": port,
            "security": "none",
            "from_address": "billing@shop.example",
        },
    )
    mail = send_mail(brand.id, "a@example.com", "Hello", "Body")
    db.session.commit()
    assert deliver_mail(mail.id) == "pending"
    with smtp_serving() as server:
        settings = get_mail_settings(brand.id)
        settings.port = server.port
        db.session.commit()
        with freeze_time(utcnow() + RETRY.delays[0]):
            assert deliver_mail(mail.id) == "sent"
        assert len(server.wait_for(1)) == 1


def test_without_settings_the_mail_waits_and_says_why(brand):
    mail = send_mail(brand.id, "a@example.com", "Hello", "Body")
    db.session.commit()
    assert deliver_mail(mail.id) == "pending"
    db.session.refresh(mail)
    assert "not set up" in mail.last_error


def test_the_password_is_sealed_and_used_to_log_in(brand):
    with smtp_serving(users={"shop": "s3cret pass"}) as server:
        server.configure(brand)
        settings = get_mail_settings(brand.id)
        assert "s3cret" not in settings.password_sealed
        assert open_password(settings.password_sealed, brand.id) == "s3cret pass"
        mail = send_mail(brand.id, "a@example.com", "Hello", "Body")
        db.session.commit()
        assert deliver_mail(mail.id) == "sent"
        assert server.logins == ["shop"]
        assert len(server.wait_for(1)) == 1


def test_a_wrong_password_is_an_error_that_names_no_secret(brand):
    with smtp_serving(users={"shop": "right"}) as server:
        server.configure(brand, username="shop", password="wrong-pass-123")
        mail = send_mail(brand.id, "a@example.com", "Hello", "Body")
        db.session.commit()
        assert deliver_mail(mail.id) == "pending"
        db.session.refresh(mail)
        assert "refused the login" in mail.last_error
        assert "wrong-pass-123" not in mail.last_error
        assert server.messages == []


def test_a_sealed_password_cannot_be_moved_to_another_brand(brand, other_brand):
    save_mail_settings(
        brand, {"host": "h.example", "from_address": "a@b.example", "password": "pw"}
    )
    sealed = get_mail_settings(brand.id).password_sealed
    with pytest.raises(ValueError):
        open_password(sealed, other_brand.id)


def test_the_sweep_returns_a_stuck_send_to_the_queue(brand):
    mail = send_mail(brand.id, "a@example.com", "Hello", "Body")
    mail.attempts = 1
    mail.lease_expires_at = utcnow() - timedelta(seconds=1)
    db.session.commit()
    assert sweep_outbox() == 1
    db.session.refresh(mail)
    assert (mail.shown_status, mail.lease_expires_at) == ("queued", None)


@pytest.mark.parametrize(
    "field,value",
    [
        ("host", ""),
        ("host", "smtp example.com"),
        ("port", 70000),
        ("security", "ssl3"),
        ("from_address", "nobody"),
    ],
)
def test_bad_settings_name_the_field(brand, field, value):
    values = {
        "host": "smtp.example.com",
        "port": 587,
        "security": "starttls",
        "from_address": "billing@shop.example",
        field: value,
    }
    with pytest.raises(ValidationFailed) as refused:
        save_mail_settings(brand, values)
    assert refused.value.errors[0]["field"] == field


def test_the_panel_saves_settings_and_never_shows_the_password(as_admin, brand, admin):
    response = post_form(
        as_admin,
        "/panel/settings/email",
        {
            "host": "smtp.example.com",
            "port": "587",
            "security": "starttls",
            "username": "billing",
            "password": "hunter2-secret",
            "from_address": "billing@shop.example",
            "from_name": "Test Shop",
        },
    )
    assert response.status_code == 302
    page = as_admin.get("/panel/settings/email").get_data(as_text=True)
    assert "hunter2-secret" not in page
    assert "A password is saved." in page
    assert 'value="smtp.example.com"' in page and 'value="billing@shop.example"' in page
    settings = db.session.execute(db.select(MailSettings)).scalar_one()
    assert (settings.host, settings.port, settings.username) == ("smtp.example.com", 587, "billing")
    # Saving again with the password left empty keeps it.
    post_form(
        as_admin,
        "/panel/settings/email",
        {
            "host": "smtp2.example.com",
            "port": "465",
            "security": "tls",
            "from_address": "billing@shop.example",
        },
    )
    db.session.refresh(settings)
    assert open_password(settings.password_sealed, brand.id) == "hunter2-secret"
    actions = [action for action, _, _ in audit_actions(brand)]
    assert actions.count("mail_settings.update") == 2


def test_the_panel_refuses_bad_settings_with_the_field_marked(as_admin):
    response = post_form(
        as_admin, "/panel/settings/email", {"host": "smtp.example.com", "from_address": "nope"}
    )
    assert response.status_code == 422
    assert 'id="from_address-error"' in response.get_data(as_text=True)
    assert db.session.execute(db.select(MailSettings)).scalar_one_or_none() is None


def test_the_test_button_sends_through_the_saved_server(as_admin, brand, smtp_server):
    smtp_server.configure(brand)
    response = post_form(as_admin, "/panel/settings/email/test", {"to": "me@shop.example"})
    assert response.status_code == 302
    (message,) = smtp_server.wait_for(1)
    assert message["To"] == "me@shop.example"
    page = as_admin.get("/panel/settings/email").get_data(as_text=True)
    assert "Test e-mail sent to me@shop.example." in page


def test_the_test_button_reports_a_server_that_does_not_answer(as_admin, brand):
    save_mail_settings(
        brand,
        {
            "host": "127.0.0.1",
            "port": free_port(),
            "security": "none",
            "from_address": "billing@shop.example",
        },
    )
    response = post_form(
        as_admin, "/panel/settings/email/test", {"to": "me@shop.example"}, follow_redirects=True
    )
    assert "The test e-mail was not sent" in response.get_data(as_text=True)


def test_staff_cannot_open_the_email_settings(client, staff):
    from tests.panel.conftest import sign_in

    sign_in(client, staff)
    assert client.get("/panel/settings/email").status_code == 403
