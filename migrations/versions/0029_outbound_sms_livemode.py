"""outbound_sms.livemode: a text a test key, a test invoice or the panel's test view asked for is a
test text, listed and retried in test mode only; every text queued so far is live

The default is a constant ("1"), so SQLite adds the column in place (an expression would rebuild
the table), as 0017_livemode does.

Revision ID: 0029_outbound_sms_livemode
Revises: 0028_partial_payment_indexes
Create Date: 2026-11-29 03:00:00

"""

import sqlalchemy as sa
from alembic import op

revision = "0029_outbound_sms_livemode"
down_revision = "0028_partial_payment_indexes"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("outbound_sms", schema=None) as batch_op:
        batch_op.add_column(sa.Column("livemode", sa.Boolean(), server_default="1", nullable=False))


def downgrade():
    # Plain DROP COLUMN (SQLite 3.35+ and PostgreSQL), without rebuilding the table.
    op.drop_column("outbound_sms", "livemode")
