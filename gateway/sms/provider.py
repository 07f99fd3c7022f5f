"""The second way out for outbound SMS: an HTTP SMS provider at SMS_PROVIDER_URL."""

import logging
import threading
from datetime import timedelta

import requests
from flask import current_app

from .. import jobs
from ..clock import utcnow
from ..extensions import db
from ..webhooks.deadline import Deadline, WatchedAdapter
from .leases import outcome_values, settle_lease, take_lease
from .models.outbound_sms import OutboundSms
from .outbound import provider_url

log = logging.getLogger(__name__)

HOLDER = "provider"
PROVIDER_LEASE = timedelta(seconds=60)
_local = threading.local()


def send_outbound_sms(message_id):
    """Post one queued, due message to the provider if this process wins its lease; else do nothing.

    The provider receives `{"id", "to", "body"}` as JSON; any 2xx within SMS_PROVIDER_TIMEOUT (10 s)
    means sent.
    """
    url = provider_url()
    now = utcnow()
    if not url or not take_lease(message_id, HOLDER, now + PROVIDER_LEASE, now):
        db.session.rollback()
        return None
    db.session.commit()
    message = db.session.get(OutboundSms, message_id)
    error = post_to_provider(url, message)
    finished = utcnow()
    values = outcome_values(
        message.attempts, "sent" if error is None else "failed", error, finished
    )
    kept = settle_lease(
        (
            OutboundSms.id == message.id,
            OutboundSms.leased_by == HOLDER,
            OutboundSms.attempts == message.attempts,
        ),
        values,
    )
    db.session.commit()
    if not kept:
        # The lease ran out mid-request and the row moved on (back to the queue, or to another
        # sender's attempt): this attempt's result is no longer the row's to record, nor its retry
        # to schedule.
        log.warning(
            "sms %s: lease lost during the attempt; its outcome is not recorded", message.id
        )
        return None
    if values["status"] == "queued":
        try:
            jobs.enqueue_at(
                values["next_attempt_at"],
                jobs.SMS,
                jobs.SEND_SMS,
                message.id,
                unique=jobs.sms_wake(message.id, message.created_at, message.attempts),
            )
        except Exception as failure:  # noqa: BLE001 - the sweep wakes it when due
            log.warning(
                "sms %s: retry not scheduled (%s); the sweep will wake it", message.id, failure
            )
    return values["status"]


def provider_session():
    """This thread's session for the provider: watched connections, and the environment's proxy
    settings kept.
    """
    if not hasattr(_local, "session"):
        _local.session = requests.Session()
        for prefix in ("http://", "https://"):
            _local.session.mount(prefix, WatchedAdapter())
    return _local.session


def post_to_provider(url, message):
    """POST the message; None when the provider took it, else why not. The whole exchange has a
    deadline, well within the lease: a provider trickling its answer must not hold the message past
    it."""
    timeout = current_app.config.get("SMS_PROVIDER_TIMEOUT", 10)
    with Deadline(timeout) as deadline:
        try:
            response = provider_session().post(
                url,
                json={"id": message.id, "to": message.to_number, "body": message.body},
                timeout=(min(5, timeout), timeout),
                allow_redirects=False,
            )
        except (requests.RequestException, OSError) as error:
            response, failure = None, error
    if deadline.expired:
        return f"SMS provider gave no answer within {timeout} s."
    if response is None:
        return f"SMS provider unreachable: {str(failure)[:200]}"
    if 200 <= response.status_code < 300:
        return None
    return f"SMS provider answered {response.status_code}: {response.text[:200]}"
