"""The public page of a payment link, /pay/<slug>: the customer's answers, then the hosted
checkout."""

from flask import Blueprint, abort, redirect, render_template, request
from flask_wtf import FlaskForm
from werkzeug.exceptions import HTTPException

from ..domain_errors import ValidationFailed
from ..i18n import lazy_gettext as _l
from ..links.errors import LinkUnavailable
from ..links.links import find_link_by_slug
from ..links.paying import bounds_text, pay_through_link, unavailable_reason
from ..payments.lifecycle import checkout_url
from ..payments.methods import PROVIDER_NAMES
from ..rate_limits import limited
from .pages import allow_brand_logo, language_url, protect_response, render_http_error
from .presenters import KIND_NAMES, format_money, trx_id_help
from .theme import brand_theme

bp = Blueprint("pay_links", __name__, url_prefix="/pay")
bp.after_request(protect_response)


def render_link_error(error):
    """A refused request as a page: too many tries is said on the link's own page, the rest as at
    checkout.
    """
    if error.code == 429:
        link = find_link_by_slug((request.view_args or {}).get("slug"))
        if link is not None:
            return render_link(link, 429, template="pay/unavailable.html", reason="busy")
    return render_http_error(error)


bp.register_error_handler(HTTPException, render_link_error)
# Each submission creates a payment and holds a slot: a visitor gets a few a minute, not a flood.
LINK_SUBMIT_LIMIT = "10/minute;60/hour"
# The customer's own language for the domain's refusals (which speak English to the API).
ANSWER_ERRORS = {
    "required": _l("Please fill this in."),
    "too_long": _l("This answer is too long."),
    "invalid": _l("Enter a mobile number such as 01712345678."),
}
AMOUNT_ERRORS = {
    "invalid": _l("Enter an amount such as 500 or 500.50."),
    "too_small": _l("The amount is below what this link accepts."),
    "too_large": _l("The amount is above what this link accepts."),
}
FIELD_LABELS = {
    "name": _l("Your name"),
    "phone": _l("Your mobile number"),
    "address": _l("Delivery address"),
    "text": _l("Note"),
}


class LinkForm(FlaskForm):
    """Only the CSRF token: the link's own fields are read by the domain from the posted form."""


def render_link(link, status=200, **context):
    """A link page in the brand's name and colours."""
    brand = link.brand
    allow_brand_logo(brand)
    context.setdefault("errors", {})
    context.setdefault("values", {})
    return render_template(
        context.pop("template", "pay/link.html"),
        link=link,
        brand=brand,
        payment=None,
        theme=brand_theme(brand),
        language_url=language_url,
        provider_names=PROVIDER_NAMES,
        kind_names=KIND_NAMES,
        trx_id_help=trx_id_help,
        field_labels=FIELD_LABELS,
        fixed_amount_text=format_money(link.amount, link.currency) if link.amount else None,
        bounds=bounds_text(link),
        **context,
    ), status


def render_unavailable(link, reason):
    """The clear page of a link that takes no payments now: 410 Gone, never an error."""
    return render_link(link, 410, template="pay/unavailable.html", reason=reason)


def link_or_404(slug):
    """The link behind the slug, or the checkout's not-found page."""
    link = find_link_by_slug(slug)
    if link is None:
        abort(404)
    return link


@bp.get("/<slug>")
def link_page(slug):
    """What the customer sees: the title, the amount (or a box for it) and the link's questions."""
    link = link_or_404(slug)
    reason = unavailable_reason(link)
    if reason:
        return render_unavailable(link, reason)
    return render_link(link, form=LinkForm())


@bp.post("/<slug>")
@limited(LINK_SUBMIT_LIMIT, scope="pay-link")
def pay(slug):
    """Check the answers, create the payment, and send the customer to its checkout."""
    link = link_or_404(slug)
    form = LinkForm()
    if not form.validate_on_submit():
        abort(400)
    try:
        payment = pay_through_link(link, request.form.get("amount"), request.form)
    except LinkUnavailable as error:
        return render_unavailable(link, error.reason)
    except ValidationFailed as error:
        errors = {}
        for item in error.errors or []:
            table = AMOUNT_ERRORS if item["field"] == "amount" else ANSWER_ERRORS
            errors[item["field"]] = table.get(item["code"], ANSWER_ERRORS["required"])
        values = {key: request.form.get(key, "")[:600] for key in request.form}
        return render_link(link, 422, form=form, errors=errors, values=values)
    return redirect(checkout_url(payment), 303)
