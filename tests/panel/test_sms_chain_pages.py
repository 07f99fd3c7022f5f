"""The panel and the balance chain's newer cases: a credit that printed no balance (held or flagged,
matched by hand by an owner or admin only), and the phones' shared wallets setting."""

import re
from decimal import Decimal

import pytest

from gateway.accounts.models.audit import AuditLog
from gateway.extensions import db
from gateway.sms.balance_chain import NO_BALANCE, set_chain_mode
from tests.factories import PaymentFactory, paired_device
from tests.factories import forward as forward_on
from tests.panel.conftest import post_form, reloaded
from tests.sms.test_chain_no_balance import BKASH_NO_BALANCE


@pytest.fixture
def phone(brand):
    device, _, aes_key = paired_device(brand)
    return device, aes_key


def match(client, sms, payment, reason=None):
    data = {"payment": payment.public_id}
    if reason is not None:
        data["reason"] = reason
    return post_form(client, f"/panel/sms-inbox/{sms.public_id}/match", data)


def test_the_text_page_and_the_list_show_why_a_credit_without_a_balance_waits(
    as_staff, brand, phone
):
    held = forward_on(phone, BKASH_NO_BALANCE)

    page = as_staff.get(f"/panel/sms-inbox/{held.public_id}").get_data(as_text=True)
    assert "No balance printed: the text cannot be checked against the chain" in page
    assert f'<dd class="review-reason">{NO_BALANCE}</dd>' in page
    assert "Strict mode: the credit waits for review." in page
    listing = as_staff.get("/panel/sms-inbox?status=review").get_data(as_text=True)
    assert NO_BALANCE in listing


def test_only_an_owner_or_admin_with_a_reason_matches_a_credit_without_a_balance(
    client, as_admin, brand, phone
):
    held = forward_on(phone, BKASH_NO_BALANCE)
    order = PaymentFactory(brand=brand, reference="ORDER-9", amount=Decimal("300.00"))

    response = match(as_admin, held, order)
    assert response.status_code == 422
    assert NO_BALANCE in response.get_data(as_text=True)
    assert match(
        as_admin, held, order, reason="Checked the bKash app: 300 arrived"
    ).status_code == (302)

    assert (reloaded(held).status, reloaded(order).status) == ("matched", "completed")
    entry = db.session.execute(
        db.select(AuditLog).where(AuditLog.action == "sms.match")
    ).scalar_one()
    assert entry.details["differences"] == [NO_BALANCE]
    assert entry.details["reason"] == "Checked the bKash app: 300 arrived"


def test_staff_cannot_match_a_credit_without_a_balance(as_staff, brand, phone):
    held = forward_on(phone, BKASH_NO_BALANCE)
    order = PaymentFactory(brand=brand, amount=Decimal("300.00"))

    assert match(as_staff, held, order, reason="trust me").status_code == 403
    assert (reloaded(held).status, reloaded(order).status) == ("review", "created")


def test_lenient_mode_shows_a_credit_without_a_balance_as_flagged(as_staff, brand, phone):
    set_chain_mode(brand, "lenient")
    db.session.commit()
    sms = forward_on(phone, BKASH_NO_BALANCE)

    page = as_staff.get(f"/panel/sms-inbox/{sms.public_id}").get_data(as_text=True)
    assert reloaded(sms).status == "unmatched"
    assert "No balance printed: the text cannot be checked against the chain" in page
    assert "Lenient mode: the credit was not held, only flagged." in page


def test_an_admin_says_the_phones_share_their_wallets_and_it_is_audited(as_admin, brand, phone):
    response = post_form(
        as_admin, "/panel/sms-inbox/balances/mode", {"mode": "strict", "wallets": "shared"}
    )
    assert response.status_code == 302
    assert reloaded(brand).sms_shared_wallets is True
    entry = db.session.execute(
        db.select(AuditLog).where(AuditLog.action == "sms.chain_mode")
    ).scalar_one()
    assert entry.details["wallets"] == ["own", "shared"]

    # A form that does not send the choice leaves it as it is.
    assert post_form(
        as_admin, "/panel/sms-inbox/balances/mode", {"mode": "lenient"}
    ).status_code == (302)
    assert (reloaded(brand).sms_chain_mode, reloaded(brand).sms_shared_wallets) == (
        "lenient",
        True,
    )
    page = as_admin.get("/panel/sms-inbox/balances").get_data(as_text=True)
    assert re.search(r'<option (?:selected value="shared"|value="shared" selected)', page)


