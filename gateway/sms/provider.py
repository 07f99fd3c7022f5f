"""The second way out for outbound SMS: an HTTP SMS provider at SMS_PROVIDER_URL."""

import threading

import requests
from flask import current_app

from ..outbox.attempts import make_attempt
from ..webhooks.deadline import Deadline, WatchedAdapter
from .models.outbound_sms import OutboundSms
from .outbound import OUTBOX, provider_url

HOLDER = "provider"
_local = threading.local()


def send_outbound_sms(message_id):
    """Post one queued, due message to the provider if this process wins its lease; else do nothing.

    The provider receives `{"id", "to", "body"}` as JSON; any 2xx within SMS_PROVIDER_TIMEOUT (10 s)
    means sent. Returns the outbox status it leaves.
    """
    url = provider_url()
    if not url:
        return None
    return make_attempt(
        OUTBOX,
        OutboundSms,
        message_id,
        lambda message: post_to_provider(url, message),
        leased_by=HOLDER,
    )


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
