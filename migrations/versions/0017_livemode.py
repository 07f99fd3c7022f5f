"""live and test mode: a livemode flag on keys and on what they make (issue 31); every existing
row is live. A customer's e-mail is unique per brand and mode, so a test payment never fills in a
live profile; test invoices are counted apart (invoice_sequences.next_test_number), stored with
their number negated so that the one unique rule of invoices holds for both.

Every default is a constant ("1"), so SQLite adds each column in place: an expression would
rebuild the table, and a rebuilt payments or invoices table would be dropped under the rows that
reference it (foreign keys are on).

Revision ID: 0017_livemode
Revises: 0016
Create Date: 2026-11-28 14:00:00

"""

import sqlalchemy as sa
from alembic import op

revision = "0017_livemode"
down_revision = "0016"
branch_labels = None
depends_on = None

TABLES = (
    "api_keys",
    "compat_keys",
    "payments",
    "refunds",
    "customers",
    "payment_links",
    "invoices",
)
EMAIL_SET = sa.text("email IS NOT NULL")


def upgrade():
    for table in TABLES:
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.add_column(
                sa.Column("livemode", sa.Boolean(), server_default="1", nullable=False)
            )
    with op.batch_alter_table("customers", schema=None) as batch_op:
        batch_op.drop_index(
            "uq_customers_brand_email", sqlite_where=EMAIL_SET, postgresql_where=EMAIL_SET
        )
        batch_op.create_index(
            "uq_customers_brand_mode_email",
            ["brand_id", "livemode", "email"],
            unique=True,
            sqlite_where=EMAIL_SET,
            postgresql_where=EMAIL_SET,
        )
    with op.batch_alter_table("invoice_sequences", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("next_test_number", sa.Integer(), server_default="1", nullable=False)
        )


def clashes(table, column):
    """How many test rows share a live row's `column` in their brand (the old unique rule)."""
    return (
        op.get_bind()
        .execute(
            sa.text(
                f"SELECT count(*) FROM {table} test JOIN {table} live ON live.brand_id = "
                f"test.brand_id AND live.{column} = test.{column} AND live.livemode "
                "AND NOT test.livemode"
            )
        )
        .scalar()
    )


def downgrade():
    # Without the mode, a test profile holding a live profile's e-mail would break the old unique
    # index: refused, rather than a row lost (delete the brand's test data first).
    clash = clashes("customers", "email")
    if clash:
        raise RuntimeError(f"{clash} test customers share a live one's email.")
    # Plain DROP COLUMN (SQLite 3.35+ and PostgreSQL): a batch would rebuild payments and
    # invoices under the rows that reference them.
    op.drop_column("invoice_sequences", "next_test_number")
    with op.batch_alter_table("customers", schema=None) as batch_op:
        batch_op.drop_index(
            "uq_customers_brand_mode_email", sqlite_where=EMAIL_SET, postgresql_where=EMAIL_SET
        )
        batch_op.create_index(
            "uq_customers_brand_email",
            ["brand_id", "email"],
            unique=True,
            sqlite_where=EMAIL_SET,
            postgresql_where=EMAIL_SET,
        )
    for table in reversed(TABLES):
        op.drop_column(table, "livemode")
