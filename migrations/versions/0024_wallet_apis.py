"""wallet APIs: wallet_credentials, wallet_payments, refunds.provider_refund_id

Revision ID: 0024_wallet_apis
Revises: 0023_manual
Create Date: 2026-11-28 18:10:00

"""

import sqlalchemy as sa
from alembic import op

revision = "0024_wallet_apis"
down_revision = "0023_manual"
branch_labels = None
depends_on = None


def upgrade():
    # A plain ADD COLUMN: rebuilding refunds on SQLite would be a batch rebuild.
    op.add_column("refunds", sa.Column("provider_refund_id", sa.String(100)))
    op.create_table(
        "wallet_credentials",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "method_id",
            sa.Integer(),
            sa.ForeignKey("payment_methods.id", ondelete="CASCADE"),
            nullable=False,
            unique=True,
        ),
        sa.Column("base_url", sa.String(500), nullable=False),
        sa.Column("sealed", sa.Text(), nullable=False),
        sa.Column("token_sealed", sa.Text()),
        sa.Column("token_expires_at", sa.DateTime()),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
    )
    op.create_table(
        "wallet_payments",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "payment_id",
            sa.Integer(),
            sa.ForeignKey("payments.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column(
            "method_id",
            sa.Integer(),
            sa.ForeignKey("payment_methods.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("provider", sa.String(20), nullable=False),
        sa.Column("provider_payment_id", sa.String(255), nullable=False),
        sa.Column("state", sa.String(20), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.Column("last_error", sa.String(255)),
        sa.UniqueConstraint(
            "provider", "provider_payment_id", name="uq_wallet_payments_provider_id"
        ),
    )
    op.create_index("ix_wallet_payments_payment_id", "wallet_payments", ["payment_id"])
    op.create_index("ix_wallet_payments_state_updated", "wallet_payments", ["state", "updated_at"])


def downgrade():
    op.drop_index("ix_wallet_payments_state_updated", table_name="wallet_payments")
    op.drop_index("ix_wallet_payments_payment_id", table_name="wallet_payments")
    op.drop_table("wallet_payments")
    op.drop_table("wallet_credentials")
    op.drop_column("refunds", "provider_refund_id")
