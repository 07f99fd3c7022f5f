"""Payment links in the panel: the list, the form to create or change one, its page with QR and
sharing.
"""

from datetime import datetime, time, timezone
from urllib.parse import quote

import segno
from flask import flash, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_login import current_user
from markupsafe import Markup
from wtforms import DateField, IntegerField, SelectField, StringField, TextAreaField
from wtforms.validators import URL, DataRequired, Length, NumberRange, Optional, ValidationError

from ..answer_commit import unit_of_work
from ..api.paging import paginate
from ..domain_errors import DomainError
from ..errors import http_status
from ..i18n import lazy_gettext as _l
from ..links import links as link_service
from ..money import InvalidAmount, parse_amount
from ..states import LINK_ACTIVE, LINK_DISABLED
from . import bp
from .access import LINKS_MANAGE, VIEW, current_brand, panel_livemode, requires
from .audit import record_audit
from .devices import unreachable_by_phone
from .formatting import current_zone
from .forms import ActionForm, PanelForm, attach_error, options, strip
from .payments import PER_PAGE, page_number

ASK_CHOICES = [("off", _l("Don't ask")), ("optional", _l("Optional")), ("required", _l("Required"))]


def ask_choices():
    """The three answers to "ask the customer for this?" as select options."""
    return options(ASK_CHOICES)


ASKED_KINDS = ("name", "phone", "address", "text")
# How the link's page lists what a link asks for.
FIELD_NAMES = {
    "name": _l("Name"),
    "phone": _l("Phone"),
    "address": _l("Address"),
    "text": _l("Note"),
}


# The link service's refusals, in the panel's language (the API answers them in English).
REFUSALS = {
    "The maximum must not be less than the minimum.": _l(
        "The maximum must not be less than the minimum."
    ),
    "Give a fixed amount, or a minimum and maximum, not both.": _l(
        "Give a fixed amount, or a minimum and maximum, not both."
    ),
    "Choose another address.": _l("This address is taken; choose another."),
    "The limit cannot be below the payments the link already holds.": _l(
        "The limit cannot be below the payments the link already holds."
    ),
    "Use 3 to 64 lower-case letters, digits and single hyphens, "
    "starting and ending with a letter or digit.": _l(
        "Use 3 to 64 lower-case letters, digits and single hyphens, "
        "starting and ending with a letter or digit."
    ),
}


def in_page_language(error):
    """The service's refusal with each known message in the page's language."""
    for item in error.errors or []:
        item["message"] = REFUSALS.get(item["message"], item["message"])
    return error


def amount_or_none(field):
    """A StringField's amount as Decimal, None when empty; a ValidationError when not an amount."""
    if not field.data:
        field.data = None
        return
    try:
        field.data = parse_amount(field.data.replace(",", ""))
    except InvalidAmount:
        raise ValidationError(_l("Enter an amount such as 500 or 500.50.")) from None
    if field.data <= 0:
        raise ValidationError(_l("Amount must be greater than zero."))


