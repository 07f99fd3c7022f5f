"""Matching an SMS to a customer's claim, in either order: one SMS pays at most one payment."""

import re

from sqlalchemy.exc import IntegrityError

from ..answer_commit import commit_work
from ..clock import utcnow
from ..devices.notifications import notify_devices
from ..domain_errors import (
    DomainError,
    NotPermitted,
    ValidationFailed,
    field_error,
    invalid_state,
    not_found,
)
from ..extensions import db
from ..money import format_amount
from ..notifications.events import notify_payments_in_review
from ..payments.lifecycle import (
    complete_payment,
    complete_payments,
    expirable,
    fail_payment,
    transition,
)
from ..payments.models.payment import OPEN_STATUSES, PAID_STATUSES, Payment
from ..payments.models.payment_method import PROVIDERS
from ..payments.signals import payment_closed
from ..states import (
    INBOUND_SMS,
    PAYMENT,
    not_held_for_review_sql,
    payment_in_review,
    payment_in_review_sql,
    write_status,
)
from ..webhooks.events import emit_event
from .claims import (
    claimed_elsewhere,
    late_claims,
    live_claims,
    open_claims,
    stored_sms,
    stranded_credit_ids,
)
from .models.balance_chain import BalanceLink
from .models.inbound_sms import InboundSms
from .parsing import canonical_trx_id
from .queries import claims_of_trx_ids, texts_by_id

TRX_ID_PATTERN = re.compile(r"^[A-Z0-9]{6,20}$")
SMS_CURRENCY = "BDT"


def normalise_trx_id(value):
    """A TrxID as stored: trimmed, upper-case, look-alike letters folded, exactly as the parser
    stores it.
    """
    return canonical_trx_id((value or "").strip()) or ""


def submit_claim(payment, provider, provider_trx_id, sender_number=None):
    """The customer's TrxID at checkout: created → processing, then settled with an SMS already
    here.
    """
    provider = (provider or "").strip().lower()
    trx_id = normalise_trx_id(provider_trx_id)
    if provider not in PROVIDERS:
        raise field_error("provider", f"Provider must be one of {', '.join(PROVIDERS)}.")
    if not TRX_ID_PATTERN.match(trx_id):
        raise field_error(
            "provider_trx_id", "Enter the transaction ID exactly as the provider's SMS shows it."
        )
    now = utcnow()
    if payment.status == "created" and payment.expires_at <= now:
        raise invalid_state("This payment has expired.")
    if claimed_elsewhere(payment, provider, trx_id):
        raise field_error(
            "provider_trx_id",
            "This transaction ID has already been used for another payment.",
            code="already_used",
        )
    if not transition(
        payment,
        ("created",),
        "processing",
        provider=provider,
        provider_trx_id=trx_id,
        sender_number=sender_number or None,
        claimed_at=now,
        review_reason=None,
    ):
        db.session.rollback()
        db.session.refresh(payment)
        raise invalid_state(f"A {payment.status} payment cannot take a transaction ID.")
    # Committed before looking for the SMS: an ingest committing meanwhile then sees this claim.
    db.session.commit()
    sms = stored_sms(payment.brand_id, provider, trx_id)
    if sms is not None and sms.status == "unmatched":
        settle(sms, payment)
    elif sms is not None and sms.status == "review" and sms.payment_id is None:
        bind_held_sms(sms, payment)  # a credit held unverified waits for the claim it pays
    elif sms is not None:
        flag_lost_claim(
            payment, sms
        )  # a rival took the SMS between the check above and this claim's commit
    db.session.refresh(payment)
    return payment


def match_sms_to_claim(sms):
    """At ingest: settle a new incoming SMS with the processing payment that claimed its TrxID."""
    if sms.status != "unmatched" or not sms.provider_trx_id:
        return None
    claims = open_claims(sms.brand_id, sms.provider, sms.provider_trx_id)
    # No live claim: maybe one left on a payment cancelled or expired before the money came.
    if not claims:
        return hold_late_sms(sms)
    # Of several claims of one TrxID, the earliest with the right amount wins.
    return settle(sms, next((p for p in claims if p.amount == sms.amount), claims[0]))


