"""The e-mail outbox: `send_mail` writes a row in the caller's transaction and wakes a job after
commit.
"""

from datetime import timedelta

from .. import jobs
from ..answer_commit import commit_work
from ..clock import utcnow
from ..db_types import row_id
from ..domain_errors import invalid_state, not_found
from ..extensions import db
from ..outbox.attempts import wake_after_commit
from ..outbox.kind import OutboxKind
from ..outbox.schedule import BACKOFF, RetrySchedule
from ..states import OUTBOUND_MAIL, OUTBOX_FAILED, OUTBOX_PENDING, write_status
from .models.mail import MailAttachment, OutboundMail
from .settings import get_mail_settings, normalise_address

SEND_MAIL = "gateway.mail.sending.deliver_mail"
RETRY = RetrySchedule(BACKOFF[:5])
OUTBOX = OutboxKind(
    name="mail",
    machine=OUTBOUND_MAIL,
    queue=jobs.MAIL,
    job=SEND_MAIL,
    schedule=RETRY,
    lease=timedelta(seconds=90),  # above SMTP_TIMEOUT (smtp_client.py) and the job's own limit
    expired_error="Lease ran out.",
)


def mail_configured(brand_id):
    """Whether the brand has SMTP settings, so that a queued e-mail can leave."""
    return get_mail_settings(brand_id) is not None


def send_mail(brand_id, to, subject, text, html=None, attachments=()):
    """Queue an e-mail from the brand to `to`; sent by a background job once the caller commits.

    Runs in the caller's transaction and only flushes: nothing leaves unless the work that
    asked for the e-mail commits, and a Redis outage loses nothing (the periodic sweep finds the
    row). `attachments` are (filename, content_type, bytes). Returns the OutboundMail row.
    Raises ValidationFailed (field `to`) for an address that is not one.
    """
    now = utcnow()
    mail = OutboundMail(
        brand_id=brand_id,
        to_address=normalise_address(to, field="to"),
        subject=" ".join(subject.split())[:255],
        text_body=text,
        html_body=html,
        status=OUTBOX_PENDING,
        attempts=0,
        next_attempt_at=now,
        created_at=now,
        updated_at=now,
    )
    for filename, content_type, content in attachments:
        mail.attachments.append(
            MailAttachment(filename=filename, content_type=content_type, content=bytes(content))
        )
    db.session.add(mail)
    db.session.flush()
    wake(mail)
    return mail


def wake(mail):
    """Send the message once the current transaction commits."""
    wake_after_commit(OUTBOX, mail)


def list_mail_query(brand_id):
    """The brand's e-mails, newest first."""
    query = db.select(OutboundMail).where(OutboundMail.brand_id == brand_id)
    return query.order_by(OutboundMail.created_at.desc(), OutboundMail.id.desc())


def get_mail(brand_id, mail_id):
    """One of the brand's e-mails; NotFound for anything else."""
    mail_id = row_id(mail_id)
    mail = None if mail_id is None else db.session.get(OutboundMail, mail_id)
    if mail is None or mail.brand_id != brand_id:
        raise not_found("mail")
    return mail


def retry_mail(brand_id, mail_id):
    """Put a failed e-mail back in the queue for another round of attempts."""
    mail = get_mail(brand_id, mail_id)
    status = mail.shown_status
    changed = write_status(
        OUTBOUND_MAIL,
        (OutboundMail.id == mail.id,),
        (OUTBOX_FAILED,),
        OUTBOX_PENDING,
        attempts=0,
        next_attempt_at=utcnow(),
        updated_at=utcnow(),
    )
    if changed != 1:
        db.session.rollback()
        raise invalid_state(f"Only a failed e-mail can be retried; this one is {status}.")
    db.session.refresh(mail)
    wake(mail)
    commit_work()
    return mail
