"""Forms of two-factor sign-in, the users page's roles and the brand's security policy."""

from wtforms import BooleanField, PasswordField, SelectField, StringField
from wtforms.validators import DataRequired, Length, ValidationError

from ..i18n import lazy_gettext as _l
from .forms import PanelForm, options, read_optional_amount, strip

ROLE_NAMES = {
    "owner": _l("Owner"),
    "admin": _l("Admin"),
    "staff": _l("Staff"),
    "viewer": _l("Viewer"),
}


def role_choices(roles):
    """Select options for the roles given, in the table's order."""
    return options((role, ROLE_NAMES[role]) for role in roles)


class CodeForm(PanelForm):
    code = StringField(
        _l("Code"),
        filters=[strip],
        validators=[DataRequired(), Length(max=40)],
        description=_l(
            "The 6-digit code from your authenticator app, or one of your recovery codes."
        ),
    )


class ConfirmEnrolmentForm(PanelForm):
    code = StringField(
        _l("Code"),
        filters=[strip],
        validators=[DataRequired(), Length(max=10)],
        description=_l("The 6-digit code the app shows now."),
    )


class PasswordAndCodeForm(PanelForm):
    password = PasswordField(_l("Password"), validators=[DataRequired(), Length(max=200)])
    code = StringField(
        _l("Code"),
        filters=[strip],
        validators=[DataRequired(), Length(max=40)],
        description=_l("A code from your authenticator app, or a recovery code."),
    )


class RoleForm(PanelForm):
    role = SelectField(_l("Role"), choices=role_choices(ROLE_NAMES))


class SecurityForm(PanelForm):
    require_two_factor = BooleanField(
        _l("Require two-factor sign-in for owners and admins"),
        description=_l("In production, owners and admins must set it up before using the panel."),
    )
    staff_refund_limit = StringField(
        _l("Staff refund limit"),
        filters=[strip],
        description=_l(
            "The most each staff member may refund of one payment, all their refunds of it "
            "together. Empty: no limit; 0: staff cannot refund."
        ),
    )

    def validate_staff_refund_limit(self, field):
        """Empty (no limit), or a Decimal of zero or more with at most two decimals."""
        read_optional_amount(field, _l("Enter an amount such as 0, 500 or 2500.50."))
        if field.data is not None and field.data < 0:
            raise ValidationError(_l("The limit cannot be negative."))
