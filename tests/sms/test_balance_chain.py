"""The balance chain: credits whose balance does not follow are held, late texts heal, racing texts
stay ordered.
"""

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest

from gateway.devices.models.device import Device
from gateway.extensions import db
from gateway.sms.balance_chain import (
    link_of,
    printed_datetime,
    set_chain_mode,
    set_starting_balance,
)
from gateway.sms.ingest import ingest_batch
from gateway.sms.matching import submit_claim
from gateway.sms.models.balance_chain import BalanceChain, BalanceLink
from gateway.sms.models.inbound_sms import InboundSms
from gateway.sms.parsing import build_sms_text
from gateway.sms.review import approve_review
from tests.factories import PaymentFactory, forward, reload, shop_clock, sms_message

# The start of the hour an hour ago on the shop's clock: texts printed in its first half hour pay
# the payments the tests create now (sms/pays.py) and come before any starting balance they set.
HOUR = shop_clock(timedelta(hours=1)).replace(minute=0)


def credit(amount, trx_id, balance, minute, provider="bkash"):
    """A real-format credit text printed at <minute> past HOUR."""
    return build_sms_text(
        provider,
        Decimal(amount),
        trx_id,
        "01711000101",
        Decimal(balance),
        HOUR.replace(minute=minute),
    )


def send_money(amount, fee, balance, trx_id, minute):
    """A bKash 'Send Money' text (money out) printed at <minute> past HOUR."""
    return (
        f"Send Money Tk {amount} to 01644000104 successful. Ref Karim. Fee Tk {fee}. "
        f"Balance Tk {balance}. TrxID {trx_id} at {HOUR.replace(minute=minute):%d/%m/%Y %H:%M}"
    )


def claim(brand, amount, trx_id):
    payment = PaymentFactory(brand=brand, amount=Decimal(amount))
    return submit_claim(payment, "bkash", trx_id)


def chain_of(phone):
    return db.session.execute(
        db.select(BalanceChain).where(BalanceChain.device_id == phone[0].id)
    ).scalar_one()


def test_the_first_text_starts_the_chain_and_the_next_one_follows(brand, phone):
    first = forward(phone, credit("500.00", "AAAA000001", "1500.00", 0))
    second = forward(phone, credit("200.00", "AAAA000002", "1700.00", 5))

    assert (link_of(first).status, link_of(second).status) == ("start", "verified")
    assert chain_of(phone).balance == Decimal("1700.00")
    assert reload(second).status == "unmatched"


def test_a_forged_credit_with_a_plausible_text_but_a_broken_balance_is_held(brand, phone):
    forward(phone, credit("500.00", "AAAA000001", "1500.00", 0))
    payment = claim(brand, "2500.00", "FORGED0001")

    # Exact sender, real format, a fresh TrxID: only the balance gives it away (4200 − 2500 ≠ 1500).
    forged = forward(phone, credit("2500.00", "FORGED0001", "4200.00", 5))

    payment, forged = reload(payment), reload(forged)
    reason = "balance does not follow the previous text: expected 1500.00, got 1700.00"
    assert (payment.status, payment.review_reason) == ("processing", reason)
    assert (forged.status, forged.payment_id, forged.review_reason) == (
        "review",
        payment.id,
        reason,
    )
    assert link_of(forged).held is True


def test_a_second_text_continuing_an_already_continued_balance_is_a_fork(brand, phone):
    forward(phone, credit("500.00", "AAAA000001", "1500.00", 0))
    forward(phone, credit("100.00", "BBBB000002", "1600.00", 5))

    fork = forward(phone, credit("100.00", "FORK000003", "1600.00", 6))

    assert link_of(fork).note == (
        "balance 1500.00 is already continued by another text (a fork): expected 1600.00"
    )
    assert reload(fork).status == "review"


def test_a_credit_that_skips_the_balance_names_expected_and_got(brand, phone):
    forward(phone, credit("500.00", "AAAA000001", "1500.00", 0))
    payment = claim(brand, "2500.00", "FORGED0001")

    forward(phone, credit("2500.00", "FORGED0001", "9000.00", 5))

    assert reload(payment).review_reason == (
        "balance does not follow the previous text: expected 1500.00, got 6500.00"
    )
    assert reload(payment).status == "processing"


def test_a_held_credit_without_a_claim_waits_and_its_claim_joins_the_review(brand, phone):
    forward(phone, credit("500.00", "AAAA000001", "1500.00", 0))
    held = forward(phone, credit("300.00", "HELD000001", "9999.00", 5))
    assert (reload(held).status, reload(held).payment_id) == ("review", None)

    payment = claim(brand, "300.00", "HELD000001")

    assert reload(payment).status == "processing"
    assert reload(payment).review_reason.startswith("balance does not follow")
    assert reload(held).payment_id == payment.id
    approve_review(reload(payment))  # the merchant checked the wallet
    assert reload(payment).status == "completed"