# A claim still worth an SMS: live (processing), or left on a payment cancelled or expired before
# its money arrived.
CLAIM_HOLDING_STATUSES = ("processing", "cancelled", "expired")


def match_new_credits(credits):
    """At ingest: settle a batch's new credits with their claims; how many completed a payment.

    `credits` holds (SMS id, provider, TrxID) of the batch's stored credits: their claims are read
    in one query per provider, and only the texts someone claimed are loaded. A credit that meets
    exactly one live claim of its amount and sender (the common case) is settled with the others
    in one transaction: one guarded UPDATE binds the texts, one completes the payments
    (complete_payments). Any other claimed credit, or every credit of that group when a guard
    finds a row moved meanwhile, goes through match_sms_to_claim alone.
    """
    claims = {}
    for provider in sorted({provider for _, provider, _ in credits}):
        found = claims_of_trx_ids(provider, [trx for _, p, trx in credits if p == provider])
        claims.update({(provider, trx_id): payments for trx_id, payments in found.items()})
    claimed = [sms_id for sms_id, provider, trx_id in credits if (provider, trx_id) in claims]
    now = utcnow()
    together, alone = [], []
    for sms in texts_by_id(claimed).values():
        if sms.status != "unmatched" or not sms.provider_trx_id:
            continue  # held for review by its chain step meanwhile
        payments = claims.get((sms.provider, sms.provider_trx_id), [])
        live = live_claims(payments, sms.brand_id, now)
        payment = next((p for p in live if p.amount == sms.amount), live[0]) if live else None
        if len(live) == 1 and mismatch_reason(sms, payment) is None:
            together.append((sms, payment))
        elif any(p.status in CLAIM_HOLDING_STATUSES for p in payments):
            alone.append(sms)
    completed = settle_together(together)
    if completed is None:
        completed, alone = 0, [sms for sms, _ in together] + alone
    for sms in alone:
        db.session.refresh(sms)
        completed += match_sms_to_claim(sms) == "matched"
    return completed


def settle_together(pairs):
    """Bind each SMS to its payment and complete them all in one commit; None (all rolled back)
    when any text or payment moved meanwhile."""
    if not pairs:
        return 0
    try:
        won = write_status(
            INBOUND_SMS,
            (InboundSms.id.in_([sms.id for sms, _ in pairs]), InboundSms.payment_id.is_(None)),
            ("unmatched",),
            "matched",
            payment_id=db.case({sms.id: payment.id for sms, payment in pairs}, value=InboundSms.id),
            review_reason=None,
            matched_at=utcnow(),
        )
    except IntegrityError:  # a payment already consumed another SMS
        won = None
    if won != len(pairs):
        db.session.rollback()
        return None
    try:
        complete_payments(
            [
                (
                    payment,
                    sms.provider,
                    sms.provider_trx_id,
                    payment.sender_number or sms.counterparty,
                )
                for sms, payment in pairs
            ]
        )
    except DomainError:  # one was cancelled or expired meanwhile; everything was rolled back
        return None
    return len(pairs)


def mismatch_reason(sms, payment):
    """Why this SMS cannot pay this payment outright (shown in the panel), or None."""
    if payment.currency != SMS_CURRENCY:
        return f"SMS amounts are in {SMS_CURRENCY}; the payment is in {payment.currency}"
    if sms.amount is None or sms.amount != payment.amount:
        return (
            f"SMS amount {format_amount(sms.amount) or 'unknown'} differs from "
            f"{format_amount(payment.amount)}"
        )
    claimed, sent = last_digits(payment.sender_number), last_digits(sms.counterparty)
    if claimed and sent and claimed != sent:
        return (
            f"SMS sender {sms.counterparty} differs from the number entered, "
            f"{payment.sender_number}"
        )
    return None


