"""A keyed refund the wallet left undecided (503 REFUND_PENDING): the key's answer follows the
pending attempt, so a repeat with the same key never refunds twice (docs/spec/CONTRACT.md,
idempotency).

The first request stores its 503 with the attempt it kept (`idempotency_records.wallet_refund_id`),
in the commit that keeps the attempt. A repeat with the key answers from the attempt as it stands:
still pending, the stored 503 again; made, the refund it became (201, what the first request would
have answered had the wallet answered in time); not made, nothing was refunded, so the record goes
and the repeat refunds afresh, as after any request that made nothing.
"""

from flask import g, jsonify

from ..extensions import db
from ..payments.models.payment import Refund
from ..schemas.common import envelope
from ..schemas.refund import RefundSchema
from ..wallets.models import REFUND_MADE, REFUND_NOT_MADE, WalletRefund
from .paging import single

WAITS_ON = "idempotency_wallet_refund"


def answer_waits_on(attempt_id):
    """This request's answer (REFUND_PENDING) is stored with its pending attempt."""
    setattr(g, WAITS_ON, attempt_id)


def waited_on():
    """The pending attempt this request's answer is stored with, or None."""
    return g.pop(WAITS_ON, None)


def not_made(record):
    """Whether a record's attempt was settled not made: nothing was refunded."""
    attempt = db.session.get(WalletRefund, record.wallet_refund_id)
    return attempt is not None and attempt.state == REFUND_NOT_MADE


def made_answer(record):
    """The 201 of the refund a record's attempt became once made; None while it is pending."""
    attempt = db.session.get(WalletRefund, record.wallet_refund_id)
    if attempt is None or attempt.state != REFUND_MADE or attempt.refund_id is None:
        return None
    refund = db.session.get(Refund, attempt.refund_id)
    if refund is None:
        return None
    response = jsonify(envelope(RefundSchema)().dump(single(refund)))
    response.status_code = 201
    return response
