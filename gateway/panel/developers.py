"""Developers, the API keys tab (super-administrators): generate a key shown once, list keys, revoke
by label.
"""

from flask import abort, flash, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_login import current_user

from ..accounts.api_keys import generate_key, list_keys, revoke_key
from ..answer_commit import unit_of_work
from ..domain_errors import DomainError
from ..errors import http_status
from . import bp
from .access import API_KEYS_MANAGE, current_brand, panel_livemode, requires
from .audit import record_audit
from .forms import attach_error
from .forms_developers import ApiKeyForm, RevokeKeyForm


def render_keys(form=None, status=200, created=None, secret=None):
    """The keys tab; right after generating, the new key's secret, once."""
    return render_template(
        "panel/developers_api_keys.html",
        keys=list_keys(current_brand()),
        form=form if form is not None else ApiKeyForm(formdata=None),
        created=created,
        secret=secret,
    ), status


def active_key(label):
    """The brand's active key with this label, or None."""
    return next(
        (key for key in list_keys(current_brand()) if key.active and key.label == label), None
    )


@bp.get("/developers")
@requires(API_KEYS_MANAGE)
def developers():
    """The Developers area opens on its API keys tab."""
    return redirect(url_for("panel.api_keys"))


@bp.get("/developers/api-keys")
@requires(API_KEYS_MANAGE)
def api_keys():
    """Every key of the brand, newest first, revoked ones included for the record."""
    return render_keys()


@bp.post("/developers/api-keys")
@requires(API_KEYS_MANAGE)
def api_key_generate():
    """Generate a key of the mode the panel shows (a test key while viewing test data); its secret
    is rendered in this answer only and is never stored."""
    form = ApiKeyForm()
    if not form.validate_on_submit():
        return render_keys(form, 422)
    try:
        with unit_of_work():
            key, secret = generate_key(
                current_brand(), form.label.data, form.scopes.data, livemode=panel_livemode()
            )
            record_audit(
                current_user,
                "api_key.generate",
                key,
                {
                    "label": key.label,
                    "scopes": key.scopes,
                    "display_prefix": key.display_prefix,
                    "livemode": key.livemode,
                },
            )
    except DomainError as error:
        attach_error(form, error)
        return render_keys(form, http_status(error))
    # Rendered, not redirected: the secret must not survive in a session or a URL.
    return render_keys(created=key, secret=secret)


@bp.get("/developers/api-keys/revoke")
@requires(API_KEYS_MANAGE)
def api_key_revoke_confirm():
    """Ask before revoking: the label is typed again, and what stops working is said."""
    key = active_key(request.args.get("label", ""))
    if key is None:
        abort(404)
    form = RevokeKeyForm(formdata=None, label=key.label)
    return render_template("panel/developers_api_key_revoke.html", key=key, form=form)


@bp.post("/developers/api-keys/revoke")
@requires(API_KEYS_MANAGE)
def api_key_revoke():
    """Revoke the active key with this label: its next request fails with 401 INVALID_TOKEN."""
    form = RevokeKeyForm()
    if not form.validate_on_submit():
        key = active_key(form.label.data or "")
        if key is None:
            abort(404)
        return render_template("panel/developers_api_key_revoke.html", key=key, form=form), 422
    # No active key by that label (revoked meanwhile, or another brand's) is a 404 page.
    with unit_of_work():
        key = revoke_key(current_brand(), label=form.label.data)
        record_audit(
            current_user,
            "api_key.revoke",
            key,
            {"label": key.label, "display_prefix": key.display_prefix},
        )
    flash(
        _(
            "The key %(label)s is revoked; requests with it are refused from now on.",
            label=key.label,
        ),
        "success",
    )
    return redirect(url_for("panel.api_keys"))