def last_digits(number):
    """The last ten digits of a phone number, to compare 01712… with +8801712…; None when masked."""
    digits = re.sub(r"\D", "", number or "")
    return digits[-10:] if len(digits) >= 10 else None


def settle(sms, payment):
    """Bind one SMS to one payment and complete it, or hold both for review; None when a rival
    won."""
    reason = mismatch_reason(sms, payment)
    try:
        won = write_status(
            INBOUND_SMS,
            (InboundSms.id == sms.id, InboundSms.payment_id.is_(None)),
            ("unmatched",),
            "review" if reason else "matched",
            payment_id=payment.id,
            review_reason=reason,
            matched_at=utcnow(),
        )
    except IntegrityError:  # the payment already consumed another SMS
        won = 0
    if won != 1:
        db.session.rollback()
        flag_lost_claim(payment)
        return None
    if reason:
        return hold_for_review(payment, reason)
    try:
        complete_payment(
            payment,
            provider=sms.provider,
            provider_trx_id=sms.provider_trx_id,
            sender_number=payment.sender_number or sms.counterparty,
        )
    except DomainError:  # cancelled or expired meanwhile; complete_payment rolled the SMS back too
        return None
    flag_rival_claims(payment)
    return "matched"


def give_review_reason(payment_ids, reason, statuses=("processing",), *guards):
    """Write a review reason on payments still in `statuses` (and `guards`); how many took it."""
    taken = db.session.execute(
        db.update(Payment)
        .where(Payment.id.in_(payment_ids), Payment.status.in_(statuses), *guards)
        .values(review_reason=reason[:255], updated_at=utcnow())
        .execution_options(synchronize_session=False)
    ).rowcount
    if taken:
        notify_payments_in_review(payment_ids, reason)
    return taken


def notify_review(payment, reason):
    """Tell the brand's phones that a payment waits for the merchant."""
    notify_devices(
        payment.brand_id,
        "payment.review",
        f"Payment {payment.reference or payment.public_id} needs review",
        body=reason,
    )


def hold_for_review(payment, reason):
    """Keep the payment processing with a review reason; the SMS stays bound to it."""
    if give_review_reason([payment.id], reason) != 1:
        db.session.rollback()
        return None
    notify_review(payment, reason)
    db.session.commit()
    return "review"


def flag_rival_claims(payment):
    """Other processing payments that claimed the same TrxID learn why they will not complete."""
    rivals = [
        p.id
        for p in open_claims(
            payment.brand_id, payment.provider, payment.provider_trx_id, exclude=payment.id
        )
    ]
    if rivals:
        reason = f"TrxID {payment.provider_trx_id} paid another payment ({payment.public_id})"
        give_review_reason(rivals, reason)
        db.session.commit()


# --- Credits that cannot pay by themselves (docs/sms-trust.md): one review writer
# -------------------


def review_text(reason, mismatch=None):
    """A held credit's reason, with the claim's amount or sender difference when there is one."""
    return (f"{reason}; {mismatch}" if mismatch else reason)[:255]


