"""compatibility keys and each dialect's payment id

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-24 06:30:00

"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "compat_keys",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("brand_id", sa.Integer(), nullable=False),
        sa.Column("dialect", sa.String(length=20), nullable=False),
        sa.Column("label", sa.String(length=100), nullable=False),
        sa.Column("display_prefix", sa.String(length=32), nullable=False),
        sa.Column("key_hash", sa.String(length=64), nullable=False),
        sa.Column("secret_sealed", sa.String(length=255), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("last_used_at", sa.DateTime(), nullable=True),
        sa.Column("revoked_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["brand_id"], ["brands.id"], name=op.f("fk_compat_keys_brand_id_brands")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_compat_keys")),
        sa.UniqueConstraint("key_hash", name=op.f("uq_compat_keys_key_hash")),
    )
    with op.batch_alter_table("compat_keys", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_compat_keys_brand_id"), ["brand_id"], unique=False)
        batch_op.create_index(
            "uq_compat_keys_active_label",
            ["brand_id", "label"],
            unique=True,
            sqlite_where=sa.text("revoked_at IS NULL"),
            postgresql_where=sa.text("revoked_at IS NULL"),
        )
    op.create_table(
        "compat_payments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("brand_id", sa.Integer(), nullable=False),
        sa.Column("payment_id", sa.Integer(), nullable=False),
        sa.Column("key_id", sa.Integer(), nullable=False),
        sa.Column("dialect", sa.String(length=20), nullable=False),
        sa.Column("external_id", sa.String(length=40), nullable=False),
        sa.Column("return_token", sa.String(length=64), nullable=False),
        sa.Column("redirect_url", sa.String(length=2048), nullable=True),
        sa.Column("cancel_url", sa.String(length=2048), nullable=True),
        sa.Column("webhook_url", sa.String(length=2048), nullable=True),
        sa.Column("return_type", sa.String(length=4), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["brand_id"], ["brands.id"], name=op.f("fk_compat_payments_brand_id_brands")
        ),
        sa.ForeignKeyConstraint(
            ["key_id"], ["compat_keys.id"], name=op.f("fk_compat_payments_key_id_compat_keys")
        ),
        sa.ForeignKeyConstraint(
            ["payment_id"], ["payments.id"], name=op.f("fk_compat_payments_payment_id_payments")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_compat_payments")),
        sa.UniqueConstraint("brand_id", "dialect", "external_id", name="uq_compat_payments_id"),
        sa.UniqueConstraint("payment_id", name=op.f("uq_compat_payments_payment_id")),
        sa.UniqueConstraint("return_token", name=op.f("uq_compat_payments_return_token")),
    )
    with op.batch_alter_table("compat_payments", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_compat_payments_key_id"), ["key_id"], unique=False)


def downgrade():
    op.drop_table("compat_payments")
    op.drop_table("compat_keys")
