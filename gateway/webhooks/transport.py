"""The HTTP side of a webhook attempt: POST to a checked address, no redirects, a capped answer, a
deadline.
"""

import threading
import time
from dataclasses import dataclass
from http.cookiejar import DefaultCookiePolicy

import requests
from urllib3.exceptions import ConnectTimeoutError, NewConnectionError, ReadTimeoutError
from urllib3.exceptions import HTTPError as Urllib3Error
from urllib3.util import parse_url

from .deadline import Deadline, WatchedAdapter

BODY_LIMIT = 2048  # bytes of a receiver's answer that are read and kept
_local = threading.local()


@dataclass
class Outcome:
    """What one attempt gave: a status and body (answered) or an error (not), never both; and how
    long it took."""

    status: int | None = None
    body: str | None = None
    error: str | None = None
    duration_ms: int = 0

    @property
    def success(self):
        return self.error is None and self.status is not None and 200 <= self.status < 300


class PinnedAdapter(WatchedAdapter):
    """Watched connections; and an https request to an address with a Host header is TLS for that
    host.
    """

    def build_connection_pool_key_attributes(self, request, verify, cert=None):
        host_params, pool_kwargs = super().build_connection_pool_key_attributes(
            request, verify, cert
        )
        if host_params["scheme"] == "https" and "Host" in request.headers:
            # SNI and the certificate check are for the host name, not the address. server_hostname
            # alone does both; assert_hostname would also turn check_hostname off on the SSL
            # context, which some requests versions share between all their connections.
            pool_kwargs["server_hostname"] = parse_url("//" + request.headers["Host"]).host.strip(
                "[]"
            )
        return host_params, pool_kwargs


def http_session():
    """This thread's HTTP session: it reuses connections to receivers that keep them alive."""
    if not hasattr(_local, "session"):
        session = requests.Session()
        session.trust_env = False  # no proxy from the environment between us and the receiver
        # Receivers' cookies are never sent back (pinned requests are to an address another host may
        # share).
        session.cookies.set_policy(DefaultCookiePolicy(allowed_domains=[]))
        for prefix in ("http://", "https://"):
            session.mount(prefix, PinnedAdapter())
        _local.session = session
    return _local.session


def prepare_post(url, body, headers, address=None, method="POST"):
    """The POST (or `method`) request; with `address`, sent there while the Host header (and TLS)
    keep the URL's host.
    """
    request = http_session().prepare_request(
        requests.Request(method, url, data=body, headers=headers)
    )
    if address is not None:
        parts = parse_url(request.url)
        request.headers["Host"] = parts.netloc
        request.url = parts._replace(
            host=f"[{address}]" if ":" in address else address, auth=None
        ).url
    return request


def post_body(url, body, headers, connect_timeout, timeout, addresses=None):
    """POST `body` as is; never raises for the receiver's faults; `timeout` s in all.

    With `addresses` (the host's checked ones) it goes to the first that takes a connection: a host
    with an IPv6 address this server cannot reach still gets its webhook at the IPv4 one. Only a
    connection never made moves on; once a byte was sent, a second address could deliver twice.
    """
    return exchange("POST", url, body, headers, connect_timeout, timeout, addresses)


def get_body(url, headers, connect_timeout, timeout, addresses=None, limit=BODY_LIMIT):
    """GET `url` as post_body posts (checked addresses, no redirects, a deadline), keeping `limit`
    bytes of the answer (a merchant's rate feed: payments/rate_feed.py)."""
    return exchange("GET", url, None, headers, connect_timeout, timeout, addresses, limit)


def exchange(method, url, body, headers, connect_timeout, timeout, addresses, limit=BODY_LIMIT):
    """One request and its capped answer, as an Outcome (post_body, get_body)."""
    started = time.perf_counter()
    waited_out = False  # a read that waited the whole timeout (read timeouts are its length)
    with Deadline(timeout) as deadline:
        for address in addresses or (None,):
            status = text = error = None
            try:
                request = prepare_post(url, body, headers, address, method)
                with http_session().send(
                    request,
                    timeout=(min(connect_timeout, timeout), timeout),
                    allow_redirects=False,
                    stream=True,
                ) as response:
                    status = response.status_code
                    text = response.raw.read(limit, decode_content=True).decode("utf-8", "replace")
                break
            except (requests.RequestException, Urllib3Error, OSError) as failure:
                error = describe(failure)
                waited_out = isinstance(failure, (requests.ReadTimeout, ReadTimeoutError))
                if deadline.expired or not never_connected(failure):
                    break
    # The deadline cutting the exchange, not a clock read after it, says an answer came too late;
    # so does a read that waited it out, whichever of the two fired first at the deadline.
    if deadline.expired or waited_out:
        error = f"No answer within {timeout} s."
    if error is not None:  # answered or not, never both: a status whose answer was cut is no answer
        status = text = None
    return Outcome(status=status, body=text, error=error, duration_ms=elapsed_ms(started))


def never_connected(error):
    """Whether an attempt failed before any connection was made (refused, unreachable, or no answer
    to connect).
    """
    if isinstance(error, requests.ConnectTimeout):
        return True
    if not isinstance(error, requests.ConnectionError) or not error.args:
        return False
    return isinstance(
        getattr(error.args[0], "reason", None), (NewConnectionError, ConnectTimeoutError)
    )


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
