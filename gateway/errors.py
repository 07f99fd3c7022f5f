"""The one error renderer: every API failure leaves in the documented envelope."""

import logging
import uuid

from flask import current_app, g, jsonify, render_template, request
from werkzeug.exceptions import HTTPException

from .domain_errors import (
    AlreadyExists,
    DomainError,
    Gone,
    InvalidState,
    NotAuthenticated,
    NotFound,
    NotPermitted,
    Unavailable,
    ValidationFailed,
    field_error,
    invalid_state,
    not_found,
)

log = logging.getLogger(__name__)

HTTP_CODES = {
    400: "BAD_REQUEST",
    401: "UNAUTHORIZED",
    403: "FORBIDDEN",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    409: "CONFLICT",
    413: "PAYLOAD_TOO_LARGE",
    415: "UNSUPPORTED_MEDIA_TYPE",
    410: "GONE",
    422: "VALIDATION_ERROR",
    429: "RATE_LIMITED",
}
REQUIRED_MESSAGES = {"Missing data for required field."}
# One answer lists at most this many field errors, each field name and message cut to a sane length:
# a 1 MB body of junk fields must not make a 17 MB answer.
MAX_FIELD_ERRORS = 50
MAX_FIELD_NAME = 120
MAX_ERROR_MESSAGE = 300
# app.extensions key: the path prefixes whose clients show `error` when it is text (the companion
# app's, registered by gateway.mobile); there `error` carries the message instead of `true`.
MESSAGE_ERROR_PREFIXES = "gateway_message_error_prefixes"


class ApiError(DomainError):
    """A front door's own refusal (authentication, content type, idempotency, rate limit) with its
    HTTP status.
    """

    def __init__(self, status, code, message, errors=None, headers=None):
        super().__init__(message, errors, code)
        self.status = status
        self.headers = headers or {}


# The one mapping from a domain error to an HTTP status; the most specific type listed wins.
HTTP_STATUS = {
    NotFound: 404,
    InvalidState: 409,
    AlreadyExists: 409,
    ValidationFailed: 422,
    NotAuthenticated: 401,
    NotPermitted: 403,
    Gone: 410,
    Unavailable: 503,
}
__all__ = ["ApiError", "HTTP_STATUS", "field_error", "http_status", "invalid_state", "not_found"]


def http_status(error):
    """The HTTP status a domain error is answered with (an ApiError carries its own)."""
    if isinstance(error, ApiError):
        return error.status
    for kind in type(error).__mro__:
        if kind in HTTP_STATUS:
            return HTTP_STATUS[kind]
    return 400


def flatten_messages(messages, prefix=""):
    """Marshmallow/webargs nested messages as a flat list of {field, code, message}."""
    errors = []
    if isinstance(messages, dict):
        for key, value in messages.items():
            if key in ("json", "query", "path", "headers") and not prefix:
                errors.extend(flatten_messages(value, ""))
                continue
            name = str(key) if key != "_schema" else (prefix.rstrip(".") or "body")
            path = f"{prefix}{name}" if key != "_schema" else name
            errors.extend(flatten_messages(value, path + "." if isinstance(value, dict) else path))
    elif isinstance(messages, (list, tuple)):
        for item in messages:
            if isinstance(item, (dict, list)):
                errors.extend(flatten_messages(item, prefix))
            else:
                field = prefix.rstrip(".") or "body"
                code = "required" if item in REQUIRED_MESSAGES else "invalid"
                errors.append({"field": field, "code": code, "message": str(item)})
    else:
        errors.append(
            {"field": prefix.rstrip(".") or "body", "code": "invalid", "message": str(messages)}
        )
    return errors


def shortened(text, limit):
    """A text cut to `limit` characters, marked with … when cut."""
    text = str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def capped_errors(errors):
    """The first MAX_FIELD_ERRORS field errors, names and messages shortened; and how many there
    were.
    """
    kept = [
        {
            **item,
            "field": shortened(item.get("field", "body"), MAX_FIELD_NAME),
            "message": shortened(item.get("message", ""), MAX_ERROR_MESSAGE),
        }
        for item in errors[:MAX_FIELD_ERRORS]
    ]
    return kept, len(errors)


def request_id():
    """This request's id, taken from a sane X-Request-ID header or made fresh."""
    # Kept on the request, not on `g`: an app context (and its `g`) can outlive one request. `g`
    # gets it when it is chosen, the request's first call; the log line and the header ask again.
    environ = request.environ
    chosen = environ.get("gateway.request_id")
    if chosen is None:
        incoming = environ.get("HTTP_X_REQUEST_ID", "")  # the X-Request-ID header, as WSGI names it
        chosen = environ["gateway.request_id"] = (
            incoming
            if 0 < len(incoming) <= 64
            and incoming.replace("-", "").isascii()
            and incoming.replace("-", "").isalnum()
            else uuid.uuid4().hex
        )
        g.request_id = chosen
    return chosen


