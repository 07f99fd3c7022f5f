"""SMS balance chains: per phone and wallet the last known balance, each text's link, the brand's
mode

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-24 06:40:00

"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("brands", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column(
                "sms_chain_mode", sa.String(length=10), server_default="strict", nullable=False
            )
        )
    op.create_table(
        "sms_balance_chains",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("brand_id", sa.Integer(), nullable=False),
        sa.Column("device_id", sa.Integer(), nullable=False),
        sa.Column("provider", sa.String(length=20), nullable=False),
        sa.Column("receiving_number", sa.String(length=20), nullable=False),
        sa.Column("balance", sa.BigInteger(), nullable=True),
        sa.Column("balance_printed_at", sa.DateTime(), nullable=True),
        sa.Column("anchor_at", sa.DateTime(), nullable=True),
        sa.Column("anchor_balance", sa.BigInteger(), nullable=True),
        sa.Column("anchor_followed", sa.Boolean(), nullable=False),
        sa.Column("anchor_set_at", sa.DateTime(), nullable=True),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["brand_id"], ["brands.id"]),
        sa.ForeignKeyConstraint(["device_id"], ["devices.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint(
            "device_id", "provider", "receiving_number", name="uq_sms_balance_chains_key"
        ),
    )
    op.create_index("ix_sms_balance_chains_brand", "sms_balance_chains", ["brand_id"])
    op.create_table(
        "sms_balance_links",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("chain_id", sa.Integer(), nullable=False),
        sa.Column("sms_id", sa.Integer(), nullable=False),
        sa.Column("printed_at", sa.DateTime(), nullable=False),
        sa.Column("before", sa.BigInteger(), nullable=False),
        sa.Column("after", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(length=12), nullable=False),
        sa.Column("expected", sa.BigInteger(), nullable=True),
        sa.Column("note", sa.String(length=255), nullable=True),
        sa.Column("followed", sa.Boolean(), nullable=False),
        sa.Column("held", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["chain_id"], ["sms_balance_chains.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["sms_id"], ["inbound_sms.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("sms_id"),
    )
    op.create_index(
        "ix_sms_balance_links_chain_before", "sms_balance_links", ["chain_id", "before"]
    )
    op.create_index("ix_sms_balance_links_chain_after", "sms_balance_links", ["chain_id", "after"])


def downgrade():
    op.drop_index("ix_sms_balance_links_chain_after", table_name="sms_balance_links")
    op.drop_index("ix_sms_balance_links_chain_before", table_name="sms_balance_links")
    op.drop_table("sms_balance_links")
    op.drop_index("ix_sms_balance_chains_brand", table_name="sms_balance_chains")
    op.drop_table("sms_balance_chains")
    with op.batch_alter_table("brands", schema=None) as batch_op:
        batch_op.drop_column("sms_chain_mode")
