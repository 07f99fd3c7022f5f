"""refunds: who recorded each, so a staff member's refunds of a payment are held to the limit in
total

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-28 09:00:00

"""

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("refunds", schema=None) as batch_op:
        batch_op.add_column(sa.Column("refunded_by_id", sa.Integer(), nullable=True))
        batch_op.create_foreign_key(
            batch_op.f("fk_refunds_refunded_by_id_users"),
            "users",
            ["refunded_by_id"],
            ["id"],
            ondelete="SET NULL",
        )


def downgrade():
    with op.batch_alter_table("refunds", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("fk_refunds_refunded_by_id_users"), type_="foreignkey")
        batch_op.drop_column("refunded_by_id")
