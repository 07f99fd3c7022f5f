"""The statements of a phone's batch, built once: set-based reads of its texts and their claims."""

from sqlalchemy import bindparam

from ..extensions import db
from ..payments.models.payment import Payment
from .models.inbound_sms import InboundSms

# Every payment that claimed one of these TrxIDs of one provider: one probe of
# (provider, provider_trx_id) for the whole batch, rows read fresh.
CLAIMS_OF_TRX_IDS = (
    db.select(Payment)
    .where(
        Payment.provider == bindparam("provider"),
        Payment.provider_trx_id.in_(bindparam("trx_ids", expanding=True)),
    )
    .execution_options(populate_existing=True)
)

# The batch's stored texts by id, read fresh (the chain step may have held some for review).
TEXTS_BY_ID = (
    db.select(InboundSms)
    .where(InboundSms.id.in_(bindparam("ids", expanding=True)))
    .execution_options(populate_existing=True)
)


def claims_of_trx_ids(provider, trx_ids):
    """{TrxID: [payments that claimed it]} for one provider's TrxIDs, in one query."""
    claims = {}
    if trx_ids:
        rows = db.session.execute(
            CLAIMS_OF_TRX_IDS, {"provider": provider, "trx_ids": sorted(set(trx_ids))}
        ).scalars()
        for payment in rows:
            claims.setdefault(payment.provider_trx_id, []).append(payment)
    return claims


def texts_by_id(ids):
    """{id: InboundSms} of the batch's stored texts, in one query."""
    if not ids:
        return {}
    return {sms.id: sms for sms in db.session.execute(TEXTS_BY_ID, {"ids": list(ids)}).scalars()}
