"""On the waiting page: entering a mistyped TrxID again, cancelling, and neither while held for
review.
"""

import pytest

from gateway.extensions import db
from gateway.sms.models.inbound_sms import InboundSms
from tests.checkout_helpers import (  # noqa: F401 - fixtures
    CART,
    CSRF_FIELD,
    THANKS,
    bkash,
    limited_app,
    payment,
    reloaded,
    simulate_sms,
    submit_trx_id,
    text_of,
)
from tests.factories import PaymentFactory, PaymentMethodFactory

TYPO, REAL = "8N7A6B5C4E", "8N7A6B5C4D"
CORRECTION_FORM = "Wrong transaction ID? Enter it again"


def waiting_page(client, payment):
    """The waiting page as the customer's browser gets it, and the CSRF token it carries."""
    page = client.get(f"/checkout/{payment.token}/wait")
    assert page.status_code == 200
    return text_of(page), CSRF_FIELD.search(text_of(page)).group(1)


def correct(client, payment, method, trx_id, **fields):
    """Post the waiting page's correction form."""
    _, token = waiting_page(client, payment)
    data = {"csrf_token": token, "method_id": method.id, "trx_id": trx_id, **fields}
    return client.post(f"/checkout/{payment.token}/correct", data=data)


def cancel_from_waiting_page(client, payment):
    """Open the waiting page's cancel, read the risk, press "Yes, cancel the payment" (its form
    sends confirm=yes).
    """
    page, token = waiting_page(client, payment)
    assert "cancelling does not return it" in page and 'name="confirm" value="yes"' in page
    return client.post(
        f"/checkout/{payment.token}/cancel", data={"csrf_token": token, "confirm": "yes"}
    )


def test_the_waiting_page_offers_a_correction_and_a_cancel(client, payment, bkash):
    submit_trx_id(client, payment, bkash, trx_id=TYPO)
    page, _ = waiting_page(client, payment)
    assert CORRECTION_FORM in page and f'action="/checkout/{payment.token}/correct"' in page
    assert f'action="/checkout/{payment.token}/cancel"' in page and TYPO in page


def test_correcting_a_typo_to_a_trx_id_whose_sms_is_here_completes_at_once(
    client, runner, payment, bkash
):
    submit_trx_id(client, payment, bkash, trx_id=TYPO)
    simulate_sms(runner, REAL)  # the real SMS arrives; nobody claims it
    assert reloaded(payment).status == "processing"
    response = correct(client, payment, bkash, REAL.lower())
    assert response.status_code == 303
    assert (
        response.headers["Location"] == f"{THANKS}?payment_id={payment.public_id}&status=completed"
    )
    stored = reloaded(payment)
    assert (stored.status, stored.provider_trx_id) == ("completed", REAL)
    sms = db.session.execute(
        db.select(InboundSms).where(InboundSms.provider_trx_id == REAL)
    ).scalar_one()
    assert (sms.status, sms.payment_id) == ("matched", payment.id)


def test_a_correction_without_its_sms_waits_with_the_new_trx_id(client, runner, payment, bkash):
    submit_trx_id(client, payment, bkash, trx_id=TYPO)
    response = correct(client, payment, bkash, REAL)
    assert (
        response.status_code == 303
        and response.headers["Location"] == f"/checkout/{payment.token}/wait"
    )
    assert (reloaded(payment).status, reloaded(payment).provider_trx_id) == ("processing", REAL)
    simulate_sms(runner, REAL)  # claim first, SMS after: the corrected claim is the one matched
    assert reloaded(payment).status == "completed"


@pytest.mark.parametrize("trx_id", ["", "12", "ABC-DEF-!"])
def test_a_malformed_correction_is_refused_and_the_old_claim_stands(client, payment, bkash, trx_id):
    submit_trx_id(client, payment, bkash, trx_id=TYPO)
    response = correct(client, payment, bkash, trx_id)
    assert response.status_code == 422 and CORRECTION_FORM in text_of(response)
    assert 'aria-invalid="true"' in text_of(response)
    assert (reloaded(payment).status, reloaded(payment).provider_trx_id) == ("processing", TYPO)


