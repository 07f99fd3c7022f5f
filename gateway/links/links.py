"""Creating, changing, disabling, finding and listing a brand's payment links."""

import re
import secrets
import unicodedata
import uuid
from datetime import timezone
from decimal import Decimal

from flask import current_app
from sqlalchemy.exc import IntegrityError

from ..answer_commit import commit_work
from ..clock import utcnow
from ..db_types import row_id
from ..domain_errors import AlreadyExists, ValidationFailed, field_error, not_found
from ..extensions import db
from ..payments.models.payment import PAID_STATUSES, Payment
from ..states import LINK_ACTIVE
from ..webhooks.callback_urls import check_callback_url
from .models.link import DELETED, FIELD_KINDS, LinkPayment, PaymentLink

# Lower-case letters, digits and inner hyphens, 3 to 64 characters: readable aloud and in an SMS.
SLUG_PATTERN = re.compile(r"^[a-z0-9](?:[a-z0-9-]{1,62}[a-z0-9])$")
SLUG_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"  # no 0/o, 1/l/i: read over the phone
MAX_FIELDS = 10
EDITABLE = (
    "title",
    "description",
    "amount",
    "min_amount",
    "max_amount",
    "custom_fields",
    "usage_limit",
    "expires_at",
    "callback_url",
    "redirect_url",
    "slug",
)


def link_url(link):
    """The public address of a link: the brand's origin + /pay/<slug>."""
    base = link.brand.base_url or current_app.config["BASE_URL"]
    return f"{base.rstrip('/')}/pay/{link.slug}"


def slug_from_title(title):
    """A readable slug: the title's ASCII words (up to 40 characters) and 4 random characters."""
    ascii_title = unicodedata.normalize("NFKD", title or "").encode("ascii", "ignore").decode()
    words = re.sub(r"[^a-z0-9]+", "-", ascii_title.lower()).strip("-")[:40].strip("-")
    tail = "".join(secrets.choice(SLUG_ALPHABET) for _ in range(4 if words else 8))
    return f"{words}-{tail}" if words else tail


def as_utc(moment):
    """An aware time in UTC (the API accepts any offset), or None."""
    return moment.astimezone(timezone.utc) if moment is not None else None


def check_slug(slug):
    """A slug that fits the URL rules, lower-cased; ValidationFailed on `slug` otherwise."""
    slug = (slug or "").strip().lower()
    if not SLUG_PATTERN.fullmatch(slug) or "--" in slug:
        raise field_error(
            "slug",
            "Use 3 to 64 lower-case letters, digits and single hyphens, "
            "starting and ending with a letter or digit.",
        )
    return slug


def check_definition(brand, values):
    """The rules a link's whole definition must meet (after field-level checks); raises
    ValidationFailed.
    """
    errors = []

    def refuse(field, message):
        errors.append({"field": field, "code": "invalid", "message": message})

    if values.get("currency") not in brand.currency_list:
        refuse("currency", f"Currency must be one of {', '.join(brand.currency_list)}.")
    amount, low, high = values.get("amount"), values.get("min_amount"), values.get("max_amount")
    maximum = Decimal(current_app.config["MAX_AMOUNT"])
    for name, value in (("amount", amount), ("min_amount", low), ("max_amount", high)):
        if value is not None and (value <= 0 or value > maximum):
            refuse(name, f"Must be more than 0 and at most {maximum:.2f}.")
    if amount is not None and (low is not None or high is not None):
        refuse("amount", "Give a fixed amount, or a minimum and maximum, not both.")
    if low is not None and high is not None and low > high:
        refuse("max_amount", "The maximum must not be less than the minimum.")
    fields = values.get("custom_fields") or []
    if len(fields) > MAX_FIELDS:
        refuse("custom_fields", f"At most {MAX_FIELDS} fields.")
    for kind in ("name", "phone"):
        if sum(1 for item in fields if item["kind"] == kind) > 1:
            refuse("custom_fields", f"Ask for the customer's {kind} at most once.")
    limit = values.get("usage_limit")
    if limit is not None and limit < values.get("used_count", 0):
        refuse("usage_limit", "The limit cannot be below the payments the link already holds.")
    if errors:
        raise ValidationFailed("The payment link has invalid fields.", errors)
    check_callback_url(values.get("callback_url"))


