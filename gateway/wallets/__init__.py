"""Wallets' own merchant APIs (bKash tokenized checkout, Nagad): the customer pays on the wallet's
page, comes back, and the server settles the payment from the wallet's answer (docs/wallet-apis.md).

Each provider is a module of this package named in PROVIDER_MODULES, exposing:
  SECRET_FIELDS: the names of the secrets its credentials hold;
  start(payment, method, callback_url, charged) -> the wallet page URL (records a wallet_payments
    row for charged["amount_paid"] taka, trip_charge's);
  finish(payment, method, args, row=None) -> Outcome (executes or verifies on the server; args only
    name it);
  query(payment, method, row=None) -> Outcome (the periodic settle of a payment left in between);
  (`row`: the wallet_payments row meant, which the framework always passes; None: the newest.)
  refund(payment, method, amount, reason, row=None, amount_is_taka=False) -> the wallet's refund
    id (WalletRefused when refused); `amount` in the payment's currency unless amount_is_taka;
  check_credentials(method) -> (ok, message);
  refund_status(payment, method, attempt, row) -> the wallet's refund id of a pending refund when
    it was made, None when the wallet has none (optional: without it the merchant settles a pending
    refund by hand). Refunds themselves: refunds.py.
"""

from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from importlib import import_module

from ..answer_commit import commit_work, unit_of_work
from ..clock import utcnow
from ..domain_errors import DomainError, InvalidState, Unavailable, invalid_state
from ..extensions import db
from ..notifications.events import notify_wallet_unapplied
from ..payments.amounts import fee_charged
from ..payments.fees import fee_for
from ..payments.lifecycle import complete_payment
from ..payments.methods import provider_name
from ..payments.models.payment import OPEN_STATUSES, Payment
from ..payments.models.payment_method import PaymentMethod
from ..states import PAYMENT_CREATED
from .models import (
    WALLET_CANCELLED,
    WALLET_FAILED,
    WALLET_SETTLED,
    WALLET_STARTED,
    WALLET_UNAPPLIED,
    WalletPayment,
)

# Each provider's module, relative to this package.
PROVIDER_MODULES = {"bkash": ".bkash", "nagad": ".nagad"}
PAID, CANCELLED, FAILED, PENDING = "paid", "cancelled", "failed", "pending"
# A "paid" that could not pay the payment (settle_wallet_outcome): the money is at the wallet.
UNAPPLIED = "unapplied"
BDT = "BDT"
# A wallet payment left `started` this long is asked for by the periodic settle.
SETTLE_AFTER = timedelta(minutes=1)


class WalletRefused(InvalidState):
    """The wallet said no (a refund, a payment it would not start): its reason in our words."""

    code = "WALLET_REFUSED"


class WalletUnavailable(Unavailable):
    """The wallet could not be reached or answered nonsense; nothing was decided."""

    code = "WALLET_UNAVAILABLE"


@dataclass
class Outcome:
    """What the wallet said about a payment, after our own call to it."""

    status: str  # PAID, CANCELLED, FAILED or PENDING
    provider_trx_id: str | None = None
    amount: Decimal | None = None
    currency: str | None = None
    reason: str | None = None
    # Our invoice number as the wallet echoes it (invoice_number), checked against the payment.
    invoice: str | None = None
    # The wallet number that paid, when the wallet tells it unmasked (bKash's customerMsisdn): the
    # payment's sender_number, as an SMS's sender is.
    sender_number: str | None = None


def provider_api(provider):
    """The module speaking `provider`'s merchant API; KeyError for a provider without one."""
    return import_module(PROVIDER_MODULES[provider], __name__)


def invoice_number(payment):
    """Our payment's id as the wallets carry it (merchantInvoiceNumber, orderId): 20 letters and
    digits."""
    return payment.public_id.replace("-", "")[:20]


def trip_charge(payment, method):
    """What a trip through `method` asks: {fee, amount_paid} (the method's fee on amount_bdt, and
    the taka the customer pays through the wallet); WalletRefused without a taka amount."""
    if payment.amount_bdt is None:
        raise WalletRefused("This payment has no taka amount, so a wallet cannot take it.")
    return fee_charged(payment, fee_for(method, payment.amount_bdt))


def record_started(payment, method, provider_payment_id, charged):
    """The wallet_payments row of a payment sent to the wallet's page for `charged` (trip_charge's);
    committed."""
    now = utcnow()
    row = WalletPayment(
        payment_id=payment.id,
        method_id=method.id,
        provider=method.provider,
        provider_payment_id=str(provider_payment_id),
        state=WALLET_STARTED,
        amount=charged["amount_paid"],
        fee=charged["fee"],
        created_at=now,
        updated_at=now,
    )
    db.session.add(row)
    commit_work()
    return row


