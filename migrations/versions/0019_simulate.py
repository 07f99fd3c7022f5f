"""simulated SMS of test payments: inbound_sms.livemode (false for a text the gateway simulated)

Revision ID: 0019_simulate
Revises: 0017_livemode
Create Date: 2026-11-28 14:10:00

"""

import sqlalchemy as sa
from alembic import op

revision = "0019_simulate"
down_revision = "0017_livemode"
branch_labels = None
depends_on = None


def upgrade():
    # Every text stored so far came from a phone or a forwarder: live.
    with op.batch_alter_table("inbound_sms", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("livemode", sa.Boolean(), nullable=False, server_default=sa.true())
        )


def downgrade():
    with op.batch_alter_table("inbound_sms", schema=None) as batch_op:
        batch_op.drop_column("livemode")
