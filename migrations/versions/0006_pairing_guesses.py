"""wrong guesses counted against each live pairing code

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24 06:30:00

"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("pairing_codes", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("failed_guesses", sa.Integer(), server_default="0", nullable=False)
        )


def downgrade():
    with op.batch_alter_table("pairing_codes", schema=None) as batch_op:
        batch_op.drop_column("failed_guesses")
