"""Nagad's merchant checkout for an API method (docs/wallet-apis.md): initialize and complete to
send the customer to Nagad's page, verify on our side when they come back or when the periodic
settle asks, and Nagad's purchase cancel for refunds. The wire protocol is nagad_wire.py.
"""

import ipaddress
import secrets
from datetime import timedelta
from decimal import Decimal, InvalidOperation

from flask import current_app, has_request_context, request

from ..answer_commit import commit_work
from ..extensions import db
from ..payments.amounts import in_taka
from ..payments.models.payment import Transaction
from . import (
    BDT,
    CANCELLED,
    FAILED,
    PAID,
    PENDING,
    Outcome,
    WalletRefused,
    WalletUnavailable,
    invoice_number,
    latest_wallet_payment,
    move_wallet_payment,
    record_started,
)
from . import nagad_wire as wire
from .credentials import opened
from .http import WalletTimeout
from .models import WALLET_FAILED, WALLET_SETTLED, WalletPayment

SECRET_FIELDS = ("merchant_id", "merchant_private_key", "wallet_public_key")
# Nagad's checkout statuses (verify's `status`) as ours; any other is still in progress.
STATUSES = {
    "Success": PAID,
    "Aborted": CANCELLED,
    "Cancelled": CANCELLED,
    "Failed": FAILED,
    "Fraud": FAILED,
    "InvalidRequest": FAILED,
    "UnKnownFailed": FAILED,
}
DHAKA = timedelta(hours=6)


def timeout():
    """(connect, read) seconds for one call to Nagad (WALLET_HTTP_TIMEOUT, as for every wallet)."""
    return (5, float(current_app.config["WALLET_HTTP_TIMEOUT"]))


def merchant_keys(method):
    """The method's NagadKeys, opened for this call only; WalletUnavailable when unusable."""
    base_url, values = opened(method)
    try:
        return wire.load_keys(
            base_url,
            values["merchant_id"],
            values["merchant_private_key"],
            values["wallet_public_key"],
        )
    except (KeyError, ValueError) as error:
        field = str(error).split(":", 1)[0].strip("'")
        raise WalletUnavailable(f"The Nagad credentials are unusable ({field}).") from None


def in_our_words(error):
    """A Nagad failure as the framework's error: unknown outcome or a refusal, no secret."""
    if isinstance(error, wire.NagadUnreachable):
        return WalletUnavailable(f"Nagad: {error.message}")
    if isinstance(error, wire.NagadAnswerRefused):
        return WalletUnavailable(f"Nagad's answer was refused: {error.message}")
    return WalletRefused(f"Nagad: {error.message}")


def ipaddress_v4(text):
    """Whether `text` is an IPv4 address."""
    try:
        return ipaddress.ip_address(text).version == 4
    except ValueError:
        return False


def customer_ip():
    """The customer's address for X-KM-IP-V4 (ours outside a request)."""
    address = request.remote_addr if has_request_context() else None
    # The header is IPv4 by name; Nagad's samples send the loopback when there is none.
    return address if address and ipaddress_v4(address) else None


def order_prefix(payment):
    """The part of every Nagad orderId that names our payment: its invoice number's first 14
    characters."""
    return invoice_number(payment)[:14]


def new_order_id(payment):
    """A fresh Nagad orderId for a trip of the payment (20 letters and digits): Nagad refuses an
    orderId it has seen, even one whose initialize answer we refused, so each trip draws one."""
    return f"{order_prefix(payment)}{secrets.token_hex(3)}"


def names_our_order(payment, order):
    """Whether Nagad's orderId is one of ours for this payment."""
    return isinstance(order, str) and len(order) == 20 and order.startswith(order_prefix(payment))


def start(payment, method, callback_url, charged):
    """Open a Nagad checkout for the trip's taka (`charged`) and record it: the URL of Nagad's
    page."""
    keys = merchant_keys(method)
    amount = charged["amount_paid"]
    order = new_order_id(payment)
    try:
        reference, challenge = wire.initialize(keys, order, customer_ip(), timeout())
    except wire.NagadError as error:
        raise in_our_words(error) from None
    # Recorded before complete: Nagad now knows this orderId, and the next trip needs another.
    row = record_started(payment, method, reference, charged)
    try:
        return wire.complete(
            keys,
            reference,
            order,
            amount,
            challenge,
            callback_url,
            {"payment": payment.public_id},
            customer_ip(),
            timeout(),
        )
    except wire.NagadError as error:
        if move_wallet_payment(row, WALLET_FAILED, error.message):
            commit_work()
        raise in_our_words(error) from None


def outcome_of(payment, row, keys, answer):
    """Our Outcome from Nagad's verify answer for `row`; a paid answer names our order, merchant
    and reference or is told apart (the framework then refuses it)."""
    status = STATUSES.get(str(answer.get("status")), PENDING)
    if status != PAID:
        return Outcome(status, reason=f"Nagad: {answer.get('status') or 'no status'}")
    try:
        amount = Decimal(str(answer.get("amount")))
    except InvalidOperation:
        amount = None
    ours = (
        names_our_order(payment, answer.get("orderId"))
        and answer.get("paymentRefId") in (None, row.provider_payment_id)
        and str(answer.get("merchantId")) == keys.merchant_id
    )
    return Outcome(
        PAID,
        provider_trx_id=answer.get("issuerPaymentRefNo") or None,
        amount=amount,
        currency=BDT,
        reason=None,
        invoice=invoice_number(payment) if ours else f"Nagad order {answer.get('orderId')!r}",
    )


