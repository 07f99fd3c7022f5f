"""Customers in the panel: list and search, a profile with its payments, editing and deleting."""

from decimal import Decimal

import pytest

from gateway.accounts.models.audit import AuditLog
from gateway.extensions import db
from gateway.payments.models.customer import Customer
from gateway.payments.models.payment import Payment
from gateway.payments.refunds import create_refund
from tests.factories import CustomerFactory, PaymentFactory, completed_payment
from tests.panel.conftest import audit_actions, post_form, reloaded


@pytest.fixture
def rahim(brand):
    """A customer with two paid payments and an open one."""
    customer = CustomerFactory(
        brand=brand, name="Rahim Uddin", email="rahim@example.com", phone="+8801712345678"
    )
    completed_payment(brand=brand, customer=customer, amount=Decimal("1000.00"), reference="R-1")
    completed_payment(brand=brand, customer=customer, amount=Decimal("250.00"), reference="R-2")
    PaymentFactory(brand=brand, customer=customer, reference="R-3")
    return customer


def test_the_list_shows_counts_and_paid_totals(as_staff, rahim, other_brand):
    CustomerFactory(brand=other_brand, name="Someone Else")
    html = as_staff.get("/panel/customers").get_data(as_text=True)
    assert "Rahim Uddin" in html and "৳ 1,250.00" in html and "Someone Else" not in html


def test_paid_totals_show_each_currency_on_its_own_net_of_refunds(as_staff, brand, rahim):
    completed_payment(brand=brand, customer=rahim, amount=Decimal("10.00"), currency="USD")
    refunded = completed_payment(brand=brand, customer=rahim, amount=Decimal("400.00"))
    create_refund(brand, refunded.transaction.trx_id)
    CustomerFactory(brand=brand, name="Browser Only")

    listing = as_staff.get("/panel/customers").get_data(as_text=True)
    profile = as_staff.get(f"/panel/customers/{rahim.id}").get_data(as_text=True)

    for html in (listing, profile):
        assert '<span class="amount-line">৳ 1,250.00</span>' in html
        assert '<span class="amount-line">$ 10.00</span>' in html
        assert "1,260.00" not in html and "1,650.00" not in html
    assert "৳ 0.00" in listing  # the customer who paid nothing, in the brand's first currency


def test_a_profile_paid_only_in_another_currency_shows_only_that_currency(as_staff, brand):
    customer = CustomerFactory(brand=brand, name="Dollar Buyer")
    completed_payment(brand=brand, customer=customer, amount=Decimal("12.50"), currency="USD")

    html = as_staff.get(f"/panel/customers/{customer.id}").get_data(as_text=True)

    assert '<span class="amount-line">$ 12.50</span>' in html and "৳ 12.50" not in html


@pytest.mark.parametrize(
    "text, found", [("rahim", True), ("EXAMPLE.COM", True), ("1712345", True), ("karim", False)]
)
def test_the_list_searches_names_e_mails_and_phones(as_staff, rahim, text, found):
    html = as_staff.get("/panel/customers", query_string={"q": text}).get_data(as_text=True)
    assert ("Rahim Uddin" in html) is found


def test_a_profile_lists_the_customer_s_payments(as_staff, rahim):
    html = as_staff.get(f"/panel/customers/{rahim.id}").get_data(as_text=True)
    assert all(reference in html for reference in ("R-1", "R-2", "R-3"))
    assert "3 payments" in html and "rahim@example.com" in html


def test_editing_a_customer_saves_and_audits_the_change(as_staff, brand, staff, rahim):
    response = post_form(
        as_staff,
        f"/panel/customers/{rahim.id}/edit",
        {"name": "Rahim U.", "email": "RAHIM@new.example", "phone": "01812345678"},
    )
    assert response.status_code == 302
    assert (reloaded(rahim).name, rahim.email, rahim.phone) == (
        "Rahim U.",
        "rahim@new.example",
        "+8801812345678",
    )
    entry = db.session.execute(
        db.select(AuditLog).where(AuditLog.action == "customer.update")
    ).scalar_one()
    assert entry.user_id == staff.id and entry.details["email"] == [
        "rahim@example.com",
        "rahim@new.example",
    ]


def test_a_blank_e_mail_clears_it_while_the_phone_stays(as_staff, rahim):
    post_form(
        as_staff,
        f"/panel/customers/{rahim.id}/edit",
        {"name": "Rahim", "email": "", "phone": "+8801712345678"},
    )
    assert (reloaded(rahim).email, rahim.phone) == (None, "+8801712345678")


def test_a_customer_keeps_an_e_mail_or_a_phone(as_staff, rahim):
    response = post_form(
        as_staff, f"/panel/customers/{rahim.id}/edit", {"name": "Rahim", "email": "", "phone": ""}
    )
    assert response.status_code == 422
    assert 'id="phone-error">Keep an e-mail address or a telephone number.' in response.get_data(
        as_text=True
    )
    assert (reloaded(rahim).email, rahim.phone) == ("rahim@example.com", "+8801712345678")


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("phone", "12ab", "Enter a phone number such as +8801712345678."),
        ("email", "not-an-address", "Enter a valid e-mail address."),
    ],
)
def test_invalid_contact_details_are_refused_beside_the_field(
    as_staff, rahim, field, value, message
):
    data = {"name": "Rahim", "email": "rahim@example.com", "phone": "+8801712345678", field: value}
    response = post_form(as_staff, f"/panel/customers/{rahim.id}/edit", data)
    assert response.status_code == 422 and message in response.get_data(as_text=True)
    assert f'id="{field}-error"' in response.get_data(as_text=True)
    assert reloaded(rahim).email == "rahim@example.com"


def test_an_e_mail_already_on_file_is_refused_by_the_service(as_staff, brand, rahim):
    CustomerFactory(brand=brand, email="taken@example.com")
    response = post_form(
        as_staff, f"/panel/customers/{rahim.id}/edit", {"email": "taken@example.com"}
    )
    assert "E-mail already on file." in response.get_data(as_text=True)
    assert reloaded(rahim).email == "rahim@example.com"


def test_deleting_a_customer_keeps_their_payments(as_staff, brand, staff, rahim):
    customer_id = rahim.id
    response = post_form(as_staff, f"/panel/customers/{customer_id}/delete")
    assert response.headers["Location"] == "/panel/customers"
    db.session.expire_all()
    assert db.session.get(Customer, customer_id) is None
    assert (
        db.session.execute(
            db.select(db.func.count()).select_from(Payment).where(Payment.brand_id == brand.id)
        ).scalar()
        == 3
    )
    assert audit_actions(brand)[-1] == ("customer.delete", staff.email, str(customer_id))


@pytest.mark.parametrize("suffix", ["", "/edit"])
def test_another_brand_s_customer_reads_as_not_found(as_staff, other_brand, suffix):
    theirs = CustomerFactory(brand=other_brand)
    assert as_staff.get(f"/panel/customers/{theirs.id}{suffix}").status_code == 404


def test_another_brand_s_customer_cannot_be_changed_or_deleted(as_staff, other_brand):
    theirs = CustomerFactory(brand=other_brand, name="Theirs")
    assert (
        post_form(as_staff, f"/panel/customers/{theirs.id}/edit", {"name": "Mine"}).status_code
        == 404
    )
    assert post_form(as_staff, f"/panel/customers/{theirs.id}/delete").status_code == 404
    assert reloaded(theirs).name == "Theirs"


def test_a_customer_is_found_by_id_only_not_by_e_mail(as_staff, rahim):
    assert as_staff.get("/panel/customers/rahim@example.com").status_code == 404