def normalise_fields(fields):
    """Custom fields with a stable key each (name, phone, address, text, text_2…) and a label."""
    normalised, counts = [], {}
    for item in fields or []:
        kind = item["kind"]
        if kind not in FIELD_KINDS:
            raise field_error(
                "custom_fields", f"A field's kind is one of {', '.join(FIELD_KINDS)}."
            )
        counts[kind] = counts.get(kind, 0) + 1
        key = kind if counts[kind] == 1 else f"{kind}_{counts[kind]}"
        normalised.append(
            {
                "key": key,
                "kind": kind,
                "label": (item.get("label") or "").strip()[:100] or None,
                "required": bool(item.get("required")),
            }
        )
    return normalised


def save_slug_or_refuse():
    """Flush; a slug another link holds is AlreadyExists on `slug` (SLUG_TAKEN), a broken limit a
    422.
    """
    try:
        db.session.flush()
    except IntegrityError as error:
        db.session.rollback()
        if "slug" not in str(error.orig):
            # The CHECK used_count <= usage_limit: a payer took a slot while the limit was lowered.
            raise field_error(
                "usage_limit", "The limit cannot be below the payments the link already holds."
            ) from None
        raise AlreadyExists(
            "That address is already taken by another payment link.",
            [{"field": "slug", "code": "taken", "message": "Choose another address."}],
            code="SLUG_TAKEN",
        ) from None


def create_link(brand, data, livemode=True):
    """A new active link from validated input (title required; a slug is made when none is
    given); a test link (`livemode=False`) takes test payments."""
    values = dict(data)
    values.setdefault("currency", brand.currency_list[0])
    values["custom_fields"] = normalise_fields(values.get("custom_fields"))
    check_definition(brand, values)
    values["expires_at"] = as_utc(values.get("expires_at"))
    slug = check_slug(values["slug"]) if values.get("slug") else slug_from_title(values["title"])
    now = utcnow()
    link = PaymentLink(
        public_id=str(uuid.uuid4()),
        brand_id=brand.id,
        brand=brand,
        livemode=bool(livemode),
        slug=slug,
        status=LINK_ACTIVE,
        used_count=0,
        created_at=now,
        updated_at=now,
        **{name: values.get(name) for name in EDITABLE if name != "slug"},
        currency=values["currency"],
    )
    db.session.add(link)
    save_slug_or_refuse()
    commit_work(keep_loaded=True)
    return link


def update_link(link, data):
    """Change what a link asks for; its currency stays (payments were made in it)."""
    values = {name: getattr(link, name) for name in EDITABLE}
    values.update(data)
    values["currency"] = link.currency
    values["used_count"] = link.used_count
    if "custom_fields" in data:
        values["custom_fields"] = normalise_fields(data["custom_fields"])
    # Switching between a fixed amount and one the customer enters clears the other kind.
    if data.get("amount") is not None:
        values["min_amount"], values["max_amount"] = data.get("min_amount"), data.get("max_amount")
    elif "min_amount" in data or "max_amount" in data:
        values["amount"] = data.get("amount")
    check_definition(link.brand, values)
    values["slug"] = check_slug(values["slug"])
    values["expires_at"] = as_utc(values.get("expires_at"))
    for name in EDITABLE:
        setattr(link, name, values[name])
    link.updated_at = utcnow()
    save_slug_or_refuse()
    commit_work(keep_loaded=True)
    return link


def set_link_status(link, status):
    """Disable a link (its open payments can still be paid), enable it again, or delete it."""
    now = utcnow()
    changed = db.session.execute(
        db.update(PaymentLink)
        # A deleted link stays deleted: a racing enable or disable finds no row to change.
        .where(PaymentLink.id == link.id, PaymentLink.status != DELETED)
        .values(status=status, updated_at=now, disabled_at=None if status == LINK_ACTIVE else now)
        .execution_options(synchronize_session=False)
    ).rowcount
    if not changed:
        raise not_found("payment_link")
    commit_work()
    db.session.refresh(link)
    return link


