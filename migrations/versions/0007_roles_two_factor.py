"""roles owner/admin/staff/viewer, session versions, two-factor sign-in and the brand's security
policy

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24 06:30:00

"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade():
    # Plain ADD COLUMNs (no batch copy of the tables): SQLite adds them in place even when other
    # tables' rows point at these, which a copy-and-drop would break with foreign keys on.
    op.add_column(
        "users", sa.Column("session_version", sa.Integer(), server_default="0", nullable=False)
    )
    op.add_column("users", sa.Column("totp_secret_sealed", sa.String(length=255), nullable=True))
    op.add_column("users", sa.Column("totp_enabled_at", sa.DateTime(), nullable=True))
    op.add_column("users", sa.Column("totp_last_step", sa.BigInteger(), nullable=True))
    # Super-administrators become owners; staff stay staff.
    op.execute("UPDATE users SET role = 'owner' WHERE role = 'super_admin'")
    op.add_column(
        "brands",
        sa.Column("require_two_factor", sa.Boolean(), server_default=sa.false(), nullable=False),
    )
    op.add_column("brands", sa.Column("staff_refund_limit", sa.BigInteger(), nullable=True))
    op.create_table(
        "user_recovery_codes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("code_hash", sa.String(length=64), nullable=False),
        sa.Column("used_at", sa.DateTime(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("user_recovery_codes", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_user_recovery_codes_user_id"), ["user_id"], unique=False
        )


def downgrade():
    with op.batch_alter_table("user_recovery_codes", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_user_recovery_codes_user_id"))
    op.drop_table("user_recovery_codes")
    with op.batch_alter_table("brands", schema=None) as batch_op:
        batch_op.drop_column("staff_refund_limit")
        batch_op.drop_column("require_two_factor")
    op.execute("UPDATE users SET role = 'super_admin' WHERE role IN ('owner', 'admin')")
    op.execute("UPDATE users SET role = 'staff', active = false WHERE role = 'viewer'")
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.drop_column("totp_last_step")
        batch_op.drop_column("totp_enabled_at")
        batch_op.drop_column("totp_secret_sealed")
        batch_op.drop_column("session_version")