def test_a_correction_to_a_trx_id_another_payment_holds_is_refused(client, payment, brand, bkash):
    PaymentFactory(brand=brand, status="processing", provider="bkash", provider_trx_id=REAL)
    submit_trx_id(client, payment, bkash, trx_id=TYPO)
    response = correct(client, payment, bkash, REAL)
    assert response.status_code == 422
    assert "already been used for another payment" in text_of(response)
    assert (reloaded(payment).status, reloaded(payment).provider_trx_id) == ("processing", TYPO)


def test_a_correction_without_its_csrf_token_is_refused(client, payment, bkash):
    submit_trx_id(client, payment, bkash, trx_id=TYPO)
    response = client.post(
        f"/checkout/{payment.token}/correct", data={"method_id": bkash.id, "trx_id": REAL}
    )
    assert response.status_code == 400
    assert reloaded(payment).provider_trx_id == TYPO


def test_cancel_from_the_waiting_page_goes_to_cancel_url(client, payment, bkash):
    submit_trx_id(client, payment, bkash, trx_id=TYPO)
    response = cancel_from_waiting_page(client, payment)
    assert response.status_code == 303
    assert response.headers["Location"] == f"{CART}&payment_id={payment.public_id}&status=cancelled"
    assert reloaded(payment).status == "cancelled"


def test_a_held_payment_offers_neither_form_and_refuses_both_posts(client, payment, bkash):
    submit_trx_id(client, payment, bkash, trx_id=TYPO)
    _, token = waiting_page(client, payment)
    payment = reloaded(payment)
    payment.review_reason = "SMS amount 400.00 differs from 500.00"
    db.session.commit()
    held = client.get(f"/checkout/{payment.token}/wait")
    page = text_of(held)
    assert held.status_code == 200 and "is checking this payment" in page
    assert CORRECTION_FORM not in page and "/correct" not in page and "/cancel" not in page
    refused = client.post(
        f"/checkout/{payment.token}/correct",
        data={"csrf_token": token, "method_id": bkash.id, "trx_id": REAL},
    )
    assert (
        refused.status_code == 303 and refused.headers["Location"] == f"/checkout/{payment.token}"
    )
    not_cancelled = client.post(f"/checkout/{payment.token}/cancel", data={"csrf_token": token})
    assert (
        not_cancelled.status_code == 303
        and not_cancelled.headers["Location"] == f"/checkout/{payment.token}"
    )
    stored = reloaded(payment)
    assert (stored.status, stored.provider_trx_id, stored.review_reason) == (
        "processing",
        TYPO,
        "SMS amount 400.00 differs from 500.00",
    )


def test_the_waiting_page_speaks_bangla(client, payment, bkash):
    submit_trx_id(client, payment, bkash, trx_id=TYPO)
    page = text_of(client.get(f"/checkout/{payment.token}/wait", headers={"Accept-Language": "bn"}))
    assert CORRECTION_FORM not in page and "ভুল ট্রানজেকশন আইডি দিয়েছেন? আবার লিখুন" in page
    assert "বাতিল করে" in page


def test_corrections_count_against_the_claim_limit(limited_app):
    client = limited_app.test_client()
    method = PaymentMethodFactory()
    payment = PaymentFactory(brand=method.brand)
    assert submit_trx_id(client, payment, method, trx_id=TYPO).status_code == 303
    assert correct(client, payment, method, "TYPO000002").status_code == 303  # the second attempt
    blocked = correct(client, payment, method, REAL)
    assert blocked.status_code == 429 and "Too many attempts" in text_of(blocked)
    assert reloaded(payment).provider_trx_id == "TYPO000002"
