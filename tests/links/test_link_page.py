"""The public link page /pay/<slug>: amounts, questions, refusals and the way to the checkout."""

from datetime import timedelta
from decimal import Decimal

import pytest
from freezegun import freeze_time

from gateway.clock import utcnow
from gateway.extensions import db
from gateway.links.links import set_link_status
from gateway.links.models.link import LinkPayment, PaymentLink
from gateway.payments.models.payment import Payment
from tests.factories import PaymentFactory, PaymentMethodFactory
from tests.limited_apps import limited_app as rate_limited
from tests.links.support import link_token, make_link, submit_link

ASK_ALL = [
    {"kind": "name", "required": True},
    {"kind": "phone", "required": True},
    {"kind": "address", "required": False},
    {"kind": "text", "label": "Size", "required": True},
]


def payments():
    db.session.expire_all()
    return db.session.execute(db.select(Payment).order_by(Payment.id)).scalars().all()


def link_rows():
    return db.session.execute(db.select(LinkPayment).order_by(LinkPayment.id)).scalars().all()


def used_count(link):
    db.session.expire_all()
    return db.session.get(PaymentLink, link.id).used_count


def test_a_fixed_amount_link_creates_that_payment_and_sends_the_customer_to_checkout(client, brand):
    link = make_link(brand, amount=Decimal("750.00"), custom_fields=[{"kind": "name"}])

    page = client.get(f"/pay/{link.slug}")
    assert page.status_code == 200
    assert "৳750.00" in page.get_data(as_text=True)
    response = submit_link(client, link, name="  Rahima   Khatun ", amount="1.00")

    assert response.status_code == 303
    [payment] = payments()
    assert response.headers["Location"].endswith(f"/checkout/{payment.token}")
    assert (payment.amount, payment.currency, payment.status) == (
        Decimal("750.00"),
        "BDT",
        "created",
    )
    assert payment.customer_name == "Rahima Khatun"
    assert payment.reference == link.slug
    assert payment.metadata_json == {"payment_link": link.slug, "payment_link_id": link.public_id}
    [row] = link_rows()
    assert (row.link_id, row.payment_id, row.answers) == (
        link.id,
        payment.id,
        {"name": "Rahima Khatun"},
    )
    assert used_count(link) == 1
    assert client.get(response.headers["Location"]).status_code == 200


def test_the_checkout_of_a_link_s_payment_asks_the_customer_to_type_no_slug(client, brand):
    PaymentMethodFactory(brand=brand)
    link = make_link(brand, amount=Decimal("750.00"))
    checkout = client.get(submit_link(client, link).headers["Location"])
    text = checkout.get_data(as_text=True)
    assert checkout.status_code == 200 and "Enter the amount 750.00." in text
    assert link.slug not in text and "reference" not in text.lower()


def test_an_api_payment_s_checkout_still_asks_for_its_order_reference(client, brand):
    PaymentMethodFactory(brand=brand)
    payment = PaymentFactory(brand=brand, reference="ORDER-77")
    text = client.get(f"/checkout/{payment.token}").get_data(as_text=True)
    assert "If asked for a reference, enter ORDER-77." in text


def test_a_customer_entered_amount_within_bounds_is_charged(client, brand):
    link = make_link(brand, amount=None, min_amount=Decimal("100"), max_amount=Decimal("5000"))

    response = submit_link(client, link, amount="1,250.5")

    assert response.status_code == 303
    assert payments()[0].amount == Decimal("1250.50")


@pytest.mark.parametrize(
    "typed, message",
    [
        ("99.99", "The amount is below what this link accepts."),
        ("5000.01", "The amount is above what this link accepts."),
        ("0", "The amount is below what this link accepts."),
        ("", "Enter an amount such as 500 or 500.50."),
        ("12.345", "Enter an amount such as 500 or 500.50."),
        ("-5", "Enter an amount such as 500 or 500.50."),
        ("abc", "Enter an amount such as 500 or 500.50."),
    ],
)
def test_a_customer_entered_amount_outside_its_bounds_is_refused_and_nothing_is_written(
    client, brand, typed, message
):
    link = make_link(brand, amount=None, min_amount=Decimal("100"), max_amount=Decimal("5000"))

    response = submit_link(client, link, amount=typed)

    assert response.status_code == 422
    body = response.get_data(as_text=True)
    assert f'<p class="error" id="amount-error">{message}</p>' in body
    assert 'aria-invalid="true"' in body
    assert payments() == [] and link_rows() == []
    assert used_count(link) == 0


@pytest.mark.parametrize("typed", ["1000000.01", "999999999999.99"])
def test_an_open_ended_amount_above_max_amount_is_refused_and_nothing_is_written(
    app, client, brand, typed
):
    """A link with no upper bound of its own still takes no more than MAX_AMOUNT (1,000,000.00
    unless set), as every other way of making a payment."""
    assert Decimal(typed) > Decimal(app.config["MAX_AMOUNT"])
    link = make_link(brand, amount=None)

    response = submit_link(client, link, amount=typed)

    assert response.status_code == 422
    assert "The amount is above what this link accepts." in response.get_data(as_text=True)
    assert payments() == [] and link_rows() == []
    assert used_count(link) == 0


