"""Rendering checkout pages: the shared context, the result pages, error pages and protective
headers.
"""

import re

from flask import g, render_template, request, url_for
from werkzeug.exceptions import HTTPException

from ..extensions import db
from ..money import plain_decimal
from ..payments.amounts import BDT
from ..payments.methods import PROVIDER_NAMES
from ..payments.models.payment import Payment
from ..security_headers import csp_source
from ..states import PAYMENT_CANCELLED, PAYMENT_COMPLETED, PAYMENT_EXPIRED, PAYMENT_FAILED
from .presenters import KIND_NAMES, format_money, return_url, trx_id_help
from .theme import brand_theme

# What secrets.token_urlsafe makes; anything else names no payment and never reaches the database.
TOKEN_SHAPE = re.compile(r"[A-Za-z0-9_-]+")
# Which result page each HTTP failure shows; the texts live in the template.
ERROR_KINDS = {400: "form_expired", 404: "not_found", 413: "too_large", 429: "rate_limited"}


def find_payment(token):
    """The payment behind a checkout token, or None (tokens are long and random; no brand scoping
    needed).
    """
    if not token or len(token) > 64 or not TOKEN_SHAPE.fullmatch(token):
        return None  # e.g. a NUL byte, which PostgreSQL refuses in a text parameter
    return db.session.execute(db.select(Payment).where(Payment.token == token)).scalar_one_or_none()


def page_url(payment):
    """The checkout page of a payment."""
    return url_for("checkout.checkout_page", token=payment.token)


def language_url(code):
    """This page in another language; pages answered to a POST switch on the checkout page
    instead."""
    token = (request.view_args or {}).get("token")
    if request.method == "GET" or not token:
        return (
            url_for(request.endpoint, **(request.view_args or {}), lang=code)
            if request.endpoint
            else f"{request.path}?lang={code}"
        )
    return url_for("checkout.checkout_page", token=token, lang=code)


def taka_line(payment):
    """(taka to send, rate) texts of a payment in another currency with a rate, else None:
    ("৳1,215.00", "৳121.5"), both fixed at creation (payments/amounts.py)."""
    if payment is None or payment.currency == BDT or payment.amount_bdt is None:
        return None
    return format_money(payment.amount_bdt, BDT), f"৳{plain_decimal(payment.exchange_rate)}"


def allow_brand_logo(brand):
    """Let the page's policy load the brand's logo from its origin: only a plain origin passes
    (security_headers.csp_source), whatever an older row stored."""
    g.checkout_logo_origin = csp_source(brand.logo_url)


def render_checkout(template, payment=None, status=200, brand=None, **context):
    """A checkout template in the brand's name and colours (the payment's brand, or `brand` when
    there is no payment), with the payment's amount ready to show."""
    brand = payment.brand if payment is not None else brand
    if brand is not None:
        allow_brand_logo(brand)
    if payment is not None:
        # The cancel and claim forms end in a 303 to the shop, which form-action also governs.
        g.checkout_form_origins = [
            origin
            for origin in (csp_source(payment.cancel_url), csp_source(payment.redirect_url))
            if origin
        ]
    context.update(
        payment=payment,
        brand=brand,
        theme=brand_theme(brand),
        language_url=language_url,
        provider_names=PROVIDER_NAMES,
        kind_names=KIND_NAMES,
        trx_id_help=trx_id_help,
        amount_text=format_money(payment.amount, payment.currency) if payment is not None else None,
        taka_line=taka_line(payment),
    )
    return render_template(template, **context), status


def render_result(kind, payment=None, status=200):
    """A final page (completed, cancelled, expired, failed) or a failure page, with the way back to
    the shop.
    """
    back_url = None
    if payment is not None and kind == PAYMENT_COMPLETED:
        back_url = return_url(payment.redirect_url, payment, PAYMENT_COMPLETED)
    elif payment is not None and kind in (PAYMENT_CANCELLED, PAYMENT_EXPIRED, PAYMENT_FAILED):
        back_url = return_url(
            payment.cancel_url, payment, payment.status if kind != PAYMENT_EXPIRED else kind
        )
    return render_checkout("checkout/result.html", payment, status, kind=kind, back_url=back_url)


def render_http_error(error):
    """Any HTTP failure under /checkout as a page in the brand's look, never a trace."""
    kind = ERROR_KINDS.get(error.code, "error")
    payment = find_payment((request.view_args or {}).get("token")) if kind != "not_found" else None
    return render_result(kind, payment, error.code)


def protect_response(response):
    """No caching of payment pages, nothing from other origins (the Referrer-Policy that keeps the
    token from other sites, and no framing, are every answer's: gateway/security_headers.py).

    Forms may post only here (and follow our redirect to the shop's own return addresses); no
    <base>.
    """
    logo = g.get("checkout_logo_origin", "")
    form_targets = " ".join(["'self'", *dict.fromkeys(g.get("checkout_form_origins", []))])
    response.headers["Cache-Control"] = "no-store"
    response.headers["Content-Security-Policy"] = (
        "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
        f"img-src 'self' data: {logo}".rstrip()
        + f"; object-src 'none'; base-uri 'none'; form-action {form_targets}; "
        "frame-ancestors 'none'"
    )
    return response


def register_pages(blueprint):
    """Attach the error page and the headers to the checkout blueprint."""
    blueprint.register_error_handler(HTTPException, render_http_error)
    blueprint.after_request(protect_response)