def move_wallet_payment(row, to_state, last_error=None, from_states=(WALLET_STARTED,), **values):
    """Guarded UPDATE of a wallet payment's state (and `values`); False when another request moved
    it first."""
    values.update(state=to_state, updated_at=utcnow())
    if last_error is not None:
        values["last_error"] = last_error[:255]
    moved = db.session.execute(
        db.update(WalletPayment)
        .where(WalletPayment.id == row.id, WalletPayment.state.in_(from_states))
        .values(**values)
    ).rowcount
    return moved == 1


def note_error(row, message):
    """Keep the last thing that went wrong on a started wallet payment (for the operator)."""
    db.session.execute(
        db.update(WalletPayment)
        .where(WalletPayment.id == row.id)
        .values(last_error=message[:255], updated_at=utcnow())
    )
    commit_work()


def latest_wallet_payment(payment, provider_payment_id=None):
    """The payment's newest wallet payment (the one with `provider_payment_id` when given)."""
    query = db.select(WalletPayment).where(WalletPayment.payment_id == payment.id)
    if provider_payment_id is not None:
        query = query.where(WalletPayment.provider_payment_id == str(provider_payment_id))
    return db.session.execute(query.order_by(WalletPayment.id.desc()).limit(1)).scalar_one_or_none()


def trip_amount(payment, row):
    """The taka `row` asked for (its own, fixed at its start; the payment's for a row without)."""
    return payment.amount_paid if row.amount is None else row.amount


def outcome_mismatch(payment, outcome, row):
    """Why a wallet's "paid" for trip `row` does not pay this payment (the trip's amount, currency,
    invoice), or None."""
    if outcome.currency != BDT:
        return f"The wallet answered in {outcome.currency!r}, not taka."
    asked = trip_amount(payment, row)
    if outcome.amount is None or Decimal(str(outcome.amount)) != asked:
        return f"The wallet was paid {outcome.amount}, not {asked}."
    if outcome.invoice is not None and outcome.invoice != invoice_number(payment):
        return "The wallet's answer names another payment."
    if not outcome.provider_trx_id:
        return "The wallet's answer has no transaction id."
    return None


# What a wallet_payments amount column holds (Money: integer paisa in a BIGINT).
MOST_TAKA = Decimal("1000000000000")


def paid_values(outcome):
    """The columns a "paid" answer fills on its trip: what the wallet took and its trx id (an
    amount that is not a sum of taka is not kept)."""
    try:
        paid = Decimal(str(outcome.amount)) if outcome.amount is not None else None
    except ArithmeticError:
        paid = None
    if paid is not None and not (paid.is_finite() and 0 < paid < MOST_TAKA):
        paid = None
    return {
        "paid_amount": paid,
        "provider_trx_id": (outcome.provider_trx_id or None) and str(outcome.provider_trx_id)[:100],
    }


def mark_unapplied(payment, row, outcome, reason):
    """A "paid" that does not pay `payment`: the trip becomes unapplied with the reason, and the
    merchant is told once (the guarded move decides who tells); commits."""
    if not move_wallet_payment(row, WALLET_UNAPPLIED, reason, **paid_values(outcome)):
        db.session.rollback()
        return
    db.session.refresh(row)
    notify_wallet_unapplied(payment, row, provider_name(row.provider))
    commit_work()


def settle_wallet_outcome(payment, outcome, row=None):
    """Act on the wallet's answer for `row` (default: the payment's newest wallet payment): a paid
    answer that matches completes the payment once (complete_payment: webhooks, events, links,
    invoices, IPNs) with the trip's fee and amount_paid, a cancelled or failed one closes the wallet
    payment; commits. Returns the outcome as acted on: a "paid" that does not pay the payment
    (another amount, another payment's, our payment closed first) becomes UNAPPLIED with the
    reason, and the trip `unapplied` for the merchant (unapplied.py).
    """
    row = row or latest_wallet_payment(payment)
    if row is None or outcome.status == PENDING:
        return outcome
    if outcome.status == PAID:
        reason = outcome_mismatch(payment, outcome, row)
        if reason is None and payment.status not in OPEN_STATUSES:
            reason = f"Paid after the payment was {payment.status}: refund it."
        if reason is not None:
            mark_unapplied(payment, row, outcome, reason)
            return Outcome(UNAPPLIED, reason=reason)
        # The guard: of two requests settling one wallet payment (a replayed callback, the
        # periodic settle), only the one that moves it from started completes the payment.
        if not move_wallet_payment(row, WALLET_SETTLED, **paid_values(outcome)):
            db.session.rollback()
            return outcome
        charged = {"fee": row.fee, "amount_paid": row.amount} if row.amount is not None else None
        complete_payment(
            payment,
            provider=row.provider,
            provider_trx_id=outcome.provider_trx_id,
            charged=charged,
            sender_number=outcome.sender_number,
        )
        return outcome
    to_state = WALLET_CANCELLED if outcome.status == CANCELLED else WALLET_FAILED
    if move_wallet_payment(row, to_state, outcome.reason or outcome.status):
        commit_work()
    else:
        db.session.rollback()
    return outcome