def delete_link(link):
    """Take a link away for good: reads and lists no longer show it, its page takes no payment.

    The row stays for the payments made through it (they still list under `?payment_link=`).
    """
    return set_link_status(link, DELETED)


def get_link(brand, ident, livemode=True):
    """A link of this brand and mode by its id (public UUID or number) or slug; NotFound
    otherwise."""
    ident = str(ident).strip()
    clauses = [PaymentLink.public_id == ident.lower(), PaymentLink.slug == ident.lower()]
    number = row_id(ident)
    if number is not None:
        clauses.append(PaymentLink.id == number)
    link = db.session.execute(
        db.select(PaymentLink)
        .where(
            PaymentLink.brand_id == brand.id,
            PaymentLink.livemode == bool(livemode),
            PaymentLink.status != DELETED,
            db.or_(*clauses),
        )
        .limit(1)
    ).scalar_one_or_none()
    if link is None:
        raise not_found("payment_link")
    return link


def find_link_by_slug(slug):
    """The link behind /pay/<slug>, or None (slugs are unique across brands)."""
    if not slug or len(slug) > 64:
        return None
    return db.session.execute(
        db.select(PaymentLink).where(PaymentLink.slug == slug.lower())
    ).scalar_one_or_none()


def list_links_query(brand, filters=None, livemode=True):
    """The brand's links of one mode but the deleted ones, newest first, narrowed by status."""
    query = db.select(PaymentLink).where(
        PaymentLink.brand_id == brand.id,
        PaymentLink.livemode == bool(livemode),
        PaymentLink.status != DELETED,
    )
    if (filters or {}).get("status"):
        query = query.where(PaymentLink.status == filters["status"])
    return query.order_by(PaymentLink.created_at.desc(), PaymentLink.id.desc())


def with_totals(links):
    """The links, each given `paid_count` and `paid_total` (completed, refunded or not), in one
    query.
    """
    ids = [link.id for link in links]
    totals = {}
    if ids:
        rows = db.session.execute(
            db.select(LinkPayment.link_id, db.func.count(), db.func.sum(Payment.amount))
            .join(Payment, Payment.id == LinkPayment.payment_id)
            .where(LinkPayment.link_id.in_(ids), Payment.status.in_(PAID_STATUSES))
            .group_by(LinkPayment.link_id)
        ).all()
        totals = {link_id: (count, total) for link_id, count, total in rows}
    for link in links:
        count, total = totals.get(link.id, (0, None))
        link.paid_count = count
        link.paid_total = total if total is not None else 0
    return links


def link_payments_query(link):
    """The payments made through a link with the customer's answers, newest first: (payment,
    answers).
    """
    return (
        db.select(Payment, LinkPayment.answers)
        .join(LinkPayment, LinkPayment.payment_id == Payment.id)
        .where(LinkPayment.link_id == link.id)
        .order_by(Payment.created_at.desc(), Payment.id.desc())
    )


def link_payment_ids(brand_id, ident):
    """A subquery of the payment ids of a brand's link (by public id or slug), for filtering
    payments.
    """
    ident = str(ident).strip().lower()
    return (
        db.select(LinkPayment.payment_id)
        .join(PaymentLink, PaymentLink.id == LinkPayment.link_id)
        .where(
            PaymentLink.brand_id == brand_id,
            db.or_(PaymentLink.public_id == ident, PaymentLink.slug == ident),
        )
    )


def link_of_payment(payment_id):
    """(link, answers) of a payment made through a link, or None."""
    return db.session.execute(
        db.select(PaymentLink, LinkPayment.answers)
        .join(LinkPayment, LinkPayment.link_id == PaymentLink.id)
        .where(LinkPayment.payment_id == payment_id)
    ).first()
