"""a brand's exchange rates (currency_rates) and its rate feed (rate_feeds)

Revision ID: 0022_currency
Revises: 0021_fees
Create Date: 2026-11-28 17:30:00

"""

import sqlalchemy as sa
from alembic import op

revision = "0022_currency"
down_revision = "0021_fees"
branch_labels = None
depends_on = None


def upgrade():
    # New tables only: brands.currencies stays the list of accepted codes, and a code listed
    # without a rate keeps working as before (its payments have no taka amount until one is set).
    op.create_table(
        "currency_rates",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("brand_id", sa.Integer(), nullable=False),
        sa.Column("code", sa.String(length=3), nullable=False),
        sa.Column("rate", sa.Numeric(precision=18, scale=6), nullable=False),
        sa.Column("source", sa.String(length=10), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.Column("updated_by", sa.String(length=255), nullable=True),
        sa.ForeignKeyConstraint(
            ["brand_id"], ["brands.id"], name=op.f("fk_currency_rates_brand_id_brands")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_currency_rates")),
        sa.UniqueConstraint("brand_id", "code", name="uq_currency_rates_brand_code"),
    )
    op.create_table(
        "rate_feeds",
        sa.Column("brand_id", sa.Integer(), nullable=False),
        sa.Column("url", sa.String(length=2048), nullable=False),
        sa.Column("last_fetched_at", sa.DateTime(), nullable=True),
        sa.Column("last_success_at", sa.DateTime(), nullable=True),
        sa.Column("last_error", sa.String(length=500), nullable=True),
        sa.Column("failing_since", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["brand_id"], ["brands.id"], name=op.f("fk_rate_feeds_brand_id_brands")
        ),
        sa.PrimaryKeyConstraint("brand_id", name=op.f("pk_rate_feeds")),
    )


def downgrade():
    op.drop_table("rate_feeds")
    op.drop_table("currency_rates")
