"""The merchant's side of webhooks: the delivery log, redelivery, test events and the signing
secret.
"""

from datetime import timedelta

from flask import current_app
from sqlalchemy.orm import selectinload

from .. import jobs
from ..accounts.models.brand import Brand, new_webhook_secret
from ..answer_commit import commit_work
from ..clock import utcnow
from ..db_types import row_id
from ..domain_errors import field_error, invalid_state, not_found
from ..extensions import db
from ..states import DELIVERY, OUTBOX_PENDING, write_status
from .callback_urls import check_callback_url
from .events import emit_event
from .models.webhook import WebhookDelivery

LOG_SIZE = 50  # docs/spec/merchant-api.md 4.4 and 8: the 50 most recent records


def recent_deliveries(brand, livemode=True):
    """The brand's 50 most recent delivery records of one mode, newest first: a delivery is a test
    one when its payment is (a delivery without a payment, e.g. webhook.test, is live)."""
    # Read by table name: payments imports this package (events), not the reverse.
    payments = db.metadata.tables["payments"]
    of_a_test_payment = (
        db.select(payments.c.id)
        .where(payments.c.id == WebhookDelivery.payment_id, payments.c.livemode.is_(False))
        .exists()
    )
    return (
        db.session.execute(
            db.select(WebhookDelivery)
            .where(
                WebhookDelivery.brand_id == brand.id,
                ~of_a_test_payment if livemode else of_a_test_payment,
            )
            .order_by(WebhookDelivery.created_at.desc(), WebhookDelivery.id.desc())
            .limit(LOG_SIZE)
        )
        .scalars()
        .all()
    )


def get_delivery(brand, delivery_id):
    """A delivery of this brand with its attempt log; NotFound for anything else, another brand's
    included.
    """
    delivery_id = row_id(delivery_id)
    delivery = None
    if delivery_id is not None:
        delivery = db.session.execute(
            db.select(WebhookDelivery)
            .options(selectinload(WebhookDelivery.attempt_log))
            .where(WebhookDelivery.id == delivery_id, WebhookDelivery.brand_id == brand.id)
        ).scalar_one_or_none()
    if delivery is None:
        raise not_found("webhook_delivery")
    return delivery


def retry_delivery(brand, delivery_id):
    """Redeliver now, whatever the record's status, unless an attempt is in flight (InvalidState).

    The hand attempt is extra: it leaves the automatic budget alone, and if it fails the automatic
    schedule resumes where it was (`resume_at`, the attempt that was due; none for a finished
    record).
    """
    delivery = get_delivery(brand, delivery_id)
    now = utcnow()
    d = WebhookDelivery
    changed = write_status(
        DELIVERY,
        (d.id == delivery.id, db.or_(d.lease_expires_at.is_(None), d.lease_expires_at < now)),
        DELIVERY.statuses,
        OUTBOX_PENDING,
        # A second hand retry before the first was claimed keeps the automatic time already saved.
        resume_at=db.case(
            (d.redelivery_requested, d.resume_at),
            (d.status == OUTBOX_PENDING, d.next_attempt_at),
            else_=None,
        ),
        redelivery_requested=True,
        next_attempt_at=now,
        updated_at=now,
    )
    if changed != 1:
        db.session.rollback()
        raise invalid_state(
            "An attempt of this delivery is in progress; retry when it has finished."
        )
    jobs.wake_after_commit(jobs.WEBHOOKS, jobs.DELIVER_WEBHOOK, delivery.id)
    commit_work()
    db.session.refresh(delivery)
    return delivery


def send_test_webhook(brand, url=None):
    """Record a signed `webhook.test` event for `url` (default: the brand's webhook URL)."""
    url = url or brand.webhook_url
    if not url:
        raise field_error(
            "url", "Send a url, or set the brand's webhook URL first.", code="required"
        )
    check_callback_url(url, "url")
    delivery = emit_event("webhook.test", brand, url=url)
    commit_work()  # with an Idempotency-Key, together with the stored answer
    return delivery


def rotate_webhook_secret(brand, overlap=None):
    """Give the brand a new webhook secret; the old one still signs (the Previous header) for
    `overlap` seconds.

    `overlap` defaults to WEBHOOK_SECRET_OVERLAP; 0 drops the old secret at once. One UPDATE takes
    the secret it replaces from the row itself (SET sees the row as it was), so of two rotations at
    once each keeps the secret it replaced, never one the other never saw. In a unit of work it
    commits with the rest (the panel's audit row); alone, it commits itself.
    """
    overlap = current_app.config["WEBHOOK_SECRET_OVERLAP"] if overlap is None else overlap
    new = new_webhook_secret()
    keep = overlap > 0
    db.session.execute(
        db.update(Brand)
        .where(Brand.id == brand.id)
        .values(
            webhook_secret=new,
            webhook_secret_previous=Brand.webhook_secret if keep else None,
            webhook_secret_previous_until=utcnow() + timedelta(seconds=overlap) if keep else None,
        )
        .execution_options(synchronize_session=False)
    )
    commit_work()
    db.session.refresh(brand)
    return new


def set_webhook_url(brand, url):
    """Set (or, with an empty value, clear) the brand's default webhook URL; {from, to} when it
    changed.
    """
    url = (url or "").strip() or None
    check_callback_url(url, "webhook_url")
    if url == brand.webhook_url:
        return None
    change = {"from": brand.webhook_url, "to": url}
    brand.webhook_url = url
    commit_work()
    return change
