"""A claim that lost its TrxID to another payment by a moment is held for review with the winner
named, never silent.

Real concurrent sessions (one per thread) on the engine the suite runs on. The first test places the
race exactly: claim A pauses after its "already used?" check, claim B completes with the SMS, then A
commits its claim; the second lets many claims of one TrxID run at once.
"""

import threading
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal

import pytest
from sqlalchemy import event

from gateway.domain_errors import DomainError
from gateway.errors import http_status
from gateway.extensions import db
from gateway.payments.models.payment import Payment, Transaction
from gateway.sms.claims import reopen_claim
from gateway.sms.matching import heal_matching, submit_claim
from gateway.sms.models.inbound_sms import InboundSms
from gateway.sms.settling import settle
from tests.factories import PaymentFactory, bkash_text, forward, paired_device

TRX = "7Q6W5E4R3T"


@pytest.fixture
def phone(brand):
    """A paired device of `brand` and its AES key."""
    device, _, aes_key = paired_device(brand)
    return device, aes_key


def in_own_session(app, job):
    """Run `job` in its own application context (its own session and connection); DomainErrors as
    values.
    """
    with app.app_context():
        try:
            return job()
        except DomainError as error:
            return error
        finally:
            db.session.remove()


def claim(payment_id):
    return lambda: submit_claim(db.session.get(Payment, payment_id), "bkash", TRX)


def committed(*payments):
    db.session.expire_all()
    return [db.session.get(Payment, payment.id) for payment in payments]


def interleaved(app, paused, meanwhile):
    """Run `paused` in a thread (its own session) up to its first UPDATE of payments, run
    `meanwhile` to its end in another session, then let `paused` go on: {"paused": its result,
    "meanwhile": its result}, DomainErrors as values."""
    at_gate, done = threading.Event(), threading.Event()

    def pause(conn, cursor, statement, *args):
        if (
            threading.current_thread().name == "paused"
            and statement.lstrip().upper().startswith("UPDATE PAYMENTS")
            and not at_gate.is_set()
        ):
            at_gate.set()
            done.wait(30)

    event.listen(db.engine, "before_cursor_execute", pause)
    try:
        outcome = {}
        thread = threading.Thread(
            name="paused",
            target=lambda: outcome.setdefault("paused", in_own_session(app, paused)),
        )
        thread.start()
        assert at_gate.wait(30)
        outcome["meanwhile"] = in_own_session(app, meanwhile)
        done.set()
        thread.join(30)
    finally:
        event.remove(db.engine, "before_cursor_execute", pause)
    return outcome


def test_a_claim_that_loses_the_sms_by_a_moment_is_held_for_review_naming_the_winner(
    app, brand, phone
):
    forward(phone, bkash_text("500.00", TRX))
    slow, fast = PaymentFactory(brand=brand), PaymentFactory(brand=brand)
    # The slow claim has passed its "already used?" check and is about to take the TrxID when the
    # fast one runs.
    outcome = interleaved(app, paused=claim(slow.id), meanwhile=claim(fast.id))
    outcome = {"slow": outcome["paused"], "fast": outcome["meanwhile"]}

    assert not isinstance(outcome["slow"], DomainError) and not isinstance(
        outcome["fast"], DomainError
    )
    slow, fast = committed(slow, fast)
    assert fast.status == "completed"
    assert (slow.status, slow.review_reason) == (
        "processing",
        f"TrxID {TRX} was already used by payment {fast.public_id}",
    )
    sms = db.session.execute(db.select(InboundSms)).scalar_one()
    assert sms.payment_id == fast.id