def hold_unverified_credit(sms, reason):
    """Hold a stored credit for review instead of letting it pay: the one writer of that review.

    The text (`unmatched`) goes to `review` with `reason`; when a live claim waits for its TrxID it
    is bound to that payment, which keeps `processing` with the reason (and the phones are told).
    Runs in the caller's transaction without committing; True when the text was held.
    """
    claims = (
        open_claims(sms.brand_id, sms.provider, sms.provider_trx_id) if sms.provider_trx_id else []
    )
    if claims:
        payment = next((p for p in claims if p.amount == sms.amount), claims[0])
        full = review_text(reason, mismatch_reason(sms, payment))
        savepoint = db.session.begin_nested()
        try:
            bound = (
                write_status(
                    INBOUND_SMS,
                    (InboundSms.id == sms.id, InboundSms.payment_id.is_(None)),
                    ("unmatched",),
                    "review",
                    payment_id=payment.id,
                    review_reason=full,
                    matched_at=utcnow(),
                )
                == 1
                and give_review_reason([payment.id], full) == 1
            )
        except IntegrityError:  # the payment already consumed another SMS
            bound = False
        if bound:
            savepoint.commit()
            notify_review(payment, full)
            return True
        savepoint.rollback()
    return (
        write_status(
            INBOUND_SMS,
            (InboundSms.id == sms.id, InboundSms.payment_id.is_(None)),
            ("unmatched",),
            "review",
            review_reason=reason[:255],
        )
        == 1
    )


def bind_held_sms(sms, payment):
    """A claim arrives for a credit held unverified: both wait for review together; commits."""
    full = review_text(sms.review_reason or "held for review", mismatch_reason(sms, payment))
    try:
        won = db.session.execute(
            db.update(InboundSms)
            .where(
                InboundSms.id == sms.id,
                InboundSms.status == "review",
                InboundSms.payment_id.is_(None),
            )
            .values(payment_id=payment.id, review_reason=full, matched_at=utcnow())
            .execution_options(synchronize_session=False)
        ).rowcount
    except IntegrityError:
        won = 0
    if won != 1 or give_review_reason([payment.id], full) != 1:
        db.session.rollback()
        return None
    notify_review(payment, full)
    db.session.commit()
    return "review"


def release_verified_credit(sms):
    """A held credit whose balance chain healed: it pays as if it had followed at once.

    A text held alone goes back to `unmatched` and meets its claim; one held with a payment whose
    only reason was the chain completes it (a remaining amount or sender difference stays in
    review).
    """
    if sms.status != "review":
        return None
    if sms.payment_id is None:
        if (
            write_status(
                INBOUND_SMS,
                (InboundSms.id == sms.id, InboundSms.payment_id.is_(None)),
                ("review",),
                "unmatched",
                review_reason=None,
                matched_at=None,
            )
            != 1
        ):
            db.session.rollback()
            return None
        db.session.commit()
        db.session.refresh(sms)
        return match_sms_to_claim(sms)
    payment = db.session.get(Payment, sms.payment_id, populate_existing=True)
    if payment is None or not in_review(payment):
        return None
    mismatch = mismatch_reason(sms, payment)
    if mismatch:
        give_review_reason([payment.id], mismatch)
        db.session.execute(
            db.update(InboundSms)
            .where(InboundSms.id == sms.id, InboundSms.status == "review")
            .values(review_reason=mismatch[:255])
            .execution_options(synchronize_session=False)
        )
        db.session.commit()
        return "review"
    try:
        approve_review(payment)
    except DomainError:
        return None
    return "matched"


HAND_MATCHABLE = ("unmatched", "unparsed")
# A text held for review on its own (a sender that is not official, a balance that does not follow).
HAND_MATCHABLE_HELD = (*HAND_MATCHABLE, "review")


def hand_match_differences(sms, payment):
    """Why this text would not pay this payment on its own, as the automatic path sees it (may be
    empty).

    The same rules as settle(): amount, provider, the sender number entered at checkout, and any
    reason the text is held for (sender id, balance chain). An unparsed text has no amount or
    provider to compare: the person matching it has read it.
    """
    differences = []
    if sms.amount is not None and sms.amount != payment.amount:
        differences.append(
            f"SMS amount {format_amount(sms.amount)} differs from {format_amount(payment.amount)}"
        )
    if sms.provider in PROVIDERS and payment.provider and payment.provider != sms.provider:
        differences.append(f"SMS is from {sms.provider}; the customer claimed {payment.provider}")
    claimed, sent = last_digits(payment.sender_number), last_digits(sms.counterparty)
    if claimed and sent and claimed != sent:
        differences.append(
            f"SMS sender {sms.counterparty} differs from the number entered, "
            f"{payment.sender_number}"
        )
    if sms.status == "review" and sms.review_reason:
        differences.append(sms.review_reason)
    return differences