def test_required_custom_fields_that_are_missing_are_each_named_and_nothing_is_written(
    client, brand
):
    link = make_link(brand, custom_fields=ASK_ALL)

    response = submit_link(client, link, name=" ", phone="", address="")

    assert response.status_code == 422
    body = response.get_data(as_text=True)
    assert '<p class="error" id="e-name">Please fill this in.</p>' in body
    assert '<p class="error" id="e-phone">Please fill this in.</p>' in body
    assert '<p class="error" id="e-text">Please fill this in.</p>' in body
    assert 'id="e-address"' not in body  # optional
    assert payments() == [] and used_count(link) == 0


def test_an_invalid_phone_is_refused_and_a_valid_one_is_stored_in_e164(client, brand):
    link = make_link(brand, custom_fields=ASK_ALL[:2])

    refused = submit_link(client, link, name="Karim", phone="12345")
    accepted = submit_link(client, link, name="Karim", phone="017 1234 5678")

    assert refused.status_code == 422
    assert "Enter a mobile number such as 01712345678." in refused.get_data(as_text=True)
    assert accepted.status_code == 303
    [payment] = payments()
    assert payment.customer_phone == "+8801712345678"
    assert link_rows()[0].answers == {"name": "Karim", "phone": "+8801712345678"}


def test_all_answers_are_kept_with_the_payment_and_typed_values_come_back_after_a_refusal(
    client, brand
):
    link = make_link(brand, custom_fields=ASK_ALL)

    refused = submit_link(client, link, name="<b>Rahim</b>", phone="01712345678", address="Road 5")
    assert refused.status_code == 422
    body = refused.get_data(as_text=True)
    assert "&lt;b&gt;Rahim&lt;/b&gt;" in body and "<b>Rahim</b>" not in body
    assert "Road 5</textarea>" in body

    submit_link(client, link, name="Rahim", phone="01712345678", address="Road 5\nDhaka", text="XL")
    assert link_rows()[0].answers == {
        "name": "Rahim",
        "phone": "+8801712345678",
        "address": "Road 5\nDhaka",
        "text": "XL",
    }


def test_an_expired_link_shows_a_clear_410_page_and_takes_no_payment(client, brand):
    link = make_link(brand, expires_at=utcnow() + timedelta(minutes=10))
    token = link_token(client, link)

    with freeze_time(utcnow() + timedelta(minutes=20)):
        page = client.get(f"/pay/{link.slug}")
        posted = client.post(f"/pay/{link.slug}", data={"csrf_token": token})

    for response in (page, posted):
        assert response.status_code == 410
        body = response.get_data(as_text=True)
        assert "This payment link has expired" in body
        assert 'data-link-unavailable="expired"' in body
    assert payments() == []


def test_a_disabled_link_shows_a_clear_410_page_and_takes_no_payment(client, brand):
    link = make_link(brand)
    token = link_token(client, link)
    set_link_status(link, "disabled")

    page = client.get(f"/pay/{link.slug}")
    posted = client.post(f"/pay/{link.slug}", data={"csrf_token": token})

    for response in (page, posted):
        assert response.status_code == 410
        assert "This payment link is turned off" in response.get_data(as_text=True)
    assert payments() == []


def test_a_used_up_link_says_so(client, brand):
    link = make_link(brand, usage_limit=1)
    assert submit_link(client, link).status_code == 303

    page = client.get(f"/pay/{link.slug}")

    assert page.status_code == 410
    assert "This payment link is used up" in page.get_data(as_text=True)


def test_an_unknown_slug_is_the_not_found_page(client):
    response = client.get("/pay/no-such-link")
    assert response.status_code == 404
    assert "Payment not found" in response.get_data(as_text=True)


def test_a_post_without_the_csrf_token_changes_nothing(client, brand):
    link = make_link(brand)
    response = client.post(f"/pay/{link.slug}", data={})
    assert response.status_code == 400
    assert payments() == []


def test_the_page_is_in_bangla_when_asked(client, brand):
    link = make_link(brand, amount=None, custom_fields=[{"kind": "name", "required": True}])
    body = client.get(f"/pay/{link.slug}?lang=bn").get_data(as_text=True)
    assert 'lang="bn"' in body
    assert "পেমেন্ট করতে এগিয়ে যান" in body


def test_the_link_page_carries_the_checkouts_protective_headers(client, brand):
    link = make_link(brand)
    response = client.get(f"/pay/{link.slug}")
    assert response.headers["Cache-Control"] == "no-store"
    assert "frame-ancestors 'none'" in response.headers["Content-Security-Policy"]
    assert response.headers["X-Frame-Options"] == "DENY"


@pytest.fixture
def limited_app(app):
    """The same database, served by an app with rate limits on."""
    with rate_limited(app) as limited:
        yield limited


def test_a_flood_of_submissions_from_one_address_is_slowed_down(limited_app, brand):
    link = make_link(brand)
    client = limited_app.test_client()
    token = link_token(client, link)

    statuses = [
        client.post(f"/pay/{link.slug}", data={"csrf_token": token}).status_code for _ in range(11)
    ]

    assert statuses == [303] * 10 + [429]
    page = client.post(f"/pay/{link.slug}", data={"csrf_token": token})
    assert page.status_code == 429
    assert "Too many tries" in page.get_data(as_text=True)
    assert len(payments()) == 10


def test_the_busy_page_says_when_to_try_again(limited_app, brand):
    link = make_link(brand)
    client = limited_app.test_client()
    token = link_token(client, link)
    for _ in range(10):
        client.post(f"/pay/{link.slug}", data={"csrf_token": token})

    page = client.post(f"/pay/{link.slug}", data={"csrf_token": token})

    assert page.status_code == 429 and 1 <= int(page.headers["Retry-After"]) <= 60