def test_concurrent_claims_of_one_trx_id_leave_no_claim_silently_processing(app, brand, phone):
    forward(phone, bkash_text("500.00", TRX))
    payments = [PaymentFactory(brand=brand, amount=Decimal("500.00")) for _ in range(8)]
    start = threading.Barrier(len(payments))

    def racer(payment_id):
        def run():
            start.wait()
            return claim(payment_id)()

        return lambda: in_own_session(app, run)

    with ThreadPoolExecutor(len(payments)) as pool:
        results = list(pool.map(lambda job: job(), [racer(p.id) for p in payments]))

    assert all(http_status(r) in (409, 422) for r in results if isinstance(r, DomainError))
    payments = committed(*payments)
    [winner] = [p for p in payments if p.status == "completed"]
    for payment in payments:
        if payment is winner:
            continue
        # Refused at submit (still created, the customer told at once), or held for review naming
        # the winner: flagged by the winner as it completed, or by itself on finding the SMS taken.
        assert payment.status == "created" or (
            payment.status == "processing"
            and payment.review_reason
            in (
                f"TrxID {TRX} paid another payment ({winner.public_id})",
                f"TrxID {TRX} was already used by payment {winner.public_id}",
            )
        ), (payment.status, payment.review_reason)


def test_a_rival_that_read_the_sms_before_it_was_bound_is_held_for_review(brand, phone):
    sms = forward(phone, bkash_text("500.00", TRX))
    first, second = (
        PaymentFactory(brand=brand, status="processing", provider="bkash", provider_trx_id=TRX)
        for _ in range(2)
    )
    stale = db.session.get(InboundSms, sms.id)
    assert settle(sms, first) == "matched"
    # `second` read the SMS as unmatched before `first` bound it, and settles with that stale view;
    # its claim committed after `first` flagged its rivals, so no reason reached it that way.
    db.session.execute(db.update(Payment).where(Payment.id == second.id).values(review_reason=None))
    db.session.commit()

    assert settle(stale, second) is None

    [second] = committed(second)
    assert (second.status, second.review_reason) == (
        "processing",
        f"TrxID {TRX} was already used by payment {first.public_id}",
    )


def test_the_periodic_job_flags_a_claim_left_silent_by_a_lost_race(brand, phone):
    sms = forward(phone, bkash_text("500.00", TRX))
    winner = PaymentFactory(brand=brand, status="completed", provider="bkash", provider_trx_id=TRX)
    silent = PaymentFactory(brand=brand, status="processing", provider="bkash", provider_trx_id=TRX)
    db.session.execute(
        db.update(InboundSms)
        .where(InboundSms.id == sms.id)
        .values(status="matched", payment_id=winner.id)
    )
    db.session.commit()

    assert heal_matching() == 1

    [silent] = committed(silent)
    assert silent.review_reason == f"TrxID {TRX} was already used by payment {winner.public_id}"
    assert heal_matching() == 0


def test_a_correction_committed_while_the_old_claim_s_sms_is_bound_is_not_completed_by_it(
    app, brand, phone
):
    """The customer corrects the claim (another TrxID, a method with a fee) while the SMS of the
    old TrxID is being bound: the SMS must not complete the corrected claim with the old claim's
    money. On PostgreSQL the correction's "no SMS bound yet" check cannot see the bind in flight;
    SQLite's single writer makes the correction wait for the ingest instead."""
    if db.engine.dialect.name != "postgresql":
        pytest.skip("SQLite's one writer cannot interleave a correction with an ingest's bind")
    old, new = TRX, "1A2B3C4D5E"
    payment = PaymentFactory(brand=brand, amount=Decimal("500.00"))
    submit_claim(payment, "bkash", old)

    def correct():
        claimed = db.session.get(Payment, payment.id)
        assert reopen_claim(claimed)
        return submit_claim(claimed, "bkash", new, fee=Decimal("10.00"))

    # The SMS is bound to the old claim, uncommitted, and the payment's completion is next when the
    # customer corrects the claim.
    outcome = interleaved(
        app, paused=lambda: forward(phone, bkash_text("500.00", old)), meanwhile=correct
    )

    assert not any(isinstance(result, DomainError) for result in outcome.values()), outcome
    [payment] = committed(payment)
    assert (payment.status, payment.provider_trx_id, payment.fee, payment.amount_paid) == (
        "processing",
        new,
        Decimal("10.00"),
        Decimal("510.00"),
    )
    assert db.session.execute(db.select(db.func.count()).select_from(Transaction)).scalar() == 0
    sms = db.session.execute(db.select(InboundSms)).scalar_one()
    assert (sms.status, sms.payment_id) == ("unmatched", None)  # kept for a claim of its TrxID
