"""merchant notifications: per-brand settings, the notifications raised, their outbox of deliveries

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-24 06:40:00

"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "notification_settings",
        sa.Column("brand_id", sa.Integer(), nullable=False),
        sa.Column("channels", sa.JSON(), nullable=False),
        sa.Column("email_to", sa.String(length=500), nullable=True),
        sa.Column("telegram_token_sealed", sa.String(length=512), nullable=True),
        sa.Column("telegram_chat_id", sa.String(length=64), nullable=True),
        sa.Column("offline_minutes", sa.Integer(), nullable=False),
        sa.Column("waiting_minutes", sa.Integer(), nullable=False),
        sa.Column("unclaimed_minutes", sa.Integer(), nullable=False),
        sa.Column("notify_back_online", sa.Boolean(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["brand_id"], ["brands.id"], name=op.f("fk_notification_settings_brand_id_brands")
        ),
        sa.PrimaryKeyConstraint("brand_id", name=op.f("pk_notification_settings")),
    )
    op.create_table(
        "merchant_notifications",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("brand_id", sa.Integer(), nullable=False),
        sa.Column("event", sa.String(length=40), nullable=False),
        sa.Column("dedupe_key", sa.String(length=200), nullable=True),
        sa.Column("subject", sa.String(length=200), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("link", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["brand_id"], ["brands.id"], name=op.f("fk_merchant_notifications_brand_id_brands")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_merchant_notifications")),
        sa.UniqueConstraint("brand_id", "dedupe_key", name="uq_merchant_notifications_dedupe"),
    )
    with op.batch_alter_table("merchant_notifications", schema=None) as batch_op:
        batch_op.create_index(
            "ix_merchant_notifications_brand_created", ["brand_id", "created_at"], unique=False
        )
    op.create_table(
        "notification_deliveries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("notification_id", sa.Integer(), nullable=False),
        sa.Column("brand_id", sa.Integer(), nullable=False),
        sa.Column("channel", sa.String(length=20), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", sa.DateTime(), nullable=True),
        sa.Column("lease_expires_at", sa.DateTime(), nullable=True),
        sa.Column("last_error", sa.String(length=500), nullable=True),
        sa.Column("sent_at", sa.DateTime(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["brand_id"], ["brands.id"], name=op.f("fk_notification_deliveries_brand_id_brands")
        ),
        sa.ForeignKeyConstraint(
            ["notification_id"],
            ["merchant_notifications.id"],
            name=op.f("fk_notification_deliveries_notification_id_merchant_notifications"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_notification_deliveries")),
    )
    with op.batch_alter_table("notification_deliveries", schema=None) as batch_op:
        batch_op.create_index(
            "ix_notification_deliveries_brand_created", ["brand_id", "created_at"], unique=False
        )
        batch_op.create_index(
            "ix_notification_deliveries_due", ["status", "next_attempt_at"], unique=False
        )


def downgrade():
    with op.batch_alter_table("notification_deliveries", schema=None) as batch_op:
        batch_op.drop_index("ix_notification_deliveries_due")
        batch_op.drop_index("ix_notification_deliveries_brand_created")
    op.drop_table("notification_deliveries")
    with op.batch_alter_table("merchant_notifications", schema=None) as batch_op:
        batch_op.drop_index("ix_merchant_notifications_brand_created")
    op.drop_table("merchant_notifications")
    op.drop_table("notification_settings")
