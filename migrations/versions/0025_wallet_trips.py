"""wallet trips keep their own amount and fee, and what the wallet took (money that did not apply)

Revision ID: 0025_wallet_trips
Revises: 0024_wallet_apis
Create Date: 2026-11-28 20:30:00

"""

import sqlalchemy as sa
from alembic import op

revision = "0025_wallet_trips"
down_revision = "0024_wallet_apis"
branch_labels = None
depends_on = None

COLUMNS = (
    ("amount", sa.BigInteger()),
    ("fee", sa.BigInteger()),
    ("paid_amount", sa.BigInteger()),
    ("provider_trx_id", sa.String(100)),
)


def upgrade():
    # Plain ADD COLUMNs (nullable): a batch rebuild of wallet_payments on SQLite is not worth it
    # for trips that all get their amount below.
    for name, type_ in COLUMNS:
        op.add_column("wallet_payments", sa.Column(name, type_))
    # A trip so far asked for its payment's amount_paid as it stood (both in minor units).
    op.execute(
        "UPDATE wallet_payments SET "
        "amount = (SELECT amount_paid FROM payments"
        " WHERE payments.id = wallet_payments.payment_id),"
        " fee = (SELECT fee FROM payments WHERE payments.id = wallet_payments.payment_id)"
    )
    # A settled trip noted "Paid after the payment was …" (0024) is money that did not apply.
    op.execute(
        "UPDATE wallet_payments SET state = 'unapplied', paid_amount = amount "
        "WHERE state = 'settled' AND last_error LIKE 'Paid after the payment was %'"
    )
    op.execute(
        "UPDATE wallet_payments SET paid_amount = amount, provider_trx_id = (SELECT "
        "provider_trx_id FROM payments WHERE payments.id = wallet_payments.payment_id) "
        "WHERE state = 'settled'"
    )


def downgrade():
    op.execute(
        "UPDATE wallet_payments SET state = 'settled' "
        "WHERE state IN ('unapplied', 'returned', 'handled')"
    )
    for name, _ in reversed(COLUMNS):
        op.drop_column("wallet_payments", name)
