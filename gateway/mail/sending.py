"""Sending the outbox: one job per e-mail over smtplib, retried with backoff, and the periodic
sweep.
"""

import logging
import smtplib
from datetime import timedelta
from email.message import EmailMessage
from email.utils import formataddr, make_msgid

from .. import jobs
from ..answer_commit import unit_of_work
from ..clock import utcnow
from ..extensions import db
from ..states import OUTBOUND_MAIL, write_status
from .models.mail import OutboundMail
from .outbox import SEND_MAIL, mail_wake
from .settings import get_mail_settings, open_password
from .smtp_client import MailNotSent, in_our_words, open_session

log = logging.getLogger(__name__)

RETRY_DELAYS = (
    timedelta(minutes=1),
    timedelta(minutes=5),
    timedelta(minutes=30),
    timedelta(hours=2),
    timedelta(hours=6),
)
MAX_ATTEMPTS = len(RETRY_DELAYS) + 1
LEASE = timedelta(seconds=90)  # above SMTP_TIMEOUT (smtp_client.py) and the job's own limit
BATCH = 500


def deliver_mail(mail_id):
    """Send one queued, due e-mail if this process wins its lease; returns the status it leaves."""
    now = utcnow()
    won = write_status(
        OUTBOUND_MAIL,
        (OutboundMail.id == mail_id, OutboundMail.next_attempt_at <= now),
        ("queued",),
        "sending",
        lease_expires_at=now + LEASE,
        attempts=OutboundMail.attempts + 1,
        updated_at=now,
    )
    if won != 1:
        db.session.rollback()
        return None
    db.session.commit()
    mail = db.session.get(OutboundMail, mail_id)
    try:
        transmit(mail)
        error = None
    except MailNotSent as failure:
        error = str(failure)
    values = outcome_values(mail.attempts, error, utcnow())
    kept = write_status(
        OUTBOUND_MAIL,
        (OutboundMail.id == mail.id, OutboundMail.attempts == mail.attempts),
        ("sending",),
        values.pop("status"),
        **values,
    )
    db.session.commit()
    db.session.refresh(mail)
    if not kept:
        log.warning("mail %s: lease lost during the attempt; its outcome is not recorded", mail.id)
        return None
    if mail.status == "queued":
        schedule_retry(mail)
    elif mail.status == "failed":
        log.warning("mail %s failed after %s attempts: %s", mail.id, mail.attempts, error)
    return mail.status


def outcome_values(attempts, error, now):
    """The columns after an attempt: sent; queued again after a backoff; failed after the last."""
    released = {"lease_expires_at": None, "updated_at": now}
    if error is None:
        return {**released, "status": "sent", "sent_at": now, "last_error": None}
    if attempts >= MAX_ATTEMPTS:
        return {**released, "status": "failed", "last_error": error[:500]}
    return {
        **released,
        "status": "queued",
        "last_error": error[:500],
        "next_attempt_at": now + RETRY_DELAYS[attempts - 1],
    }


def schedule_retry(mail):
    """Wake the next attempt when it is due; without the scheduler the sweep does."""
    try:
        jobs.enqueue_at(mail.next_attempt_at, jobs.MAIL, SEND_MAIL, mail.id, unique=mail_wake(mail))
    except Exception as failure:  # noqa: BLE001 - the sweep wakes it when due
        log.warning("mail %s: retry not scheduled (%s); the sweep will wake it", mail.id, failure)


def build_message(mail, settings):
    """The MIME message: plain text, an HTML alternative when given, then the attachments."""
    message = EmailMessage()
    message["From"] = formataddr((settings.from_name or "", settings.from_address))
    message["To"] = mail.to_address
    message["Subject"] = mail.subject
    message["Message-ID"] = make_msgid(domain=settings.from_address.rpartition("@")[2])
    message.set_content(mail.text_body)
    if mail.html_body:
        message.add_alternative(mail.html_body, subtype="html")
    for attachment in mail.attachments:
        maintype, _, subtype = attachment.content_type.partition("/")
        message.add_attachment(
            attachment.content,
            maintype=maintype,
            subtype=subtype or "octet-stream",
            filename=attachment.filename,
        )
    return message


def transmit(mail):
    """Hand the message to the brand's SMTP server; MailNotSent with the reason (never a secret)."""
    settings = get_mail_settings(mail.brand_id)
    if settings is None:
        raise MailNotSent("E-mail is not set up for this brand (Settings → E-mail).")
    smtp_send(settings, build_message(mail, settings))


def smtp_send(settings, message):
    """One SMTP session with the settings' security and login; MailNotSent on any failure, said in
    our words (the server's own reply goes to the log only).
    """
    password = None
    if settings.password_sealed:
        try:
            password = open_password(settings.password_sealed, settings.brand_id)
        except ValueError as error:
            raise MailNotSent(str(error)) from error
    try:
        with open_session(settings, password) as client:
            refused = client.send_message(message)
    except (smtplib.SMTPException, OSError) as error:
        raise MailNotSent(in_our_words(error, settings)) from error
    if refused:
        raise MailNotSent(f"The SMTP server refused the recipient(s): {', '.join(refused)}")


def send_test_mail(settings, to):
    """Send a test e-mail now, in the request (the settings page shows the answer); MailNotSent if
    not.
    """
    message = EmailMessage()
    message["From"] = formataddr((settings.from_name or "", settings.from_address))
    message["To"] = to
    message["Subject"] = "Test e-mail from your payment gateway"
    message.set_content(
        "Your SMTP settings work: this message went through "
        f"{settings.host}:{settings.port} ({settings.security})."
    )
    smtp_send(settings, message)


def sweep_mail(now=None):
    """Return e-mails whose sending lease ran out to the queue and wake every due one; the count."""
    now = now or utcnow()
    with unit_of_work():
        expired = (OutboundMail.lease_expires_at < now,)
        released = {"lease_expires_at": None, "updated_at": now, "last_error": "Lease ran out."}
        write_status(
            OUTBOUND_MAIL,
            expired + (OutboundMail.attempts >= MAX_ATTEMPTS,),
            ("sending",),
            "failed",
            **released,
        )
        write_status(
            OUTBOUND_MAIL,
            expired + (OutboundMail.attempts < MAX_ATTEMPTS,),
            ("sending",),
            "queued",
            next_attempt_at=now,
            **released,
        )
        due = (
            db.session.execute(
                db.select(OutboundMail)
                .where(OutboundMail.status == "queued", OutboundMail.next_attempt_at <= now)
                .order_by(OutboundMail.next_attempt_at)
                .limit(BATCH)
            )
            .scalars()
            .all()
        )
        wakes = [(mail.id, mail_wake(mail)) for mail in due]
    for mail_id, unique in wakes:  # after the commit: a job never finds its row not yet there
        jobs.enqueue(jobs.MAIL, SEND_MAIL, mail_id, unique=unique)
    return len(wakes)
