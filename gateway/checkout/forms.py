"""The checkout's forms: every one carries a CSRF token (Flask-WTF)."""

import re

from flask_wtf import FlaskForm
from wtforms import FileField, HiddenField, StringField
from wtforms.validators import DataRequired, Length, Regexp, ValidationError

from ..db_types import UNSTORABLE_MESSAGE
from ..i18n import lazy_gettext as _l
from ..payments.methods import normalize_mobile_number

# The matching service's refusals, by error code, in the customer's language.
CLAIM_REFUSALS = {
    "already_used": _l("This TrxID has already been used for another payment."),
    None: _l("This TrxID was not accepted. Check it against your confirmation SMS."),
}
# The services' refusals of a manual or bank claim (payments/proofs.py, payments/manual.py,
# sms/bank_matching.py), by their English words, in the customer's language.
MANUAL_REFUSALS = {
    "The file is larger than 5 MB.": _l("The file is larger than 5 MB."),
    "The file is empty.": _l("The file is empty."),
    "Upload a JPEG, PNG or PDF file.": _l("Upload a JPEG, PNG or PDF file."),
    "The file is not the image its first bytes say.": _l(
        "The file is not the image its first bytes say."
    ),
    "The image is too large.": _l("The image is too large."),
    "The image could not be read: upload a JPEG or PNG photo.": _l(
        "The image could not be read: upload a JPEG or PNG photo."
    ),
    "The PDF is incomplete.": _l("The PDF is incomplete."),
    "The PDF has too many objects.": _l("The PDF has too many objects."),
    "The PDF has too many pages.": _l("The PDF has too many pages."),
    "The PDF contains scripts or embedded files.": _l(
        "The PDF contains scripts or embedded files."
    ),
    "The PDF's contents are too large once unpacked.": _l(
        "The PDF's contents are too large once unpacked."
    ),
    "Upload a photo or PDF of your receipt.": _l("Upload a photo or PDF of your receipt."),
    "Enter the reference of your payment (3 characters or more).": _l(
        "Enter the reference of your payment (3 characters or more)."
    ),
    "Enter your transfer's reference (3 to 64 characters).": _l(
        "Enter your transfer's reference (3 to 64 characters)."
    ),
    UNSTORABLE_MESSAGE: _l(
        "Must not contain NUL characters, unpaired surrogates, NaN or Infinity."
    ),
}
METHOD_GONE = _l("That way to pay is no longer offered; please choose another.")


def without_spaces(value):
    """Drop the spaces people paste around and inside a TrxID."""
    return re.sub(r"\s+", "", value) if isinstance(value, str) else value


class ClaimForm(FlaskForm):
    """The provider TrxID the customer received, and the number they paid from when the method
    asks."""

    method_id = HiddenField(validators=[DataRequired()])
    trx_id = StringField(
        _l("Transaction ID (TrxID)"),
        filters=[without_spaces],
        validators=[
            DataRequired(message=_l("Enter the TrxID from your confirmation message.")),
            Length(min=6, max=20, message=_l("A TrxID has 6 to 20 letters and digits.")),
            Regexp(r"^[A-Za-z0-9]+$", message=_l("A TrxID has only letters and digits.")),
        ],
    )
    sender_number = StringField(_l("The number you paid from"))

    def __init__(self, *args, method=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.method = method

    def validate_sender_number(self, field):
        """Required when the method asks for it; a Bangladeshi mobile number whenever given."""
        value = (field.data or "").strip()
        if not value:
            if self.method is not None and self.method.ask_sender_number:
                raise ValidationError(_l("Enter the number you sent the money from."))
            field.data = None
            return
        normalized = normalize_mobile_number(value)
        if normalized is None:
            raise ValidationError(_l("Enter an 11-digit mobile number such as 01712345678."))
        field.data = normalized


class CancelForm(FlaskForm):
    """Cancelling needs the CSRF token; after "I have paid", also the confirmation that names the
    risk.
    """

    confirm = HiddenField()

    @property
    def confirmed(self):
        """Whether the customer pressed the confirmation's button (not just the first cancel)."""
        return self.confirm.data == "yes"


class ManualClaimForm(FlaskForm):
    """A manual or bank method's reference; the proof file is read and checked apart
    (payments/proofs.py), never through the browser's name or type for it."""

    method_id = HiddenField(validators=[DataRequired()])
    reference = StringField(
        _l("Payment reference"),
        validators=[
            DataRequired(message=_l("Enter the reference of your payment.")),
            Length(min=3, max=64, message=_l("A reference has 3 to 64 characters.")),
        ],
    )
    proof = FileField(_l("Photo or PDF of the receipt (optional)"))
