"""Paying through a link: checking what the customer entered, holding a slot, creating the payment.

Usage limit: a link's slot is taken when a payment is created through it (a conditional UPDATE on
`used_count`, so concurrent payers can never take more slots than the limit) and given back when
that payment is cancelled, expires or is failed. Paid payments keep their slot for good.
"""

from decimal import Decimal

import phonenumbers
from flask import current_app

from ..answer_commit import unit_of_work
from ..clock import utcnow
from ..domain_errors import ValidationFailed
from ..extensions import db, rows_by
from ..money import InvalidAmount, format_amount, parse_amount
from ..payments.lifecycle import create_payment
from ..states import LINK_ACTIVE
from ..webhooks.events import Emission, emit_events
from .errors import LinkUnavailable
from .links import link_url
from .models.link import LinkPayment, PaymentLink

MAX_LENGTHS = {"name": 200, "phone": 20, "address": 500, "text": 500}


def unavailable_reason(link, now=None):
    """Why a link takes no payment now ("disabled", "expired", "used_up"), or None when it does."""
    now = now or utcnow()
    if link.status != LINK_ACTIVE:
        return "disabled"
    if link.expires_at is not None and link.expires_at <= now:
        return "expired"
    if link.usage_limit is not None and link.used_count >= link.usage_limit:
        return "used_up"
    return None


def bounds_text(link):
    """The amounts a customer may enter, e.g. 100.00 – 5000.00 (either side may be open)."""
    low = format_amount(link.min_amount) if link.min_amount is not None else None
    high = format_amount(link.max_amount) if link.max_amount is not None else None
    return low, high


def check_amount(link, text):
    """The amount to charge: the link's fixed one, or what the customer typed within the bounds."""
    if link.amount is not None:
        return link.amount
    try:
        amount = parse_amount((text or "").strip().replace(",", ""))
    except InvalidAmount:
        raise ValidationFailed.field(
            "amount", "Enter an amount such as 500 or 500.50.", "invalid"
        ) from None
    if amount <= 0:
        raise ValidationFailed.field("amount", "The amount must be more than zero.", "too_small")
    if link.min_amount is not None and amount < link.min_amount:
        raise ValidationFailed.field(
            "amount", f"The amount must be at least {format_amount(link.min_amount)}.", "too_small"
        )
    # The link's own cap, else MAX_AMOUNT, which every way of making a payment applies.
    high = link.max_amount
    if high is None:
        high = Decimal(current_app.config["MAX_AMOUNT"])
    if amount > high:
        raise ValidationFailed.field(
            "amount", f"The amount must be at most {format_amount(high)}.", "too_large"
        )
    return amount


def normalise_phone(text):
    """A Bangladeshi or international number as E.164, or None when it is not one."""
    if not text or len(text) > 30:
        return None
    try:
        number = phonenumbers.parse(text, "BD")
    except phonenumbers.NumberParseException:
        return None
    if not phonenumbers.is_valid_number(number):
        return None
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)


def check_answers(link, values):
    """The customer's answers by field key, every required one given; ValidationFailed lists each
    fault.
    """
    answers, errors = {}, []
    for field in link.custom_fields or []:
        key, kind = field["key"], field["kind"]
        # Browsers send a text area's line breaks as CRLF: stored as plain newlines.
        value = str(values.get(key) or "").replace("\r\n", "\n").replace("\r", "\n").strip()
        if kind != "address":  # an address keeps its line breaks; other answers are one line
            value = " ".join(value.split())
        if not value:
            if field.get("required"):
                errors.append({"field": key, "code": "required", "message": "Please fill this in."})
            continue
        if len(value) > MAX_LENGTHS[kind] or "\x00" in value:
            errors.append({"field": key, "code": "too_long", "message": "This answer is too long."})
            continue
        if kind == "phone":
            value = normalise_phone(value)
            if value is None:
                errors.append(
                    {
                        "field": key,
                        "code": "invalid",
                        "message": "Enter a mobile number such as 01712345678.",
                    }
                )
                continue
        answers[key] = value
    if errors:
        raise ValidationFailed("Some answers are missing or invalid.", errors)
    return answers


def take_slot(link):
    """Hold one of the link's slots with a conditional UPDATE; LinkUnavailable when none is left."""
    now = utcnow()
    table = PaymentLink.__table__
    taken = db.session.execute(
        db.update(table)
        .where(
            table.c.id == link.id,
            table.c.status == LINK_ACTIVE,
            db.or_(table.c.expires_at.is_(None), table.c.expires_at > now),
            db.or_(table.c.usage_limit.is_(None), table.c.used_count < table.c.usage_limit),
        )
        .values(used_count=table.c.used_count + 1, updated_at=now)
    ).rowcount
    if taken != 1:
        db.session.rollback()
        db.session.refresh(link)
        raise LinkUnavailable(unavailable_reason(link, now) or "used_up")


