"""SMS in: a phone forwards a batch of encrypted texts and learns what became of each."""
from flask import g

from ..schemas.mobile import SmsBatchSchema
from ..sms.ingest import batch_answer, ingest_batch
from .auth import device_blueprint
from .http import load, ok

blp = device_blueprint("sms")


@blp.post("/sms")
def forward_sms():
    """Store and match up to 200 texts; each gets accepted, duplicate or rejected."""
    return ok(batch_answer(ingest_batch(g.device, load(SmsBatchSchema)["messages"])))
