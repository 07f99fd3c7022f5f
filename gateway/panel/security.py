"""The brand's security policy (owners only): two-factor sign-in required, and the staff refund
limit.
"""

from flask import flash, redirect, render_template, url_for
from flask_babel import gettext as _
from flask_login import current_user

from ..accounts.brands import update_brand_settings
from ..answer_commit import unit_of_work
from ..domain_errors import DomainError
from ..money import format_amount
from . import bp
from .access import SECURITY_MANAGE, current_brand, requires
from .audit import record_audit
from .forms import attach_error
from .forms_security import SecurityForm


def audited(changed):
    """The changes as the audit log stores them (amounts as strings)."""
    return {
        name: [format_amount(value) if name == "staff_refund_limit" else value for value in pair]
        for name, pair in changed.items()
    }


@bp.route("/settings/security", methods=["GET", "POST"])
@requires(SECURITY_MANAGE)
def security_settings():
    """Require two-factor sign-in for owners and admins; set how much staff may refund."""
    brand = current_brand()
    form = SecurityForm(
        data={
            "require_two_factor": brand.require_two_factor,
            "staff_refund_limit": format_amount(brand.staff_refund_limit) or "",
        }
    )
    if form.validate_on_submit():
        try:
            with unit_of_work():
                changed = update_brand_settings(
                    brand,
                    {
                        "require_two_factor": form.require_two_factor.data,
                        "staff_refund_limit": form.staff_refund_limit.data,
                    },
                )
                if changed:
                    record_audit(current_user, "settings.security", brand, audited(changed))
        except DomainError as error:
            attach_error(form, error)
        else:
            flash(_("Security settings saved."), "success")
            return redirect(url_for("panel.security_settings"))
    status = 422 if form.errors else 200
    return render_template("panel/security_settings.html", form=form), status
