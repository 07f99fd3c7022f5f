"""events (kept for the events API) and webhook endpoints; a delivery names its endpoint and has
its event's mode (every existing one live), and an event's id is no longer unique among deliveries
(one event goes to several places)

Revision ID: 0018_endpoints
Revises: 0017_livemode
Create Date: 2026-11-28 14:00:00

"""

from contextlib import contextmanager

import sqlalchemy as sa
from alembic import op

revision = "0018_endpoints"
down_revision = "0017_livemode"
branch_labels = None
depends_on = None

DELIVERIES = sa.table(
    "webhook_deliveries",
    sa.column("event_id", sa.String),
    sa.column("brand_id", sa.Integer),
    sa.column("event", sa.String),
    sa.column("payload", sa.Text),
    sa.column("created_at", sa.DateTime),
)
EVENTS = sa.table(
    "events",
    sa.column("public_id", sa.String),
    sa.column("brand_id", sa.Integer),
    sa.column("type", sa.String),
    sa.column("livemode", sa.Boolean),
    sa.column("payload", sa.Text),
    sa.column("created_at", sa.DateTime),
)


@contextmanager
def attempts_kept():
    """Dropping the unique constraint makes SQLite rebuild webhook_deliveries, and dropping the old
    table, foreign keys on, deletes its attempts (ON DELETE CASCADE): on SQLite they are kept aside
    and put back. PostgreSQL alters the table in place."""
    sqlite = op.get_bind().dialect.name == "sqlite"
    if sqlite:
        op.execute("CREATE TEMPORARY TABLE kept_webhook_attempts AS SELECT * FROM webhook_attempts")
    yield
    if sqlite:
        op.execute(
            "INSERT INTO webhook_attempts SELECT * FROM kept_webhook_attempts "
            "WHERE id NOT IN (SELECT id FROM webhook_attempts)"
        )
        op.execute("DROP TABLE kept_webhook_attempts")


def upgrade():
    op.create_table(
        "webhook_endpoints",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("public_id", sa.String(length=40), nullable=False),
        sa.Column("brand_id", sa.Integer(), nullable=False),
        sa.Column("url", sa.String(length=2048), nullable=False),
        sa.Column("description", sa.String(length=200), nullable=True),
        sa.Column("enabled_events", sa.JSON(), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("livemode", sa.Boolean(), server_default=sa.true(), nullable=False),
        sa.Column("secret_sealed", sa.String(length=255), nullable=False),
        sa.Column("secret_previous_sealed", sa.String(length=255), nullable=True),
        sa.Column("secret_previous_until", sa.DateTime(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.Column("deleted_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["brand_id"], ["brands.id"], name=op.f("fk_webhook_endpoints_brand_id_brands")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_endpoints")),
        sa.UniqueConstraint("public_id", name=op.f("uq_webhook_endpoints_public_id")),
    )
    with op.batch_alter_table("webhook_endpoints", schema=None) as batch_op:
        batch_op.create_index(
            "ix_webhook_endpoints_brand_livemode", ["brand_id", "livemode"], unique=False
        )
    op.create_table(
        "events",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("public_id", sa.String(length=40), nullable=False),
        sa.Column("brand_id", sa.Integer(), nullable=False),
        sa.Column("type", sa.String(length=40), nullable=False),
        sa.Column("livemode", sa.Boolean(), server_default=sa.true(), nullable=False),
        sa.Column("payload", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["brand_id"], ["brands.id"], name=op.f("fk_events_brand_id_brands")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_events")),
        sa.UniqueConstraint("public_id", name=op.f("uq_events_public_id")),
    )
    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.create_index(
            "ix_events_brand_livemode_created", ["brand_id", "livemode", "created_at"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_events_created_at"), ["created_at"], unique=False)
    with attempts_kept(), op.batch_alter_table("webhook_deliveries", schema=None) as batch_op:
        batch_op.add_column(sa.Column("endpoint_id", sa.Integer(), nullable=True))
        batch_op.add_column(
            sa.Column("livemode", sa.Boolean(), server_default=sa.true(), nullable=False)
        )
        batch_op.drop_constraint(batch_op.f("uq_webhook_deliveries_event_id"), type_="unique")
        batch_op.create_index(
            batch_op.f("ix_webhook_deliveries_event_id"), ["event_id"], unique=False
        )
        batch_op.create_foreign_key(
            batch_op.f("fk_webhook_deliveries_endpoint_id_webhook_endpoints"),
            "webhook_endpoints",
            ["endpoint_id"],
            ["id"],
        )
    # The events sent so far become events of the API (all live: test mode did not exist), each
    # with the body its delivery stored; a plugin dialect's IPN is not an event of ours.
    op.execute(
        EVENTS.insert().from_select(
            ["public_id", "brand_id", "type", "livemode", "payload", "created_at"],
            sa.select(
                DELIVERIES.c.event_id,
                DELIVERIES.c.brand_id,
                DELIVERIES.c.event,
                sa.true(),
                DELIVERIES.c.payload,
                DELIVERIES.c.created_at,
            ).where(~DELIVERIES.c.event.like("compat.%")),
        )
    )


def downgrade():
    # Deliveries to endpoints go with the endpoints; what is left has one delivery per event again.
    op.execute(
        "DELETE FROM webhook_attempts WHERE delivery_id IN "
        "(SELECT id FROM webhook_deliveries WHERE endpoint_id IS NOT NULL)"
    )
    op.execute("DELETE FROM webhook_deliveries WHERE endpoint_id IS NOT NULL")
    with attempts_kept(), op.batch_alter_table("webhook_deliveries", schema=None) as batch_op:
        batch_op.drop_constraint(
            batch_op.f("fk_webhook_deliveries_endpoint_id_webhook_endpoints"), type_="foreignkey"
        )
        batch_op.drop_index(batch_op.f("ix_webhook_deliveries_event_id"))
        batch_op.create_unique_constraint(
            batch_op.f("uq_webhook_deliveries_event_id"), ["event_id"]
        )
        batch_op.drop_column("livemode")
        batch_op.drop_column("endpoint_id")
    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_events_created_at"))
        batch_op.drop_index("ix_events_brand_livemode_created")
    op.drop_table("events")
    with op.batch_alter_table("webhook_endpoints", schema=None) as batch_op:
        batch_op.drop_index("ix_webhook_endpoints_brand_livemode")
    op.drop_table("webhook_endpoints")
