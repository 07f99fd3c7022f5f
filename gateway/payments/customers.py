"""Customer profiles: upserted from payments, managed through the API and the panel."""

from decimal import Decimal

import phonenumbers
from sqlalchemy.exc import IntegrityError

from ..answer_commit import commit_work
from ..clock import utcnow
from ..db_types import row_id
from ..domain_errors import AlreadyExists, ValidationFailed, not_found
from ..extensions import db
from .dashboard import NET_PAID
from .models.customer import Customer
from .models.payment import PAID_STATUSES, Payment


def upsert_customer(brand, name=None, email=None, phone=None, livemode=True):
    """The brand's customer of this mode with this e-mail (else phone), created or filled in; None
    without either.
    """
    customer_id = upsert_customer_id(brand, name, email, phone, livemode=livemode)
    if customer_id is None:
        return None
    return db.session.get(Customer, customer_id, populate_existing=True)


def upsert_customer_id(brand, name=None, email=None, phone=None, livemode=True):
    """The id of the brand's customer of this mode with this e-mail (else phone), created or
    filled in; None without either. A test payment's customer is a test profile: never a live one.

    A new name or phone fills in the profile; an empty one keeps what is on file. By e-mail it is
    one statement (INSERT … ON CONFLICT DO UPDATE … RETURNING, on both engines): of two payments for
    one new customer at once, one inserts the row and the other updates it, and neither transaction
    is rolled back (a savepoint would not do on SQLite, where releasing the outermost one commits
    it).
    """
    email = email.lower() if email else None
    if email:
        values = {
            "brand_id": brand.id,
            "livemode": bool(livemode),
            "name": name,
            "email": email,
            "phone": phone,
        }
        return (
            db.session.connection()
            .execute(UPSERT_BY_EMAIL, {**values, "now": utcnow()})
            .scalar_one()
        )
    if not phone:
        return None
    customer = find_by_phone(brand, phone, livemode)
    if customer is None:
        customer = Customer(brand_id=brand.id, livemode=bool(livemode), name=name, phone=phone)
        db.session.add(customer)
    else:
        customer.name = name or customer.name
    db.session.flush()
    return customer.id


# The same SQL on SQLite and PostgreSQL. SQLAlchemy's dialect-specific
# insert().on_conflict_do_update() would say it too, but it is not cacheable: it was compiled afresh
# for every payment. updated_at moves only when the name or phone really changes, as the ORM's
# onupdate would.
UPSERT_BY_EMAIL = (
    db.text(
        """INSERT INTO customers (brand_id, livemode, name, email, phone, created_at, updated_at)
        VALUES (:brand_id, :livemode, :name, :email, :phone, :now, :now)
        ON CONFLICT (brand_id, livemode, email) WHERE email IS NOT NULL DO UPDATE SET
            name = coalesce(nullif(excluded.name, ''), customers.name),
            phone = coalesce(nullif(excluded.phone, ''), customers.phone),
            updated_at = CASE
                WHEN nullif(excluded.name, '') IS NOT NULL
                    AND (customers.name IS NULL OR customers.name <> excluded.name)
                  OR nullif(excluded.phone, '') IS NOT NULL
                    AND (customers.phone IS NULL OR customers.phone <> excluded.phone)
                THEN excluded.updated_at
                ELSE customers.updated_at
            END
        RETURNING id"""
    )
    .bindparams(db.bindparam("now", type_=Customer.__table__.c.updated_at.type))
    .columns(id=db.Integer)
)


def find_by_phone(brand, phone, livemode=True):
    """The brand's first customer of this mode with this telephone number."""
    return db.session.execute(
        db.select(Customer)
        .where(
            Customer.brand_id == brand.id,
            Customer.livemode == bool(livemode),
            Customer.phone == phone,
        )
        .order_by(Customer.id)
        .limit(1)
    ).scalar_one_or_none()


def get_customer(brand, ident, livemode=True):
    """A customer of this brand and mode by id, e-mail or phone; NotFound otherwise."""
    ident = str(ident).strip()
    query = db.select(Customer).where(
        Customer.brand_id == brand.id, Customer.livemode == bool(livemode)
    )
    # A local number such as 01712345678 is all digits too: ids never start with 0.
    if not ident.startswith("0") and len(ident) < 12 and row_id(ident) is not None:
        query = query.where(Customer.id == row_id(ident))
    elif "@" in ident:
        query = query.where(Customer.email == ident.lower())
    else:
        query = query.where(Customer.phone == normalise_phone(ident)).order_by(Customer.id).limit(1)
    customer = db.session.execute(query).scalar_one_or_none()
    if customer is None:
        raise not_found("customer")
    return customer


