"""E-mail recipients: checked as the mail outbox checks them when saved, and a stored one it
refuses (saved before that check) skipped when sending, never the cause of copies or of a failed
notification while another recipient is good.
"""

import logging
from datetime import timedelta

from freezegun import freeze_time

from gateway.clock import utcnow
from gateway.extensions import db
from gateway.mail.models.mail import OutboundMail
from gateway.mail.sending import deliver_mail
from gateway.notifications.catalogue import PAYMENT_COMPLETED
from gateway.notifications.settings import settings_for
from tests.factories import completed_payment
from tests.notifications.conftest import configure, deliveries, send_due

NO_VALID_RECIPIENT = (
    "No e-mail recipient is a valid address: correct them on the Notifications page."
)


def store_unchecked_recipients(brand, email_to):
    """E-mail settings with recipients written as an older gateway saved them, unchecked."""
    configure(brand, channels={PAYMENT_COMPLETED: ["email"]}, email_to="owner@shop.example")
    settings_for(brand.id).email_to = email_to
    db.session.commit()


def run_every_attempt():
    """Send every due notification and e-mail, over a day of retries; the e-mails' ids."""
    with freeze_time(utcnow()) as clock:
        for _ in range(8):
            send_due()
            clock.tick(timedelta(hours=3))
        mail_ids = db.session.execute(db.select(OutboundMail.id)).scalars().all()
        for mail_id in mail_ids:
            deliver_mail(mail_id)
    db.session.expire_all()
    return mail_ids


def test_a_stored_refused_recipient_is_skipped_and_the_good_one_gets_one_email_each(
    brand, smtp_server, caplog
):
    smtp_server.configure(brand)
    store_unchecked_recipients(brand, "owner@shop.example, ops@shop.local")
    completed_payment(brand=brand, reference="ORDER-1")
    completed_payment(brand=brand, reference="ORDER-2")

    with caplog.at_level(logging.WARNING, logger="gateway.notifications.channels"):
        mail_ids = run_every_attempt()

    assert [d.status for d in deliveries(brand)] == ["sent", "sent"]
    assert len(mail_ids) == 2
    messages = smtp_server.wait_for(2)
    assert [m["To"] for m in messages] == ["owner@shop.example", "owner@shop.example"]
    assert sorted(m["Subject"] for m in messages) == [
        "Payment ORDER-1 completed: 500.00 BDT",
        "Payment ORDER-2 completed: 500.00 BDT",
    ]
    skipped = [r.getMessage() for r in caplog.records if "skipped" in r.getMessage()]
    assert len(skipped) == 2 and all("1 e-mail recipient(s) skipped" in m for m in skipped)
    assert "ops@shop.local" not in caplog.text


def test_only_refused_recipients_fail_the_attempt_visibly_and_queue_no_email(brand, smtp_server):
    smtp_server.configure(brand)
    store_unchecked_recipients(brand, "ops@shop.local; billing@localhost")
    completed_payment(brand=brand)

    send_due()
    db.session.expire_all()
    [delivery] = deliveries(brand)
    assert (delivery.status, delivery.attempts) == ("pending", 1)
    assert delivery.last_error == NO_VALID_RECIPIENT
    assert db.session.execute(db.select(db.func.count(OutboundMail.id))).scalar() == 0

    assert run_every_attempt() == []
    [delivery] = deliveries(brand)
    assert (delivery.status, delivery.last_error) == ("failed", NO_VALID_RECIPIENT)
    assert smtp_server.messages == []
