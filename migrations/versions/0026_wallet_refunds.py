"""wallet_refunds (a wallet refund whose answer never came, pending until the wallet confirms) and
wallet_credentials.token_lock_until (one process renews a wallet's token)

Revision ID: 0026_wallet_refunds
Revises: 0025_wallet_trips
Create Date: 2026-11-28 20:30:00

"""

import sqlalchemy as sa
from alembic import op

revision = "0026_wallet_refunds"
down_revision = "0025_wallet_trips"
branch_labels = None
depends_on = None


def upgrade():
    op.add_column("wallet_credentials", sa.Column("token_lock_until", sa.DateTime()))
    op.create_table(
        "wallet_refunds",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "payment_id",
            sa.Integer(),
            sa.ForeignKey("payments.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column(
            "wallet_payment_id",
            sa.Integer(),
            sa.ForeignKey("wallet_payments.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.Column("reason", sa.String(500)),
        sa.Column("refunded_by_id", sa.Integer(), sa.ForeignKey("users.id", ondelete="SET NULL")),
        sa.Column("state", sa.String(20), nullable=False),
        sa.Column("provider_refund_id", sa.String(100)),
        sa.Column("refund_id", sa.Integer(), sa.ForeignKey("refunds.id", ondelete="SET NULL")),
        sa.Column("last_error", sa.String(255)),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
    )
    op.create_index("ix_wallet_refunds_payment_id", "wallet_refunds", ["payment_id"])
    op.create_index("ix_wallet_refunds_state_updated", "wallet_refunds", ["state", "updated_at"])


def downgrade():
    op.drop_index("ix_wallet_refunds_state_updated", table_name="wallet_refunds")
    op.drop_index("ix_wallet_refunds_payment_id", table_name="wallet_refunds")
    op.drop_table("wallet_refunds")
    with op.batch_alter_table("wallet_credentials") as batch:
        batch.drop_column("token_lock_until")
