"""notification_acknowledgements: each phone acknowledges a notification for itself, so a brand-wide
one read on one phone stays unread on the others; notifications.acknowledged_at goes

An acknowledgement so far counts for the phones it was shown to: a phone's own notification for
that phone, a brand-wide one for every device of the brand there is now (none shows an old alert
again). The downgrade marks a notification read if any phone read it, when the first did.

Revision ID: 0030_notification_acks
Revises: 0029_outbound_sms_livemode
Create Date: 2026-11-29 04:00:00

"""

import sqlalchemy as sa
from alembic import op

revision = "0030_notification_acks"
down_revision = "0029_outbound_sms_livemode"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "notification_acknowledgements",
        sa.Column("notification_id", sa.Integer(), nullable=False),
        sa.Column("device_id", sa.Integer(), nullable=False),
        sa.Column("acknowledged_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["device_id"],
            ["devices.id"],
            name=op.f("fk_notification_acknowledgements_device_id_devices"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["notification_id"],
            ["notifications.id"],
            name=op.f("fk_notification_acknowledgements_notification_id_notifications"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "notification_id", "device_id", name=op.f("pk_notification_acknowledgements")
        ),
    )
    op.execute(
        "INSERT INTO notification_acknowledgements (notification_id, device_id, acknowledged_at) "
        "SELECT id, device_id, acknowledged_at FROM notifications "
        "WHERE device_id IS NOT NULL AND acknowledged_at IS NOT NULL"
    )
    op.execute(
        "INSERT INTO notification_acknowledgements (notification_id, device_id, acknowledged_at) "
        "SELECT notifications.id, devices.id, notifications.acknowledged_at FROM notifications "
        "JOIN devices ON devices.brand_id = notifications.brand_id "
        "WHERE notifications.device_id IS NULL AND notifications.acknowledged_at IS NOT NULL"
    )
    # Plain DROP INDEX, CREATE INDEX and DROP COLUMN (SQLite 3.35+ and PostgreSQL), without
    # rebuilding the table; SQLite drops no column an index names, so the index goes first.
    op.drop_index("ix_notifications_brand_ack_created", table_name="notifications")
    op.create_index("ix_notifications_brand_created", "notifications", ["brand_id", "created_at"])
    op.drop_column("notifications", "acknowledged_at")


def downgrade():
    op.add_column("notifications", sa.Column("acknowledged_at", sa.DateTime(), nullable=True))
    op.execute(
        "UPDATE notifications SET acknowledged_at = (SELECT min(acknowledged_at) "
        "FROM notification_acknowledgements "
        "WHERE notification_acknowledgements.notification_id = notifications.id)"
    )
    op.drop_index("ix_notifications_brand_created", table_name="notifications")
    op.create_index(
        "ix_notifications_brand_ack_created",
        "notifications",
        ["brand_id", "acknowledged_at", "created_at"],
    )
    op.drop_table("notification_acknowledgements")