def pay_through_link(link, amount_text, values):
    """Check the customer's entry, hold a slot and create the payment, all in one transaction.

    Returns the payment, whose checkout_url the customer is sent to. Refusals: ValidationFailed
    (amount or answers, nothing written) or LinkUnavailable.
    """
    reason = unavailable_reason(link)
    if reason:
        raise LinkUnavailable(reason)
    amount, answers, errors = None, None, []
    try:
        amount = check_amount(link, amount_text)
    except ValidationFailed as error:
        errors += error.errors
    try:
        answers = check_answers(link, values)
    except ValidationFailed as error:
        errors += error.errors
    if errors:  # every fault at once, so the customer fixes the form in one go
        raise ValidationFailed("Some answers are missing or invalid.", errors)
    kinds = {field["key"]: field["kind"] for field in link.custom_fields or []}
    by_kind = {kinds[key]: value for key, value in answers.items()}
    brand = link.brand
    with unit_of_work():
        take_slot(link)
        payment = create_payment(
            brand,
            {
                "amount": Decimal(amount),
                "currency": link.currency,
                "reference": link.slug,
                "callback_url": link.callback_url,
                "redirect_url": link.redirect_url,
                "cancel_url": link_url(link),
                "customer_name": by_kind.get("name"),
                "customer_phone": by_kind.get("phone"),
                "metadata": {"payment_link": link.slug, "payment_link_id": link.public_id},
            },
            livemode=link.livemode,  # a test link takes test payments
        )
        db.session.add(
            LinkPayment(
                payment_id=payment.id,
                link_id=link.id,
                answers=answers,
                holds_slot=True,
                created_at=utcnow(),
            )
        )
    return payment


def move_slot(link_payment, hold):
    """Set holds_slot to `hold` and move the link's counter with it; False when nothing changed.

    Both are guarded: a slot is given back once however often a payment closes, and taken back (late
    money for a closed payment) only while the limit allows it.
    """
    lp, pl = LinkPayment.__table__, PaymentLink.__table__
    flipped = db.session.execute(
        db.update(lp)
        .where(lp.c.id == link_payment.id, lp.c.holds_slot == (not hold))
        .values(holds_slot=hold)
    ).rowcount
    if flipped != 1:
        return False
    if hold:
        limit_ok = db.or_(pl.c.usage_limit.is_(None), pl.c.used_count < pl.c.usage_limit)
        moved = db.session.execute(
            db.update(pl)
            .where(pl.c.id == link_payment.link_id, limit_ok)
            .values(used_count=pl.c.used_count + 1)
        ).rowcount
        if moved != 1:  # the limit is full: the paid payment stands, without a slot
            db.session.execute(
                db.update(lp).where(lp.c.id == link_payment.id).values(holds_slot=False)
            )
            return False
        return True
    db.session.execute(
        db.update(pl)
        .where(pl.c.id == link_payment.link_id, pl.c.used_count > 0)
        .values(used_count=pl.c.used_count - 1)
    )
    return True


def link_payment_closed(payment):
    """A link's payment was cancelled, expired or failed: give its slot back (payments signal)."""
    link_payment = link_payments_of([payment]).get(payment.id)
    if link_payment is not None:
        move_slot(link_payment, hold=False)


def link_payments_of(payments):
    """The link rows of these payments by payment id, in one query; absent: not made through a
    link.
    """
    return rows_by(LinkPayment.payment_id, (payment.id for payment in payments))


def reference_to_type(payment):
    """The reference a customer may type in their provider's app: the shop's order reference, or
    None for a payment made through a link (its reference is the link's slug, nothing to type)."""
    return None if payment.id in link_payments_of([payment]) else payment.reference


def link_payments_completed(completions):
    """Links' payments completed: each keeps (or takes back) its slot, then payment_link.paid is
    written for them, in order (payments signal; one query for the list).
    """
    found = link_payments_of([payment for payment, _ in completions])
    paid = []
    for payment, transaction in completions:
        link_payment = found.get(payment.id)
        if link_payment is None:
            continue
        if not link_payment.holds_slot:
            move_slot(link_payment, hold=True)
        link = db.session.get(PaymentLink, link_payment.link_id)
        extra = {
            "payment_link": {
                "id": link.public_id,
                "slug": link.slug,
                "title": link.title,
                "url": link_url(link),
            },
            "answers": link_payment.answers,
        }
        paid.append(Emission(payment.brand, payment=payment, transaction=transaction, extra=extra))
    if paid:
        emit_events("payment_link.paid", paid)
