"""The lookups by a wallet's transaction id and by invoice still probe their indexes, which leave
out the open payments where both are empty (partial indexes, migration 0028)."""

import pytest
from sqlalchemy import text

from gateway.extensions import db
from gateway.payments.models.payment import Payment
from gateway.sms.queries import CLAIMS_OF_TRX_IDS
from tests.conftest import ENGINE

LOOKUPS = {
    "ix_payments_provider_trx": [
        db.select(Payment.id).where(
            Payment.provider == "bkash", Payment.provider_trx_id == "9AB1CD2EF3"
        ),
        CLAIMS_OF_TRX_IDS.params(provider="bkash", trx_ids=["9AB1CD2EF3", "9AB1CD2EF4"]),
    ],
    "ix_payments_invoice_id": [db.select(Payment.id).where(Payment.invoice_id == 7)],
}


def plan(statement):
    """The engine's plan for the statement, as text."""
    sql = str(statement.compile(dialect=db.engine.dialect, compile_kwargs={"literal_binds": True}))
    if ENGINE == "postgres":
        db.session.execute(text("SET LOCAL enable_seqscan = off"))  # a test table is tiny
        rows = db.session.execute(text("EXPLAIN " + sql)).scalars()
    else:
        rows = (row[-1] for row in db.session.execute(text("EXPLAIN QUERY PLAN " + sql)))
    found = "\n".join(rows)
    db.session.rollback()
    return found


@pytest.mark.parametrize(
    ("index", "statement"),
    [(index, statement) for index, statements in LOOKUPS.items() for statement in statements],
)
def test_a_lookup_probes_its_partial_index(index, statement):
    assert index in plan(statement)
