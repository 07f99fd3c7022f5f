"""manual redeliveries kept out of the automatic retry budget

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-24 03:45:00

"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("webhook_deliveries", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("manual_attempts", sa.Integer(), server_default="0", nullable=False)
        )
        batch_op.add_column(
            sa.Column(
                "redelivery_requested", sa.Boolean(), server_default=sa.false(), nullable=False
            )
        )
        batch_op.add_column(sa.Column("resume_at", sa.DateTime(), nullable=True))


def downgrade():
    with op.batch_alter_table("webhook_deliveries", schema=None) as batch_op:
        batch_op.drop_column("resume_at")
        batch_op.drop_column("redelivery_requested")
        batch_op.drop_column("manual_attempts")