@pytest.mark.parametrize("wallets", ["both", "1", "<script>"])
def test_an_unknown_wallets_choice_is_refused_on_its_field(as_admin, brand, wallets):
    response = post_form(
        as_admin, "/panel/sms-inbox/balances/mode", {"mode": "strict", "wallets": wallets}
    )
    assert response.status_code == 422
    assert 'id="wallets-error"' in response.get_data(as_text=True)
    assert reloaded(brand).sms_shared_wallets is False


def test_staff_cannot_change_the_wallets_setting(as_staff, brand):
    response = post_form(
        as_staff, "/panel/sms-inbox/balances/mode", {"mode": "strict", "wallets": "shared"}
    )
    assert response.status_code == 403
    assert reloaded(brand).sms_shared_wallets is False


def test_an_admin_sets_the_start_of_a_wallet_number_its_phones_named(as_admin, brand, phone):
    import json

    from gateway.sms.models.balance_chain import BalanceChain
    from tests.sms.test_balance_chain import credit

    forward_on(
        phone,
        json.dumps({"body": credit("500.00", "AAAA01", "1500.00", 0), "receiver": "01711000001"}),
    )
    page = as_admin.get("/panel/sms-inbox/balances").get_data(as_text=True)
    assert 'value="number:01711000001"' in page

    response = post_form(
        as_admin,
        "/panel/sms-inbox/balances",
        {"device": "number:01711000001", "provider": "bkash", "balance": "900"},
    )

    assert response.status_code == 302
    chain = db.session.execute(db.select(BalanceChain)).scalar_one()
    assert (chain.wallet, chain.anchor_balance) == ("number:01711000001", Decimal("900.00"))
    entry = db.session.execute(
        db.select(AuditLog).where(AuditLog.action == "sms.balance_start")
    ).scalar_one()
    assert (entry.target_type, entry.target_id) == ("wallet", "01711000001")


@pytest.mark.parametrize("choice", ["number:017", "number:<b>", "number:01711000009"])
def test_a_wallet_number_no_phone_named_is_refused(as_admin, brand, phone, choice):
    response = post_form(
        as_admin,
        "/panel/sms-inbox/balances",
        {"device": choice, "provider": "bkash", "balance": "900"},
    )
    assert response.status_code == 422
    assert 'id="device-error"' in response.get_data(as_text=True)


def test_the_missed_text_notice_and_the_no_balance_reason_speak_bangla(
    app, brand, staff, phone, tmp_path
):
    from tests.fresh_catalogue import app_with_fresh_catalogue, dispose
    from tests.panel.conftest import panel_client, sign_in
    from tests.sms.test_balance_chain import credit

    forward_on(phone, credit("500.00", "AAAA000001", "1500.00", 0))
    forward_on(phone, credit("300.00", "CCCC000003", "2000.00", 20))
    held = forward_on(phone, BKASH_NO_BALANCE)
    bangla = app_with_fresh_catalogue(app, tmp_path)
    try:
        client = panel_client(bangla)
        sign_in(client, staff)
        inbox = client.get("/panel/sms-inbox?lang=bn").get_data(as_text=True)
        page = client.get(f"/panel/sms-inbox/{held.public_id}?lang=bn").get_data(as_text=True)
    finally:
        dispose(bangla)
    assert "may be missing" not in inbox
    assert "ব্যালান্স ৳ ১,৫০০.০০ থেকে বেড়ে ৳ ১,৭০০.০০ হয়েছে" in inbox
    assert "ব্যালান্স ছাপা নেই: বার্তাটি ব্যালান্স-শৃঙ্খলের সঙ্গে মেলানো যায় না" in page
