"""SMS in: a phone forwards a batch of encrypted texts and learns what became of each."""

from flask import g

from ..api.paging import single
from ..schemas.common import envelope
from ..schemas.mobile import SmsBatchSchema
from ..schemas.mobile_answers import SmsBatchAnswerSchema
from ..sms.ingest import batch_answer, ingest_batch
from .auth import device_blueprint

blp = device_blueprint("sms", "SMS the phone forwards.")


@blp.post("/sms")
@blp.arguments(SmsBatchSchema())
@blp.response(200, envelope(SmsBatchAnswerSchema))
def forward_sms(data):
    """Store and match up to 200 texts; each gets accepted, duplicate or rejected.

    No unit of work here: the batch commits in the steps sms/ingest.py's docstring lists (the
    stored texts first, the phone's idempotency record; then the chains; then one unit of work per
    matched text), so that a failure at any step loses no text and the phone's resend finishes it.
    """
    return single(batch_answer(ingest_batch(g.device, data["messages"])))
