"""one outbox: webhook deliveries, e-mail, notifications and outbound SMS share their columns and
status words (pending, sent, failed; an attempt in flight is a pending row with its lease set)

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-28 11:00:00

"""

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

# Each table's words → the outbox's. A row an attempt held keeps its lease: still held.
TO_OUTBOX = {
    "webhook_deliveries": {"retrying": "pending", "success": "sent"},
    "outbound_mail": {"queued": "pending", "sending": "pending"},
    "outbound_sms": {"queued": "pending", "leased": "pending"},
}
# The outbox's `pending` → each table's word, told apart as its front doors tell it.
HELD = "lease_expires_at IS NOT NULL"
FROM_PENDING = {
    "webhook_deliveries": f"CASE WHEN attempts > CASE WHEN {HELD} THEN 1 ELSE 0 END "
    "THEN 'retrying' ELSE 'pending' END",
    "outbound_mail": f"CASE WHEN {HELD} THEN 'sending' ELSE 'queued' END",
    "outbound_sms": f"CASE WHEN {HELD} THEN 'leased' ELSE 'queued' END",
}


def upgrade():
    with op.batch_alter_table("webhook_deliveries", schema=None) as batch_op:
        batch_op.add_column(sa.Column("last_error", sa.String(length=500), nullable=True))
        batch_op.add_column(sa.Column("sent_at", sa.DateTime(), nullable=True))
    for table, words in TO_OUTBOX.items():
        for old, new in words.items():
            op.execute(f"UPDATE {table} SET status = '{new}' WHERE status = '{old}'")
    # The best time known for a delivery that succeeded: its last change.
    op.execute("UPDATE webhook_deliveries SET sent_at = updated_at WHERE status = 'sent'")
    with op.batch_alter_table("notification_deliveries", schema=None) as batch_op:
        batch_op.drop_index("ix_notification_deliveries_due")
        batch_op.alter_column(
            "status", existing_type=sa.String(length=20), type_=sa.String(length=10)
        )
        batch_op.create_index(
            "ix_notification_deliveries_status_next", ["status", "next_attempt_at"], unique=False
        )


def downgrade():
    with op.batch_alter_table("notification_deliveries", schema=None) as batch_op:
        batch_op.drop_index("ix_notification_deliveries_status_next")
        batch_op.alter_column(
            "status", existing_type=sa.String(length=10), type_=sa.String(length=20)
        )
        batch_op.create_index(
            "ix_notification_deliveries_due", ["status", "next_attempt_at"], unique=False
        )
    for table, word in FROM_PENDING.items():
        op.execute(f"UPDATE {table} SET status = {word} WHERE status = 'pending'")
    op.execute("UPDATE webhook_deliveries SET status = 'success' WHERE status = 'sent'")
    with op.batch_alter_table("webhook_deliveries", schema=None) as batch_op:
        batch_op.drop_column("sent_at")
        batch_op.drop_column("last_error")
