"""Manual methods: the customer's reference and proof wait for the merchant, who approves or
rejects (docs/methods.md).
"""

from ..answer_commit import commit_work
from ..clock import utcnow
from ..db_types import UNSTORABLE_MESSAGE, unstorable
from ..domain_errors import field_error, invalid_state
from ..extensions import db
from ..states import PAYMENT_CREATED, PAYMENT_PROCESSING, payment_in_review
from .amounts import fee_charged
from .fees import fee_for
from .lifecycle import complete_payment, fail_payment, transition
from .models.payment_method import MANUAL, PROOF_REQUIRED
from .proofs import add_proof

# The review reason a manual claim waits with: it marks the payment held, so the expiry sweep leaves
# it to the merchant (lifecycle.expirable) and the panel's review queue lists it.
MANUAL_REVIEW = "Manual payment: check the reference and the proof"
MAX_REFERENCE = 64
NOT_MANUAL = "This payment is not a manual payment waiting for review."


def checked_reference(value):
    """The customer's reference trimmed; ValidationFailed naming `reference` when missing or odd."""
    reference = " ".join(str(value or "").split())
    if len(reference) < 3:
        raise field_error(
            "reference", "Enter the reference of your payment (3 characters or more)."
        )
    if len(reference) > MAX_REFERENCE:
        raise field_error("reference", f"The reference must be at most {MAX_REFERENCE} characters.")
    return reference


def submit_manual_claim(payment, method, reference, proof=None):
    """The customer's reference and optional proof ((content type, bytes), already checked):
    created → processing, held for review, the proof stored, in one commit.

    Refused (INVALID_STATE) when the payment is no longer `created` or has expired; a racing
    second submit loses the guarded UPDATE and stores nothing.
    """
    if method.kind != MANUAL:
        raise field_error("method_id", "That method is not a manual method.")
    reference = checked_reference(reference)
    if proof is None and method.proof == PROOF_REQUIRED:
        raise field_error("proof", "Upload a photo or PDF of your receipt.")
    claim_with_reference(payment, method, reference, review_reason=MANUAL_REVIEW)
    if proof is not None and method.proof != "off":
        add_proof(payment, *proof)
    commit_work()
    db.session.refresh(payment)
    return payment


def claim_with_reference(payment, method, reference, review_reason=None):
    """A manual or bank method's claim: created → processing with the customer's reference and the
    method's fee (as a wallet claim records it, sms/matching.py), by one guarded UPDATE; not
    committed. Refused (INVALID_STATE) once expired or no longer `created`: a racing second submit
    loses and writes nothing; refused naming `reference` when no column can take it (a NUL).
    """
    if unstorable(reference):
        raise field_error("reference", UNSTORABLE_MESSAGE)
    now = utcnow()
    if payment.status == PAYMENT_CREATED and payment.expires_at <= now:
        raise invalid_state("This payment has expired.")
    if not transition(
        payment,
        (PAYMENT_CREATED,),
        PAYMENT_PROCESSING,
        provider=method.kind,  # "manual" or "bank": the provider these claims are known by
        provider_trx_id=reference,
        sender_number=None,
        claimed_at=now,
        review_reason=review_reason,
        **fee_charged(payment, fee_for(method, payment.amount_bdt)),
    ):
        db.session.rollback()
        db.session.refresh(payment)
        raise invalid_state(f"A {payment.status} payment cannot take a reference.")


def is_manual_review(payment):
    """Whether the payment is a manual claim the merchant has still to approve or reject."""
    return payment.provider == MANUAL and payment_in_review(payment)


def approve_manual(payment):
    """The merchant saw the money: the payment completes through complete_payment (transaction,
    webhook, links, invoices, IPNs). A racing approve or reject loses (INVALID_STATE).
    """
    db.session.refresh(payment)
    if not is_manual_review(payment):
        raise invalid_state(NOT_MANUAL)
    return complete_payment(payment, from_states=(PAYMENT_PROCESSING,))


def reject_manual(payment, reason):
    """The merchant found no money: → failed, with the reason the customer's page shows."""
    db.session.refresh(payment)
    if not is_manual_review(payment):
        raise invalid_state(NOT_MANUAL)
    reason = " ".join(str(reason or "").split())
    if not reason:
        raise field_error("reason", "Say why, for the customer: their page shows it.")
    return fail_payment(payment, reason)
