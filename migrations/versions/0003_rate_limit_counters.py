"""rate-limit counters shared by every process (the database store, and the fallback when Redis is
down)

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-24 03:40:00

"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "rate_limit_counters",
        sa.Column("key", sa.String(length=255), nullable=False),
        sa.Column("hits", sa.Integer(), nullable=False),
        sa.Column("window_ends", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_rate_limit_counters")),
    )
    with op.batch_alter_table("rate_limit_counters", schema=None) as batch_op:
        batch_op.create_index("ix_rate_limit_counters_window_ends", ["window_ends"], unique=False)


def downgrade():
    with op.batch_alter_table("rate_limit_counters", schema=None) as batch_op:
        batch_op.drop_index("ix_rate_limit_counters_window_ends")
    op.drop_table("rate_limit_counters")
