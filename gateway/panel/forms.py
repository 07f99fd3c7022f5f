"""The panel's forms (Flask-WTF): every form that changes something carries a CSRF token, and no
form takes a value no column can hold."""

import marshmallow as ma
from flask import flash
from flask_wtf import FlaskForm
from marshmallow import validate
from wtforms import (
    BooleanField,
    DateField,
    EmailField,
    Form,
    FormField,
    IntegerField,
    PasswordField,
    SelectChoice,
    SelectField,
    StringField,
    TextAreaField,
)
from wtforms.validators import (
    DataRequired,
    EqualTo,
    Length,
    NumberRange,
    Optional,
    StopValidation,
    ValidationError,
)

from ..db_types import unstorable
from ..i18n import lazy_gettext as _l
from ..money import InvalidAmount, parse_amount
from ..payments.methods import PROVIDER_NAMES
from ..payments.models.payment import PAYMENT_STATUSES
from ..payments.models.payment_method import METHOD_KINDS, PROVIDERS
from ..schemas.common import Phone
from .formatting import STATUS_NAMES

KIND_NAMES = {"personal": _l("Personal"), "agent": _l("Agent"), "merchant": _l("Merchant")}


def options(pairs):
    """Select options from (value, label) pairs."""
    return [SelectChoice(value, label) for value, label in pairs]


def strip(value):
    """Drop the spaces people paste around values."""
    return value.strip() if isinstance(value, str) else value


def read_optional_amount(field, refusal):
    """A text field's amount as a Decimal (commas allowed), None when empty; `refusal` otherwise."""
    if not field.data:
        field.data = None
        return
    try:
        field.data = parse_amount(field.data.replace(",", ""))
    except InvalidAmount:
        raise ValidationError(refusal) from None


def refuse_unstorable(form, field):
    """A value no column can take (NUL, a lone surrogate) is the field's error, and nothing else
    reads it: PostgreSQL refuses it with a 500 where SQLite would store it."""
    if any(unstorable(value) for value in field.raw_data or ()):
        raise StopValidation(
            _l("Must not contain NUL characters, unpaired surrogates, NaN or Infinity.")
        )


class RefusesUnstorableValues:
    """Every field of the form checked by refuse_unstorable, after its own validators and before
    the form's validate_<field> methods (which may query with the value)."""

    def validate(self, extra_validators=None):
        extra = {name: list(checks) for name, checks in (extra_validators or {}).items()}
        for name, field in self._fields.items():
            if not isinstance(field, FormField):  # the enclosed form checks its own fields
                extra.setdefault(name, []).insert(0, refuse_unstorable)
        return super().validate(extra)


class PanelForm(RefusesUnstorableValues, FlaskForm):
    """A panel form that changes something: a CSRF token, and no value no column can take."""


class QueryForm(RefusesUnstorableValues, Form):
    """A panel form without a token (a list's filters, read from the query string, or a form inside
    another): no value no column can take; a filter with an error is ignored."""


class ActionForm(PanelForm):
    """A button that changes something (sign out, cancel, approve, delete…): just the CSRF token."""


class PaymentFilterForm(QueryForm):
    """The payment list's filters, read from the query string (a GET form changes nothing: no
    token).
    """

    q = StringField(
        _l("Search"),
        filters=[strip],
        validators=[Optional(), Length(max=100)],
        description=_l("Reference, TrxID, payment ID, phone or e-mail"),
    )
    status = SelectField(
        _l("Status"),
        validators=[Optional()],
        choices=options(
            [("", _l("Any status")), ("review", _l("Waiting for review"))]
            + [(status, STATUS_NAMES[status]) for status in PAYMENT_STATUSES]
        ),
    )
    method = SelectField(
        _l("Method"),
        validators=[Optional()],
        choices=options(
            [("", _l("Any method"))] + [(code, PROVIDER_NAMES[code]) for code in PROVIDERS]
        ),
    )
    date_from = DateField(_l("From"), validators=[Optional()])
    date_to = DateField(_l("To"), validators=[Optional()])


class SignInForm(PanelForm):
    email = EmailField(_l("E-mail"), filters=[strip], validators=[DataRequired(), Length(max=254)])
    password = PasswordField(_l("Password"), validators=[DataRequired(), Length(max=200)])


class PasswordForm(PanelForm):
    current_password = PasswordField(_l("Current password"), validators=[DataRequired()])
    new_password = PasswordField(_l("New password"), validators=[DataRequired(), Length(max=200)])
    confirm_password = PasswordField(
        _l("Repeat the new password"),
        validators=[
            DataRequired(),
            EqualTo("new_password", message=_l("The two passwords differ.")),
        ],
    )


class WalletRefundForm(PanelForm):
    """Settling a wallet refund left pending by hand: the wallet's refund id when it was made."""

    reference = StringField(
        _l("The wallet's refund id"), filters=[strip], validators=[Optional(), Length(max=100)]
    )


class RefundForm(PanelForm):
    amount = StringField(
        _l("Amount"),
        filters=[strip],
        description=_l("Leave empty to refund everything that remains."),
    )
    reason = StringField(_l("Reason"), filters=[strip], validators=[Optional(), Length(max=500)])
    # Set only by the confirmation step's button: without it the refund is shown to confirm, not
    # recorded.
    confirmed = BooleanField()

    def validate_amount(self, field):
        """Empty means the remainder; otherwise a positive amount with at most two decimals."""
        read_optional_amount(field, _l("Enter an amount such as 250 or 250.50."))
        if field.data is not None and field.data <= 0:
            raise ValidationError(_l("Amount must be greater than zero."))


class RejectForm(PanelForm):
    reason = StringField(
        _l("Why (kept on the payment)"), filters=[strip], validators=[Optional(), Length(max=255)]
    )


