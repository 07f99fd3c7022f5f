"""The pay page's small explanations: what the QR code is for, and a TrxID example shaped like each
provider's.
"""

import re

from tests.checkout_helpers import payment, reloaded, submit_trx_id, text_of  # noqa: F401 - fixture
from tests.factories import PaymentMethodFactory


def method_section(page, provider):
    """The HTML of one method's <details> block on the pay page."""
    blocks = re.findall(r'<details class="card method".*?</details>', page, re.S)
    return next(block for block in blocks if f"provider-{provider}" in block)


def test_nagad_s_help_shows_a_nagad_shaped_txnid_and_bkash_keeps_its_own(client, brand, payment):
    PaymentMethodFactory(brand=brand, provider="bkash")
    PaymentMethodFactory(brand=brand, provider="nagad", kind="merchant")
    page = text_of(client.get(f"/checkout/{payment.token}"))

    nagad, bkash = method_section(page, "nagad"), method_section(page, "bkash")
    assert "It is in the confirmation SMS from Nagad, after “TxnID”, e.g. 752C49K4." in nagad
    assert "9A7B6C5D4E" not in nagad
    assert "It is in the confirmation SMS from bKash, after “TrxID”, e.g. 9A7B6C5D4E." in bkash


def test_the_qr_code_says_what_it_is_for(client, brand, payment):
    PaymentMethodFactory(brand=brand, provider="bkash", number="01712345678")
    page = text_of(client.get(f"/checkout/{payment.token}"))
    caption = re.search(r'<figure class="qr">.*?<figcaption>(.*?)</figcaption>', page, re.S).group(
        1
    )
    assert caption == "Paying from another phone? Scan this with it to copy the number."


def test_the_nagad_example_is_a_trx_id_the_claim_form_accepts(client, brand, payment):
    nagad = PaymentMethodFactory(brand=brand, provider="nagad")

    response = submit_trx_id(client, payment, nagad, trx_id="752C49K4")
    assert response.status_code == 303
    assert (reloaded(payment).provider, reloaded(payment).provider_trx_id) == ("nagad", "752C49K4")