def test_texts_out_of_order_are_chained_by_printed_time_and_the_late_one_heals(brand, phone):
    forward(phone, credit("500.00", "AAAA000001", "1500.00", 0))
    payment = claim(brand, "300.00", "CCCC000003")
    # C (10:20) arrives before B (10:10): C does not follow A, so it is held with its claim.
    third = forward(phone, credit("300.00", "CCCC000003", "2000.00", 20))
    assert reload(payment).review_reason == (
        "balance does not follow the previous text: expected 1500.00, got 1700.00"
    )

    second = forward(phone, credit("200.00", "BBBB000002", "1700.00", 10))

    assert link_of(second).status == "verified"
    assert (link_of(third).status, link_of(third).note) == ("healed", None)
    assert reload(third).status == "matched"
    assert reload(payment).status == "completed"
    assert chain_of(phone).balance == Decimal("2000.00")


def test_a_late_text_heals_a_held_credit_that_had_no_claim(brand, phone):
    forward(phone, credit("500.00", "AAAA000001", "1500.00", 0))
    third = forward(phone, credit("300.00", "CCCC000003", "2000.00", 20))
    fourth = forward(phone, credit("100.00", "DDDD000004", "2100.00", 30))
    assert (reload(third).status, reload(fourth).status) == ("review", "review")

    forward(phone, credit("200.00", "BBBB000002", "1700.00", 10))

    assert (link_of(third).status, link_of(fourth).status) == ("healed", "healed")
    assert (reload(third).status, reload(fourth).status) == ("unmatched", "unmatched")
    payment = claim(brand, "100.00", "DDDD000004")
    assert reload(payment).status == "completed"


def test_a_late_text_printed_before_the_first_becomes_the_start(brand, phone):
    second = forward(phone, credit("200.00", "BBBB000002", "1700.00", 10))
    first = forward(phone, credit("500.00", "AAAA000001", "1500.00", 0))

    assert (link_of(first).status, link_of(second).status) == ("start", "verified")


def test_outgoing_texts_advance_the_chain(brand, phone):
    forward(phone, credit("500.00", "AAAA000001", "1500.00", 0))
    sent = forward(phone, send_money("510.00", "5.00", "985.00", "SEND000002", 5))
    payment = claim(brand, "15.00", "CRED000003")

    after = forward(phone, credit("15.00", "CRED000003", "1000.00", 9))

    assert link_of(sent).status == "verified"
    assert link_of(sent).before == Decimal("1500.00")  # 985 + 510 + 5
    assert link_of(after).status == "verified"
    assert reload(payment).status == "completed"


def test_a_corrected_starting_balance_is_what_the_next_text_must_follow(brand, phone):
    forward(phone, credit("500.00", "AAAA000001", "1500.00", 0))
    set_starting_balance(brand, phone[0], "bkash", Decimal("5000.00"))
    db.session.commit()
    assert chain_of(phone).balance == Decimal("5000.00")
    now = datetime.now(ZoneInfo("Asia/Dhaka")).replace(tzinfo=None) + timedelta(minutes=1)

    def text(amount, trx_id, balance):
        return build_sms_text(
            "bkash", Decimal(amount), trx_id, "01711000101", Decimal(balance), now
        )

    wrong = forward(phone, text("100.00", "WRNG000001", "1600.00"))
    right = forward(phone, text("100.00", "RGHT000002", "5100.00"))

    assert link_of(wrong).status == "broken"
    assert link_of(wrong).note == (
        "balance does not follow the previous text: expected 5000.00, got 1500.00"
    )
    assert link_of(right).status == "verified"
    assert reload(right).status == "unmatched"


def test_a_correction_without_a_balance_restarts_the_chain_at_the_next_text(brand, phone):
    forward(phone, credit("500.00", "AAAA000001", "1500.00", 0))
    set_starting_balance(brand, phone[0], "bkash", None)
    db.session.commit()
    fresh = forward(
        phone,
        build_sms_text(
            "bkash",
            Decimal("10.00"),
            "NEWS000001",
            "01711000101",
            Decimal("77.00"),
            datetime.now(ZoneInfo("Asia/Dhaka")).replace(tzinfo=None) + timedelta(minutes=1),
        ),
    )
    assert link_of(fresh).status == "start"


def test_lenient_mode_completes_a_credit_that_does_not_follow_and_flags_it(brand, phone):
    set_chain_mode(brand, "lenient")
    db.session.commit()
    forward(phone, credit("500.00", "AAAA000001", "1500.00", 0))
    payment = claim(brand, "300.00", "LENI000002")

    flagged = forward(phone, credit("300.00", "LENI000002", "9999.00", 5))

    assert reload(payment).status == "completed"
    assert reload(flagged).status == "matched"
    assert link_of(flagged).status == "broken"
    assert link_of(flagged).note.startswith("balance does not follow the previous text")


