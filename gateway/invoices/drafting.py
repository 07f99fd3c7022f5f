"""Writing invoices: create one (numbered), change it while it is a draft, find and list them."""

import re
import secrets
import uuid
from datetime import date
from decimal import Decimal, InvalidOperation

from email_validator import EmailNotValidError, validate_email
from flask import current_app

from ..answer_commit import commit_work
from ..clock import utcnow
from ..domain_errors import InvalidState, NotFound, ValidationFailed, invalid_state, not_found
from ..extensions import db
from ..money import InvalidAmount, parse_amount
from ..payments.customers import get_customer, normalise_phone, upsert_customer
from ..payments.models.customer import Customer
from ..states import INVOICE_DRAFT
from .models.invoice import LANGUAGES, Invoice, InvoiceItem
from .numbering import take_number
from .totals import invoice_totals, line_amount

MAX_ITEMS = 100
PHONE = re.compile(r"^\+[1-9]\d{7,14}$")  # E.164, as normalise_phone writes it
MAX_QUANTITY = Decimal("1000000")
MAX_VAT = Decimal("100")


class InvoiceNotSent(InvalidState):
    """The customer's link of an invoice still a draft: the shop has not sent it yet."""

    def __init__(self, brand):
        super().__init__("This invoice has not been sent yet.")
        self.brand = brand


def refuse(field, message, code="invalid"):
    """ValidationFailed naming one field."""
    return ValidationFailed.field(field, message, code)


def as_amount(value, field, allow_zero=True):
    """A Decimal money amount from a string or number, or ValidationFailed naming `field`."""
    if isinstance(value, Decimal):
        value = format(value, "f")
    try:
        amount = parse_amount(value)
    except InvalidAmount as error:
        raise refuse(field, str(error)) from error
    if amount <= 0 and not allow_zero:
        raise refuse(field, "Must be greater than zero.")
    return amount


def as_decimal(value, field, places, minimum, maximum):
    """A Decimal with at most `places` decimals within [minimum, maximum]."""
    if isinstance(value, bool) or value is None or value == "":
        raise refuse(field, "Enter a number.", "required" if value in (None, "") else "invalid")
    try:
        number = Decimal(str(value).strip())
    except InvalidOperation as error:
        raise refuse(field, "Enter a number such as 2 or 1.5.") from error
    if not number.is_finite() or -number.as_tuple().exponent > places:
        raise refuse(field, f"Use at most {places} decimals.")
    if not minimum <= number <= maximum:
        raise refuse(field, f"Must be between {minimum} and {maximum}.")
    return number


def checked_items(items):
    """[(description, quantity, unit_price)] from the request's items; each fault names its
    field."""
    if not isinstance(items, list) or not items:
        raise refuse("items", "Add at least one line item.", "required")
    if len(items) > MAX_ITEMS:
        raise refuse("items", f"At most {MAX_ITEMS} line items.")
    lines = []
    for index, item in enumerate(items):
        where = f"items.{index}"
        if not isinstance(item, dict):
            raise refuse(where, "Each item is an object with description, quantity, unit_price.")
        description = " ".join(str(item.get("description") or "").split())
        if not description:
            raise refuse(f"{where}.description", "Describe the item.", "required")
        if len(description) > 500:
            raise refuse(f"{where}.description", "At most 500 characters.")
        quantity = as_decimal(
            item.get("quantity", 1), f"{where}.quantity", 3, Decimal("0.001"), MAX_QUANTITY
        )
        unit_price = as_amount(item.get("unit_price"), f"{where}.unit_price")
        lines.append((description, quantity, unit_price))
    return lines


def checked_values(brand, data, current=None):
    """Every field of an invoice, validated, with its totals; `current` fills what is not given."""

    def given(name, default=None):
        if name in data:
            return data[name]
        return getattr(current, name) if current is not None else default

    currency = str(given("currency") or brand.currency_list[0]).upper()
    if currency not in brand.currency_list:
        raise refuse("currency", f"Currency must be one of {', '.join(brand.currency_list)}.")
    if "items" in data or current is None:
        lines = checked_items(data.get("items"))
    else:
        lines = [(i.description, i.quantity, i.unit_price) for i in current.items]
    discount = as_amount(given("discount", "0"), "discount")
    vat_rate = as_decimal(given("vat_rate", "0"), "vat_rate", 2, Decimal("0"), MAX_VAT)
    subtotal, vat_amount, total = invoice_totals([(q, p) for _, q, p in lines], discount, vat_rate)
    if discount > subtotal:
        raise refuse("discount", "The discount cannot exceed the items' total.")
    if total <= 0:
        raise refuse("items", "The invoice total must be greater than zero.")
    if total > Decimal(current_app.config["MAX_AMOUNT"]):
        raise refuse("items", f"The total must not exceed {current_app.config['MAX_AMOUNT']}.")
    due_date = given("due_date")
    if due_date is not None and not isinstance(due_date, date):
        try:
            due_date = date.fromisoformat(str(due_date))
        except ValueError as error:
            raise refuse("due_date", "A date such as 2026-12-31.") from error
    language = given("language", "en") or "en"
    if language not in LANGUAGES:
        raise refuse("language", "Choose en or bn.")
    notes = given("notes")
    if notes is not None and len(str(notes)) > 2000:
        raise refuse("notes", "At most 2000 characters.")
    return {
        "currency": currency,
        "lines": lines,
        "discount": discount,
        "vat_rate": vat_rate,
        "subtotal": subtotal,
        "vat_amount": vat_amount,
        "total": total,
        "due_date": due_date,
        "language": language,
        "notes": (str(notes).strip() or None) if notes is not None else None,
    }


