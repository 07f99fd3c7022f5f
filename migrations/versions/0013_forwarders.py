"""forwarders: the app a phone forwards with, and a forwarder's secret

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-28 08:00:00

"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("devices", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("app", sa.String(length=32), server_default="ownpay-console", nullable=False)
        )
        batch_op.add_column(sa.Column("secret_sealed", sa.String(length=255), nullable=True))
        batch_op.add_column(sa.Column("secret_hash", sa.String(length=64), nullable=True))
        # Forwarders have no AES key: only the companion app encrypts its texts.
        batch_op.alter_column("aes_key_sealed", existing_type=sa.String(length=128), nullable=True)


def downgrade():
    # Without the column a forwarder would pass for a companion phone: it stays on record (its texts
    # name it) but revoked, with an empty key no payload opens.
    op.execute(
        "UPDATE devices SET aes_key_sealed = '',"
        " revoked_at = COALESCE(revoked_at, CURRENT_TIMESTAMP),"
        " revoked_reason = COALESCE(revoked_reason, 'forwarders removed by a downgrade')"
        " WHERE app <> 'ownpay-console'"
    )
    with op.batch_alter_table("devices", schema=None) as batch_op:
        batch_op.alter_column("aes_key_sealed", existing_type=sa.String(length=128), nullable=False)
        batch_op.drop_column("secret_hash")
        batch_op.drop_column("secret_sealed")
        batch_op.drop_column("app")
