"""method fees passed to the customer: a method's fee parts, the brand's refund_fee, the fee a
transaction took, and refunds up to amount + fee

Revision ID: 0021_fees
Revises: 0020_amounts
Create Date: 2026-11-28 17:40:00

"""

import sqlalchemy as sa
from alembic import op

revision = "0021_fees"
down_revision = "0020_amounts"
branch_labels = None
depends_on = None

NARROW = "amount_refunded >= 0 AND amount_refunded <= amount"
# A BDT payment's refunds may return its fee (taka) too; another currency's only its amount. A
# transaction's fee is its BDT payment's fee, recorded at completion (0 for another currency).
WIDE = {
    "payments": "amount_refunded >= 0 AND amount_refunded <= "
    "amount + CASE WHEN currency = 'BDT' THEN fee ELSE 0 END",
    "transactions": "amount_refunded >= 0 AND amount_refunded <= amount + fee",
}
NARROWS = dict.fromkeys(WIDE, NARROW)


def upgrade():
    # Plain ADD COLUMNs on both engines (payments and transactions have child rows).
    op.add_column(
        "payment_methods",
        sa.Column("fee_fixed", sa.BigInteger(), nullable=False, server_default=sa.text("0")),
    )
    op.add_column(
        "payment_methods",
        sa.Column("fee_percent", sa.Numeric(6, 3), nullable=False, server_default=sa.text("0")),
    )
    op.add_column("payment_methods", sa.Column("fee_min", sa.BigInteger()))
    op.add_column("payment_methods", sa.Column("fee_max", sa.BigInteger()))
    op.add_column(
        "brands",
        sa.Column("refund_fee", sa.Boolean(), nullable=False, server_default=sa.false()),
    )
    op.add_column(
        "transactions",
        sa.Column("fee", sa.BigInteger(), nullable=False, server_default=sa.text("0")),
    )
    set_refund_check(NARROWS, WIDE)


def downgrade():
    # Narrowing again fails (as it should) while a refund returned a fee.
    set_refund_check(WIDE, NARROWS)
    op.drop_column("transactions", "fee")
    op.drop_column("brands", "refund_fee")
    for column in ("fee_max", "fee_min", "fee_percent", "fee_fixed"):
        op.drop_column("payment_methods", column)


def set_refund_check(olds, news):
    """Replace the refund ceiling CHECK of payments and transactions (per table, old → new).

    PostgreSQL drops and adds it. SQLite cannot alter a CHECK, and rebuilding these tables
    (batch mode) would cascade through their child rows (inbound_sms.payment_id is ON DELETE SET
    NULL): instead the CHECK's text is rewritten in the schema, SQLite's documented procedure for
    a change that leaves every stored row valid (sqlite.org/lang_altertable.html, "other kinds of
    table schema changes"). Widening `amount` to `amount + fee` keeps every row valid; on both
    engines the rows are checked first and a narrowing (downgrade) a row would break is refused.
    """
    bind = op.get_bind()
    for table, new in news.items():
        broken = bind.exec_driver_sql(f"SELECT count(*) FROM {table} WHERE NOT ({new})").scalar()
        if broken:
            raise RuntimeError(
                f"{broken} {table} rows break {new!r} (a refund returned a fee): "
                "cannot change the CHECK"
            )
    if bind.dialect.name != "sqlite":
        for table, new in news.items():
            op.drop_constraint(op.f(f"ck_{table}_refund_within_amount"), table, type_="check")
            op.create_check_constraint(op.f(f"ck_{table}_refund_within_amount"), table, new)
        return
    version = bind.exec_driver_sql("PRAGMA schema_version").scalar()
    bind.exec_driver_sql("PRAGMA writable_schema = ON")
    try:
        for table, new in news.items():
            old = f"CHECK ({olds[table]})"
            changed = bind.exec_driver_sql(
                "UPDATE sqlite_master SET sql = replace(sql, ?, ?) "
                "WHERE type = 'table' AND name = ? AND instr(sql, ?) > 0",
                (old, f"CHECK ({new})", table, old),
            ).rowcount
            if changed != 1:
                raise RuntimeError(f"{table}: {old!r} was not found")
        bind.exec_driver_sql(f"PRAGMA schema_version = {version + 1}")
    finally:
        bind.exec_driver_sql("PRAGMA writable_schema = OFF")
    problems = bind.exec_driver_sql("PRAGMA integrity_check").scalar()
    if problems != "ok":
        raise RuntimeError(f"SQLite integrity check after the CHECK change: {problems}")
