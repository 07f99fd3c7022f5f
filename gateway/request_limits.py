"""Rules on a request's shape before any view: a chunked body is held to MAX_CONTENT_LENGTH like one
that declares its length, and a path argument no row can hold is 404.

Werkzeug enforces the limit through Content-Length. A chunked body has none: Werkzeug then reads it
through a stream that stops at the limit without complaint, so an oversized body arrived cut short
(a 400 "invalid JSON", or worse, a truncated form) instead of 413. This middleware reads such a body
up to one byte past the limit and hands the application a body with a Content-Length: at most the
limit goes through as it was sent; anything longer is declared one byte too long, which Werkzeug
answers 413 (rendered by gateway.errors) the moment the body is read.

A body the app answered without reading (an unknown key, a missing scope: the answer comes before
the body is parsed) is read to its end before the answer goes out: gunicorn closes the connection
after each answer, and closing a socket with bytes still unread makes the kernel reset it, so a
proxy still sending the body (nginx) answered 502 in place of the app's 401.
"""

import io
import re

from flask import current_app, request
from werkzeug.exceptions import ClientDisconnected, NotFound

from .db_types import unstorable

# The routes allowed a larger body than MAX_CONTENT_LENGTH, and the setting that holds their limit:
# only the manual checkout's proof upload (gateway/checkout/manual.py).
LARGER_BODIES = (
    (re.compile(r"^/checkout/[A-Za-z0-9_-]{1,64}/manual$"), "PROOF_UPLOAD_MAX_LENGTH"),
)


def body_limit(config, method, path):
    """The body limit of a request: its route's own for the few listed, else MAX_CONTENT_LENGTH."""
    if method == "POST":
        for pattern, setting in LARGER_BODIES:
            if pattern.match(path or ""):
                return config[setting]
    return config.get("MAX_CONTENT_LENGTH")


def apply_body_limit():
    """Give this request its route's body limit before anything (the CSRF check) reads the form."""
    request.max_content_length = body_limit(current_app.config, request.method, request.path)


def read_at_most(stream, size):
    """Up to `size` bytes of a stream, looping over short reads (a dechunking input returns one
    chunk).
    """
    parts, remaining = [], size
    while remaining > 0:
        piece = stream.read(min(remaining, 64 * 1024))
        if not piece:
            break
        parts.append(piece)
        remaining -= len(piece)
    return b"".join(parts)


class ChunkedBodyLimit:
    """WSGI middleware: a body without Content-Length is buffered up to MAX_CONTENT_LENGTH + 1
    bytes.
    """

    def __init__(self, wsgi_app, config):
        self.wsgi_app = wsgi_app
        self.config = config

    def __call__(self, environ, start_response):
        limit = body_limit(self.config, environ.get("REQUEST_METHOD"), environ.get("PATH_INFO"))
        if limit is not None and self.is_chunked(environ):
            body = read_at_most(environ["wsgi.input"], limit + 1)
            environ["wsgi.input"] = io.BytesIO(body)
            environ["CONTENT_LENGTH"] = str(len(body))
            # Now an ordinary body of known length: Werkzeug would ignore the length of a chunked
            # one.
            environ.pop("wsgi.input_terminated", None)
            environ.pop("HTTP_TRANSFER_ENCODING", None)
        return self.wsgi_app(environ, start_response)

    @staticmethod
    def is_chunked(environ):
        """A body whose length only its end tells (Transfer-Encoding: chunked), as servers mark
        it."""
        if environ.get("CONTENT_LENGTH"):
            return False
        return (
            bool(environ.get("wsgi.input_terminated"))
            or "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()
        )


def read_unread_body(error=None):
    """Read what is left of a body within MAX_CONTENT_LENGTH (nothing, once the app has parsed it).

    A longer one is answered 413 unread: reading it is what the limit spares the server.
    """
    length = request.content_length
    limit = request.max_content_length
    if not length or (limit is not None and length > limit):
        return
    try:
        request.stream.exhaust()
    except (ClientDisconnected, OSError):
        pass  # the client went away: there is no one left to answer


def limit_chunked_bodies(app):
    """Wrap the application so that chunked bodies meet MAX_CONTENT_LENGTH too, and read what an
    answer left of a body."""
    app.wsgi_app = ChunkedBodyLimit(app.wsgi_app, app.config)
    app.before_request(apply_body_limit)  # registered before CSRFProtect's, which reads the form
    app.teardown_request(read_unread_body)


def refuse_unstorable_path():
    """404 for a path argument holding text no column can take (NUL, a lone surrogate), before the
    view queries with it: it names no row, and PostgreSQL cannot even compare it (a 500 where
    SQLite finds nothing)."""
    if unstorable(request.view_args):
        raise NotFound()


def guard_path_arguments(app, blueprints):
    """Answer 404 for a path argument no row can hold on these blueprints' routes.

    Per blueprint, not app-wide: the merchant API checks its own (after the key, with the
    resource's own 404 code, api/resource.py), and an API request pays for no other hook.
    """
    for name in blueprints:
        app.before_request_funcs.setdefault(name, []).append(refuse_unstorable_path)
