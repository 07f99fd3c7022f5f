"""Trusting an SMS in the panel: hand matching that differs needs an owner or admin and a reason;
the balance chain's status and reason in English and Bangla; setting the starting balance and the
mode."""

from datetime import datetime
from decimal import Decimal

import pytest

from gateway.accounts.models.audit import AuditLog
from gateway.extensions import db
from gateway.sms.models.balance_chain import BalanceChain
from gateway.sms.parsing import build_sms_text
from tests.factories import PaymentFactory, bkash_text, paired_device
from tests.factories import forward as forward_on
from tests.panel.conftest import post_form, reloaded

TRX = "8N7A6B5C4D"


@pytest.fixture
def phone(brand):
    device, _, aes_key = paired_device(brand)
    return device, aes_key


def credit(amount, trx_id, balance, minute):
    return build_sms_text(
        "bkash",
        Decimal(amount),
        trx_id,
        "01711000101",
        Decimal(balance),
        datetime(2026, 3, 20, 10, minute),
    )


@pytest.fixture
def mismatched(brand, phone):
    """A credit of 500.00 nobody claimed and an open order of 450.00."""
    sms = forward_on(phone, bkash_text("500.00", TRX))
    order = PaymentFactory(brand=brand, reference="ORDER-7", amount=Decimal("450.00"))
    return sms, order


def match(client, sms, payment, reason=None):
    data = {"payment": payment.public_id}
    if reason is not None:
        data["reason"] = reason
    return post_form(client, f"/panel/sms-inbox/{sms.public_id}/match", data)


def test_an_admin_matching_a_different_amount_is_asked_for_a_reason(as_admin, mismatched):
    sms, order = mismatched
    response = match(as_admin, sms, order)
    html = response.get_data(as_text=True)
    assert response.status_code == 422
    assert "SMS amount 500.00 differs from 450.00" in html
    assert 'id="reason-error">The text differs from the payment: say why it pays it anyway.' in html
    assert (reloaded(order).status, reloaded(sms).status) == ("created", "unmatched")


def test_an_admin_with_a_reason_matches_it_and_the_audit_keeps_the_reason(
    as_admin, mismatched, brand
):
    sms, order = mismatched
    response = match(as_admin, sms, order, reason="Customer paid 50 extra as a tip; checked in app")
    assert response.status_code == 302
    assert (reloaded(order).status, reloaded(sms).status) == ("completed", "matched")
    entry = db.session.execute(
        db.select(AuditLog).where(AuditLog.action == "sms.match")
    ).scalar_one()
    assert entry.details["reason"] == "Customer paid 50 extra as a tip; checked in app"
    assert entry.details["differences"] == ["SMS amount 500.00 differs from 450.00"]
    assert entry.user_email == "owner@shop.test"


def test_staff_cannot_override_a_different_amount_even_with_a_reason(as_staff, mismatched):
    sms, order = mismatched
    response = match(as_staff, sms, order, reason="trust me")
    assert response.status_code == 403
    assert (reloaded(order).status, reloaded(sms).status) == ("created", "unmatched")


def test_staff_still_match_a_text_that_fits_without_a_reason(as_staff, brand, phone):
    sms = forward_on(phone, bkash_text("500.00", TRX))
    order = PaymentFactory(brand=brand, amount=Decimal("500.00"))
    assert match(as_staff, sms, order).status_code == 302
    assert reloaded(order).status == "completed"


def test_a_held_text_needs_a_reason_and_an_admin_to_be_matched(as_admin, brand, phone):
    forward_on(phone, credit("500.00", "AAAA000001", "1500.00", 0))
    held = forward_on(phone, credit("300.00", "HELD000001", "9999.00", 5))
    order = PaymentFactory(brand=brand, amount=Decimal("300.00"))
    assert reloaded(held).status == "review"

    assert match(as_admin, held, order).status_code == 422
    response = match(as_admin, held, order, reason="Checked the wallet: the money is there")

    assert response.status_code == 302
    assert (reloaded(held).status, reloaded(order).status) == ("matched", "completed")


def test_the_text_page_shows_the_chain_status_and_reason_in_english_and_bangla(
    as_staff, brand, phone
):
    forward_on(phone, credit("500.00", "AAAA000001", "1500.00", 0))
    held = forward_on(phone, credit("300.00", "HELD000001", "9999.00", 5))

    english = as_staff.get(f"/panel/sms-inbox/{held.public_id}").get_data(as_text=True)
    assert "Balance does not follow the previous text" in english
    assert "expected ৳ 1,500.00, got ৳ 9,699.00." in english
    assert "balance does not follow the previous text: expected 1500.00, got 9699.00" in english

    bangla = as_staff.get(f"/panel/sms-inbox/{held.public_id}?lang=bn").get_data(as_text=True)
    assert "ব্যালান্স আগের বার্তার সঙ্গে মেলে না" in bangla
    assert "প্রত্যাশিত ৳ ১,৫০০.০০, পাওয়া গেছে ৳ ৯,৬৯৯.০০" in bangla

    listing = as_staff.get("/panel/sms-inbox?status=review").get_data(as_text=True)
    assert "balance does not follow the previous text" in listing


def test_a_spoofed_sender_is_explained_on_the_text_page(as_staff, brand, phone):
    spoofed = forward_on(phone, bkash_text("500.00", TRX), sender="bKash.")
    html = as_staff.get(f"/panel/sms-inbox/{spoofed.public_id}").get_data(as_text=True)
    assert "is not on the list of official sender ids" in html
    assert "not an official sender id of bkash" in html


def test_an_admin_sets_the_starting_balance_and_the_mode(as_admin, brand, phone):
    device, _ = phone
    response = post_form(
        as_admin,
        "/panel/sms-inbox/balances",
        {"device": device.uuid, "provider": "bkash", "balance": "2,500.50"},
    )
    assert response.status_code == 302
    chain = db.session.execute(db.select(BalanceChain)).scalar_one()
    assert (chain.anchor_balance, chain.balance) == (Decimal("2500.50"), Decimal("2500.50"))

    assert (
        post_form(as_admin, "/panel/sms-inbox/balances/mode", {"mode": "lenient"}).status_code
        == 302
    )
    assert reloaded(brand).sms_chain_mode == "lenient"

    page = as_admin.get("/panel/sms-inbox/balances?lang=bn").get_data(as_text=True)
    assert "ব্যালান্স-শৃঙ্খল" in page and "৳ ২,৫০০.৫০" in page


@pytest.mark.parametrize(
    "url, data",
    [
        ("/panel/sms-inbox/balances", {"provider": "bkash", "balance": "10"}),
        ("/panel/sms-inbox/balances/mode", {"mode": "lenient"}),
    ],
)
def test_staff_can_read_the_balances_but_not_change_them(as_staff, brand, phone, url, data):
    assert as_staff.get("/panel/sms-inbox/balances").status_code == 200
    response = post_form(as_staff, url, {**data, "device": phone[0].uuid})
    assert response.status_code == 403
    assert reloaded(brand).sms_chain_mode == "strict"
    assert db.session.execute(db.select(BalanceChain)).first() is None


@pytest.mark.parametrize("balance", ["-5", "abc", "1.234"])
def test_a_bad_starting_balance_is_refused_on_its_field(as_admin, phone, balance):
    response = post_form(
        as_admin,
        "/panel/sms-inbox/balances",
        {"device": phone[0].uuid, "provider": "bkash", "balance": balance},
    )
    assert response.status_code == 422
    assert 'id="balance-error"' in response.get_data(as_text=True)
