"""manual and bank payment methods; payment_proofs

Revision ID: 0023_manual
Revises: 0022_currency
Create Date: 2026-11-28 17:30:00

"""

import sqlalchemy as sa
from alembic import op

revision = "0023_manual"
down_revision = "0022_currency"
branch_labels = None
depends_on = None

METHOD_COLUMNS = (
    ("display_name", sa.String(80)),
    ("instructions_bn", sa.Text()),
    ("account_name", sa.String(120)),
    ("account_number", sa.String(64)),
    ("bank_name", sa.String(80)),
    ("bank_branch", sa.String(120)),
    ("proof", sa.String(10)),
)


def upgrade():
    # Plain ADD COLUMNs: rebuilding payment_methods on SQLite would be a batch rebuild.
    for name, type_ in METHOD_COLUMNS:
        op.add_column("payment_methods", sa.Column(name, type_))
    op.create_table(
        "payment_proofs",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "payment_id",
            sa.Integer(),
            sa.ForeignKey("payments.id", ondelete="CASCADE"),
            nullable=False,
            unique=True,
        ),
        sa.Column("content_type", sa.String(40), nullable=False),
        sa.Column("content", sa.LargeBinary(), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
    )


def downgrade():
    op.drop_table("payment_proofs")
    for name, _ in reversed(METHOD_COLUMNS):
        op.drop_column("payment_methods", name)