def match_sms_by_hand(sms, payment, reason=None, may_override=False):
    """The merchant binds a stored SMS no claim took to an open payment, which completes.

    When the text differs from the payment (hand_match_differences), only an owner or admin
    (`may_override`) may match it, and only with a `reason`, which the caller stores in the audit.
    Amounts in another currency are never matched. Returns the transaction.
    """
    if sms.brand_id != payment.brand_id:
        raise not_found("payment")
    if sms.payment_id is not None or sms.status not in HAND_MATCHABLE_HELD:
        raise invalid_state(f"A {sms.status} SMS cannot be matched by hand.")
    if sms.amount is not None and payment.currency != SMS_CURRENCY:
        raise field_error("payment", mismatch_reason(sms, payment), code="amount_mismatch")
    differences = hand_match_differences(sms, payment)
    reason = (reason or "").strip()
    if differences and not may_override:
        if reason:
            raise NotPermitted(
                "Only an owner or an admin can match a text that differs from the payment.",
                field="reason",
            )
        raise field_error("payment", "; ".join(differences), code="amount_mismatch")
    if differences and not reason:
        raise ValidationFailed(
            "; ".join(differences),
            [
                {"field": "payment", "code": "mismatch", "message": "; ".join(differences)},
                {
                    "field": "reason",
                    "code": "reason_required",
                    "message": "The text differs from the payment: say why it pays it anyway.",
                },
            ],
        )
    try:
        won = write_status(
            INBOUND_SMS,
            (InboundSms.id == sms.id, InboundSms.payment_id.is_(None)),
            HAND_MATCHABLE_HELD,
            "matched",
            payment_id=payment.id,
            review_reason=(f"Matched by hand: {reason}"[:255] if differences else None),
            matched_at=utcnow(),
        )
    except IntegrityError:
        db.session.rollback()
        raise invalid_state("This payment has already consumed another SMS.") from None
    if won != 1:
        db.session.rollback()
        raise invalid_state("This SMS was matched or ignored meanwhile.")
    transaction = complete_with_sms(payment, sms)
    db.session.refresh(sms)
    return transaction


def complete_with_sms(payment, sms, from_states=OPEN_STATUSES):
    """Complete a payment with the SMS that paid it (provider, TrxID, sender), then flag rivals
    claiming that TrxID.
    """
    transaction = complete_payment(
        payment,
        provider=sms.provider if sms.provider in PROVIDERS else None,
        provider_trx_id=sms.provider_trx_id,
        sender_number=payment.sender_number or (sms.counterparty or "")[:20] or None,
        from_states=from_states,
    )
    flag_rival_claims(payment)
    return transaction


NOT_IN_REVIEW = "This payment is not waiting for review."


in_review = payment_in_review  # the one definition lives in states.py


def held_sms(payment):
    """The SMS bound to this payment and held with it for review, or None."""
    return db.session.execute(
        db.select(InboundSms)
        .where(InboundSms.payment_id == payment.id, InboundSms.status == "review")
        .execution_options(populate_existing=True)
    ).scalar_one_or_none()


def pay_with_bound_sms(payment, sms, settled_meanwhile, from_states=OPEN_STATUSES):
    """Match the SMS bound to a payment for review and complete the payment with it (guarded).

    Refused (INVALID_STATE) when the SMS's TrxID already paid another payment, or when another
    request settled the SMS first (`settled_meanwhile` says how).
    """
    if trx_id_paid_elsewhere(payment, sms):
        raise invalid_state(f"TrxID {sms.provider_trx_id} already paid another payment.")
    won = write_status(
        INBOUND_SMS,
        (InboundSms.id == sms.id, InboundSms.payment_id == payment.id),
        ("review",),
        "matched",
        matched_at=utcnow(),
    )
    if won != 1:
        db.session.rollback()
        raise invalid_state(settled_meanwhile)
    return complete_with_sms(payment, sms, from_states=from_states)


