"""The currencies a brand accepts and the rate of each to the taka: accepted at a rate, re-rated by
hand or by its feed, no longer accepted. BDT is always the taka itself, at no rate.

`brands.currencies` stays the one list of accepted codes (every create path checks it, the OpenAPI
document lists it); `currency_rates` holds the rate of each listed code beside BDT. A code listed
without a rate (listed before rates existed, or through Settings) is still accepted: its payments
have no taka amount, so no SMS can pay them, and the currencies page says so.
"""

import re
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation

from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm.attributes import set_committed_value

from ..accounts.models.brand import Brand
from ..answer_commit import commit_work
from ..clock import utcnow
from ..domain_errors import field_error, invalid_state
from ..extensions import db
from ..money import plain_decimal
from .amounts import BDT
from .models.currency import MANUAL, CurrencyRate

CODE = re.compile(r"^[A-Z]{3}$")
RATE_PLACES = Decimal("0.000001")  # the column's scale: Numeric(18, 6)
# Taka per unit: the dearest currency (KWD) is under ৳500, the cheapest worth quoting (IRR, VND)
# far above ৳0.000001; outside these bounds a rate is a typo or a feed's mistake.
MIN_RATE, MAX_RATE = Decimal("0.000001"), Decimal("100000")


def checked_code(value, field="code"):
    """An ISO 4217 code, upper-cased, else ValidationFailed on `field`; BDT too (no rate)."""
    code = str(value or "").strip().upper()
    if not CODE.match(code):
        raise field_error(field, "Use a three-letter currency code such as USD.")
    if code == BDT:
        raise field_error(field, "BDT is the taka: it is always accepted and needs no rate.")
    return code


def checked_rate(value, field="rate"):
    """Taka per unit as a Decimal: a plain number above zero, at most 6 decimals, within bounds."""
    if isinstance(value, bool) or isinstance(value, float):
        value = None if isinstance(value, bool) else repr(value)
    try:
        rate = Decimal(str(value).strip()) if value is not None else None
    except InvalidOperation:
        rate = None
    if rate is None or not rate.is_finite():
        raise field_error(field, "Enter the rate as a number of taka, such as 121.50.")
    if rate <= 0:
        raise field_error(field, "A rate must be more than zero.")
    if rate > MAX_RATE:  # checked first: quantizing 1e400 would overflow
        raise field_error(field, f"A rate is between {MIN_RATE} and {MAX_RATE} taka per unit.")
    if rate != rate.quantize(RATE_PLACES, rounding=ROUND_HALF_EVEN):
        raise field_error(field, "A rate has at most 6 decimal places.")
    return rate.quantize(RATE_PLACES)


def rate_row(brand, code):
    """The stored rate of one code, or None."""
    return db.session.execute(
        db.select(CurrencyRate).where(CurrencyRate.brand_id == brand.id, CurrencyRate.code == code)
    ).scalar_one_or_none()


def rate_for(brand, currency):
    """The rate a new payment in `currency` is fixed at: None for BDT, and for a listed code with
    no rate yet (its payment then has no taka amount)."""
    if currency == BDT:
        return None
    row = rate_row(brand, currency)
    return None if row is None else row.rate


def currency_refusal(brand, currency, field="currency"):
    """ValidationFailed naming the accepted codes, for a currency the brand does not accept."""
    return field_error(
        field,
        f"{currency or 'This currency'} is not accepted. "
        f"Currency must be one of {', '.join(brand.currency_list)}.",
        code="currency_not_accepted",
    )


def brand_rates(brand):
    """[(code, CurrencyRate or None)] for every accepted code, in the brand's order (BDT: None)."""
    rows = {
        row.code: row
        for row in db.session.execute(
            db.select(CurrencyRate).where(CurrencyRate.brand_id == brand.id)
        ).scalars()
    }
    return [(code, rows.get(code)) for code in brand.currency_list]


def write_rate(brand, code, rate, source, by):
    """Store `rate` for `code`: inserted if new (a racing insert of the same code is harmless), then
    set; returns (row, the old rate or None)."""
    now = utcnow()
    insert = pg_insert if db.session.get_bind().dialect.name == "postgresql" else sqlite_insert
    created = db.session.execute(
        insert(CurrencyRate.__table__)
        .values(
            brand_id=brand.id, code=code, rate=rate, source=source, updated_at=now, updated_by=by
        )
        .on_conflict_do_nothing(index_elements=["brand_id", "code"])
        .returning(CurrencyRate.__table__.c.id)
    ).first()
    row = rate_row(brand, code)
    if created is not None:
        return row, None
    old = row.rate
    row.rate, row.source, row.updated_at, row.updated_by = rate, source, now, by
    return row, old


def write_currency_list(brand, codes):
    """brands.currencies := codes, only if nobody changed the list since this brand was read (a
    conditional UPDATE: of two racing changes one wins, the other is InvalidState)."""
    listed = ",".join(codes)
    written = db.session.execute(
        db.update(Brand)
        .where(Brand.id == brand.id, Brand.currencies == brand.currencies)
        .values(currencies=listed)
        .execution_options(synchronize_session=False)
    ).rowcount
    if not written:
        raise invalid_state("The brand's currencies changed meanwhile: reload and try again.")
    set_committed_value(brand, "currencies", listed)


def accept_currency(brand, code, rate, by, source=MANUAL):
    """Accept `code` at `rate` taka per unit (or change its rate); returns the audit details.

    Payments already made keep the rate they were fixed at: only new ones take this one.
    """
    code, rate = checked_code(code), checked_rate(rate)
    row, old = write_rate(brand, code, rate, source, by)
    details = {"code": code, "rate": [plain_decimal(old), plain_decimal(rate)], "source": source}
    if code not in brand.currency_list:
        write_currency_list(brand, [*brand.currency_list, code])
        details["accepted"] = True
    commit_work()
    return details


def stop_accepting(brand, code):
    """No new payment in `code`; its rate goes (payments already made keep theirs)."""
    code = checked_code(code)
    if code not in brand.currency_list:
        raise currency_refusal(brand, code, field="code")
    remaining = [listed for listed in brand.currency_list if listed != code]
    if not remaining:
        raise field_error("code", "Accept at least one currency.")
    row = rate_row(brand, code)
    details = {"code": code, "rate": [plain_decimal(row.rate if row else None), None]}
    if row is not None:
        db.session.delete(row)
    write_currency_list(brand, remaining)
    commit_work()
    return details


def forget_unlisted_rates(brand):
    """Drop the rates of codes no longer in the brand's list (Settings' currency list edited by
    hand): a code listed again later starts without a rate instead of reviving a stale one."""
    db.session.execute(
        db.delete(CurrencyRate).where(
            CurrencyRate.brand_id == brand.id, CurrencyRate.code.not_in(brand.currency_list)
        )
    )
    commit_work()