def test_texts_from_a_spoofed_sender_never_enter_the_chain(brand, phone):
    forward(phone, credit("500.00", "AAAA000001", "1500.00", 0))
    spoofed = forward(phone, credit("100.00", "SPOF000002", "1600.00", 5), sender="bKash.")
    real = forward(phone, credit("200.00", "REAL000003", "1700.00", 9))

    assert link_of(spoofed) is None
    assert link_of(real).status == "verified"


def test_different_providers_and_phones_keep_separate_chains(brand, phone):
    from tests.factories import paired_device

    other = paired_device(brand)
    forward(phone, credit("500.00", "AAAA000001", "1500.00", 0))
    nagad = forward(phone, credit("50.00", "NGD00001", "80.00", 1, "nagad"), sender="NAGAD")
    elsewhere = forward((other[0], other[2]), credit("10.00", "BBBB000009", "20.00", 2))

    assert (link_of(nagad).status, link_of(elsewhere).status) == ("start", "start")


@pytest.mark.parametrize(
    "printed, expected",
    [
        ("30/12/2024 13:22", datetime(2024, 12, 30, 13, 22)),
        ("27-DEC-25 08:43:52 pm", datetime(2025, 12, 27, 20, 43, 52)),
        ("01-02-2025 02:55:44 PM", datetime(2025, 2, 1, 14, 55, 44)),
        ("05-SEP-24 12:10 am", datetime(2024, 9, 5, 0, 10)),
        ("14/03/2026 10:25", datetime(2026, 3, 14, 10, 25)),
        ("23-03-22", datetime(2022, 3, 23)),
    ],
)
def test_printed_times_are_read_in_every_provider_format(printed, expected):
    arrived = datetime(2030, 1, 1, tzinfo=datetime.now().astimezone().tzinfo)
    assert printed_datetime(printed, arrived, "Asia/Dhaka") == expected


def race(app, jobs):
    """Run every job at once, each in its own app context (own session and connection)."""
    barrier = threading.Barrier(len(jobs))

    def run(job):
        with app.app_context():
            barrier.wait()
            try:
                return job()
            finally:
                db.session.remove()

    with ThreadPoolExecutor(len(jobs)) as pool:
        return list(pool.map(run, jobs))


@pytest.mark.parametrize("round_", range(3))
def test_two_credits_of_one_chain_ingested_at_once_keep_it_consistent(app, brand, phone, round_):
    device, aes_key = phone
    forward(phone, credit("500.00", "AAAA000001", "1500.00", 0))
    texts = [
        credit("200.00", "BBBB000002", "1700.00", 10),
        credit("300.00", "CCCC000003", "2000.00", 20),
    ]
    messages = [sms_message(aes_key, text) for text in texts]

    def ingest(message):
        return lambda: ingest_batch(db.session.get(Device, device.id), [message])

    results = race(app, [ingest(message) for message in messages])

    assert [result[0]["status"] for result in results] == ["accepted", "accepted"]
    db.session.expire_all()
    links = db.session.execute(db.select(BalanceLink).order_by(BalanceLink.printed_at)).scalars()
    assert [link.status for link in links][1:] in (
        ["verified", "verified"],
        ["verified", "healed"],
    )
    assert chain_of(phone).balance == Decimal("2000.00")
    assert chain_of(phone).version >= 3
    followed = db.session.execute(
        db.select(db.func.count()).where(BalanceLink.followed.is_(True))
    ).scalar_one()
    assert followed == 2  # each balance continued exactly once


def test_simulated_credits_continue_the_simulator_phones_chain(brand):
    from gateway.sms.simulator import forward_as_device, simulated_text, simulator_device

    device = simulator_device(brand)
    for trx_id in ("SIMU000001", "SIMU000002", "SIMU000003"):
        text = simulated_text(brand, "bkash", Decimal("100.00"), trx_id, "01711000101")
        forward_as_device(device, "bkash", text, via="direct")

    statuses = db.session.execute(db.select(BalanceLink.status).order_by(BalanceLink.id)).scalars()
    assert list(statuses) == ["start", "verified", "verified"]


def test_a_rejected_held_credit_stays_held_and_no_later_claim_takes_it_unchecked(brand, phone):
    from gateway.sms.review import reject_review

    forward(phone, credit("500.00", "AAAA000001", "1500.00", 0))
    payment = claim(brand, "300.00", "HELD000001")
    held = forward(phone, credit("300.00", "HELD000001", "9999.00", 5))

    reject_review(reload(payment))

    held = reload(held)
    assert (held.status, held.payment_id) == ("review", None)
    assert held.review_reason.startswith("balance does not follow the previous text")
    again = claim(brand, "300.00", "HELD000001")
    assert reload(again).status == "processing" and reload(again).review_reason


