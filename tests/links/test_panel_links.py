"""Payment links in the panel: the form, the list, the link's page (QR, sharing, payments), turning
it off.
"""

import re
from decimal import Decimal

from gateway.extensions import db
from gateway.links.models.link import PaymentLink
from tests.links.support import make_link, submit_link
from tests.panel.conftest import (  # noqa: F401 - fixtures
    as_staff,
    audit_actions,
    client,
    post_form,
    staff,
)

FORM = {
    "title": "Winter jacket",
    "description": "Warm & light",
    "amount_kind": "fixed",
    "amount": "2,450",
    "ask_name": "required",
    "ask_phone": "optional",
    "ask_address": "required",
    "ask_text": "off",
    "slug": "",
    "usage_limit": "20",
    "expires_on": "2099-12-31",
}


def the_link():
    db.session.expire_all()
    return db.session.execute(db.select(PaymentLink)).scalar_one()


def test_the_sidebar_lists_payment_links_and_reports(as_staff):
    body = as_staff.get("/panel/links").get_data(as_text=True)
    assert 'href="/panel/links"' in body and 'href="/panel/reports"' in body
    assert "No payment links yet." in body


def test_a_link_created_in_the_form_asks_what_was_chosen(as_staff, brand, staff):
    response = post_form(as_staff, "/panel/links/new", FORM)

    assert response.status_code == 302
    link = the_link()
    assert response.headers["Location"] == f"/panel/links/{link.public_id}"
    assert (link.title, link.description, link.amount) == (
        "Winter jacket",
        "Warm & light",
        Decimal("2450.00"),
    )
    assert re.fullmatch(r"winter-jacket-[a-z2-9]{4}", link.slug)
    assert link.custom_fields == [
        {"key": "name", "kind": "name", "label": None, "required": True},
        {"key": "phone", "kind": "phone", "label": None, "required": False},
        {"key": "address", "kind": "address", "label": None, "required": True},
    ]
    assert link.usage_limit == 20
    # The end of 31 December in Dhaka, in UTC.
    assert link.expires_at.isoformat() == "2099-12-31T17:59:59.999999+00:00"
    assert ("payment_link.create", staff.email, link.public_id) in audit_actions(brand)


def test_a_fixed_link_without_an_amount_and_bad_bounds_are_refused_on_their_fields(as_staff):
    no_amount = post_form(as_staff, "/panel/links/new", {**FORM, "amount": ""})
    bad_bounds = post_form(
        as_staff,
        "/panel/links/new",
        {**FORM, "amount_kind": "open", "min_amount": "900", "max_amount": "100"},
    )
    bad_slug = post_form(as_staff, "/panel/links/new", {**FORM, "slug": "No Spaces!"})

    assert no_amount.status_code == 422
    assert "Enter the amount to pay." in no_amount.get_data(as_text=True)
    assert bad_bounds.status_code == 422
    assert "The maximum must not be less than the minimum." in bad_bounds.get_data(as_text=True)
    assert bad_slug.status_code == 422
    assert "lower-case letters" in bad_slug.get_data(as_text=True)
    assert db.session.execute(db.select(db.func.count()).select_from(PaymentLink)).scalar_one() == 0


def test_a_taken_slug_is_shown_on_the_field(as_staff, other_brand):
    make_link(other_brand, slug="winter-sale")
    response = post_form(as_staff, "/panel/links/new", {**FORM, "slug": "winter-sale"})
    assert response.status_code == 409
    assert "This address is taken; choose another." in response.get_data(as_text=True)


def test_the_edit_form_shows_the_link_and_saves_a_switch_to_an_open_amount(as_staff, brand):
    link = make_link(brand, title="Old", custom_fields=[{"kind": "text", "label": "Size"}])

    page = as_staff.get(f"/panel/links/{link.public_id}/edit").get_data(as_text=True)
    assert 'value="Old"' in page and 'value="Size"' in page and 'value="500.00"' in page
    response = post_form(
        as_staff,
        f"/panel/links/{link.public_id}/edit",
        {
            **FORM,
            "title": "New",
            "slug": link.slug,
            "amount_kind": "open",
            "min_amount": "100",
            "ask_text": "required",
            "text_label": "Colour",
        },
    )

    assert response.status_code == 302
    link = the_link()
    assert (link.title, link.amount, link.min_amount, link.max_amount) == (
        "New",
        None,
        Decimal("100.00"),
        None,
    )
    assert link.custom_fields[-1] == {
        "key": "text",
        "kind": "text",
        "label": "Colour",
        "required": True,
    }


def test_the_link_page_shows_address_qr_sharing_and_payments_with_answers(client, as_staff, brand):
    link = make_link(brand, slug="eid-box", custom_fields=[{"kind": "name"}, {"kind": "address"}])
    submit_link(client, link, name="<i>Rahim</i>", address="Road <5>")

    body = as_staff.get(f"/panel/links/{link.public_id}").get_data(as_text=True)

    assert "http://127.0.0.1:5000/pay/eid-box" in body
    assert '<svg role="img" aria-label="QR"' in body
    assert 'href="https://wa.me/?text=Eid%20hamper%20http%3A//127.0.0.1%3A5000/pay/eid-box"' in body
    assert 'href="fb-messenger://share/?link=http%3A%2F%2F127.0.0.1%3A5000%2Fpay%2Feid-box"' in body
    assert 'href="sms:?&amp;body=Eid%20hamper%20http%3A//127.0.0.1%3A5000/pay/eid-box"' in body
    assert "&lt;i&gt;Rahim&lt;/i&gt;" in body and "Road &lt;5&gt;" in body
    assert "<i>Rahim</i>" not in body
    # Sharing is plain addresses: every script on the page is the panel's own.
    assert re.findall(r'<script src="([^"]+)"', body) == [
        "/static/panel.js",
        "/static/panel-tools.js",
    ]


