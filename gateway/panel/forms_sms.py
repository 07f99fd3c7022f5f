"""Forms of the SMS pages: inbox filters and matching, regex templates and their tester, the
outbound queue.
"""

from wtforms import SelectField, StringField, TextAreaField
from wtforms.validators import DataRequired, Length, Optional

from ..i18n import lazy_gettext as _l
from ..payments.methods import PROVIDER_NAMES
from ..payments.models.payment_method import PROVIDERS
from ..sms.models.inbound_sms import SMS_STATUSES
from ..sms.parsing import MAX_TEMPLATE
from ..sms.templates import MAX_SAMPLE
from .forms import PanelForm, QueryForm, options, read_optional_amount, strip

SMS_STATUS_NAMES = {
    "matched": _l("Matched"),
    "unmatched": _l("Waiting for a claim"),
    "review": _l("In review"),
    "ignored": _l("Ignored"),
    "duplicate": _l("Duplicate"),
    "unparsed": _l("Not understood"),
    "returned": _l("Returned to the sender"),
}
OUTBOUND_STATUS_NAMES = {
    "queued": _l("Queued"),
    "leased": _l("Sending"),
    "sent": _l("Sent"),
    "failed": _l("Failed"),
}
PROVIDER_CHOICES = [(code, PROVIDER_NAMES[code]) for code in PROVIDERS]
PATTERN_HINT = _l(
    "A regular expression with the named groups amount and trx_id; counterparty, balance, fee "
    "and time are optional. Case is ignored. Look-arounds and back-references are not supported "
    "(templates run on RE2, which never stalls on a text)."
)


class SmsFilterForm(QueryForm):
    """The inbox's filters, read from the query string."""

    q = StringField(
        _l("Search"),
        filters=[strip],
        validators=[Optional(), Length(max=100)],
        description=_l("TrxID, sender or words of the text"),
    )
    status = SelectField(
        _l("Status"),
        validators=[Optional()],
        choices=options(
            [("", _l("Any status"))]
            + [(status, SMS_STATUS_NAMES[status]) for status in SMS_STATUSES]
        ),
    )
    provider = SelectField(
        _l("Provider"),
        validators=[Optional()],
        choices=options([("", _l("Any provider"))] + PROVIDER_CHOICES),
    )


class MatchForm(PanelForm):
    payment = StringField(
        _l("Payment ID or order reference"),
        filters=[strip],
        validators=[DataRequired(), Length(max=255)],
    )
    reason = TextAreaField(
        _l("Reason"),
        filters=[strip],
        validators=[Optional(), Length(max=200)],
        description=_l(
            "Needed when the text differs from the payment (amount, provider, sender) or is held "
            "for review. Only owners and admins can match such a text; the reason is kept in the "
            "audit log."
        ),
    )


CHAIN_STATUS_NAMES = {
    "start": _l("Starts the balance chain"),
    "verified": _l("Balance follows the previous text"),
    "healed": _l("Balance verified when the missing text arrived"),
    "broken": _l("Balance does not follow the previous text"),
    "no_balance": _l("No balance printed: the text cannot be checked against the chain"),
}
CHAIN_MODE_CHOICES = [
    (
        "strict",
        _l("Strict: a credit whose balance does not follow or is not printed waits for review"),
    ),
    ("lenient", _l("Lenient: it completes, flagged")),
]


class StartingBalanceForm(PanelForm):
    # A phone (its uuid), or a wallet number its phones named ("number:01711…").
    device = SelectField(_l("Phone or wallet number"), coerce=str, validators=[DataRequired()])
    provider = SelectField(_l("Provider"), choices=options(PROVIDER_CHOICES))
    balance = StringField(
        _l("Balance now"),
        filters=[strip],
        validators=[Optional(), Length(max=20)],
        description=_l(
            "The wallet's balance right now, as its app shows it; the next text must follow it. "
            "Leave empty to let the next text start the chain."
        ),
    )

    def validate_balance(self, field):
        """Empty restarts the chain; otherwise an amount with at most two decimals."""
        read_optional_amount(field, _l("Enter an amount such as 1500 or 1500.50."))


CHAIN_WALLET_CHOICES = [
    ("own", _l("Each phone receives its own wallets")),
    ("shared", _l("My phones receive the same wallets (a spare phone, two forwarding apps)")),
]


class ChainModeForm(PanelForm):
    mode = SelectField(
        _l("When a credit's balance does not follow or is not printed"),
        choices=options(CHAIN_MODE_CHOICES),
    )
    # Optional: a form that does not send it leaves the brand's choice as it is.
    wallets = SelectField(
        _l("Texts that do not name the number they arrived on"),
        choices=options(CHAIN_WALLET_CHOICES),
        validators=[Optional()],
        description=_l(
            "A text whose phone names its receiving number always joins that number's chain, "
            "whichever phone forwarded it."
        ),
    )


class TemplateForm(PanelForm):
    name = StringField(
        _l("Name"),
        filters=[strip],
        validators=[DataRequired(), Length(max=100)],
        description=_l("For you, e.g. “bKash merchant credit 2025”."),
    )
    provider = SelectField(
        _l("Provider"),
        choices=options(PROVIDER_CHOICES),
        description=_l("Only texts from this provider's sender count as payments."),
    )
    pattern = TextAreaField(
        _l("Regular expression"),
        validators=[DataRequired(), Length(max=MAX_TEMPLATE)],
        description=PATTERN_HINT,
    )


class TemplateTestForm(PanelForm):
    provider = SelectField(_l("Provider"), choices=options(PROVIDER_CHOICES))
    pattern = TextAreaField(
        _l("Regular expression"),
        validators=[DataRequired(), Length(max=MAX_TEMPLATE)],
        description=PATTERN_HINT,
    )
    sample = TextAreaField(
        _l("Sample SMS"),
        validators=[DataRequired(), Length(max=MAX_SAMPLE)],
        description=_l("Paste a text exactly as the phone received it."),
    )
    sender = StringField(
        _l("Sender"),
        filters=[strip],
        validators=[Optional(), Length(max=64)],
        description=_l("Empty: the provider's own sender id."),
    )


class OutboundSmsForm(PanelForm):
    to = StringField(
        _l("To"),
        filters=[strip],
        validators=[DataRequired(), Length(max=20)],
        description=_l("International format, e.g. +8801712345678."),
    )
    body = TextAreaField(_l("Message"), validators=[DataRequired(), Length(max=1000)])
