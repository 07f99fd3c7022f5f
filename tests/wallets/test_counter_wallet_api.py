"""The counter sells through a wallet's own API: the QR code of the checkout link, no number; the
customer pays on the wallet's page and the sale turns Paid."""

from decimal import Decimal

from gateway.extensions import db
from gateway.payments.models.payment import Payment
from tests.panel.conftest import as_staff, client, panel_client, post_form, staff  # noqa: F401
from tests.wallets.bkash_support import bkash_api, pay_through_bkash, standin  # noqa: F401


def test_a_counter_sale_through_bkash_s_api_is_paid_on_bkash_s_page(
    app, as_staff, brand, bkash_api
):  # noqa: F811
    form = as_staff.get("/panel/counter").get_data(as_text=True)
    assert f'value="{bkash_api.id}"' in form and bkash_api.number not in form
    answer = post_form(
        as_staff, "/panel/counter", {"amount": "750", "note": "", "method_id": str(bkash_api.id)}
    )
    assert answer.status_code == 303
    payment = db.session.execute(db.select(Payment)).scalar_one()
    page = as_staff.get(answer.headers["Location"]).get_data(as_text=True)
    assert "Pay with bKash" in page and bkash_api.number not in page
    assert f"/checkout/{payment.token}" in page

    customer = panel_client(app)  # the customer's phone, after scanning the code
    assert pay_through_bkash(customer, payment, bkash_api).status_code in (302, 303)
    status = as_staff.get(f"{answer.headers['Location']}/status").json
    assert (status["status"], status["paid"], status["amount_text"]) == (
        "completed",
        True,
        "৳750.00",
    )
    db.session.refresh(payment)
    assert payment.amount_paid == Decimal("750.00") and payment.provider == "bkash"
