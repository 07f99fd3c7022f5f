"""The checkout's manual and bank methods: the customer's reference and, for a manual method, a
receipt photo or PDF (docs/methods.md)."""

from flask import redirect, request

from ..domain_errors import DomainError, InvalidState
from ..errors import http_status
from ..payments import methods as payment_methods
from ..payments.manual import submit_manual_claim
from ..payments.models.payment_method import MANUAL, PROOF_OFF
from ..payments.proofs import checked_proof
from ..sms.bank_matching import submit_bank_claim
from ..states import PAYMENT_COMPLETED, PAYMENT_CREATED
from .forms import MANUAL_REFUSALS, METHOD_GONE, ManualClaimForm
from .pages import page_url
from .presenters import checkout_state
from .views import bp, completion_url, payment_or_404, render_pay_page, waiting_url


def uploaded_proof(method):
    """The checked (content type, bytes) of the form's file, or None when none was chosen."""
    upload = request.files.get("proof")
    if method.kind != MANUAL or method.proof == PROOF_OFF or upload is None:
        return None
    if not upload.filename and upload.stream.read(1) == b"":
        return None  # the file input left empty
    upload.stream.seek(0)
    return checked_proof(upload.stream)


@bp.post("/<token>/manual")
def manual_claim(token):
    """A manual or bank method's reference (and proof): the payment waits for the merchant, or for
    the bank's alert."""
    try:
        return take_manual_claim(token)
    finally:
        for upload in request.files.values():  # a large one was spooled to a temporary file
            upload.close()


def take_manual_claim(token):
    """manual_claim's work; the upload's temporary file is closed by the caller."""
    payment = payment_or_404(token)
    if checkout_state(payment) != PAYMENT_CREATED:
        return redirect(page_url(payment), 303)
    method = payment_methods.enabled_method(payment.brand, request.form.get("method_id"))
    form = ManualClaimForm()
    if method is None or not method.is_account:
        form.validate()
        form.method_id.errors = [METHOD_GONE]
        return render_pay_page(payment, manual_form=form, status=422)
    if not form.validate():
        return render_pay_page(payment, manual_form=form, chosen=method.id, status=422)
    try:
        if method.kind == MANUAL:
            submit_manual_claim(payment, method, form.reference.data, uploaded_proof(method))
        else:
            submit_bank_claim(payment, method, form.reference.data)
    except DomainError as error:
        if isinstance(error, InvalidState):
            return redirect(page_url(payment), 303)
        for item in error.errors or []:
            field = getattr(form, item.get("field") or "", None)
            if field is not None:
                message = MANUAL_REFUSALS.get(item["message"], item["message"])
                field.errors = list(field.errors) + [message]
        return render_pay_page(
            payment, manual_form=form, chosen=method.id, status=http_status(error)
        )
    if checkout_state(payment) == PAYMENT_COMPLETED:
        return redirect(completion_url(payment), 303)
    return redirect(waiting_url(payment), 303)