def error_response(status, code, message, errors=None, headers=None):
    """The JSON error envelope of docs/spec/CONTRACT.md; `error` is the message where a client
    shows it."""
    body = {"success": False, "error": True, "message": message, "code": code}
    if errors:
        body["errors"], total = capped_errors(errors)
        if total > MAX_FIELD_ERRORS:
            body["message"] = f"{message} The first {MAX_FIELD_ERRORS} of {total} are listed."
    if request.path.startswith(current_app.extensions.get(MESSAGE_ERROR_PREFIXES, ())):
        body["error"] = body["message"]
    if status >= 500:
        body["request_id"] = request_id()
    response = jsonify(body)
    response.status_code = status
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


def wants_json():
    """Whether this request should get JSON errors rather than a page."""
    return request.path.startswith("/api/") or request.path == "/healthz"


def allowed_methods(error):
    """The Allow header a 405 must carry (RFC 9110), from the methods the route takes."""
    methods = getattr(error, "valid_methods", None)
    return {"Allow": ", ".join(methods)} if error.code == 405 and methods else {}


def render_http_exception(error):
    """An HTTPException (abort, webargs validation, rate limit, 404 routing) as an envelope or a
    page.
    """
    if not wants_json():
        page = render_template("error.html", status=error.code, message=error.description)
        return page, error.code, allowed_methods(error)
    data = getattr(error, "data", None) or {}
    headers = {**allowed_methods(error), **dict(data.get("headers") or {})}
    if error.code == 429:
        retry_after = getattr(error, "retry_after", None)
        headers.setdefault("Retry-After", str(retry_after or 1))
        return error_response(429, "RATE_LIMITED", "Too many requests; slow down.", headers=headers)
    if error.code == 422 and "messages" in data:
        return error_response(
            422,
            "VALIDATION_ERROR",
            "The request has invalid fields.",
            flatten_messages(data["messages"]),
            headers,
        )
    if error.code == 400 and "json" in (data.get("messages") or {}):
        # webargs' own "Invalid JSON body.", should a body reach it that check_json_body let
        # through.
        return error_response(
            400, "INVALID_JSON", "The request body is not valid UTF-8 JSON.", headers=headers
        )
    if error.code == 413:
        return error_response(413, "PAYLOAD_TOO_LARGE", "The request body is too large.")
    if error.code == 500:
        # Flask's own InternalServerError, wrapping what escaped after the view (an after_request, a
        # commit).
        return internal_error_response()
    code = HTTP_CODES.get(error.code, "ERROR")
    return error_response(
        error.code, code, data.get("message") or error.description or code, headers=headers
    )


def render_api_error(error):
    """A DomainError raised by a service (or an ApiError by a front door): the envelope, or the
    error page.
    """
    status = http_status(error)
    if not wants_json():
        return render_template("error.html", status=status, message=error.message), status
    return error_response(status, error.code, error.message, error.errors, error.headers)


def internal_error_response():
    """The 500 envelope: no trace, the request id to quote."""
    return error_response(
        500, "INTERNAL_ERROR", "Internal error; quote the request id when reporting it."
    )


def render_unexpected(error):
    """Anything else: logged with its trace, answered without one."""
    if isinstance(error, HTTPException):
        return render_http_exception(error)
    log.exception("unhandled error in request %s", request_id())
    discard_session()
    if not wants_json():
        return render_template("error.html", status=500, message="Something went wrong."), 500
    return internal_error_response()


def discard_session():
    """Roll the failed request's session back; with its connection lost, drop the session instead of
    raising.
    """
    from .extensions import db

    try:
        db.session.rollback()
    except Exception:  # noqa: BLE001 - a dead connection must not turn the envelope into a bare 500
        log.warning("rollback failed in request %s; session discarded", request_id())
        try:
            db.session.close()
        except Exception:  # noqa: BLE001
            db.session.registry.clear()


def remove_session(exception=None):
    """End the context's session; when its connection was lost, drop the session rather than raise.

    The rollback of a dead connection raises, and a teardown that raises escapes Flask after the
    response was made: the client would get the WSGI server's bare HTML 500 instead of it.
    """
    from .extensions import db

    try:
        db.session.remove()
    except Exception:  # noqa: BLE001 - nothing is left to undo on a connection the database closed
        log.warning(
            "database connection lost before the session closed; session dropped", exc_info=True
        )
        db.session.registry.clear()


def register_error_handlers(app):
    """Attach the renderers and the X-Request-ID header to every response."""
    app.register_error_handler(DomainError, render_api_error)
    app.register_error_handler(HTTPException, render_http_exception)
    app.register_error_handler(Exception, render_unexpected)
    # Registered after Flask-SQLAlchemy's, so it runs first and leaves that one nothing to close.
    app.teardown_appcontext(remove_session)

    @app.after_request
    def add_request_id(response):
        response.headers["X-Request-ID"] = request_id()
        return response
