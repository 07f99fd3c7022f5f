"""Transactions: what completed payments paid, and how much of it was refunded."""

from ..livemode import current_livemode
from ..payments import transactions
from ..schemas.common import envelope
from ..schemas.transaction import TransactionListArgs, TransactionSchema
from .auth import caller_brand
from .paging import listing, paginate, single
from .resource import resource_blueprint

URL = "transactions"
blp = resource_blueprint("transactions", "Transactions of completed payments.")


@blp.get("")
@blp.arguments(TransactionListArgs, location="query")
@blp.response(200, envelope(TransactionSchema, many=True))
def list_transactions(args):
    """The brand's transactions, newest first."""
    return listing(
        *paginate(
            transactions.list_transactions_query(caller_brand(), args, current_livemode()), args
        )
    )


@blp.get("/<trx_id>")
@blp.response(200, envelope(TransactionSchema))
def read_transaction(trx_id):
    """Read one transaction by its trx_id."""
    return single(transactions.get_transaction(caller_brand(), trx_id, current_livemode()))
