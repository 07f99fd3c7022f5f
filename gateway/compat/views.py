"""The compatibility blueprint: every dialect path at the origin's root, and the customer's
return."""

import logging
import secrets
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from flask import Blueprint, abort, g, make_response, redirect, render_template, request
from werkzeug.exceptions import HTTPException

from ..db_types import UNSTORABLE_MESSAGE, unstorable
from ..extensions import db
from ..livemode import use_livemode
from ..payments.lifecycle import checkout_url
from . import piprapay2, piprapay3, uddoktapay
from .core import (
    CompatError,
    create_dialect_payment,
    find_by_provider_trx,
    find_dialect_payment,
    refund_dialect_payment,
)
from .dialects import dialect_of
from .keys import find_compat_key
from .models.compat import CompatPayment

log = logging.getLogger(__name__)
bp = Blueprint("compat", __name__)
# Every method is routed here, so that a GET gets the dialect's refusal, not the native envelope.
METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"]
U_CREATE = (
    "/api/checkout-v2",
    "/api/checkout-v2/global",
    "/api/checkout-v2/mfs",
    "/api/checkout-v2/bank",
    "/api/checkout",
)


def request_body():
    """The JSON object sent (or a form's fields); INVALID_JSON_PAYLOAD for anything else, and
    INVALID_REQUEST naming the fields holding a value no column can take (NUL, NaN, …)."""
    body = request.get_json(silent=True, force=True) if request.data else None
    if body is None and request.form:
        body = request.form.to_dict()
    if not isinstance(body, dict):
        raise CompatError("INVALID_JSON_PAYLOAD", "The request body must be a JSON object.")
    bad = [
        ascii(name)[1:-1] if unstorable(name) else name  # a bad name is shown escaped
        for name, value in body.items()
        if unstorable(name) or unstorable(value)
    ]
    if bad:
        raise CompatError("INVALID_REQUEST", f"{', '.join(bad)}: {UNSTORABLE_MESSAGE}", bad)
    return body


def caller_key(dialect):
    """The active key of this dialect sent in its header; INVALID_API_KEY otherwise."""
    if request.method != "POST":
        raise CompatError("INVALID_REQUEST", "Use POST.")
    secret = next(
        (request.headers[name] for name in dialect.KEY_HEADERS if name in request.headers), ""
    )
    key = find_compat_key(secret.strip())
    if key is None or key.dialect != dialect.NAME:
        raise CompatError("INVALID_API_KEY", "Invalid API key.")
    use_livemode(key.livemode)  # a test key sees and makes test payments only
    return key


def key_name(key):
    """The key as the audit log's Who column names it."""
    return f"Compatibility key #{key.id}"


def speak(dialect, operation):
    """Run an operation for a dialect; its refusals leave in the dialect's shape, never ours."""
    g.compat_dialect = dialect
    try:
        return operation(caller_key(dialect))
    except CompatError as error:
        db.session.rollback()
        return dialect.error_response(error)


def create(dialect):
    """Create a payment from the dialect's body and answer with its checkout URL."""

    def operation(key):
        fields = dialect.read_create(request_body(), key.brand)
        row, url = create_dialect_payment(key, fields)
        return dialect.created(row, url)

    return speak(dialect, operation)


def verify(dialect):
    """The dialect's view of one payment, found by its dialect id."""

    def operation(key):
        body = request_body()
        row = find_dialect_payment(key, body.get(dialect.ID_FIELD), dialect.ID_FIELD)
        return dialect.payment_object(row)

    return speak(dialect, operation)


def shared_dialect():
    """U or P3 on the paths both use: by the key header sent, else by the id field in the body."""
    if "RT-UDDOKTAPAY-API-KEY" in request.headers:
        return uddoktapay
    if any(name in request.headers for name in piprapay3.KEY_HEADERS):
        return piprapay3
    body = request.get_json(silent=True, force=True) if request.data else None
    return piprapay3 if isinstance(body, dict) and "pp_id" in body else uddoktapay


def refund_u(key):
    """UddoktaPay's refund: by provider TrxID (or invoice_id), all or `amount` of it."""
    fields = uddoktapay.refund_fields(request_body())
    if fields["transaction_id"]:
        row = find_by_provider_trx(key, fields["transaction_id"])
    else:
        row = find_dialect_payment(key, fields["invoice_id"], "invoice_id")
    refund_dialect_payment(row, fields["amount"], fields["reason"], key_name(key))
    return {"status": True, "message": "Refund completed"}


