"""The webhook secret rotated out, and until when it still signs (X-Service-Signature-Previous)

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("brands") as batch:
        batch.add_column(sa.Column("webhook_secret_previous", sa.String(length=128), nullable=True))
        batch.add_column(sa.Column("webhook_secret_previous_until", sa.DateTime(), nullable=True))


def downgrade():
    with op.batch_alter_table("brands") as batch:
        batch.drop_column("webhook_secret_previous_until")
        batch.drop_column("webhook_secret_previous")
