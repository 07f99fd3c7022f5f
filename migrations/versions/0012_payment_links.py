"""payment links and the payments made through them

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-24 06:30:00

"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "payment_links",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("public_id", sa.String(length=36), nullable=False),
        sa.Column("brand_id", sa.Integer(), nullable=False),
        sa.Column("slug", sa.String(length=64), nullable=False),
        sa.Column("title", sa.String(length=200), nullable=False),
        sa.Column("description", sa.String(length=2000), nullable=True),
        sa.Column("currency", sa.String(length=3), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=True),
        sa.Column("min_amount", sa.BigInteger(), nullable=True),
        sa.Column("max_amount", sa.BigInteger(), nullable=True),
        sa.Column("custom_fields", sa.JSON(), nullable=False),
        sa.Column("usage_limit", sa.Integer(), nullable=True),
        sa.Column("used_count", sa.Integer(), nullable=False),
        sa.Column("expires_at", sa.DateTime(), nullable=True),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("callback_url", sa.String(length=2048), nullable=True),
        sa.Column("redirect_url", sa.String(length=2048), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.Column("disabled_at", sa.DateTime(), nullable=True),
        sa.CheckConstraint(
            "amount IS NULL OR amount > 0", name=op.f("ck_payment_links_amount_positive")
        ),
        sa.CheckConstraint(
            "used_count >= 0", name=op.f("ck_payment_links_used_count_not_negative")
        ),
        sa.CheckConstraint(
            "usage_limit IS NULL OR used_count <= usage_limit",
            name=op.f("ck_payment_links_within_usage_limit"),
        ),
        sa.ForeignKeyConstraint(
            ["brand_id"], ["brands.id"], name=op.f("fk_payment_links_brand_id_brands")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_payment_links")),
        sa.UniqueConstraint("public_id", name=op.f("uq_payment_links_public_id")),
        sa.UniqueConstraint("slug", name=op.f("uq_payment_links_slug")),
    )
    with op.batch_alter_table("payment_links", schema=None) as batch_op:
        batch_op.create_index(
            "ix_payment_links_brand_created", ["brand_id", "created_at"], unique=False
        )
    op.create_table(
        "payment_link_payments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("payment_id", sa.Integer(), nullable=False),
        sa.Column("link_id", sa.Integer(), nullable=False),
        sa.Column("answers", sa.JSON(), nullable=False),
        sa.Column("holds_slot", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["link_id"],
            ["payment_links.id"],
            name=op.f("fk_payment_link_payments_link_id_payment_links"),
        ),
        sa.ForeignKeyConstraint(
            ["payment_id"],
            ["payments.id"],
            name=op.f("fk_payment_link_payments_payment_id_payments"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_payment_link_payments")),
        sa.UniqueConstraint("payment_id", name=op.f("uq_payment_link_payments_payment_id")),
    )
    with op.batch_alter_table("payment_link_payments", schema=None) as batch_op:
        batch_op.create_index(
            "ix_payment_link_payments_link", ["link_id", "created_at"], unique=False
        )


def downgrade():
    with op.batch_alter_table("payment_link_payments", schema=None) as batch_op:
        batch_op.drop_index("ix_payment_link_payments_link")
    op.drop_table("payment_link_payments")
    with op.batch_alter_table("payment_links", schema=None) as batch_op:
        batch_op.drop_index("ix_payment_links_brand_created")
    op.drop_table("payment_links")
