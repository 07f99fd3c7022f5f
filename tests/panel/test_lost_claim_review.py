"""A claim that lost its TrxID to another payment shows in the panel as waiting for review, naming
the winner.
"""

from gateway.extensions import db
from gateway.sms.matching import submit_claim
from gateway.sms.models.inbound_sms import InboundSms
from gateway.sms.settling import flag_lost_claim
from tests.factories import PaymentFactory, bkash_text, forward, paired_device

TRX = "5Z4X3C2V1B"


def test_a_claim_that_lost_its_trx_id_is_shown_for_review_with_the_winner(as_staff, brand):
    device, _, aes_key = paired_device(brand)
    sms = forward((device, aes_key), bkash_text("500.00", TRX))
    winner = PaymentFactory(brand=brand)
    submit_claim(winner, "bkash", TRX)
    # The loser's claim passed its check before the winner took the SMS; what it finds after its
    # commit.
    loser = PaymentFactory(brand=brand, status="processing", provider="bkash", provider_trx_id=TRX)
    assert db.session.get(InboundSms, sms.id).payment_id == winner.id

    assert flag_lost_claim(loser) == "review"

    html = as_staff.get(f"/panel/payments/{loser.public_id}").get_data(as_text=True)
    assert "Waiting for your review" in html
    assert f"TrxID {TRX} was already used by payment {winner.public_id}" in html
    assert f'action="/panel/payments/{loser.public_id}/reject"' in html
