"""The waiting page's correction changes the method as well as the TrxID, through the same claim and
limit.
"""

import re
from decimal import Decimal

import pytest

from gateway.clock import utcnow
from gateway.extensions import db
from gateway.sms.models.inbound_sms import InboundSms
from gateway.sms.parsing import build_sms_text, sender_for
from tests.checkout_helpers import (  # noqa: F401 - fixtures
    CSRF_FIELD,
    THANKS,
    bkash,
    limited_app,
    payment,
    reloaded,
    submit_trx_id,
    text_of,
)
from tests.factories import PaymentFactory, PaymentMethodFactory, forward

BKASH_TRX, NAGAD_TRX = "8N7A6B5C4D", "752C49K4"


@pytest.fixture
def nagad(brand):
    return PaymentMethodFactory(
        brand=brand, provider="nagad", number="01811223344", kind="merchant"
    )


def nagad_text(trx_id=NAGAD_TRX, amount="500.00"):
    """A real-format Nagad credit."""
    return build_sms_text(
        "nagad", Decimal(amount), trx_id, "01712345678", Decimal("1500.00"), utcnow()
    )


def correct(client, payment, method, trx_id, **fields):
    """Post the waiting page's correction form with this method chosen."""
    page = text_of(client.get(f"/checkout/{payment.token}/wait"))
    data = {
        "csrf_token": CSRF_FIELD.search(page).group(1),
        "method_id": method.id,
        "trx_id": trx_id,
        **fields,
    }
    return client.post(f"/checkout/{payment.token}/correct", data=data)


def test_the_correction_offers_every_enabled_method_starting_on_the_one_claimed(
    client, brand, payment, bkash, nagad
):
    PaymentMethodFactory(brand=brand, provider="rocket", enabled=False)
    submit_trx_id(client, payment, bkash, trx_id=BKASH_TRX)
    page = text_of(client.get(f"/checkout/{payment.token}/wait"))
    select = re.search(
        r'<select id="method-correction" name="method_id".*?</select>', page, re.S
    ).group(0)
    options = re.findall(r'<option value="(\d+)" (selected)?>', select)
    assert options == [(str(bkash.id), "selected"), (str(nagad.id), "")]
    assert "Nagad · 01811223344" in select and "Rocket" not in select


def test_switching_to_nagad_replaces_the_claim_and_its_sms_then_completes_it(
    client, phone, payment, bkash, nagad
):
    submit_trx_id(client, payment, bkash, trx_id=BKASH_TRX)

    response = correct(client, payment, nagad, NAGAD_TRX.lower())

    assert (
        response.status_code == 303
        and response.headers["Location"] == f"/checkout/{payment.token}/wait"
    )
    stored = reloaded(payment)
    assert (stored.status, stored.provider, stored.provider_trx_id) == (
        "processing",
        "nagad",
        NAGAD_TRX,
    )
    forward(phone, nagad_text(), sender=sender_for("nagad"))
    assert (reloaded(payment).status, reloaded(payment).provider) == ("completed", "nagad")


def test_switching_to_a_method_whose_sms_is_here_completes_at_once(
    client, phone, payment, bkash, nagad
):
    sms = forward(phone, nagad_text(), sender=sender_for("nagad"))
    assert sms.status == "unmatched"
    submit_trx_id(client, payment, bkash, trx_id=NAGAD_TRX)  # right TrxID, wrong method

    response = correct(client, payment, nagad, NAGAD_TRX)

    assert (
        response.headers["Location"] == f"{THANKS}?payment_id={payment.public_id}&status=completed"
    )
    assert (reloaded(payment).status, reloaded(payment).provider) == ("completed", "nagad")
    sms = db.session.execute(
        db.select(InboundSms)
        .where(InboundSms.id == sms.id)
        .execution_options(populate_existing=True)
    ).scalar_one()
    assert (sms.status, sms.payment_id) == ("matched", payment.id)


def test_a_method_that_is_switched_off_or_another_brand_s_is_refused(
    client, brand, other_brand, payment, bkash
):
    switched_off = PaymentMethodFactory(brand=brand, provider="nagad", enabled=False)
    theirs = PaymentMethodFactory(brand=other_brand, provider="nagad")
    submit_trx_id(client, payment, bkash, trx_id=BKASH_TRX)
    for method in (switched_off, theirs):
        response = correct(client, payment, method, NAGAD_TRX)
        assert response.status_code == 422
        assert "That way to pay is no longer offered; please choose another." in text_of(response)
        stored = reloaded(payment)
        assert (stored.status, stored.provider, stored.provider_trx_id) == (
            "processing",
            "bkash",
            BKASH_TRX,
        )


def test_switching_to_a_method_that_asks_the_sender_number_needs_it(client, brand, payment, bkash):
    asks = PaymentMethodFactory(brand=brand, provider="nagad", ask_sender_number=True)
    submit_trx_id(client, payment, bkash, trx_id=BKASH_TRX)

    refused = correct(client, payment, asks, NAGAD_TRX)
    assert refused.status_code == 422 and "Enter the number you sent the money from." in text_of(
        refused
    )
    assert (reloaded(payment).provider, reloaded(payment).provider_trx_id) == ("bkash", BKASH_TRX)

    accepted = correct(client, payment, asks, NAGAD_TRX, sender_number="01712345678")
    assert accepted.status_code == 303
    stored = reloaded(payment)
    assert (stored.provider, stored.provider_trx_id, stored.sender_number) == (
        "nagad",
        NAGAD_TRX,
        "01712345678",
    )


def test_a_method_switch_counts_against_the_claim_limit(limited_app):
    client = limited_app.test_client()
    bkash_method = PaymentMethodFactory(provider="bkash")
    nagad_method = PaymentMethodFactory(brand=bkash_method.brand, provider="nagad")
    payment = PaymentFactory(brand=bkash_method.brand)
    assert submit_trx_id(client, payment, bkash_method, trx_id=BKASH_TRX).status_code == 303
    assert (
        correct(client, payment, nagad_method, NAGAD_TRX).status_code == 303
    )  # the second attempt
    blocked = correct(client, payment, bkash_method, "9C4D7E2F1A")
    assert blocked.status_code == 429
    assert (reloaded(payment).provider, reloaded(payment).provider_trx_id) == ("nagad", NAGAD_TRX)
