"""Settings (super-administrators): the brand's name and look, its currencies, and the receiving
numbers.
"""

from flask import flash, redirect, render_template, url_for
from flask_babel import gettext as _
from flask_login import current_user

from ..accounts.brands import update_brand_settings
from ..answer_commit import unit_of_work
from ..domain_errors import DomainError
from ..errors import http_status
from ..payments.currencies import forget_unlisted_rates
from ..payments.fees import FEE_FIELDS, fee_example
from ..payments.methods import (
    LISTED_BANKS,
    PROVIDER_NAMES,
    add_account_method,
    add_method,
    get_method,
    list_methods,
    update_method,
)
from ..wallets.credentials import masked
from . import bp
from .access import SETTINGS_MANAGE, current_brand, requires
from .audit import record_audit
from .forms import (
    AccountMethodForm,
    ActionForm,
    MethodFeeForm,
    MethodForm,
    SettingsForm,
    attach_error,
)
from .forms_wallets import WalletApiMethodForm

COMMON_ZONES = (
    "Asia/Dhaka",
    "Asia/Kolkata",
    "Asia/Karachi",
    "Asia/Dubai",
    "Asia/Singapore",
    "Europe/London",
    "UTC",
)


def settings_form(brand):
    """The brand form filled from the brand (the lifetime shown in minutes)."""
    form = SettingsForm(obj=brand)
    if not form.is_submitted():
        form.payment_ttl_minutes.data = brand.payment_ttl // 60 if brand.payment_ttl else None
    return form


def fee_prefix(method_id):
    """Each method's fee form has its own field names and ids on the one page."""
    return f"method-{method_id}"


def method_fee_form(method):
    """A method's fee form filled from the method (empty bounds stay empty)."""
    form = MethodFeeForm(formdata=None, prefix=fee_prefix(method.id))
    for name in FEE_FIELDS:
        value = getattr(method, name)
        getattr(form, name).data = "" if value is None else f"{value.normalize():f}"
    return form


def render_settings(
    settings=None,
    method_form=None,
    status=200,
    fee_form=None,
    fee_method=None,
    account_form=None,
    wallet_form=None,
):
    """The settings page: brand form, payment methods with their fees and a worked example, the
    add-a-number, add-an-account and add-a-wallet-API forms (panel/wallet_methods.py); `fee_form`
    carries errors for the method `fee_method`."""
    brand = current_brand()
    methods = list_methods(brand)
    fee_forms = {method.id: method_fee_form(method) for method in methods}
    if fee_form is not None:
        fee_forms[fee_method] = fee_form
    return render_template(
        "panel/settings.html",
        form=settings or settings_form(brand),
        method_form=method_form or MethodForm(formdata=None),
        methods=methods,
        fee_forms=fee_forms,
        fee_examples={method.id: fee_example(method) for method in methods},
        fee_error_method=fee_method,
        account_form=account_form or AccountMethodForm(formdata=None, prefix="account"),
        wallet_form=wallet_form or WalletApiMethodForm(formdata=None, prefix="wallet"),
        wallet_credentials={
            method.id: masked(method)[1] for method in methods if method.is_wallet_api
        },
        listed_banks=LISTED_BANKS,
        zones=COMMON_ZONES,
    ), status


@bp.route("/settings", methods=["GET", "POST"])
@requires(SETTINGS_MANAGE)
def settings():
    """Edit the brand's settings; every change lands in the audit log with its old and new value."""
    brand = current_brand()
    form = settings_form(brand)
    if form.validate_on_submit():
        minutes = form.payment_ttl_minutes.data
        try:
            with unit_of_work():
                changed = update_brand_settings(
                    brand,
                    {
                        "name": form.name.data,
                        "logo_url": form.logo_url.data,
                        "primary_color": form.primary_color.data,
                        "base_url": form.base_url.data,
                        "timezone": form.timezone.data,
                        "currencies": form.currencies.data,
                        "payment_ttl": minutes * 60 if minutes else None,
                        "receipt_sms_enabled": form.receipt_sms_enabled.data,
                        "refund_fee": form.refund_fee.data,
                    },
                )
                if "currencies" in changed:
                    forget_unlisted_rates(brand)
                if changed:
                    record_audit(current_user, "settings.update", brand, changed)
        except DomainError as error:
            if error.errors and error.errors[0]["field"] == "payment_ttl":
                error.errors[0]["field"] = "payment_ttl_minutes"
            attach_error(form, error)
            return render_settings(form, status=422)
        flash(_("Settings saved."), "success")
        return redirect(url_for("panel.settings"))
    return render_settings(form, status=422 if form.is_submitted() else 200)