def invoice_customer(brand, data, livemode=True):
    """The customer an invoice is for: `customer_id` (id, e-mail or phone), or a new/known
    profile, of the invoice's mode."""
    if data.get("customer_id") not in (None, ""):
        try:
            return get_customer(brand, data["customer_id"], livemode)
        except NotFound as error:  # the field at fault, not a 404 of the invoice
            raise refuse("customer_id", "No such customer.", "not_found") from error
    details = data.get("customer") or {}
    if not isinstance(details, dict) or not (details.get("email") or details.get("phone")):
        raise refuse("customer", "Choose a customer, or give their e-mail or phone.", "required")
    email, phone = details.get("email"), details.get("phone")
    if email:
        try:
            email = validate_email(email, check_deliverability=False).normalized
        except EmailNotValidError as error:
            raise refuse("customer.email", f"Not a valid e-mail address: {error}") from error
    if phone:
        phone = normalise_phone(phone)
        if not PHONE.match(phone):
            raise refuse("customer.phone", "A telephone number such as +8801712345678.")
    return upsert_customer(brand, details.get("name"), email, phone, livemode=livemode)


def set_items(invoice, lines):
    """Replace the invoice's line items."""
    invoice.items = [
        InvoiceItem(
            position=position,
            description=description,
            quantity=quantity,
            unit_price=unit_price,
            amount=line_amount(quantity, unit_price),
        )
        for position, (description, quantity, unit_price) in enumerate(lines, start=1)
    ]


def create_invoice(brand, data, livemode=True):
    """A new draft invoice with the brand's next number (a test one with `livemode=False`);
    refused input names its field."""
    values = checked_values(brand, data)
    customer = invoice_customer(brand, data, livemode)
    number, number_text = take_number(brand.id, livemode)
    now = utcnow()
    invoice = Invoice(
        public_id=str(uuid.uuid4()),
        token=secrets.token_urlsafe(24),
        brand_id=brand.id,
        livemode=bool(livemode),
        customer_id=customer.id,
        number=number,
        number_text=number_text,
        status=INVOICE_DRAFT,
        created_at=now,
        updated_at=now,
        **{k: v for k, v in values.items() if k != "lines"},
    )
    set_items(invoice, values["lines"])
    db.session.add(invoice)
    db.session.flush()
    commit_work()
    return invoice


def update_invoice(invoice, data):
    """Change a draft; a sent, paid or void invoice is INVALID_STATE (guarded against a racing
    send).
    """
    brand = invoice.brand
    values = checked_values(brand, data, current=invoice)
    customer = (
        invoice_customer(brand, data, invoice.livemode)
        if {"customer_id", "customer"} & set(data)
        else None
    )
    columns = {k: v for k, v in values.items() if k != "lines"}
    if customer is not None:
        columns["customer_id"] = customer.id
    if guarded_draft_update(invoice, columns) != 1:
        db.session.rollback()
        raise invalid_state("Only a draft invoice can be changed.")
    db.session.refresh(invoice)
    if "items" in data:
        set_items(invoice, values["lines"])
    db.session.flush()
    commit_work()
    return invoice


def guarded_draft_update(invoice, columns):
    """UPDATE the draft's columns only while it is still a draft (a racing send wins, or this
    does)."""
    return db.session.execute(
        db.update(Invoice)
        .where(Invoice.id == invoice.id, Invoice.status == INVOICE_DRAFT)
        .values(updated_at=utcnow(), **columns)
    ).rowcount


def get_invoice(brand, public_id, livemode=True):
    """An invoice of this brand and mode by its id; NotFound (INVOICE_NOT_FOUND) for anything
    else."""
    invoice = db.session.execute(
        db.select(Invoice).where(
            Invoice.public_id == str(public_id),
            Invoice.brand_id == brand.id,
            Invoice.livemode == bool(livemode),
        )
    ).scalar_one_or_none()
    if invoice is None:
        raise not_found("invoice")
    return invoice


def invoice_row_id(brand_id, public_id):
    """The row id of the brand's invoice with this invoice_id, or None (for filters)."""
    return db.session.execute(
        db.select(Invoice.id).where(
            Invoice.public_id == str(public_id), Invoice.brand_id == brand_id
        )
    ).scalar_one_or_none()


def get_invoice_by_token(token):
    """The invoice behind a customer's link; NotFound for any other token, InvoiceNotSent for a
    draft (its contents may still change, so the customer sees none of them)."""
    invoice = db.session.execute(
        db.select(Invoice).where(Invoice.token == str(token)[:64])
    ).scalar_one_or_none()
    if invoice is None:
        raise not_found("invoice")
    if invoice.status == INVOICE_DRAFT:
        raise InvoiceNotSent(invoice.brand)
    return invoice


def list_invoices_query(brand_id, filters, livemode=True):
    """The brand's invoices of one mode, newest first, narrowed by status, customer or search
    text."""
    query = db.select(Invoice).where(
        Invoice.brand_id == brand_id, Invoice.livemode == bool(livemode)
    )
    if filters.get("status"):
        query = query.where(Invoice.status == filters["status"])
    if filters.get("customer_id"):
        query = query.where(Invoice.customer_id == filters["customer_id"])
    if filters.get("q"):
        text = filters["q"].strip().lower()
        query = query.join(Customer, Customer.id == Invoice.customer_id).where(
            db.or_(
                db.func.lower(Invoice.number_text) == text,
                db.func.lower(Customer.name).contains(text, autoescape=True),
                db.func.lower(Customer.email).contains(text, autoescape=True),
                Customer.phone.contains(text, autoescape=True),
            )
        )
    return query.order_by(Invoice.created_at.desc(), Invoice.id.desc())
