"""payment_methods.is_demo: a demo receiving number is marked as such

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-24 03:40:00

"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

# The number bootstrap used as its sample before the flag existed (gateway/cli/checkout.py
# DEMO_NUMBER).
DEMO_NUMBER = "01700000000"


def upgrade():
    with op.batch_alter_table("payment_methods", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("is_demo", sa.Boolean(), server_default=sa.false(), nullable=False)
        )
    # An install bootstrapped before this revision holds the sample bKash number unmarked: mark it.
    op.execute(
        sa.text(
            "UPDATE payment_methods SET is_demo = :yes WHERE provider = 'bkash' AND number "
            "= :number"
        ).bindparams(yes=True, number=DEMO_NUMBER)
    )


def downgrade():
    with op.batch_alter_table("payment_methods", schema=None) as batch_op:
        batch_op.drop_column("is_demo")
