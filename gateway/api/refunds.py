"""Refunds: refund a completed transaction in full or in part, list and read refunds."""

from flask import g

from ..domain_errors import RefundUndecided
from ..livemode import current_livemode
from ..payments import refunds
from ..schemas.common import envelope
from ..schemas.refund import RefundCreateSchema, RefundListArgs, RefundSchema
from .auth import caller_brand
from .idempotency import confirm_unanswered
from .paging import listing, paginate, single
from .resource import brand_with_key, resource_blueprint
from .undecided_refunds import answer_waits_on

URL = "refunds"
blp = resource_blueprint("refunds", "Full and partial refunds of completed transactions.")


@blp.post("")
@blp.arguments(RefundCreateSchema)
@blp.response(201, envelope(RefundSchema))
def create_refund(data):
    """Refund a transaction; without `amount`, everything that remains is refunded."""
    trx_ref = data["trx_id"] if "trx_id" in data else data["transaction_id"]
    brand = caller_brand()
    confirm_unanswered()  # a wallet refund cannot be rolled back
    # Audited as the panel's refunds are, the entry committing with the refund (and its stored
    # answer). A refund the wallet leaves undecided keeps its pending attempt, audited as this
    # key's, and a keyed request stores its 503 with it (undecided_refunds.py).
    try:
        refund = refunds.create_refund(
            brand,
            trx_ref,
            data.get("amount"),
            data.get("reason"),
            livemode=current_livemode(),
            asked_by=f"API key #{g.api_key.id}",
            audit_extra={"via": "api", "api_key_id": g.api_key.id},
        )
    except RefundUndecided as undecided:
        answer_waits_on(undecided.pending_id)
        raise
    return single(refund)


brand_with_key(blp, create_refund)


@blp.get("")
@blp.arguments(RefundListArgs, location="query")
@blp.response(200, envelope(RefundSchema, many=True))
def list_refunds(args):
    """The brand's refunds, newest first."""
    return listing(
        *paginate(refunds.list_refunds_query(caller_brand(), args, current_livemode()), args)
    )


@blp.get("/<refund_id>")
@blp.response(200, envelope(RefundSchema))
def read_refund(refund_id):
    """Read one refund by its id."""
    return single(refunds.get_refund(caller_brand(), refund_id, current_livemode()))
