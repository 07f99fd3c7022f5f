"""Payment methods: the receiving numbers a brand shows at checkout, validated on the way in."""

import re
import secrets

from sqlalchemy.exc import IntegrityError

from ..answer_commit import commit_work
from ..db_types import row_id
from ..domain_errors import AlreadyExists, DomainError, field_error, not_found
from ..extensions import db
from .fees import FEE_FIELDS, checked_fee
from .models.payment_method import (
    ACCOUNT_KINDS,
    BANK,
    MANUAL,
    METHOD_KINDS,
    PROOF_CHOICES,
    PROOF_OPTIONAL,
    PROVIDERS,
    PaymentMethod,
)

PROVIDER_NAMES = {
    "bkash": "bKash",
    "nagad": "Nagad",
    "rocket": "Rocket",
    "upay": "Upay",
    MANUAL: "Manual",
    BANK: "Bank",
}


def provider_name(provider):
    """The provider as it writes its own name (bKash), or as stored when it has none here."""
    return PROVIDER_NAMES.get(provider, provider)


MAX_INSTRUCTIONS = 1000
# The banks whose credit alerts gateway/sms/parsing/bank.py reads (any other bank is typed in).
LISTED_BANKS = (
    "Dutch-Bangla Bank",
    "BRAC Bank",
    "Pubali Bank",
    "Rupali Bank",
    "Sonali Bank",
    "Islami Bank",
    "City Bank",
    "Eastern Bank",
)
# Free-text fields of manual and bank methods: (name, required for manual, for bank, max length).
ACCOUNT_FIELDS = (
    ("display_name", True, False, 80),
    ("account_name", True, True, 120),
    ("account_number", True, True, 64),
    ("bank_name", False, True, 80),
    ("bank_branch", False, False, 120),
    ("instructions", False, False, MAX_INSTRUCTIONS),
    ("instructions_bn", False, False, 1000),
)
# Bangladeshi mobile numbers: 01, an operator digit 3-9, eight more digits, in ASCII digits only (as
# the TrxID and the amount): one typed in Bangla digits could never equal an SMS's counterparty.
MOBILE_NUMBER = re.compile(r"^01[3-9][0-9]{8}$")
EDITABLE = ("kind", "instructions", "ask_sender_number", "enabled", "position", *FEE_FIELDS)


def normalize_mobile_number(value):
    """A Bangladeshi mobile number as 01XXXXXXXXX from `01…`, `+8801…` or `8801…`; None if not
    one."""
    digits = re.sub(r"[\s\-()]", "", str(value or ""))
    if digits.startswith("+"):
        digits = digits[1:]
    if digits.startswith("880") and len(digits) == 13:
        digits = digits[2:]
    return digits if MOBILE_NUMBER.match(digits) else None


def checked_provider(provider):
    """The provider code in lower case, or ValidationFailed naming `provider`."""
    code = str(provider or "").strip().lower()
    if code not in PROVIDERS:
        raise field_error("provider", f"Provider must be one of {', '.join(PROVIDERS)}.")
    return code


def checked_changes(changes, method=None):
    """Validate the editable fields present in `changes` (the fee's against `method`'s other fee
    parts); returns them cleaned."""
    cleaned = checked_fee(changes, method)
    for name, value in changes.items():
        if name not in EDITABLE:
            raise field_error(name, f"{name} cannot be changed.")
        if name in FEE_FIELDS:
            continue
        if name == "kind" and value not in METHOD_KINDS:  # a wallet stays a wallet
            raise field_error("kind", f"Kind must be one of {', '.join(METHOD_KINDS)}.")
        if name == "instructions":
            value = (value or "").strip() or None
            if value and len(value) > MAX_INSTRUCTIONS:
                raise field_error(
                    "instructions", f"Instructions must be at most {MAX_INSTRUCTIONS} characters."
                )
        if name in ("ask_sender_number", "enabled"):
            value = bool(value)
        if name == "position" and (not isinstance(value, int) or value < 0):
            raise field_error("position", "Position must be a whole number, 0 or more.")
        cleaned[name] = value
    return cleaned


def add_method(brand, provider, number, kind="personal", demo=False, **options):
    """Add a receiving number for a provider; last in order unless `position` is given; `demo` marks
    a sample number.
    """
    provider = checked_provider(provider)
    normalized = normalize_mobile_number(number)
    if normalized is None:
        raise field_error(
            "number", "Number must be a Bangladeshi mobile number such as 01XXXXXXXXX (11 digits)."
        )
    values = checked_changes({"kind": kind, **options})
    values.setdefault("position", next_position(brand))
    method = PaymentMethod(
        brand_id=brand.id, provider=provider, number=normalized, is_demo=bool(demo), **values
    )
    db.session.add(method)
    try:
        commit_work()
    except IntegrityError:
        db.session.rollback()
        raise AlreadyExists(
            f"{PROVIDER_NAMES[provider]} {normalized} is already a payment method.",
            code="PAYMENT_METHOD_EXISTS",
        ) from None
    return method