def method_of(row):
    """The payment method a wallet payment went through."""
    return db.session.get(PaymentMethod, row.method_id)


def start_wallet_payment(payment, method, callback_url):
    """Send a created payment to the wallet behind `method`: an earlier trip still open is asked
    for first (it may have paid), then the provider's start for the method's fee (kept on the
    trip: the payment records it only when that trip pays); the URL of the wallet's page."""
    previous = latest_wallet_payment(payment)
    if previous is not None and previous.state == WALLET_STARTED:
        outcome = provider_api(previous.provider).query(payment, method_of(previous), row=previous)
        settle_wallet_outcome(payment, outcome, previous)
        db.session.refresh(payment)
    if payment.status != PAYMENT_CREATED:
        raise invalid_state(f"A {payment.status} payment cannot be sent to a wallet.")
    charged = trip_charge(payment, method)
    return provider_api(method.provider).start(payment, method, callback_url, charged)


def finish_wallet_payment(payment, args):
    """The customer is back from the wallet: ask the wallet ourselves (the args only name the
    wallet's payment) and settle; the Outcome as acted on."""
    # The trip the callback names, if it is one of this payment's (an older tab), else the newest.
    named = args.get("paymentID") or args.get("payment_ref_id")
    row = (latest_wallet_payment(payment, named) if named else None) or latest_wallet_payment(
        payment
    )
    if row is None:
        return Outcome(FAILED, reason="This payment was never sent to a wallet.")
    if row.state == WALLET_SETTLED:
        return Outcome(PAID)
    if row.state != WALLET_STARTED:
        said = {WALLET_CANCELLED: CANCELLED, WALLET_FAILED: FAILED}.get(row.state, UNAPPLIED)
        return Outcome(said, reason=row.last_error)
    outcome = provider_api(row.provider).finish(payment, method_of(row), args, row=row)
    return settle_wallet_outcome(payment, outcome, row)


def left_since(model, state, before, *where):
    """The periodic jobs' batch: up to 100 rows of `model` (a wallet payment or refund) still in
    `state` and untouched since `before` (and meeting `where`), oldest first.

    The job must be able to act on every row it is given: a row it skips stays at the front of the
    batch for good, and 100 of them would hide every other row.
    """
    with unit_of_work():
        query = (
            db.select(model)
            .where(model.state == state, model.updated_at <= before, *where)
            .order_by(model.id)
            .limit(100)
        )
        return db.session.execute(query).scalars().all()


def settle_started_wallet_payments(now=None):
    """The periodic settle: wallet payments left `started` over SETTLE_AFTER are asked for with the
    wallet's status query and settled; an unpaid one whose payment closed is closed too."""
    settled = []
    for row in left_since(WalletPayment, WALLET_STARTED, (now or utcnow()) - SETTLE_AFTER):
        payment = db.session.get(Payment, row.payment_id)
        try:
            outcome = provider_api(row.provider).query(payment, method_of(row), row=row)
            if outcome.status == PENDING and payment.status not in OPEN_STATUSES:
                outcome = Outcome(CANCELLED, reason=f"The payment was {payment.status}.")
            settled.append(settle_wallet_outcome(payment, outcome, row))
        except DomainError as error:
            # The wallet out of reach, or the payment closed meanwhile (the next round sees it):
            # one trip's trouble never stops the others.
            db.session.rollback()
            note_error(row, error.message)
    return settled


def completing_wallet_payment(payment_id):
    """The wallet trip that completed the payment, or None when no wallet's API paid it (money that
    did not apply is `unapplied`, returned from its own page: unapplied.py)."""
    return db.session.execute(
        db.select(WalletPayment)
        .where(WalletPayment.payment_id == payment_id, WalletPayment.state == WALLET_SETTLED)
        .order_by(WalletPayment.id)
        .limit(1)
    ).scalar_one_or_none()