class LinkForm(PanelForm):
    """What a link asks for: title, amount (fixed or entered), the customer's details, limits."""

    title = StringField(_l("Title"), filters=[strip], validators=[DataRequired(), Length(max=200)])
    description = TextAreaField(
        _l("Description"), filters=[strip], validators=[Optional(), Length(max=2000)]
    )
    slug = StringField(
        _l("Link address"),
        filters=[strip],
        validators=[Optional(), Length(min=3, max=64)],
        description=_l("The end of the link: a-z, 0-9 and hyphens. Left empty, one is made."),
    )
    amount_kind = SelectField(
        _l("Amount"),
        choices=options([("fixed", _l("A fixed amount")), ("open", _l("The customer enters it"))]),
    )
    amount = StringField(_l("Fixed amount"), filters=[strip])
    min_amount = StringField(_l("Smallest amount"), filters=[strip])
    max_amount = StringField(_l("Largest amount"), filters=[strip])
    ask_name = SelectField(_l("Customer's name"), choices=ask_choices(), default="required")
    ask_phone = SelectField(
        _l("Customer's mobile number"), choices=ask_choices(), default="required"
    )
    ask_address = SelectField(_l("Delivery address"), choices=ask_choices(), default="off")
    ask_text = SelectField(_l("A question of your own"), choices=ask_choices(), default="off")
    text_label = StringField(
        _l("Your question"),
        filters=[strip],
        validators=[Optional(), Length(max=100)],
        description=_l("e.g. Size and colour"),
    )
    usage_limit = IntegerField(
        _l("Most payments"),
        validators=[Optional(), NumberRange(min=1, max=1_000_000)],
        description=_l(
            "Empty: no limit. A started payment holds its place until it is paid or ends."
        ),
    )
    expires_on = DateField(
        _l("Last day"),
        validators=[Optional()],
        description=_l("The link stops at the end of this day. Empty: it never expires."),
    )
    redirect_url = StringField(
        _l("Page after payment"),
        filters=[strip],
        validators=[Optional(), URL(require_tld=False), Length(max=2048)],
        description=_l("Optional: where the customer goes once paid."),
    )

    validate_amount = validate_min_amount = validate_max_amount = staticmethod(
        lambda form, field: amount_or_none(field)
    )

    def validate_amount_kind(self, field):
        """A fixed link needs its amount."""
        if field.data == "fixed" and not self.amount.data:
            self.amount.errors = list(self.amount.errors) + [_l("Enter the amount to pay.")]
            raise ValidationError(_l("Enter the amount to pay."))

    def link_data(self):
        """The domain's input for create_link / update_link."""
        fixed = self.amount_kind.data == "fixed"
        fields = []
        for kind in ASKED_KINDS:
            asked = getattr(self, f"ask_{kind}").data
            if asked != "off":
                label = self.text_label.data if kind == "text" else None
                fields.append({"kind": kind, "label": label, "required": asked == "required"})
        expires_at = None
        if self.expires_on.data:
            end = datetime.combine(self.expires_on.data, time.max, tzinfo=current_zone())
            expires_at = end.astimezone(timezone.utc)
        data = {
            "title": self.title.data,
            "description": self.description.data or None,
            "amount": self.amount.data if fixed else None,
            "min_amount": None if fixed else self.min_amount.data,
            "max_amount": None if fixed else self.max_amount.data,
            "custom_fields": fields,
            "usage_limit": self.usage_limit.data,
            "expires_at": expires_at,
            "redirect_url": self.redirect_url.data or None,
        }
        if self.slug.data:
            data["slug"] = self.slug.data
        return data

    def fill_from(self, link):
        """Show an existing link's values (GET of the edit page)."""
        self.title.data, self.description.data, self.slug.data = (
            link.title,
            link.description,
            link.slug,
        )
        self.amount_kind.data = "fixed" if link.amount is not None else "open"
        for name in ("amount", "min_amount", "max_amount"):
            value = getattr(link, name)
            getattr(self, name).data = f"{value:.2f}" if value is not None else ""
        asked = {item["kind"]: item for item in link.custom_fields or []}
        for kind in ASKED_KINDS:
            item = asked.get(kind)
            getattr(self, f"ask_{kind}").data = (
                "off" if item is None else "required" if item["required"] else "optional"
            )
        self.text_label.data = (asked.get("text") or {}).get("label") or ""
        self.usage_limit.data = link.usage_limit
        self.expires_on.data = (
            link.expires_at.astimezone(current_zone()).date() if link.expires_at else None
        )
        self.redirect_url.data = link.redirect_url or ""


def qr_code(url):
    """An inline SVG QR code of the link's address."""
    svg = segno.make(url, error="m").svg_inline(
        scale=1, border=2, dark="#111827", light="#ffffff", omitsize=True, svgclass="qr"
    )
    return Markup(svg.replace("<svg ", '<svg role="img" aria-label="QR" ', 1))


def share_links(link, url):
    """Plain share addresses (no third-party script): WhatsApp, Messenger, SMS."""
    text = quote(f"{link.title} {url}")
    return {
        "whatsapp": f"https://wa.me/?text={text}",
        "messenger": f"fb-messenger://share/?link={quote(url, safe='')}",
        "sms": f"sms:?&body={text}",
    }