def refund_p3(key):
    """PipraPay 3's refund: all of a completed payment, answered with the refunded object."""
    body = request_body()
    row = find_dialect_payment(key, body.get("pp_id"), "pp_id")
    refund_dialect_payment(row, None, body.get("reason"), key_name(key))
    return piprapay3.payment_object(row)


for path in U_CREATE:
    bp.add_url_rule(
        path, f"u_create_{path.rsplit('/', 1)[-1]}", lambda: create(uddoktapay), methods=METHODS
    )
bp.add_url_rule("/api/create-charge", "p2_create", lambda: create(piprapay2), methods=METHODS)
bp.add_url_rule("/api/verify-payments", "p2_verify", lambda: verify(piprapay2), methods=METHODS)
bp.add_url_rule("/api/checkout/redirect", "p3_create", lambda: create(piprapay3), methods=METHODS)
bp.add_url_rule(
    "/api/checkout/popup", "p3_create_popup", lambda: create(piprapay3), methods=METHODS
)


@bp.route("/api/verify-payment", methods=METHODS)
def verify_payment():
    """Shared by U (invoice_id) and P3 (pp_id)."""
    return verify(shared_dialect())


@bp.route("/api/refund-payment", methods=METHODS)
def refund_payment():
    """Shared by U (transaction_id) and P3 (pp_id)."""
    dialect = shared_dialect()
    return speak(dialect, refund_u if dialect is uddoktapay else refund_p3)


@bp.errorhandler(HTTPException)
def dialect_http_error(error):
    """A too large body or a rate limit on these paths, in the dialect's shape."""
    dialect = g.get("compat_dialect") or uddoktapay
    return dialect.error_response(CompatError("INVALID_REQUEST", error.description or error.name))


@bp.errorhandler(Exception)
def dialect_unexpected(error):
    """Anything unforeseen: logged with its trace, answered in the dialect's shape."""
    log.exception("compatibility request failed")
    db.session.rollback()
    dialect = g.get("compat_dialect") or uddoktapay
    response = dialect.error_response(CompatError("INTERNAL_ERROR", "Internal error."))
    response.status_code = 500
    return response


# The customer's browser coming back, not a plugin calling: a blueprint of its own, so an unknown
# token gets the site's own 404 page rather than the dialects' JSON errors above.
return_bp = Blueprint("compat_return", __name__)


@return_bp.route("/compat/return/<token>", methods=["GET", "POST"])
def customer_return(token):
    """Send the customer back to the shop the way the dialect's plugin expects."""
    row = db.session.execute(
        db.select(CompatPayment).where(CompatPayment.return_token == token)
    ).scalar_one_or_none()  # a token no row can hold is 404 before (request_limits.py)
    if row is None:
        abort(404)
    db.session.refresh(row.payment)
    dialect = dialect_of(row.dialect)
    base, pairs = dialect.back_query(row)
    if not base:
        return redirect(checkout_url(row.payment), 303)
    if dialect is piprapay2 and row.return_type == "POST":
        return post_return_page(base, pairs)
    return redirect(with_query(base, pairs), 303)


def with_query(base, pairs):
    """The merchant URL with our pairs added, any query it already had kept (same names
    replaced)."""
    parts = urlsplit(base)
    names = {name for name, _ in pairs}
    query = [
        (name, value)
        for name, value in parse_qsl(parts.query, keep_blank_values=True)
        if name not in names
    ]
    return urlunsplit(parts._replace(query=urlencode(query + pairs)))


def post_return_page(action, pairs):
    """PipraPay 2's POST return: a form that submits itself, with a button for browsers without
    script.
    """
    nonce = secrets.token_urlsafe(16)
    page = render_template("compat/post_return.html", action=action, fields=pairs, nonce=nonce)
    response = make_response(page)
    response.headers["Content-Security-Policy"] = (
        f"default-src 'none'; script-src 'nonce-{nonce}'; style-src 'unsafe-inline'; "
        "base-uri 'none'; frame-ancestors 'none'"
    )
    response.headers["Cache-Control"] = "no-store"
    return response
