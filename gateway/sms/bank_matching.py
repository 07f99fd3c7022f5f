"""Bank methods: a listed bank's credit alert pays the one live bank claim of its amount
(docs/methods.md).

A bank alert carries no TrxID (parsing/bank.py: provider "bank", needs_trx=False), so the claim
cannot be found by TrxID as a wallet's is. The customer's claim records what they typed (their
transfer reference, shown to the merchant) with provider "bank"; an alert and a claim are paired
when the alert is to one of the brand's enabled bank methods (sent by that method's bank, to its
account as far as the alert prints it), its amount equals the claim's amount_paid and no other live
bank claim of the brand (same mode) waits for that amount. Whether the pair pays is then
sms_pays_payment's answer, as for a wallet, and settle() binds and completes it. Two claims of one
amount at once, or an alert of a method whose bank we do not know, are left to the merchant, who
matches by hand (hand_matching.py).
"""

import re

from ..answer_commit import unit_of_work
from ..clock import utcnow
from ..domain_errors import field_error
from ..extensions import db
from ..payments.manual import claim_with_reference
from ..payments.models.payment import Payment
from ..payments.models.payment_method import BANK, PaymentMethod
from ..states import PAYMENT_PROCESSING, SMS_UNMATCHED, not_held_for_review_sql
from .models.inbound_sms import InboundSms
from .senders import BANK_SENDERS, bank_of_name, bank_of_sender
from .settling import settle

MAX_REFERENCE = 64
# An account as an alert prints it: "A/C ***123", "A/C#130320**2001", "A/C XXXX1234", X and *
# hiding digits. The parsers do not keep it, so it is read again from the stored text. The alert is
# to the first one not printed as the payer's ("received from A/C …").
PRINTED_ACCOUNT = re.compile(
    r"(?P<payer>\bfrom\s+(?:your\s+)?)?(?<![a-z])(?:a/c|acc(?:oun)?t)(?:\s*(?:no|number))?"
    r"[\s.:#-]*(?P<account>[0-9x*]{3,})(?![0-9a-z*])",
    re.I,
)


def bank_accounts(brand_id):
    """The brand's enabled bank methods whose bank is known, as (bank, account number) pairs; a
    method of another bank is left out: its alerts cannot be told from another account's."""
    methods = db.session.execute(
        db.select(PaymentMethod.bank_name, PaymentMethod.account_number).where(
            PaymentMethod.brand_id == brand_id,
            PaymentMethod.kind == BANK,
            PaymentMethod.enabled.is_(True),
        )
    ).all()
    banks = [(bank_of_name(name), number) for name, number in methods]
    return [(bank, number) for bank, number in banks if bank]


def printed_account(text):
    """The account a bank alert says it is to, as printed (masks kept); None if it prints none."""
    for found in PRINTED_ACCOUNT.finditer(text or ""):
        if not found.group("payer"):
            return found.group("account")
    return None


def account_agrees(printed, account_number):
    """Whether an alert's printed account can be this account number: the digits shown before the
    first mask begin it, those after the last end it (a mask hides any number of digits); a number
    printed whole must be it."""
    shown = re.split(r"[xX*]+", printed)
    own = re.sub(r"[^0-9]", "", account_number or "")
    return re.fullmatch(".*".join(re.escape(part) for part in shown), own) is not None


def alert_is_to(sms, accounts):
    """Whether a bank alert is to one of these (bank, account number) pairs: sent by that bank and,
    when it prints the account, printing one that agrees with it."""
    bank = bank_of_sender(sms.sender)
    printed = printed_account(sms.body)
    return any(
        bank == method_bank and (printed is None or account_agrees(printed, account_number))
        for method_bank, account_number in accounts
    )


def live_bank_claims(brand_id, amount, livemode, now):
    """The brand's live bank claims waiting for exactly this taka amount, earliest first."""
    return (
        db.session.execute(
            db.select(Payment)
            .where(
                Payment.brand_id == brand_id,
                Payment.provider == BANK,
                Payment.status == PAYMENT_PROCESSING,
                not_held_for_review_sql(),
                Payment.expires_at > now,
                Payment.amount_paid == amount,
                Payment.livemode.is_(livemode),
            )
            .order_by(Payment.claimed_at, Payment.id)
            .limit(2)
            .execution_options(populate_existing=True)
        )
        .scalars()
        .all()
    )


def unmatched_bank_credits(payment):
    """Stored bank credits of the payment's amount, unmatched, received since it was created, that
    are to one of the brand's bank methods (alert_is_to)."""
    accounts = bank_accounts(payment.brand_id)
    senders = {i.lower() for bank, _ in accounts for i in BANK_SENDERS[bank]}
    if not senders:
        return []
    # Not limited: those of another account are dropped after reading, and the rest must be one.
    credits = (
        db.session.execute(
            db.select(InboundSms)
            .where(
                InboundSms.brand_id == payment.brand_id,
                db.func.lower(InboundSms.sender).in_(senders),
                InboundSms.provider == BANK,
                InboundSms.incoming.is_(True),
                InboundSms.status == SMS_UNMATCHED,
                InboundSms.payment_id.is_(None),
                InboundSms.amount == payment.amount_paid,
                InboundSms.livemode.is_(bool(payment.livemode)),
                InboundSms.created_at >= payment.created_at,
            )
            .order_by(InboundSms.id)
            .execution_options(populate_existing=True)
        )
        .scalars()
        .all()
    )
    return [sms for sms in credits if alert_is_to(sms, accounts)]


def match_bank_credit(sms):
    """Settle a stored bank credit with the one live bank claim of its amount; the settle() result,
    or None when there is no claim, or more than one, or the alert is to none of the brand's bank
    methods."""
    if (
        sms.provider != BANK
        or not sms.incoming
        or sms.status != SMS_UNMATCHED
        or sms.amount is None
        or not alert_is_to(sms, bank_accounts(sms.brand_id))
    ):
        return None
    claims = live_bank_claims(sms.brand_id, sms.amount, bool(sms.livemode), utcnow())
    if len(claims) != 1:
        return None
    return settle(sms, claims[0])


def match_bank_credits(sms_ids):
    """At ingest: each new bank credit tried against the live bank claims, one unit of work each."""
    settled = 0
    for sms_id in sms_ids:
        sms = db.session.get(InboundSms, sms_id, populate_existing=True)
        if sms is None:
            continue
        with unit_of_work():
            settled += match_bank_credit(sms) is not None
    return settled


def submit_bank_claim(payment, method, reference):
    """The customer says they transferred to the bank method: created → processing (provider "bank",
    their reference kept for the merchant), then paired with an alert already stored, if exactly one
    of that amount, to one of the brand's bank methods, waits.
    """
    if method.kind != BANK:
        raise field_error("method_id", "That method is not a bank method.")
    reference = " ".join(str(reference or "").split())
    if not 3 <= len(reference) <= MAX_REFERENCE:
        raise field_error(
            "reference", f"Enter your transfer's reference (3 to {MAX_REFERENCE} characters)."
        )
    claim_with_reference(payment, method, reference)
    # Committed before looking for the alert: an ingest committing meanwhile then sees this claim.
    db.session.commit()
    db.session.refresh(payment)  # the UPDATE wrote the fee and amount_paid the alert must bring
    with unit_of_work():
        credits = unmatched_bank_credits(payment)
        rivals = live_bank_claims(
            payment.brand_id, payment.amount_paid, bool(payment.livemode), utcnow()
        )
        if len(credits) == 1 and len(rivals) == 1:
            settle(credits[0], payment)
    db.session.refresh(payment)
    return payment
