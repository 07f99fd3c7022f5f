"""The HTTP side of a webhook attempt: POST, no redirects, a capped answer, every failure described."""
import threading
import time
from dataclasses import dataclass

import requests

BODY_LIMIT = 2048  # bytes of a receiver's answer that are read and kept
_local = threading.local()


@dataclass
class Outcome:
    """What one attempt gave: a status and body, or an error; and how long it took."""

    status: int | None = None
    body: str | None = None
    error: str | None = None
    duration_ms: int = 0

    @property
    def success(self):
        return self.error is None and self.status is not None and 200 <= self.status < 300


def http_session():
    """This thread's HTTP session: it reuses connections to receivers that keep them alive."""
    if not hasattr(_local, "session"):
        _local.session = requests.Session()
        _local.session.trust_env = False  # no proxy from the environment between us and the receiver
    return _local.session


def post_body(url, body, headers, connect_timeout, timeout):
    """POST `body` as is; never raises for the receiver's faults, and an answer after `timeout` s fails."""
    started = time.perf_counter()
    try:
        with http_session().post(url, data=body, headers=headers, timeout=(connect_timeout, timeout),
                                 allow_redirects=False, stream=True) as response:
            text = response.raw.read(BODY_LIMIT, decode_content=True).decode("utf-8", "replace")
            status = response.status_code
    except (requests.RequestException, OSError) as error:
        return Outcome(error=describe(error), duration_ms=elapsed_ms(started))
    duration = elapsed_ms(started)
    if duration > timeout * 1000:
        return Outcome(status=status, body=text, duration_ms=duration, error=f"No answer within {timeout} s.")
    return Outcome(status=status, body=text, duration_ms=duration)


def elapsed_ms(started):
    """Milliseconds since `started` (a perf_counter reading)."""
    return int((time.perf_counter() - started) * 1000)


def describe(error):
    """A short, log-safe description of a failed HTTP attempt."""
    if isinstance(error, requests.Timeout):
        return "Timed out waiting for the receiver."
    if isinstance(error, requests.ConnectionError):
        return f"Could not connect: {str(error)[:200]}"
    return f"{error.__class__.__name__}: {str(error)[:200]}"
