"""Invoice numbers: one per-brand sequence, taken under a row lock, so no gap and no duplicate;
test invoices have their own count (INV-TEST-0001), so they never leave a gap in the live one."""

from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from ..answer_commit import commit_work
from ..domain_errors import ValidationFailed
from ..extensions import db
from .models.invoice import InvoiceSequence

DEFAULT_PREFIX = "INV-"
TEST_MARK = "TEST-"  # after the prefix of a test invoice's printed number
PREFIX_CHARACTERS = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_/.")


def ensure_sequence(brand_id):
    """The brand's sequence row exists (inserted once; a concurrent insert is harmless)."""
    dialect = db.session.get_bind().dialect.name
    insert = pg_insert if dialect == "postgresql" else sqlite_insert
    db.session.execute(
        insert(InvoiceSequence)
        .values(brand_id=brand_id, prefix=DEFAULT_PREFIX, next_number=1)
        .on_conflict_do_nothing(index_elements=["brand_id"])
    )


def take_number(brand_id, livemode=True):
    """(number, printed number) for a new invoice, live or test, in the caller's transaction.

    A test invoice counts on next_test_number and is stored with its number negated (printed
    INV-TEST-0001): the brand's one unique rule on (brand_id, number) then keeps the two counts
    apart, with no second constraint (which SQLite could only add by rebuilding the invoices table
    that payments reference).

    The UPDATE … RETURNING locks the brand's sequence row until the caller commits or rolls
    back: a second creator waits, then reads the number after it; a rollback gives the number
    back. So numbers have neither gaps nor duplicates (the unique constraint is the backstop).
    """
    ensure_sequence(brand_id)
    table = InvoiceSequence.__table__
    counter = table.c.next_number if livemode else table.c.next_test_number
    number, prefix = db.session.execute(
        db.update(table)
        .where(table.c.brand_id == brand_id)
        .values({counter: counter + 1})
        .returning(counter - 1, table.c.prefix)
    ).one()
    if livemode:
        return number, format_number(prefix, number)
    return -number, format_number(prefix + TEST_MARK, number)


def format_number(prefix, number):
    """The printed number: the prefix and at least four digits, e.g. INV-0001."""
    return f"{prefix}{number:04d}"


def get_prefix(brand_id):
    """The brand's prefix for new invoices."""
    sequence = db.session.get(InvoiceSequence, brand_id)
    return sequence.prefix if sequence is not None else DEFAULT_PREFIX


def set_prefix(brand_id, prefix):
    """Change the prefix of invoices created from now on (issued ones keep theirs)."""
    prefix = (prefix or "").strip()
    if len(prefix) > 20 or not set(prefix) <= PREFIX_CHARACTERS:
        raise ValidationFailed.field(
            "prefix", "Up to 20 letters, digits and - _ / . characters.", "invalid"
        )
    ensure_sequence(brand_id)
    db.session.get(InvoiceSequence, brand_id, populate_existing=True).prefix = prefix
    commit_work()
    return prefix
