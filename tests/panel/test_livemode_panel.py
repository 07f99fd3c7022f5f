"""The panel shows live data only, until its test-mode switch (issue 31): test payments, refunds,
customers, links and invoices are neither listed, opened, refunded nor counted in its figures."""

from decimal import Decimal

from gateway.extensions import db
from gateway.invoices.drafting import create_invoice
from gateway.links.links import create_link
from gateway.payments.customers import create_customer
from gateway.payments.models.payment import Payment, Refund
from gateway.payments.refunds import create_refund
from tests.factories import PaymentFactory, completed_payment
from tests.panel.conftest import post_form

INVOICE = {
    "customer": {"name": "Test Buyer", "email": "buyer@example.com"},
    "items": [{"description": "Design", "quantity": "1", "unit_price": "900.00"}],
}


def test_test_objects_are_not_listed_or_opened_in_the_panel(as_admin, brand):
    live = completed_payment(brand=brand, reference="LIVE-ORDER", amount=Decimal("500.00"))
    test = completed_payment(
        brand=brand, livemode=False, reference="TEST-ORDER", amount=Decimal("777.00")
    )
    create_refund(brand, test.transaction.trx_id, Decimal("11.00"), livemode=False)
    create_customer(brand, {"name": "Test Buyer", "email": "buyer@example.com"}, livemode=False)
    create_link(brand, {"title": "Test hamper", "amount": Decimal("5.00")}, livemode=False)
    create_invoice(brand, INVOICE, livemode=False)

    answers = {
        path: as_admin.get(path)
        for path in (
            "/panel/payments",
            "/panel/dashboard",
            "/panel/refunds",
            "/panel/customers",
            "/panel/links",
            "/panel/invoices",
        )
    }
    assert {path: answer.status_code for path, answer in answers.items()} == dict.fromkeys(
        answers, 200
    )
    pages = {path: answer.get_data(as_text=True) for path, answer in answers.items()}
    assert "LIVE-ORDER" in pages["/panel/payments"]
    for path, page in pages.items():
        for shown in ("TEST-ORDER", "Test Buyer", "Test hamper", "777", "11.00"):
            assert shown not in page, (path, shown)
    assert as_admin.get(f"/panel/payments/{live.public_id}").status_code == 200
    assert as_admin.get(f"/panel/payments/{test.public_id}").status_code == 404


def test_the_panel_cannot_refund_a_test_payment(as_admin, brand):
    test = completed_payment(brand=brand, livemode=False, amount=Decimal("500.00"))
    response = post_form(
        as_admin,
        f"/panel/payments/{test.public_id}/refund",
        {"amount": "10.00", "reason": "x", "confirmed": "y"},
    )
    assert response.status_code == 404
    assert db.session.scalar(db.select(db.func.count()).select_from(Refund)) == 0


def test_the_review_queue_shows_live_payments_only(as_admin, brand):
    PaymentFactory(brand=brand, livemode=False, status="processing", reference="TEST-HELD")
    PaymentFactory(brand=brand, status="processing", reference="LIVE-HELD")
    for payment in db.session.execute(db.select(Payment)).scalars():
        payment.review_reason = "The SMS says 450.00"
    db.session.commit()
    page = as_admin.get("/panel/payments?status=review")
    assert page.status_code == 200
    assert "LIVE-HELD" in page.get_data(as_text=True)
    assert "TEST-HELD" not in page.get_data(as_text=True)


def test_the_panels_exports_hold_live_objects_only(as_admin, brand):
    live = completed_payment(brand=brand, reference="LIVE-ORDER")
    test = completed_payment(brand=brand, livemode=False, reference="TEST-ORDER")
    create_refund(brand, test.transaction.trx_id, Decimal("11.00"), livemode=False)
    create_invoice(brand, INVOICE, livemode=False)
    payments = as_admin.get("/panel/reports/payments.csv")
    assert payments.status_code == 200
    assert live.public_id in payments.get_data(as_text=True)
    assert test.public_id not in payments.get_data(as_text=True)
    for kind in ("refunds", "invoices"):
        answer = as_admin.get(f"/panel/reports/{kind}.csv")
        assert answer.status_code == 200
        assert answer.get_data(as_text=True).count("\r\n") == 1, kind  # the header alone