def link_by_id(link_id):
    """The brand's link by its public id; 404 for anything else."""
    return link_service.get_link(current_brand(), link_id, panel_livemode())


@bp.get("/links")
@requires(VIEW)
def links():
    """Every payment link of the brand with what it has taken."""
    rows, meta = paginate(
        link_service.list_links_query(current_brand(), livemode=panel_livemode()),
        {"page": page_number(), "per_page": PER_PAGE},
    )
    return render_template(
        "panel/links.html",
        links=link_service.with_totals(rows),
        meta=meta,
        filters={},
        link_url=link_service.link_url,
    )


def save_link(form, link=None):
    """Create or change a link with its audit row; the link, or None with the errors on the form."""
    try:
        with unit_of_work():
            if link is None:
                link = link_service.create_link(current_brand(), form.link_data(), panel_livemode())
                record_audit(current_user, "payment_link.create", link, {"slug": link.slug})
            else:
                link = link_service.update_link(link, form.link_data())
                record_audit(current_user, "payment_link.update", link, {"slug": link.slug})
    except DomainError as error:
        attach_error(form, in_page_language(error))
        return None, http_status(error)
    return link, 200


@bp.route("/links/new", methods=["GET", "POST"])
@requires(LINKS_MANAGE)
def link_new():
    """The form of a new link."""
    form = LinkForm()
    status = 200
    if form.validate_on_submit():
        link, status = save_link(form)
        if link is not None:
            flash(_("The payment link is ready to share."), "success")
            return redirect(url_for("panel.link_detail", link_id=link.public_id))
    elif form.errors:
        status = 422
    return render_template("panel/links_form.html", form=form, link=None), status


@bp.route("/links/<link_id>/edit", methods=["GET", "POST"])
@requires(LINKS_MANAGE)
def link_edit(link_id):
    """Change a link's title, amount, questions or limits."""
    link = link_by_id(link_id)
    form = LinkForm()
    status = 200
    if request.method == "GET":
        form.fill_from(link)
    elif form.validate_on_submit():
        saved, status = save_link(form, link)
        if saved is not None:
            flash(_("The payment link is saved."), "success")
            return redirect(url_for("panel.link_detail", link_id=saved.public_id))
    else:
        status = 422
    return render_template("panel/links_form.html", form=form, link=link), status


@bp.get("/links/<link_id>")
@requires(VIEW)
def link_detail(link_id):
    """A link: its address, QR code, share buttons, totals and payments."""
    link = link_service.with_totals([link_by_id(link_id)])[0]
    url = link_service.link_url(link)
    rows, meta = paginate(
        link_service.link_payments_query(link), {"page": page_number(), "per_page": PER_PAGE}
    )
    return render_template(
        "panel/links_detail.html",
        link=link,
        url=url,
        qr=qr_code(url),
        share=share_links(link, url),
        # The pairing page's check: a loopback address works on this computer only.
        unreachable=unreachable_by_phone(url),
        brand_has_own_url=bool(link.brand.base_url),
        field_names=FIELD_NAMES,
        payments=rows,
        meta=meta,
        filters={},
    )


@bp.post("/links/<link_id>/<any(disable, enable):action>")
@requires(LINKS_MANAGE)
def link_status(link_id, action):
    """Turn a link off (or on again); payments already started can still be paid."""
    link = link_by_id(link_id)
    if ActionForm().validate_on_submit():
        with unit_of_work():
            link_service.set_link_status(
                link, LINK_DISABLED if action == "disable" else LINK_ACTIVE
            )
            record_audit(current_user, f"payment_link.{action}", link, {"slug": link.slug})
        flash(
            _("The link is turned off.") if action == "disable" else _("The link is on again."),
            "success",
        )
    return redirect(url_for("panel.link_detail", link_id=link.public_id))


@bp.app_template_global()
def payment_link_of(payment):
    """For a payment's page: the link it was made through and the customer's answers, or None."""
    return link_service.link_of_payment(payment.id)
