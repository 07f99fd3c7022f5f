"""Settings: a wallet's API method (bKash tokenized checkout): added with its credentials sealed,
and the "test the credentials" button; both audited (docs/wallet-apis.md)."""

from flask import flash, redirect, url_for
from flask_babel import gettext as _
from flask_login import current_user

from ..answer_commit import unit_of_work
from ..domain_errors import DomainError
from ..errors import http_status
from ..payments.methods import PROVIDER_NAMES, get_method
from ..wallets import provider_api
from ..wallets.credentials import add_api_method
from . import bp
from .access import SETTINGS_MANAGE, current_brand, requires
from .audit import record_audit
from .forms import ActionForm, attach_error
from .forms_wallets import WalletApiMethodForm
from .settings import render_settings


@bp.post("/settings/methods/wallet-api")
@requires(SETTINGS_MANAGE)
def settings_wallet_method_add():
    """Add a wallet's API method; a refused field is shown next to its input, no secret echoed."""
    form = WalletApiMethodForm(prefix="wallet")
    if not form.validate_on_submit():
        return render_settings(wallet_form=form, status=422)
    try:
        with unit_of_work():
            method = add_api_method(
                current_brand(),
                form.provider.data,
                form.base_url.data,
                form.secrets(),
                display_name=form.display_name.data,
            )
            base_url = form.base_url.data.strip().rstrip("/")
            record_audit(
                current_user,
                "payment_method.add",
                method,
                {"provider": method.provider, "kind": method.kind, "base_url": base_url},
            )
    except DomainError as error:
        attach_error(form, error)
        return render_settings(wallet_form=form, status=http_status(error))
    flash(
        _(
            "%(provider)s API added. Test the credentials before customers use it.",
            provider=PROVIDER_NAMES[method.provider],
        ),
        "success",
    )
    return redirect(url_for("panel.settings", _anchor="methods"))


@bp.post("/settings/methods/<int:method_id>/check")
@requires(SETTINGS_MANAGE)
def settings_wallet_method_check(method_id):
    """Ask the wallet for a token with the method's credentials and say what it answered."""
    method = get_method(current_brand(), method_id)
    if not method.is_wallet_api or not ActionForm().validate_on_submit():
        return redirect(url_for("panel.settings", _anchor="methods"))
    ok, message = provider_api(method.provider).check_credentials(method)
    with unit_of_work():
        record_audit(
            current_user,
            "payment_method.check_credentials",
            method,
            {"provider": method.provider, "ok": ok, "answer": message[:200]},
        )
    if ok:
        flash(_("The credentials work: %(answer)s", answer=message), "success")
    else:
        flash(_("The credentials did not work: %(answer)s", answer=message), "error")
    return redirect(url_for("panel.settings", _anchor="methods"))