def verified(payment, method, row):
    """Nagad's verify of our own reference for `row`, as an Outcome."""
    keys = merchant_keys(method)
    try:
        answer = wire.verify(keys, row.provider_payment_id, timeout())
    except wire.NagadError as error:
        raise in_our_words(error) from None
    return outcome_of(payment, row, keys, answer)


def finish(payment, method, args, row=None):
    """The customer is back: verify the trip's own Nagad reference (`row`, default the newest).
    The callback's payment_ref_id and status decide nothing (a forged one names nothing we act
    on)."""
    return query(payment, method, row=row)


def query(payment, method, row=None):
    """The periodic settle: verify the Nagad reference of `row` (default: the newest trip)."""
    row = row or latest_wallet_payment(payment)
    if row is None:
        return Outcome(FAILED, reason="This payment was never sent to Nagad.")
    return verified(payment, method, row)


def refund_in_taka(payment, amount, original):
    """The taka of refunding `amount` of a payment in another currency: what all its refunds with
    this one come to at its rate, less what those before came to.

    Each converted alone, rounded up to the paisa, parts would add up to more than the whole: the
    last one refused, or the fee (taka, never refunded: docs/methods.md) returned. Converted this
    way, a refund in parts returns exactly amount_bdt, and never more than the trip took.
    """
    # Our refund's attempt is pending (refunds.py:reserve_attempt), so no other refund of the
    # payment is recorded until this one is: this is what that guard read.
    refunded = db.session.execute(
        db.select(Transaction.amount_refunded).where(Transaction.payment_id == payment.id)
    ).scalar_one()
    rate = payment.exchange_rate
    ceiling = min(payment.amount_bdt or original, original)
    taka = min(in_taka(refunded + amount, rate), ceiling) - in_taka(refunded, rate)
    return max(taka, Decimal("0.00"))


def refund(payment, method, amount, reason, row=None, amount_is_taka=False):
    """Nagad's purchase cancel for `amount` of the payment's settled Nagad trip (`row`, or the
    newest settled one; or an unapplied trip, `amount` then in taka): Nagad's id for the refund;
    WalletRefused with Nagad's message when it says no."""
    row = (
        row
        or db.session.execute(
            db.select(WalletPayment)
            .where(WalletPayment.payment_id == payment.id, WalletPayment.state == WALLET_SETTLED)
            .order_by(WalletPayment.id.desc())
            .limit(1)
        ).scalar_one_or_none()
    )
    if row is None:
        raise WalletRefused("This payment was not paid through Nagad.")
    keys = merchant_keys(method)
    taka = Decimal(amount)
    # What the trip took (a row older than 0025: its payment's amount_paid).
    original = row.paid_amount or row.amount or payment.amount_paid
    if payment.currency != BDT and payment.exchange_rate is not None and not amount_is_taka:
        taka = refund_in_taka(payment, taka, original)
    try:
        # Nagad's cancel names the order: read it back from Nagad's own record (a safe read).
        paid = wire.verify(keys, row.provider_payment_id, timeout())
    except wire.NagadError as error:
        raise in_our_words(error) from None
    if paid.get("status") != "Success" or not names_our_order(payment, paid.get("orderId")):
        raise WalletRefused("Nagad does not hold this payment as paid.")
    try:
        answer = wire.cancel_purchase(
            keys,
            row.provider_payment_id,
            paid["orderId"],
            (row.created_at + DHAKA).strftime("%Y%m%d"),
            original,
            taka,
            "RF" + secrets.token_hex(6).upper(),
            (reason or "Refund")[:100],
            timeout(),
        )
    except wire.NagadUnreachable as error:
        if error.reason == "timeout":  # sent, no answer: Nagad may have refunded
            raise WalletTimeout(f"Nagad: {error.message}") from None
        raise in_our_words(error) from None
    except wire.NagadError as error:
        raise in_our_words(error) from None
    if str(answer.get("status", "Success")) != "Success":
        raise WalletRefused(f"Nagad: {answer.get('message') or answer.get('status')}")
    return str(answer.get("cancelTrxId") or answer.get("referenceNo") or row.provider_payment_id)


def check_credentials(method):
    """(ok, message): whether Nagad takes our signature and signs its answer with the key on
    file, by initializing a throwaway order (Nagad lets it lapse)."""
    try:
        keys = merchant_keys(method)
    except WalletUnavailable as error:
        return False, error.message
    try:
        wire.initialize(keys, "CHK" + secrets.token_hex(8).upper(), customer_ip(), timeout())
    except wire.NagadAnswerRefused as error:
        return False, f"Nagad answered, but {error.message} Check the Nagad public key."
    except wire.NagadUnreachable as error:
        return False, f"Nagad could not be reached at {keys.base_url}: {error.message}"
    except wire.NagadError as error:
        hint = ""
        if "signature" in f"{error.reason} {error.message}".lower():
            # Nagad cannot open what we sealed, or our signature fails: one of the two keys.
            hint = (
                " Check that the merchant private key is the one registered with Nagad and that"
                " the Nagad public key is Nagad's own."
            )
        return False, f"Nagad refused the credentials: {error.reason}: {error.message}.{hint}"
    return True, "Nagad accepted the merchant id and key, and its answer is signed by its key."
