"""payments: the provider's transaction id and the invoice indexed only where set (partial
indexes): both are empty while a payment is open, so a create writes neither index

Revision ID: 0028_partial_payment_indexes
Revises: 0027_wleft
Create Date: 2026-11-29 02:20:00

"""

import sqlalchemy as sa
from alembic import op

revision = "0028_partial_payment_indexes"
down_revision = "0027_wleft"
branch_labels = None
depends_on = None

INDEXES = (
    ("ix_payments_provider_trx", ["provider", "provider_trx_id"], "provider_trx_id IS NOT NULL"),
    ("ix_payments_invoice_id", ["invoice_id"], "invoice_id IS NOT NULL"),
)


def upgrade():
    for name, columns, where in INDEXES:
        op.drop_index(name, table_name="payments")
        op.create_index(
            name,
            "payments",
            columns,
            sqlite_where=sa.text(where),
            postgresql_where=sa.text(where),
        )


def downgrade():
    for name, columns, _ in INDEXES:
        op.drop_index(name, table_name="payments")
        op.create_index(name, "payments", columns)