def checked_account_fields(kind, fields):
    """A manual or bank method's fields trimmed and checked; ValidationFailed names the first field
    at fault.
    """
    if kind not in ACCOUNT_KINDS:
        raise field_error("kind", f"Kind must be one of {', '.join(METHOD_KINDS + ACCOUNT_KINDS)}.")
    cleaned = {}
    for name, for_manual, for_bank, longest in ACCOUNT_FIELDS:
        value = str(fields.get(name) or "").strip()
        if not value and (for_manual if kind == MANUAL else for_bank):
            raise field_error(name, f"{name.replace('_', ' ').capitalize()} is required.")
        if len(value) > longest:
            raise field_error(
                name, f"{name.replace('_', ' ').capitalize()} must be at most {longest} characters."
            )
        if any(ord(c) < 32 and c not in "\n\r\t" for c in value):
            raise field_error(name, "Control characters are not allowed.")
        cleaned[name] = value or None
    if kind == MANUAL:
        proof = str(fields.get("proof") or PROOF_OPTIONAL).strip().lower()
        if proof not in PROOF_CHOICES:
            raise field_error("proof", f"Proof must be one of {', '.join(PROOF_CHOICES)}.")
        cleaned["proof"] = proof
    else:
        cleaned["display_name"] = cleaned["display_name"] or cleaned["bank_name"]
        cleaned["proof"] = None
    return cleaned


def next_position(brand):
    """Where a new method of the brand goes: after its last one (0 for its first)."""
    last = db.session.execute(
        db.select(db.func.max(PaymentMethod.position)).where(PaymentMethod.brand_id == brand.id)
    ).scalar()
    return 0 if last is None else last + 1


def hidden_number(kind):
    """The `number` of a method with none to show (manual, bank, api): a key, never shown, that
    keeps (brand, provider, number) unique; its first letter says the kind."""
    return kind[0].upper() + secrets.token_hex(5)


def add_account_method(brand, kind, enabled=True, **fields):
    """Add a manual or bank method (docs/methods.md); last in order."""
    values = checked_account_fields(kind, fields)
    method = PaymentMethod(
        brand_id=brand.id,
        provider=kind,
        kind=kind,
        number=hidden_number(kind),
        enabled=bool(enabled),
        position=next_position(brand),
        **values,
    )
    db.session.add(method)
    commit_work()
    return method


def get_method(brand, method_id):
    """One of the brand's methods by id; NotFound for anything else, an id no row can have
    included."""
    method_id = row_id(method_id)
    if method_id is None:
        raise not_found("payment_method")
    method = db.session.execute(
        db.select(PaymentMethod).where(
            PaymentMethod.id == method_id, PaymentMethod.brand_id == brand.id
        )
    ).scalar_one_or_none()
    if method is None:
        raise not_found("payment_method")
    return method


def update_method(method, **changes):
    """Change a method's kind, instructions, sender-number question, switch, position or fee."""
    if method.is_account and changes.get("kind", method.kind) != method.kind:
        raise field_error("kind", "A manual or bank method keeps its kind: add a new method.")
    for name, value in checked_changes(
        {k: v for k, v in changes.items() if not (method.is_account and k == "kind")}, method
    ).items():
        setattr(method, name, value)
    commit_work()
    return method


def list_methods(brand, enabled_only=False):
    """The brand's methods in display order (only the switched-on ones with `enabled_only`)."""
    query = db.select(PaymentMethod).where(PaymentMethod.brand_id == brand.id)
    if enabled_only:
        query = query.where(PaymentMethod.enabled.is_(True))
    return (
        db.session.execute(query.order_by(PaymentMethod.position, PaymentMethod.id)).scalars().all()
    )


def enabled_demo_methods(brand):
    """The brand's switched-on demo numbers: customers could send real money to a number nobody here
    owns.
    """
    return [method for method in list_methods(brand, enabled_only=True) if method.is_demo]


def list_enabled_methods(brand):
    """The methods a customer sees at checkout, in display order."""
    return list_methods(brand, enabled_only=True)


def enabled_method(brand, method_id):
    """The enabled method a checkout form names, or None when it is gone or switched off."""
    try:
        method = get_method(brand, int(method_id))
    except (DomainError, TypeError, ValueError):
        return None
    return method if method.enabled else None
