"""A chunked request body is held to MAX_CONTENT_LENGTH like one that declares its length.

Werkzeug enforces the limit through Content-Length. A chunked body has none: Werkzeug then reads it
through a stream that stops at the limit without complaint, so an oversized body arrived cut short
(a 400 "invalid JSON", or worse, a truncated form) instead of 413. This middleware reads such a body
up to one byte past the limit and hands the application a body with a Content-Length: at most the
limit goes through as it was sent; anything longer is declared one byte too long, which Werkzeug
answers 413 (rendered by gateway.errors) the moment the body is read.
"""

import io


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
        limit = self.config.get("MAX_CONTENT_LENGTH")
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


def limit_chunked_bodies(app):
    """Wrap the application so that chunked bodies meet MAX_CONTENT_LENGTH too."""
    app.wsgi_app = ChunkedBodyLimit(app.wsgi_app, app.config)