def test_turning_a_link_off_needs_the_form_and_stops_the_public_page(
    client, as_staff, brand, staff
):
    link = make_link(brand)

    forged = as_staff.post(f"/panel/links/{link.public_id}/disable", data={})
    assert forged.status_code == 400 and the_link().status == "active"
    response = post_form(as_staff, f"/panel/links/{link.public_id}/disable")

    assert response.status_code == 302
    assert the_link().status == "disabled"
    assert client.get(f"/pay/{link.slug}").status_code == 410
    post_form(as_staff, f"/panel/links/{link.public_id}/enable")
    assert the_link().status == "active"
    actions = [action for action, _, _ in audit_actions(brand)]
    assert actions[-2:] == ["payment_link.disable", "payment_link.enable"]


def test_another_brands_link_is_not_found_in_the_panel(as_staff, other_brand):
    link = make_link(other_brand)
    assert as_staff.get(f"/panel/links/{link.public_id}").status_code == 404
    assert post_form(as_staff, f"/panel/links/{link.public_id}/disable").status_code == 404
    db.session.expire_all()
    assert db.session.get(PaymentLink, link.id).status == "active"


def test_the_list_shows_each_links_paid_total(as_staff, brand):
    from gateway.payments.lifecycle import complete_payment
    from gateway.payments.models.payment import Payment

    link = make_link(brand, title="Hamper")
    from gateway.links.paying import pay_through_link

    pay_through_link(link, None, {})
    payment = db.session.execute(db.select(Payment)).scalar_one()
    complete_payment(payment, provider="bkash", provider_trx_id="9A7B6C5D4E")

    body = as_staff.get("/panel/links").get_data(as_text=True)
    assert "Hamper" in body and "৳ 500.00" in body and "1 payment" in body


def test_a_payments_page_names_its_link_and_the_customers_answers(client, as_staff, brand):
    from gateway.payments.models.payment import Payment

    link = make_link(
        brand,
        title="Eid box",
        custom_fields=[{"kind": "address"}, {"kind": "text", "label": "Gift note"}],
    )
    submit_link(client, link, address="Road <7>", text="Eid Mubarak!")
    payment = db.session.execute(db.select(Payment)).scalar_one()
    from tests.factories import PaymentFactory

    plain = PaymentFactory(brand=brand)

    body = as_staff.get(f"/panel/payments/{payment.public_id}").get_data(as_text=True)
    plain_body = as_staff.get(f"/panel/payments/{plain.public_id}").get_data(as_text=True)

    assert "data-payment-link" in body
    assert f'<a href="/panel/links/{link.public_id}">Eid box</a>' in body
    assert "Road &lt;7&gt;" in body and "<dt>Gift note</dt>" in body and "Eid Mubarak!" in body
    assert "data-payment-link" not in plain_body


def test_a_deleted_links_payment_still_names_it_and_its_answers_without_a_dead_link(
    client, as_staff, brand
):
    from gateway.links.links import delete_link
    from gateway.payments.models.payment import Payment

    link = make_link(brand, title="Eid box", custom_fields=[{"kind": "address"}])
    submit_link(client, link, address="Road 7")
    payment = db.session.execute(db.select(Payment)).scalar_one()
    delete_link(link)

    body = as_staff.get(f"/panel/payments/{payment.public_id}").get_data(as_text=True)

    assert "<span>Eid box</span>" in body and "Road 7" in body
    assert f"/panel/links/{link.public_id}" not in body
    assert as_staff.get(f"/panel/links/{link.public_id}").status_code == 404
    assert "Eid box" not in as_staff.get("/panel/links").get_data(as_text=True)


def test_the_services_refusals_are_shown_in_bangla(as_staff):
    response = post_form(
        as_staff,
        "/panel/links/new?lang=bn",
        {**FORM, "amount_kind": "open", "min_amount": "900", "max_amount": "100"},
    )
    assert response.status_code == 422
    assert "সর্বোচ্চ পরিমাণ সর্বনিম্নের চেয়ে কম হতে পারে না।" in response.get_data(as_text=True)


def test_a_link_on_a_loopback_address_is_shared_with_the_pairing_page_s_warning(
    as_staff, app, brand, monkeypatch
):
    link = make_link(brand)
    for base in ("http://127.0.0.1:5000", "http://localhost:8000", "http://[::1]:5000"):
        monkeypatch.setitem(app.config, "BASE_URL", base)
        body = as_staff.get(f"/panel/links/{link.public_id}").get_data(as_text=True)
        assert 'id="unreachable-address"' in body, base
        assert "that address means this computer only" in body
        assert "make run HOST=0.0.0.0" in body
    brand.base_url = "http://127.0.0.1:8080"
    db.session.commit()
    body = as_staff.get(f"/panel/links/{link.public_id}").get_data(as_text=True)
    assert 'id="unreachable-address"' in body and "Base URL under Settings" in body


def test_a_link_on_a_reachable_address_carries_no_warning(as_staff, app, brand, monkeypatch):
    link = make_link(brand)
    monkeypatch.setitem(app.config, "BASE_URL", "https://pay.example.com")
    body = as_staff.get(f"/panel/links/{link.public_id}").get_data(as_text=True)
    assert "https://pay.example.com/pay/" in body and "unreachable-address" not in body
