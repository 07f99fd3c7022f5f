"""Logging to stderr at LOG_LEVEL, and one line per request: id, method, path, status, duration."""

import functools
import logging
import sys
import time

from flask import g, request

from .errors import request_id

log = logging.getLogger("gateway.requests")
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# URL parts that are capabilities (the checkout token): whoever reads the log must not be able to
# pay or cancel.
SECRET_ARGS = ("token", "secret", "key", "code", "password")


def configure_logging(app):
    """Send records to stderr (journald or the terminal captures them) at the configured level."""
    root = logging.getLogger()
    if not any(getattr(handler, "gateway_stderr", False) for handler in root.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter(FORMAT))
        handler.gateway_stderr = True
        root.addHandler(handler)
    root.setLevel(app.config["LOG_LEVEL"])


@functools.cache  # the names are the routes' own, a few dozen: asked once each
def is_capability(name):
    """Whether a URL argument of this name holds a capability (a token, a key), never logged."""
    return any(word in name.lower() for word in SECRET_ARGS)


def logged_path():
    """The path without its query string, with capability segments (tokens) replaced."""
    path = request.path
    for name, value in (request.view_args or {}).items():
        if is_capability(name) and str(value):
            path = path.replace(str(value), "[redacted]")
    return path


def start_timer():
    """Note when the request began."""
    g.request_started = time.perf_counter()


def log_request(response):
    """The request's one line; never headers, bodies or the query string (they may carry keys and
    tokens).
    """
    started = g.pop("request_started", None)
    duration_ms = (time.perf_counter() - started) * 1000 if started is not None else 0.0
    log.info(
        "request_id=%s method=%s path=%s status=%s duration_ms=%.1f",
        request_id(),
        request.method,
        logged_path(),
        response.status_code,
        duration_ms,
    )
    return response


def register_request_log(app):
    """Time every request and log it once its response is ready."""
    app.before_request(start_timer)
    app.after_request(log_request)
