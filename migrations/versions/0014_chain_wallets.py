"""balance chains per wallet (a number or the brand's shared wallets, across phones); links of
credits that print no balance

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-28 08:00:00

"""

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

# A chain whose receiving number no other chain of its brand and provider shares becomes that
# number's chain (its texts keep following); any other chain stays its phone's.
WALLET_OF_EXISTING = """
UPDATE sms_balance_chains SET wallet = CASE
    WHEN receiving_number <> '' AND (
        SELECT count(*) FROM sms_balance_chains AS other
        WHERE other.brand_id = sms_balance_chains.brand_id
          AND other.provider = sms_balance_chains.provider
          AND other.receiving_number = sms_balance_chains.receiving_number
    ) = 1 THEN 'number:' || receiving_number
    WHEN receiving_number <> ''
        THEN 'phone:' || CAST(device_id AS VARCHAR(12)) || ':' || receiving_number
    ELSE 'phone:' || CAST(device_id AS VARCHAR(12))
END
"""


def sqlite():
    """Whether the migration runs on SQLite, where a batch rebuilds a table rather than alter it."""
    return op.get_bind().dialect.name == "sqlite"


def keep_links():
    """Before SQLite rebuilds sms_balance_chains: its DROP TABLE cascades to every link (foreign
    keys are on), so the links wait in a table of their own."""
    if sqlite():
        op.execute("CREATE TABLE _kept_sms_balance_links AS SELECT * FROM sms_balance_links")


def restore_links():
    """The links put back once the chains table is rebuilt (with the same ids)."""
    if sqlite():
        op.execute("DELETE FROM sms_balance_links")
        op.execute("INSERT INTO sms_balance_links SELECT * FROM _kept_sms_balance_links")
        op.execute("DROP TABLE _kept_sms_balance_links")


def upgrade():
    # A constant default ("0", false on both engines): with an expression SQLite would rebuild the
    # brands table, which every other table references.
    with op.batch_alter_table("brands", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("sms_shared_wallets", sa.Boolean(), server_default="0", nullable=False)
        )
    with op.batch_alter_table("sms_balance_links", schema=None) as batch_op:
        batch_op.alter_column("before", existing_type=sa.BigInteger(), nullable=True)
        batch_op.alter_column("after", existing_type=sa.BigInteger(), nullable=True)
    with op.batch_alter_table("sms_balance_chains", schema=None) as batch_op:
        batch_op.add_column(sa.Column("wallet", sa.String(length=40), nullable=True))
    op.execute(WALLET_OF_EXISTING)
    keep_links()
    with op.batch_alter_table("sms_balance_chains", schema=None) as batch_op:
        batch_op.alter_column("wallet", existing_type=sa.String(length=40), nullable=False)
        batch_op.alter_column("device_id", existing_type=sa.Integer(), nullable=True)
        batch_op.drop_constraint("uq_sms_balance_chains_key", type_="unique")
        batch_op.create_unique_constraint(
            "uq_sms_balance_chains_wallet", ["brand_id", "provider", "wallet"]
        )
    restore_links()
    op.execute("UPDATE sms_balance_chains SET device_id = NULL WHERE wallet LIKE 'number:%'")
    op.create_index(
        "ix_sms_balance_links_status_created", "sms_balance_links", ["status", "created_at"]
    )


def downgrade():
    op.drop_index("ix_sms_balance_links_status_created", table_name="sms_balance_links")
    # Links without a balance and chains of no single phone have no place in the old schema.
    op.execute("DELETE FROM sms_balance_links WHERE before IS NULL OR after IS NULL")
    op.execute(
        "DELETE FROM sms_balance_links WHERE chain_id IN "
        "(SELECT id FROM sms_balance_chains WHERE device_id IS NULL)"
    )
    op.execute("DELETE FROM sms_balance_chains WHERE device_id IS NULL")
    keep_links()
    with op.batch_alter_table("sms_balance_chains", schema=None) as batch_op:
        batch_op.drop_constraint("uq_sms_balance_chains_wallet", type_="unique")
        batch_op.create_unique_constraint(
            "uq_sms_balance_chains_key", ["device_id", "provider", "receiving_number"]
        )
        batch_op.alter_column("device_id", existing_type=sa.Integer(), nullable=False)
        batch_op.drop_column("wallet")
    restore_links()
    with op.batch_alter_table("sms_balance_links", schema=None) as batch_op:
        batch_op.alter_column("before", existing_type=sa.BigInteger(), nullable=False)
        batch_op.alter_column("after", existing_type=sa.BigInteger(), nullable=False)
    if sqlite():
        # A rebuild of brands would fail on the rows that reference it: SQLite drops in place.
        op.execute("ALTER TABLE brands DROP COLUMN sms_shared_wallets")
    else:
        op.drop_column("brands", "sms_shared_wallets")
