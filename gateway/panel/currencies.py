"""Settings → Currencies (owners and admins): the currencies the brand accepts beside BDT, each
one's rate to the taka (by hand or from the brand's rate feed), and the feed's URL and last error.
"""

from flask import flash, redirect, render_template, url_for
from flask_babel import gettext as _
from flask_login import current_user
from wtforms import StringField
from wtforms.validators import DataRequired, Length, Optional

from ..answer_commit import unit_of_work
from ..domain_errors import DomainError
from ..i18n import lazy_gettext as _l
from ..money import plain_decimal
from ..payments.amounts import BDT
from ..payments.currencies import accept_currency, brand_rates, stop_accepting
from ..payments.rate_feed import feed_of, refresh_brand_rates, set_feed_url
from . import bp
from .access import SETTINGS_MANAGE, current_brand, requires
from .audit import record_audit
from .forms import ActionForm, PanelForm, attach_error, strip


class CurrencyForm(PanelForm):
    code = StringField(_l("Currency"), filters=[strip], validators=[DataRequired(), Length(max=20)])
    rate = StringField(
        _l("Taka per unit"),
        filters=[strip],
        validators=[DataRequired(), Length(max=30)],
        description=_l("What one unit is worth in taka, e.g. 121.50 for USD."),
    )


class FeedForm(PanelForm):
    feed_url = StringField(
        _l("Rate feed URL"),
        filters=[strip],
        validators=[Optional(), Length(max=2048)],
        description=_l('Answers JSON such as {"rates": {"USD": 121.5}}. Empty: no feed.'),
    )


def render_currencies(form=None, feed_form=None, status=200):
    """The page: each accepted currency with its rate, the add-or-change form, the feed."""
    brand = current_brand()
    feed = feed_of(brand)
    return render_template(
        "panel/currencies.html",
        rates=brand_rates(brand),
        bdt=BDT,
        plain_rate=plain_decimal,
        form=form or CurrencyForm(formdata=None),
        feed_form=feed_form or FeedForm(formdata=None, feed_url=feed.url if feed else ""),
        feed=feed,
    ), status


@bp.get("/settings/currencies")
@requires(SETTINGS_MANAGE)
def settings_currencies():
    """The brand's currencies and rates."""
    return render_currencies()


@bp.post("/settings/currencies")
@requires(SETTINGS_MANAGE)
def settings_currency_set():
    """Accept a currency at a rate, or change its rate (new payments only); audited."""
    form = CurrencyForm()
    if not form.validate_on_submit():
        return render_currencies(form, status=422)
    brand = current_brand()
    try:
        with unit_of_work():
            details = accept_currency(brand, form.code.data, form.rate.data, current_user.email)
            record_audit(
                current_user,
                "currency.accept" if details.get("accepted") else "currency.rate",
                ("currency", details["code"]),
                details,
            )
    except DomainError as error:
        attach_error(form, error)
        return render_currencies(form, status=422)
    flash(
        _("%(code)s: %(rate)s taka per unit.", code=details["code"], rate=details["rate"][1]),
        "success",
    )
    return redirect(url_for("panel.settings_currencies"))


@bp.post("/settings/currencies/<code>/stop")
@requires(SETTINGS_MANAGE)
def settings_currency_stop(code):
    """Stop accepting a currency: new payments in it are refused; made ones keep their rate."""
    if not ActionForm().validate_on_submit():
        return redirect(url_for("panel.settings_currencies"))
    try:
        with unit_of_work():
            details = stop_accepting(current_brand(), code)
            record_audit(current_user, "currency.stop", ("currency", details["code"]), details)
    except DomainError as error:
        flash(error.errors[0]["message"] if error.errors else error.message, "error")
        return redirect(url_for("panel.settings_currencies"))
    flash(_("%(code)s is no longer accepted.", code=details["code"]), "success")
    return redirect(url_for("panel.settings_currencies"))


@bp.post("/settings/currencies/feed")
@requires(SETTINGS_MANAGE)
def settings_currency_feed():
    """Save the rate feed's URL (empty: no feed); audited."""
    feed_form = FeedForm()
    if not feed_form.validate_on_submit():
        return render_currencies(feed_form=feed_form, status=422)
    try:
        with unit_of_work():
            old, new = set_feed_url(current_brand(), feed_form.feed_url.data)
            if old != new:
                record_audit(
                    current_user, "currency.feed", current_brand(), {"feed_url": [old, new]}
                )
    except DomainError as error:
        attach_error(feed_form, error)
        return render_currencies(feed_form=feed_form, status=422)
    flash(_("Rate feed saved.") if new else _("Rate feed removed."), "success")
    return redirect(url_for("panel.settings_currencies"))


@bp.post("/settings/currencies/feed/fetch")
@requires(SETTINGS_MANAGE)
def settings_currency_feed_fetch():
    """Fetch the feed now (as the hourly job does); each rate it changes is audited."""
    if ActionForm().validate_on_submit():
        problems = refresh_brand_rates(current_brand())
        if problems:
            flash(_("The feed failed: %(problem)s", problem=" ".join(problems)), "error")
        else:
            flash(_("Rates fetched from the feed."), "success")
    return redirect(url_for("panel.settings_currencies"))
