"""SMS in: a phone forwards a batch of encrypted texts and learns what became of each."""

from flask import g

from ..schemas.mobile import SmsBatchSchema
from ..sms.ingest import batch_answer, ingest_batch
from .auth import device_blueprint
from .http import ok

blp = device_blueprint("sms", "SMS the phone forwards.")


@blp.post("/sms")
@blp.arguments(SmsBatchSchema())
def forward_sms(data):
    """Store and match up to 200 texts; each gets accepted, duplicate or rejected."""
    return ok(batch_answer(ingest_batch(g.device, data["messages"])))
