"""The SMS inbox pages: the list and a text in full; matching one by hand, ignoring one; CSRF and
brands.
"""

from decimal import Decimal

import pytest

from gateway.accounts.models.audit import AuditLog
from gateway.extensions import db
from tests.factories import PaymentFactory, bkash_text
from tests.factories import forward_from as forward
from tests.panel.conftest import audit_actions, post_form, reloaded

TRX = "8N7A6B5C4D"
ODD_TEXT = "Dear customer, Tk 500 reached your wallet. Ref QX77PL12 thanks"


@pytest.fixture
def texts(brand, other_brand):
    """A bKash credit nobody claimed yet, a text nobody understood, another brand's credit, and an
    order to pay.
    """
    return {
        "credit": forward(brand, bkash_text("500.00", TRX, "01712345678")),
        "odd": forward(brand, ODD_TEXT, sender="01812345678"),
        "theirs": forward(other_brand, bkash_text("500.00", "OT11HE22RS")),
        "order": PaymentFactory(brand=brand, reference="ORDER-1042", amount=Decimal("500.00")),
    }


def test_the_inbox_shows_each_text_with_its_parse_and_status_to_staff(as_staff, texts):
    html = as_staff.get("/panel/sms-inbox").get_data(as_text=True)
    assert (
        TRX in html
        and "৳ 500.00" in html
        and "Waiting for a claim" in html
        and "Not understood" in html
    )
    assert "OT11HE22RS" not in html
    assert f'href="/panel/sms-inbox/{texts["credit"].public_id}"' in html


@pytest.mark.parametrize(
    "query, shown, hidden",
    [
        ("status=unparsed", ODD_TEXT[:20], TRX),
        ("q=8n7a6b5c4d", TRX, ODD_TEXT[:20]),
        ("provider=nagad", "No text matches these filters.", TRX),
    ],
)
def test_the_inbox_filters_by_status_trxid_and_provider(as_staff, texts, query, shown, hidden):
    html = as_staff.get(f"/panel/sms-inbox?{query}").get_data(as_text=True)
    assert shown in html and hidden not in html


def test_a_text_in_full_offers_the_open_payments_of_its_amount(as_staff, texts):
    html = as_staff.get(f"/panel/sms-inbox/{texts['credit'].public_id}").get_data(as_text=True)
    assert "You have received Tk 500.00 from 01712345678" in html
    assert "ORDER-1042" in html and "Match and complete" in html and "Mark as ignored" in html


def test_a_text_from_a_personal_number_warns_before_matching(as_staff, texts):
    html = as_staff.get(f"/panel/sms-inbox/{texts['odd'].public_id}").get_data(as_text=True)
    assert "did not come from a provider's own sender id" in html
    assert f"/panel/sms-templates?sms={texts['odd'].public_id}" in html


def test_staff_match_a_text_by_reference_and_the_payment_completes_audited(
    as_staff, texts, brand, staff
):
    response = post_form(
        as_staff, f"/panel/sms-inbox/{texts['credit'].public_id}/match", {"payment": "ORDER-1042"}
    )

    assert response.status_code == 302
    assert response.headers["Location"] == f"/panel/sms-inbox/{texts['credit'].public_id}"
    order = reloaded(texts["order"])
    assert (order.status, order.provider_trx_id) == ("completed", TRX)
    assert reloaded(texts["credit"]).payment_id == order.id
    entry = db.session.execute(
        db.select(AuditLog).where(AuditLog.action == "sms.match")
    ).scalar_one()
    assert (entry.user_email, entry.target_type, entry.target_id, entry.ip_address) == (
        staff.email,
        "payment",
        order.public_id,
        "127.0.0.1",
    )
    assert (
        entry.details["sms"] == texts["credit"].public_id
        and entry.details["trx_id"] == order.transaction.trx_id
    )
    page = as_staff.get(response.headers["Location"]).get_data(as_text=True)
    assert "Matched: payment ORDER-1042 is completed." in page and "Match and complete" not in page


@pytest.mark.parametrize(
    "payment, says",
    [
        ("ORDER-404", "No payment has this ID or reference."),
        ("", "This field is required."),
    ],
)
def test_matching_to_no_payment_says_why_on_the_field(as_staff, texts, payment, says):
    response = post_form(
        as_staff, f"/panel/sms-inbox/{texts['credit'].public_id}/match", {"payment": payment}
    )
    assert response.status_code == 422
    assert f'id="payment-error">{says}' in response.get_data(as_text=True)
    assert reloaded(texts["credit"]).status == "unmatched"


def test_a_text_for_another_amount_cannot_pay_by_hand(as_staff, texts, brand):
    other = PaymentFactory(brand=brand, reference="ORDER-1043", amount=Decimal("450.00"))
    response = post_form(
        as_staff,
        f"/panel/sms-inbox/{texts['credit'].public_id}/match",
        {"payment": other.public_id},
    )
    assert response.status_code == 422
    assert "SMS amount 500.00 differs from 450.00" in response.get_data(as_text=True)
    assert (reloaded(other).status, reloaded(texts["credit"]).status) == ("created", "unmatched")


def test_ignoring_a_text_sets_it_aside_and_is_audited(as_staff, texts, brand, staff):
    response = post_form(as_staff, f"/panel/sms-inbox/{texts['odd'].public_id}/ignore")
    assert response.status_code == 302
    assert reloaded(texts["odd"]).status == "ignored"
    assert audit_actions(brand)[-1] == ("sms.ignore", staff.email, texts["odd"].public_id)
    again = post_form(
        as_staff, f"/panel/sms-inbox/{texts['odd'].public_id}/ignore", follow_redirects=True
    )
    assert "This SMS is already ignored." in again.get_data(as_text=True)


@pytest.mark.parametrize("action", ["match", "ignore"])
def test_actions_without_the_csrf_token_change_nothing(as_staff, texts, action):
    response = as_staff.post(
        f"/panel/sms-inbox/{texts['credit'].public_id}/{action}", data={"payment": "ORDER-1042"}
    )
    assert response.status_code == 400
    assert (
        reloaded(texts["credit"]).status == "unmatched"
        and reloaded(texts["order"]).status == "created"
    )


@pytest.mark.parametrize(
    "url",
    [
        "/panel/sms-inbox/{id}",
        "/panel/sms-inbox/{id}/match",
        "/panel/sms-inbox/{id}/ignore",
        "/panel/sms-templates?sms={id}",
    ],
)
def test_another_brands_text_reads_as_not_found(as_admin, texts, url):
    url = url.format(id=texts["theirs"].public_id)
    response = (
        post_form(as_admin, url, {"payment": "ORDER-1042"})
        if url.endswith(("match", "ignore"))
        else as_admin.get(url)
    )
    assert response.status_code == 404
    assert reloaded(texts["theirs"]).status == "unmatched"


@pytest.mark.parametrize(
    "url",
    [
        "/panel/sms-inbox",
        "/panel/sms-templates",
        "/panel/devices",
        "/panel/outbound-sms",
        "/panel/developers/api-keys",
        "/panel/developers/webhooks",
        "/panel/developers/webhook-deliveries",
    ],
)
def test_signed_out_visitors_are_sent_to_sign_in(client, url):
    response = client.get(url)
    assert response.status_code == 302 and response.headers["Location"].startswith(
        "/panel/sign-in?next="
    )