@bp.post("/settings/methods")
@requires(SETTINGS_MANAGE)
def settings_method_add():
    """Add a receiving number for a provider."""
    form = MethodForm()
    if not form.validate_on_submit():
        return render_settings(method_form=form, status=422)
    try:
        with unit_of_work():
            method = add_method(
                current_brand(),
                form.provider.data,
                form.number.data,
                form.kind.data,
                instructions=form.instructions.data,
                ask_sender_number=form.ask_sender_number.data,
                **{name: getattr(form, name).data for name in FEE_FIELDS},
            )
            record_audit(
                current_user,
                "payment_method.add",
                method,
                {"provider": method.provider, "number": method.number},
            )
    except DomainError as error:
        attach_error(form, error)
        return render_settings(method_form=form, status=http_status(error))
    flash(
        _(
            "%(provider)s %(number)s added.",
            provider=PROVIDER_NAMES[method.provider],
            number=method.number,
        ),
        "success",
    )
    return redirect(url_for("panel.settings", _anchor="methods"))


@bp.post("/settings/methods/account")
@requires(SETTINGS_MANAGE)
def settings_account_method_add():
    """Add a manual or bank method; a refused field is shown next to its input."""
    form = AccountMethodForm(prefix="account")
    if not form.validate_on_submit():
        return render_settings(account_form=form, status=422)
    fields = {
        name: getattr(form, name).data
        for name in (
            "display_name",
            "bank_name",
            "account_name",
            "account_number",
            "bank_branch",
            "instructions",
            "instructions_bn",
            "proof",
        )
    }
    try:
        with unit_of_work():
            method = add_account_method(current_brand(), form.kind.data, **fields)
            record_audit(
                current_user,
                "payment_method.add",
                method,
                {
                    "kind": method.kind,
                    "name": method.display_name,
                    "account": method.account_number,
                },
            )
    except DomainError as error:
        attach_error(form, error)
        return render_settings(account_form=form, status=http_status(error))
    flash(_("%(name)s added.", name=method.display_name), "success")
    return redirect(url_for("panel.settings", _anchor="methods"))


@bp.post("/settings/methods/<int:method_id>/toggle")
@requires(SETTINGS_MANAGE)
def settings_method_toggle(method_id):
    """Switch a receiving number off (hidden at checkout) or back on."""
    method = get_method(current_brand(), method_id)
    if ActionForm().validate_on_submit():
        with unit_of_work():
            update_method(method, enabled=not method.enabled)
            record_audit(
                current_user,
                "payment_method.enable" if method.enabled else "payment_method.disable",
                method,
                {"provider": method.provider, "number": method.number},
            )
        # A wallet API method's number is a hidden key: it is named by its wallet instead.
        label = f"{PROVIDER_NAMES[method.provider]} API" if method.is_wallet_api else method.number
        flash(
            _("%(number)s is switched on.", number=label)
            if method.enabled
            else _("%(number)s is switched off.", number=label),
            "success",
        )
    return redirect(url_for("panel.settings", _anchor="methods"))


@bp.post("/settings/methods/<int:method_id>/fee")
@requires(SETTINGS_MANAGE)
def settings_method_fee(method_id):
    """Set the fee a receiving number passes to the customer; the change is audited."""
    method = get_method(current_brand(), method_id)
    form = MethodFeeForm(prefix=fee_prefix(method.id))
    if not form.validate_on_submit():
        return render_settings(status=422, fee_form=form, fee_method=method.id)
    before = {name: getattr(method, name) for name in FEE_FIELDS}
    try:
        with unit_of_work():
            update_method(method, **{name: getattr(form, name).data for name in FEE_FIELDS})
            changed = {
                name: [str(before[name]), str(getattr(method, name))]
                for name in FEE_FIELDS
                if before[name] != getattr(method, name)
            }
            if changed:
                record_audit(current_user, "payment_method.fee", method, changed)
    except DomainError as error:
        attach_error(form, error)
        return render_settings(status=http_status(error), fee_form=form, fee_method=method.id)
    flash(_("The fee of %(number)s is saved.", number=method.number), "success")
    return redirect(url_for("panel.settings", _anchor=f"method-{method.id}"))