def normalise_phone(text):
    """A telephone number in the E.164 form profiles store, or the text as given when it is not
    one."""
    try:
        number = phonenumbers.parse(text, "BD")
    except phonenumbers.NumberParseException:
        return text
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)


def list_customers_query(brand, filters, livemode=True):
    """The brand's customers of one mode, newest first, narrowed by e-mail, phone or a search
    text."""
    query = db.select(Customer).where(
        Customer.brand_id == brand.id, Customer.livemode == bool(livemode)
    )
    if filters.get("email"):
        query = query.where(Customer.email == filters["email"].strip().lower())
    if filters.get("phone"):
        query = query.where(Customer.phone == filters["phone"])
    if filters.get("q"):
        pattern = (
            "%"
            + filters["q"]
            .strip()
            .lower()
            .replace("\\", "\\\\")
            .replace("%", "\\%")
            .replace("_", "\\_")
            + "%"
        )
        query = query.where(
            db.or_(
                *(
                    db.func.lower(column).like(pattern, escape="\\")
                    for column in (Customer.name, Customer.email, Customer.phone)
                )
            )
        )
    return query.order_by(Customer.created_at.desc(), Customer.id.desc())


def with_totals(customers, brand):
    """The brand's customers, each given `payment_count`, `total_paid_by_currency` (what their paid
    payments came to net of refunds, per currency they paid in, the brand's currencies first in
    its order) and `total_paid` (that figure in the brand's first currency), from one query."""
    accepted = brand.currency_list
    place = {code: place for place, code in enumerate(accepted)}
    totals = customer_totals([customer.id for customer in customers])
    for customer in customers:
        count, paid_in = totals.get(customer.id, (0, {}))
        customer.payment_count = count
        customer.total_paid_by_currency = dict(
            sorted(paid_in.items(), key=lambda item: (place.get(item[0], len(place)), item[0]))
        )
        customer.total_paid = paid_in.get(accepted[0], Decimal("0.00"))
    return customers


def create_customer(brand, data, livemode=True):
    """A new profile (a test one with `livemode=False`); an e-mail already on file in that mode is
    AlreadyExists."""
    customer = Customer(
        brand_id=brand.id,
        livemode=bool(livemode),
        name=data.get("name"),
        email=(data.get("email") or None) and data["email"].lower(),
        phone=data.get("phone"),
    )
    db.session.add(customer)
    try:
        commit_work()  # with an Idempotency-Key, together with the stored answer
    except IntegrityError:
        db.session.rollback()
        raise AlreadyExists(
            "A customer with this e-mail already exists.",
            [{"field": "email", "code": "taken", "message": "E-mail already on file."}],
            code="CUSTOMER_EXISTS",
        )
    return customer


def update_customer(customer, data):
    """Change a profile's name, e-mail or phone."""
    for field in ("name", "email", "phone"):
        if field in data:
            value = data[field]
            setattr(customer, field, value.lower() if field == "email" and value else value)
    if not customer.email and not customer.phone:
        db.session.rollback()
        raise ValidationFailed(
            "A customer keeps an e-mail address or a telephone number.",
            [
                {
                    "field": field,
                    "code": "required",
                    "message": "Keep an e-mail address or a telephone number.",
                }
                for field in ("email", "phone")
            ],
        )
    try:
        commit_work()
    except IntegrityError:
        db.session.rollback()
        raise AlreadyExists(
            "A customer with this e-mail already exists.",
            [{"field": "email", "code": "taken", "message": "E-mail already on file."}],
            code="CUSTOMER_EXISTS",
        )
    return customer


def delete_customer(customer):
    """Remove a profile; its payments stay, unlinked, for the books."""
    db.session.execute(
        db.update(Payment).where(Payment.customer_id == customer.id).values(customer_id=None)
    )
    db.session.delete(customer)
    commit_work()


def customer_totals(customer_ids):
    """Per customer id, from one query: (payment count, {currency: paid net of refunds} of each
    currency paid in)."""
    if not customer_ids:
        return {}
    paid = Payment.status.in_(PAID_STATUSES)
    rows = db.session.execute(
        db.select(
            Payment.customer_id,
            Payment.currency,
            db.func.count(Payment.id).label("payments"),
            db.func.count(db.case((paid, Payment.id))).label("paid"),
            db.func.sum(db.case((paid, NET_PAID), else_=0)).label("net"),
        )
        .where(Payment.customer_id.in_(customer_ids))
        .group_by(Payment.customer_id, Payment.currency)
    ).all()
    totals = {}
    for row in rows:
        count, paid_in = totals.get(row.customer_id, (0, {}))
        if row.paid:
            paid_in[row.currency] = row.net
        totals[row.customer_id] = (count + row.payments, paid_in)
    return totals