def test_each_receiving_number_the_phone_names_keeps_its_own_chain(brand, phone):
    import json

    device, aes_key = phone

    def on(number, text):
        payload = json.dumps({"body": text, "receiver": number})
        ingest_batch(db.session.get(Device, device.id), [sms_message(aes_key, payload)])

    on("01711-000001", credit("500.00", "AAAA000001", "1500.00", 0))
    on("+8801811000002", credit("50.00", "BBBB000002", "80.00", 5))
    on("01711000001", credit("100.00", "CCCC000003", "1600.00", 9))

    chains = db.session.execute(
        db.select(BalanceChain.receiving_number, BalanceChain.balance).order_by(BalanceChain.id)
    ).all()
    assert chains == [("01711000001", Decimal("1600.00")), ("01811000002", Decimal("80.00"))]
    statuses = db.session.execute(db.select(BalanceLink.status).order_by(BalanceLink.id)).scalars()
    assert list(statuses) == ["start", "start", "verified"]


def test_a_failing_chain_step_holds_the_credit_instead_of_letting_it_pay(brand, phone, monkeypatch):
    import gateway.sms.ingest as ingest_module

    def broken(*args, **kwargs):
        raise RuntimeError("lock lost")

    payment = claim(brand, "500.00", "AAAA000001")
    monkeypatch.setattr(ingest_module, "link_texts", broken)

    with pytest.raises(RuntimeError):  # the batch fails: the phone will send it again
        forward(phone, credit("500.00", "AAAA000001", "1500.00", 0))

    db.session.rollback()
    sms = db.session.execute(db.select(InboundSms)).scalar_one()
    assert reload(sms).status == "review"
    assert reload(payment).status == "processing"
    assert reload(payment).review_reason.startswith("balance chain could not be checked")


def test_a_text_whose_chain_step_died_is_chained_when_the_phone_sends_it_again(
    brand, phone, monkeypatch
):
    """One lost chain step must not hold every later credit: the phone's resend fills the gap."""
    import gateway.sms.ingest as ingest_module

    first, second, third = (
        claim(brand, "500.00", "AAAA000001"),
        claim(brand, "500.00", "AAAA000002"),
        claim(brand, "500.00", "AAAA000003"),
    )
    forward(phone, credit("500.00", "AAAA000001", "1500.00", 1))
    real_link_texts = ingest_module.link_texts

    def died(*args, **kwargs):
        raise RuntimeError("connection lost mid-step")

    monkeypatch.setattr(ingest_module, "link_texts", died)
    lost = credit("500.00", "AAAA000002", "2000.00", 2)
    with pytest.raises(RuntimeError):
        forward(phone, lost)
    db.session.rollback()
    monkeypatch.setattr(ingest_module, "link_texts", real_link_texts)
    forward(phone, credit("500.00", "AAAA000003", "2500.00", 3))
    assert reload(third).status == "processing"  # 2000.00 expected before it: never chained

    forward(phone, lost)  # the phone's retry of the text whose step died

    assert [reload(p).status for p in (first, second, third)] == ["completed"] * 3
    statuses = db.session.execute(db.select(BalanceLink.status).order_by(BalanceLink.id)).scalars()
    assert sorted(statuses) == ["healed", "start", "verified"]


def test_credits_a_dead_request_left_held_after_their_chain_healed_are_paid_by_the_periodic_job(
    brand, phone, monkeypatch
):
    import gateway.sms.balance_chain as chain_module

    first, second, third = (
        claim(brand, "500.00", "AAAA000001"),
        claim(brand, "500.00", "AAAA000002"),
        claim(brand, "500.00", "AAAA000003"),
    )
    forward(phone, credit("500.00", "AAAA000001", "1500.00", 1))
    forward(phone, credit("500.00", "AAAA000003", "2500.00", 3))  # ahead of its predecessor
    assert reload(third).status == "processing"

    def died(sms_ids):
        raise RuntimeError("connection lost after the commit")

    monkeypatch.setattr(chain_module, "settle_released", died)
    with pytest.raises(RuntimeError):  # fills the gap, commits, then dies before releasing
        forward(phone, credit("500.00", "AAAA000002", "2000.00", 2))
    db.session.rollback()
    monkeypatch.undo()
    assert [reload(p).status for p in (second, third)] == ["processing", "processing"]

    assert chain_module.settle_unsettled() == 2

    assert [reload(p).status for p in (first, second, third)] == ["completed"] * 3
    assert chain_module.settle_unsettled() == 0