class CustomerForm(PanelForm):
    name = StringField(_l("Name"), filters=[strip], validators=[Optional(), Length(max=200)])
    email = EmailField(_l("E-mail"), filters=[strip], validators=[Length(max=254)])
    phone = StringField(
        _l("Phone"),
        filters=[strip],
        validators=[Length(max=20)],
        description=_l("International format, e.g. +8801712345678."),
    )

    def validate_phone(self, field):
        """The API's own phone rule: stored in E.164."""
        if not field.data:
            field.data = None
            return
        try:
            field.data = Phone().deserialize(field.data)
        except ma.ValidationError:
            raise ValidationError(_l("Enter a phone number such as +8801712345678.")) from None

    def validate_email(self, field):
        """Blank clears the address; otherwise the API's own rule for addresses."""
        field.data = field.data.lower() if field.data else None
        if field.data:
            try:
                validate.Email()(field.data)
            except ma.ValidationError:
                raise ValidationError(_l("Enter a valid e-mail address.")) from None


class SettingsForm(PanelForm):
    name = StringField(
        _l("Brand name"), filters=[strip], validators=[DataRequired(), Length(max=120)]
    )
    logo_url = StringField(
        _l("Logo address"), filters=[strip], validators=[Optional(), Length(max=2048)]
    )
    primary_color = StringField(_l("Colour"), filters=[strip], validators=[DataRequired()])
    base_url = StringField(
        _l("Base URL"),
        filters=[strip],
        validators=[Optional(), Length(max=2048)],
        description=_l("The origin of checkout links, e.g. https://pay.example.com."),
    )
    timezone = StringField(_l("Time zone"), filters=[strip], validators=[DataRequired()])
    currencies = StringField(
        _l("Currencies"),
        filters=[strip],
        validators=[DataRequired()],
        description=_l("Comma-separated codes, e.g. BDT, USD."),
    )
    payment_ttl_minutes = IntegerField(
        _l("Payment lifetime (minutes)"),
        validators=[Optional(), NumberRange(min=1, max=1440)],
        description=_l("Empty: the server default."),
    )
    receipt_sms_enabled = BooleanField(_l("Send the customer a receipt SMS"))
    refund_fee = BooleanField(
        _l("Refunds may return the method fee"),
        description=_l("Off: a refund returns at most the amount; the customer's fee is kept."),
    )


class MethodFeeForm(PanelForm):
    """One method's fee passed to the customer (payments/fees.py): the domain checks the values."""

    fee_fixed = StringField(_l("Fixed fee (৳)"), filters=[strip], validators=[Length(max=20)])
    fee_percent = StringField(_l("Fee percent"), filters=[strip], validators=[Length(max=20)])
    fee_min = StringField(_l("Minimum fee (৳)"), filters=[strip], validators=[Length(max=20)])
    fee_max = StringField(_l("Maximum fee (৳)"), filters=[strip], validators=[Length(max=20)])


class MethodForm(MethodFeeForm):
    """A receiving number to add, with its fee."""

    provider = SelectField(
        _l("Provider"), choices=options((code, PROVIDER_NAMES[code]) for code in PROVIDERS)
    )
    number = StringField(
        _l("Receiving number"), filters=[strip], validators=[DataRequired(), Length(max=20)]
    )
    kind = SelectField(
        _l("Account type"), choices=options((kind, KIND_NAMES[kind]) for kind in METHOD_KINDS)
    )
    instructions = TextAreaField(
        _l("Instructions for the customer"), validators=[Optional(), Length(max=1000)]
    )
    ask_sender_number = BooleanField(_l("Ask for the sender's number"))


class AccountMethodForm(PanelForm):
    """A manual or bank method (docs/methods.md); the service checks each field again."""

    kind = SelectField(
        _l("Kind"),
        choices=options([("manual", _l("Manual payment")), ("bank", _l("Bank transfer"))]),
    )
    display_name = StringField(
        _l("Name customers see"), filters=[strip], validators=[Optional(), Length(max=80)]
    )
    bank_name = StringField(
        _l("Bank"),
        filters=[strip],
        validators=[Optional(), Length(max=80)],
        description=_l("One of the listed banks is matched automatically from its SMS alert."),
    )
    account_name = StringField(
        _l("Account name"), filters=[strip], validators=[DataRequired(), Length(max=120)]
    )
    account_number = StringField(
        _l("Account number"), filters=[strip], validators=[DataRequired(), Length(max=64)]
    )
    bank_branch = StringField(
        _l("Branch / routing (optional)"), filters=[strip], validators=[Optional(), Length(max=120)]
    )
    instructions = TextAreaField(
        _l("Instructions (English)"), validators=[Optional(), Length(max=1000)]
    )
    instructions_bn = TextAreaField(
        _l("Instructions (Bangla)"), validators=[Optional(), Length(max=1000)]
    )
    proof = SelectField(
        _l("Receipt upload"),
        choices=options(
            [("optional", _l("Optional")), ("required", _l("Required")), ("off", _l("Off"))]
        ),
    )


class InviteForm(PanelForm):
    email = EmailField(_l("E-mail"), filters=[strip], validators=[DataRequired(), Length(max=254)])
    name = StringField(_l("Name"), filters=[strip], validators=[Optional(), Length(max=120)])
    # The choices are the roles the signed-in user may give, set by gateway/panel/users.py.
    role = SelectField(_l("Role"), choices=[], default="staff")


def attach_error(form, error):
    """Show a service's DomainError next to the fields it names, or as a message at the top."""
    placed = False
    for item in error.errors or []:
        field = getattr(form, item.get("field") or "", None)
        if field is not None and hasattr(field, "errors"):
            field.errors = list(field.errors) + [item["message"]]
            placed = True
    if not placed:
        flash(error.message, "error")