def trx_id_paid_elsewhere(payment, sms):
    """Whether the SMS's TrxID already paid another payment of the brand (one TrxID pays once)."""
    return (
        db.session.execute(
            db.select(Payment.id)
            .where(
                Payment.provider == sms.provider,
                Payment.provider_trx_id == sms.provider_trx_id,
                Payment.brand_id == payment.brand_id,
                Payment.id != payment.id,
                Payment.status.in_(PAID_STATUSES),
            )
            .limit(1)
        ).first()
        is not None
    )


def approve_review(payment):
    """The merchant accepts a payment held for review: its held SMS becomes matched and the payment
    completes.

    Refused (INVALID_STATE, nothing changed) when the payment is not in review, when no SMS is held
    for it (a rival's claim was paid with its TrxID), or when the TrxID already paid another
    payment. The SMS update and the completion commit together; a racing approve, reject or cancel
    loses.
    """
    db.session.refresh(payment)
    if not in_review(payment):
        raise invalid_state(NOT_IN_REVIEW)
    sms = held_sms(payment)
    if sms is None:
        raise invalid_state(
            "No SMS is held for this payment: its TrxID paid another payment or no text arrived. "
            "Reject it, or match an SMS to it by hand."
        )
    # complete_payment rolls the SMS update back too when the payment left `processing` meanwhile.
    return pay_with_bound_sms(
        payment, sms, "The SMS held for this payment was released or matched meanwhile."
    )


def release_held_sms(payment):
    """Unbind the SMS a payment holds for review: back to `unmatched`, no payment, to be matched by
    hand.

    Runs in the caller's transaction without committing: the caller's own state change commits
    the release together with itself, or rolls it back. A credit held because its balance did
    not follow stays held on its own (`review`, no payment), so no later claim takes it unchecked.
    """
    held = db.select(BalanceLink.sms_id).where(BalanceLink.held.is_(True))
    db.session.execute(
        db.update(InboundSms)
        .where(
            InboundSms.payment_id == payment.id,
            InboundSms.status == "review",
            InboundSms.id.in_(held),
        )
        .values(
            payment_id=None,
            matched_at=None,
            review_reason=db.select(BalanceLink.note)
            .where(BalanceLink.sms_id == InboundSms.id)
            .scalar_subquery(),
        )
        .execution_options(synchronize_session=False)
    )
    write_status(
        INBOUND_SMS,
        (InboundSms.payment_id == payment.id,),
        ("review",),
        "unmatched",
        payment_id=None,
        review_reason=None,
        matched_at=None,
    )


def reject_review(payment, reason=None):
    """The merchant refuses a payment held for review: it fails, and its held SMS is released.

    The SMS goes back to `unmatched` with no payment, so it can be matched by hand to the payment
    it really pays. Release and failure commit together; nothing changes when the payment has left
    review.
    """
    db.session.refresh(payment)
    if not in_review(payment):
        raise invalid_state(NOT_IN_REVIEW)
    release_held_sms(payment)
    # fail_payment's guarded processing → failed commits the release, or rolls it back with itself.
    return fail_payment(payment, reason or payment.review_reason)


# --- Self-healing: what a lost connection, a killed worker or a lost race left undone
# ---------------------


def flag_lost_claim(payment, sms=None):
    """A claim that lost its TrxID's SMS to another payment by a moment: held for review, never left
    silent.

    `sms` is the stored text with the claim's TrxID when the caller has it. Nothing changes when
    that SMS is unbound or bound to this payment, or the payment already has a reason.
    """
    if sms is None and payment.provider_trx_id is not None:
        sms = stored_sms(payment.brand_id, payment.provider, payment.provider_trx_id)
    if sms is None or sms.payment_id is None or sms.payment_id == payment.id:
        return None
    winner = db.session.get(Payment, sms.payment_id)
    reason = lost_claim_reason(payment.provider_trx_id, winner)
    flagged = give_review_reason([payment.id], reason, ("processing",), not_held_for_review_sql())
    db.session.commit()
    return "review" if flagged == 1 else None


