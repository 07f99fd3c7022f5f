"""simulated SMS of test payments: inbound_sms.livemode (false for a text the gateway simulated)

Revision ID: 0019_simulate
Revises: 0018_endpoints
Create Date: 2026-11-28 14:10:00

"""

import sqlalchemy as sa
from alembic import op

revision = "0019_simulate"
down_revision = "0018_endpoints"
branch_labels = None
depends_on = None


def upgrade():
    # Every text stored so far came from a phone or a forwarder: live. A plain ADD COLUMN on both
    # engines: rebuilding inbound_sms on SQLite (batch mode) would drop the table its balance links
    # cascade from, and lose them.
    op.add_column(
        "inbound_sms",
        sa.Column("livemode", sa.Boolean(), nullable=False, server_default=sa.true()),
    )


def downgrade():
    # SQLite drops a column in place (3.35+), again without rebuilding the table.
    op.drop_column("inbound_sms", "livemode")
