"""A manual payment's proof, served only to the signed-in panel (docs/methods.md)."""

from flask import abort, make_response

from ..payments.lifecycle import get_payment
from ..payments.proofs import JPEG, PDF, PNG, proof_of
from . import bp
from .access import VIEW, current_brand, panel_livemode, requires

EXTENSIONS = {JPEG: "jpg", PNG: "png", PDF: "pdf"}
# Nothing in the file may run or load anything, even when opened on its own.
PROOF_POLICY = "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; sandbox"


@bp.get("/payments/<payment_id>/proof")
@requires(VIEW)
def payment_proof(payment_id):
    """The proof's bytes, under a name made here: an image inline, a PDF as a download."""
    payment = get_payment(current_brand(), payment_id, panel_livemode())
    proof = proof_of(payment)
    if proof is None or proof.content_type not in EXTENSIONS:
        abort(404)
    disposition = "attachment" if proof.content_type == PDF else "inline"
    name = f"payment-{payment.public_id}-proof.{EXTENSIONS[proof.content_type]}"
    response = make_response(proof.content)
    response.headers["Content-Type"] = proof.content_type
    response.headers["Content-Disposition"] = f'{disposition}; filename="{name}"'
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Content-Security-Policy"] = PROOF_POLICY
    response.headers["Cache-Control"] = "private, no-store"
    return response