def lost_claim_reason(trx_id, winner):
    """The review reason of a claim whose TrxID another payment used (shown in the panel)."""
    return f"TrxID {trx_id} was already used by payment {winner.public_id}"[:255]


def match_stranded_credits(brand_id=None, slots=None):
    """Match stored incoming credits left unmatched although a live claim waits for them; how many
    settled.

    The periodic job runs it over every brand; a phone's duplicate forward runs it for the TrxIDs it
    sent (`slots`: (provider, TrxID) pairs). Each text goes through match_sms_to_claim, with its
    guards.
    """
    settled = 0
    for sms_id in stranded_credit_ids(utcnow(), brand_id, slots):
        sms = db.session.execute(
            db.select(InboundSms)
            .where(InboundSms.id == sms_id)
            .execution_options(populate_existing=True)
        ).scalar_one_or_none()
        if sms is not None and match_sms_to_claim(sms) is not None:
            settled += 1
    return settled


def flag_lost_claims():
    """Live claims whose TrxID's SMS already paid another payment, still without a reason: flagged;
    how many.
    """
    now = utcnow()
    lost = (
        db.session.execute(
            db.select(Payment)
            .join(
                InboundSms,
                db.and_(
                    InboundSms.brand_id == Payment.brand_id,
                    InboundSms.provider == Payment.provider,
                    InboundSms.provider_trx_id == Payment.provider_trx_id,
                ),
            )
            .where(
                Payment.status == "processing",
                Payment.expires_at > now,
                not_held_for_review_sql(),
                InboundSms.payment_id.is_not(None),
                InboundSms.payment_id != Payment.id,
            )
            .limit(500)
        )
        .scalars()
        .all()
    )
    db.session.commit()
    return sum(flag_lost_claim(payment) == "review" for payment in lost)


def heal_matching():
    """The periodic self-heal: match stranded credits, flag claims that lost their TrxID; how many
    payments moved.
    """
    return match_stranded_credits() + flag_lost_claims()


# --- Money that arrived after its payment was cancelled or expired (docs/payment-states.md) ---

LATE_STATUSES = ("cancelled", "expired")
LATE_REASONS = {
    "cancelled": "Paid after the payment was cancelled",
    "expired": "Paid after the payment expired",
}
RETURNED = "returned"  # the SMS status once the merchant has sent the late money back


def hold_late_sms(sms):
    """A credit no live claim takes, whose TrxID a cancelled or expired payment claimed: held there
    for review.

    The SMS is bound to that payment in `review` and the payment keeps its state with a review
    reason; only the merchant settles it (complete_late_payment or return_late_sms). None when no
    such claim.
    """
    for payment in late_claims(sms.brand_id, sms.provider, sms.provider_trx_id, sms.created_at):
        if payment.status == "processing" and not expire_overdue_claim(payment):
            continue  # held for review meanwhile, or settled: not a late claim after all
        held = bind_late_sms(sms, payment)
        if held is not None:
            return held
    return None


def expire_overdue_claim(payment):
    """Expire a processing payment past its expiry now, as the sweep would (payment.expired sent);
    False if it moved.
    """
    now = utcnow()
    changed = write_status(
        PAYMENT,
        (Payment.id == payment.id, expirable(), Payment.expires_at <= now),
        ("processing",),
        "expired",
        updated_at=now,
    )
    if changed != 1:
        db.session.rollback()
        return False
    emit_event("payment.expired", payment.brand, payment=payment)
    payment_closed.send(payment)
    db.session.commit()
    db.session.refresh(payment)
    return True


