"""idempotency_records.wallet_refund_id: a keyed refund the wallet left undecided stores its 503
with the pending attempt, and a repeat answers from the attempt as it stands

Revision ID: 0027_wleft
Revises: 0026_wallet_refunds
Create Date: 2026-11-28 23:30:00

"""

import sqlalchemy as sa
from alembic import op

revision = "0027_wleft"
down_revision = "0026_wallet_refunds"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("idempotency_records") as batch:
        batch.add_column(sa.Column("wallet_refund_id", sa.Integer()))
        batch.create_foreign_key(
            batch.f("fk_idempotency_records_wallet_refund_id_wallet_refunds"),
            "wallet_refunds",
            ["wallet_refund_id"],
            ["id"],
            ondelete="CASCADE",
        )


def downgrade():
    with op.batch_alter_table("idempotency_records") as batch:
        batch.drop_constraint(
            batch.f("fk_idempotency_records_wallet_refund_id_wallet_refunds"), type_="foreignkey"
        )
        batch.drop_column("wallet_refund_id")
