"""Security headers on every answer: no sniffing, no framing, a referrer policy, a CSP, and HSTS
over https.

The panel and checkout set their own, stricter values first (their blueprints' after_request); this
app-wide hook fills in whatever a response still lacks, so answers outside any blueprint (the 404 of
an unknown path, a 405, a 500, the API and its docs, static files) carry them too.
"""

import base64
import hashlib
import re
from urllib.parse import urlsplit

from flask import request

# Our own forms carry the full Referer that Flask-WTF's https check (WTF_CSRF_SSL_STRICT) demands,
# while no other origin learns a page's address, which on the checkout holds the payment's token
# (docs/security.md).
REFERRER_POLICY = "same-origin"
HSTS = "max-age=31536000"  # a year; sent only on https, as browsers ignore it on http anyway
PAGE_POLICY = (
    "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
    "script-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; "
    "object-src 'none'"
)
DATA_POLICY = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'"
DOCS_PATH = "/api/v1/docs"
INLINE_SCRIPT = re.compile(rb"<script>(.*?)</script>", re.S)
# A host as a CSP source may write it: letters, digits, dots and hyphens, or a bracketed IPv6.
CSP_HOST = re.compile(r"^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z0-9-]{1,63}$")


def csp_source(url):
    """The `scheme://host[:port]` of an http(s) URL as a CSP source, or '' when it cannot be one.

    Only a plain host name or IP address passes, without credentials: a URL whose host holds `;`, a
    space, a quote or a comma (`https://cdn.example;script-src *`) would otherwise add directives.
    """
    try:
        parts = urlsplit(url or "")
        port = parts.port
    except ValueError:
        return ""
    host = parts.hostname or ""
    if parts.scheme not in ("http", "https") or not host or "@" in parts.netloc:
        return ""  # a URL carrying a user name or password is odd enough to be left out
    if ":" in host:
        if not re.fullmatch(r"[0-9a-fA-F:.]+", host):
            return ""
        host = f"[{host}]"
    elif not CSP_HOST.match(host):
        return ""
    return f"{parts.scheme}://{host}" + (f":{port}" if port else "")


def docs_policy(response):
    """The Swagger UI page's policy: its own assets, and its one inline script by hash."""
    hashes = " ".join(
        "'sha256-" + base64.b64encode(hashlib.sha256(script).digest()).decode() + "'"
        for script in INLINE_SCRIPT.findall(response.get_data())
    )
    return (
        f"default-src 'self'; script-src 'self' {hashes}; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; "
        "base-uri 'none'; object-src 'none'"
    )


def policy_for(response):
    """A CSP for a response that has none: pages get the panel's, everything else nothing at all."""
    if response.mimetype != "text/html" or response.direct_passthrough:
        return DATA_POLICY
    if request.path == DOCS_PATH:
        return docs_policy(response)
    return PAGE_POLICY


# Every answer's three fixed headers, and the lower-cased names to find one a response already has.
FIXED_HEADERS = (
    ("X-Content-Type-Options", "nosniff"),
    ("X-Frame-Options", "DENY"),
    ("Referrer-Policy", REFERRER_POLICY),
)
FIXED_NAMES = tuple((name.lower(), name, value) for name, value in FIXED_HEADERS)


def add_security_headers(response):
    """Fill in the headers a response lacks; HSTS when the request came over https (ProxyFix says
    so).

    The names a response has are read once: a lookup per header cost more than the rest of the hook.
    """
    headers = response.headers
    present = {name.lower() for name, _ in headers}
    for lowered, name, value in FIXED_NAMES:
        if lowered not in present:
            headers.add(name, value)
    if "content-security-policy" not in present:
        headers.add("Content-Security-Policy", policy_for(response))
    if "strict-transport-security" not in present and request.is_secure:
        headers.add("Strict-Transport-Security", HSTS)
    return response


def register_security_headers(app):
    """Attach the hook to every response of the app."""
    app.after_request(add_security_headers)
