"""what a payment collects in taka: amount_bdt, exchange_rate, fee and amount_paid

Revision ID: 0020_amounts
Revises: 0019_simulate
Create Date: 2026-11-28 17:20:00

"""

import sqlalchemy as sa
from alembic import op

revision = "0020_amounts"
down_revision = "0019_simulate"
branch_labels = None
depends_on = None


def upgrade():
    # Plain ADD COLUMNs on both engines: rebuilding payments on SQLite (batch mode) would cascade
    # through the rows that refer to it.
    op.add_column("payments", sa.Column("amount_bdt", sa.BigInteger()))
    op.add_column("payments", sa.Column("exchange_rate", sa.Numeric(18, 6)))
    op.add_column(
        "payments",
        sa.Column("fee", sa.BigInteger(), nullable=False, server_default=sa.text("0")),
    )
    op.add_column("payments", sa.Column("amount_paid", sa.BigInteger()))
    # Every payment so far charged no fee; one in taka collects its amount, one in another
    # currency had no rate (no SMS could pay it) and keeps none.
    op.execute(
        "UPDATE payments SET amount_bdt = amount, amount_paid = amount WHERE currency = 'BDT'"
    )


def downgrade():
    for column in ("amount_paid", "fee", "exchange_rate", "amount_bdt"):
        op.drop_column("payments", column)