def late_reason(sms, payment):
    """Why a late SMS waits for the merchant, with any amount or sender difference."""
    reason = LATE_REASONS[payment.status]
    mismatch = mismatch_reason(sms, payment)
    return f"{reason}; {mismatch}"[:255] if mismatch else reason


def bind_late_sms(sms, payment):
    """Bind the SMS to the late payment in `review` and give the payment the reason; None when a
    rival got either.
    """
    reason = late_reason(sms, payment)
    now = utcnow()
    try:
        won = write_status(
            INBOUND_SMS,
            (InboundSms.id == sms.id, InboundSms.payment_id.is_(None)),
            ("unmatched",),
            "review",
            payment_id=payment.id,
            review_reason=reason,
            matched_at=now,
        )
    except IntegrityError:  # the payment holds another SMS already
        won = 0
    if won == 1:
        won = give_review_reason([payment.id], reason, (payment.status,))
    if won != 1:
        db.session.rollback()
        return None
    notify_review(payment, reason)
    db.session.commit()
    return "late"


def late_sms(payment):
    """The SMS that arrived after this payment was cancelled or expired and waits for the merchant,
    or None.
    """
    if payment.status not in LATE_STATUSES:
        return None
    return held_sms(payment)


def late_sms_waiting():
    """SQL: payments cancelled or expired whose late SMS waits for the merchant (for lists and
    counts).
    """
    waiting = db.select(InboundSms.id).where(
        InboundSms.payment_id == Payment.id, InboundSms.status == "review"
    )
    return db.and_(Payment.status.in_(LATE_STATUSES), waiting.exists())


def complete_late_payment(payment):
    """The merchant keeps money that came late: cancelled/expired → completed with its held SMS,
    once.

    The SMS becomes matched and the payment completes in one commit, with payment.completed through
    the outbox; refused (INVALID_STATE, nothing changed) when no late SMS waits, the TrxID already
    paid another payment, or another click or admin settled it first.
    """
    db.session.refresh(payment)
    sms = late_sms(payment)
    if sms is None:
        raise invalid_state(
            "No SMS that arrived after this payment was cancelled or expired is waiting."
        )
    # The guarded cancelled/expired → completed rolls the SMS update back too when someone else won.
    return pay_with_bound_sms(
        payment, sms, "The late SMS was settled meanwhile.", from_states=LATE_STATUSES
    )


def return_late_sms(payment, note=None):
    """The merchant sent the late money back: its SMS is closed as `returned`; the payment stays as
    it was.

    No refund row: nothing was completed, so amount_refunded, the payment's status and the
    dashboard's volumes stay untouched (docs/payment-states.md). Guarded like completion.
    """
    db.session.refresh(payment)
    sms = late_sms(payment)
    if sms is None:
        raise invalid_state(
            "No SMS that arrived after this payment was cancelled or expired is waiting."
        )
    late = db.select(Payment.id).where(Payment.id == payment.id, Payment.status.in_(LATE_STATUSES))
    resolution = f"Returned to the customer{': ' + note if note else ''}"[:255]
    won = write_status(
        INBOUND_SMS,
        (InboundSms.id == sms.id, InboundSms.payment_id.in_(late)),
        ("review",),
        RETURNED,
        review_reason=resolution,
    )
    if won != 1:
        db.session.rollback()
        raise invalid_state("The late SMS was settled meanwhile.")
    reason = f"Returned to the customer. {payment.review_reason or LATE_REASONS[payment.status]}"[
        :255
    ]
    give_review_reason([payment.id], reason, LATE_STATUSES)
    commit_work()
    db.session.refresh(payment)
    db.session.refresh(sms)
    return sms


def needs_review():
    """SQL: payments waiting for the merchant, held processing ones and those with a late SMS
    alike."""
    return db.or_(payment_in_review_sql(), late_sms_waiting())
