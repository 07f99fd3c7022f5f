"""bKash's tokenized checkout (docs/wallet-apis.md): grant and refresh the id token, create,
execute, query and refund a payment, from bKash's public API documents.

The callback's query string only names a payment: we execute our own stored paymentID and believe
bKash's answer. Only the status query is repeated on a timeout (bKash documents it as safe); an
execute that times out is left `started` for the periodic settle, which asks by query.
"""

from decimal import Decimal, InvalidOperation
from urllib.parse import urlsplit

from flask import current_app

from ..extensions import db
from ..payments.methods import normalize_mobile_number
from ..payments.models.payment import Refund, Transaction
from . import (
    CANCELLED,
    FAILED,
    PAID,
    PENDING,
    Outcome,
    WalletRefused,
    WalletUnavailable,
    invoice_number,
    latest_wallet_payment,
    record_started,
)
from .credentials import opened
from .http import WalletTimeout, post_json
from .models import WALLET_SETTLED, WALLET_UNAPPLIED
from .tokens import fresh, load_token, renewed_once, store_token

SECRET_FIELDS = ("app_key", "app_secret", "username", "password")
GRANT = "/tokenized/checkout/token/grant"
REFRESH = "/tokenized/checkout/token/refresh"
CREATE = "/tokenized/checkout/create"
EXECUTE = "/tokenized/checkout/execute"
STATUS = "/tokenized/checkout/payment/status"
REFUND = "/tokenized/checkout/payment/refund"
SUCCESS = "0000"
MODE_CHECKOUT = "0011"  # a payment without an agreement
STATUS_ATTEMPTS = 3  # the status query is safe to repeat
# bKash's words for a payment's state (transactionStatus), as ours.
TRANSACTION_STATES = {
    "Completed": PAID,
    "Initiated": PENDING,
    "Pending Authorized": PENDING,
    "Authorized": PENDING,
    "Cancelled": CANCELLED,
    "Expired": CANCELLED,
}


def timeout():
    """(connect, read) seconds for one call to bKash (WALLET_HTTP_TIMEOUT, default 30 s read)."""
    return (5, float(current_app.config["WALLET_HTTP_TIMEOUT"]))


def refusal(answer):
    """bKash's reason in an answer (statusMessage or errorMessage), for the customer and the log."""
    message = answer.get("statusMessage") or answer.get("errorMessage") or answer.get("message")
    code = answer.get("statusCode") or answer.get("errorCode")
    return f"{message or 'no reason given'}" + (f" ({code})" if code else "")


def succeeded(answer):
    """Whether bKash said yes: statusCode 0000 (older answers: no errorCode)."""
    if "statusCode" in answer:
        return answer["statusCode"] == SUCCESS
    return answer.get("_http_status") == 200 and not answer.get("errorCode")


def auth_headers(secrets):
    """The headers of the token calls: bKash's username and password."""
    return {"username": secrets["username"], "password": secrets["password"]}


def grant_token(method, base_url, secrets):
    """A new id token from bKash (grant), stored for every process; WalletRefused when bKash
    refuses the credentials."""
    answer = post_json(
        base_url + GRANT,
        {"app_key": secrets["app_key"], "app_secret": secrets["app_secret"]},
        auth_headers(secrets),
        timeout(),
    )
    if not answer.get("id_token") or not succeeded(answer):
        raise WalletRefused(f"bKash refused the credentials: {refusal(answer)}")
    return store_token(
        method.id, answer["id_token"], answer.get("refresh_token"), answer.get("expires_in", 3600)
    )


def refreshed_token(method, base_url, secrets, stored):
    """The stored token refreshed with its refresh token, stored for all; None when bKash says no
    (then a grant)."""
    answer = post_json(
        base_url + REFRESH,
        {
            "app_key": secrets["app_key"],
            "app_secret": secrets["app_secret"],
            "refresh_token": stored["refresh_token"],
        },
        auth_headers(secrets),
        timeout(),
    )
    if not answer.get("id_token") or not succeeded(answer):
        return None
    return store_token(
        method.id,
        answer["id_token"],
        answer.get("refresh_token") or stored["refresh_token"],
        answer.get("expires_in", 3600),
    )


def id_token(method, base_url, secrets, renew=False):
    """The id token to call bKash with: the shared one while fresh, else refreshed, else granted,
    by one process for all (tokens.renewed_once); `renew` when bKash refused the one we had."""
    stored = load_token(method.id)
    if fresh(stored) and not renew:
        return stored["token"]

    def renewed(latest):
        if latest is not None and latest.get("refresh_token"):
            refreshed = refreshed_token(method, base_url, secrets, latest)
            if refreshed is not None:
                return refreshed
        return grant_token(method, base_url, secrets)

    refused = stored["token"] if renew and stored is not None else None
    return renewed_once(method.id, renewed, refused)["token"]


def call(method, path, body):
    """POST to one of bKash's payment endpoints with the id token; a token bKash refuses (HTTP 401
    or 403, nothing done) is renewed and the call made once more."""
    base_url, secrets = opened(method)
    for renew in (False, True):
        token = id_token(method, base_url, secrets, renew=renew)
        answer = post_json(
            base_url + path,
            body,
            {"Authorization": token, "X-APP-Key": secrets["app_key"]},
            timeout(),
        )
        if answer.get("_http_status") not in (401, 403):
            return answer
    raise WalletUnavailable("bKash refused our id token twice.")


def payer_reference(payment):
    """What bKash pre-fills as the customer's wallet number: their phone, else our invoice."""
    return (payment.customer_phone or invoice_number(payment))[:20]


def start(payment, method, callback_url, charged):
    """Create the payment at bKash for the trip's taka (`charged`) and record it; the bkashURL to
    send the customer to."""
    amount = charged["amount_paid"]
    answer = call(
        method,
        CREATE,
        {
            "mode": MODE_CHECKOUT,
            "payerReference": payer_reference(payment),
            "callbackURL": callback_url,
            "amount": f"{amount:.2f}",
            "currency": "BDT",
            "intent": "sale",
            "merchantInvoiceNumber": invoice_number(payment),
        },
    )
    if not succeeded(answer) or not answer.get("paymentID") or not answer.get("bkashURL"):
        raise WalletRefused(f"bKash did not create the payment: {refusal(answer)}")
    if urlsplit(answer["bkashURL"]).scheme not in ("https", "http"):
        raise WalletUnavailable("bKash answered a payment page that is not a web address.")
    record_started(payment, method, answer["paymentID"], charged)
    return answer["bkashURL"]


def decimal_or_none(value):
    """bKash's amount string as a Decimal, None when it is not one."""
    try:
        return Decimal(str(value))
    except (InvalidOperation, TypeError):
        return None


def paid_outcome(answer):
    """A Completed answer (execute or status) as an Outcome, for settle_wallet_outcome to check."""
    return Outcome(
        PAID,
        provider_trx_id=answer.get("trxID"),
        amount=decimal_or_none(answer.get("amount")),
        currency=answer.get("currency"),
        invoice=answer.get("merchantInvoiceNumber"),
        sender_number=normalize_mobile_number(answer.get("customerMsisdn")),
    )


def outcome_of(answer):
    """A status answer (or an execute's) in our words."""
    if not succeeded(answer):
        return Outcome(FAILED, reason=refusal(answer))
    status = TRANSACTION_STATES.get(answer.get("transactionStatus"), FAILED)
    if status == PAID:
        return paid_outcome(answer)
    return Outcome(status, reason=f"bKash: {answer.get('transactionStatus')}")


def finish(payment, method, args, row=None):
    """The customer came back (?paymentID=…&status=success|failure|cancel): execute our own
    paymentID on success, confirm anything else by the status query; never the query string's
    word alone."""
    row = row or latest_wallet_payment(payment)
    said = args.get("status")
    if said == "success" and args.get("paymentID") == row.provider_payment_id:
        try:
            answer = call(method, EXECUTE, {"paymentID": row.provider_payment_id})
        except WalletTimeout:
            return Outcome(PENDING, reason="bKash did not answer the execute in time.")
        if succeeded(answer) and answer.get("transactionStatus") == "Completed":
            return paid_outcome(answer)
        if succeeded(answer):
            return outcome_of(answer)
        # Refused: already executed (a replay, a second tab) or not paid: bKash's state decides.
    outcome = query(payment, method, row)
    if outcome.status == PENDING and said in ("cancel", "failure"):
        return Outcome(
            CANCELLED if said == "cancel" else FAILED,
            reason="Cancelled in bKash." if said == "cancel" else "bKash: the payment failed.",
        )
    return outcome


def query(payment, method, row=None):
    """bKash's word on a trip of the payment (default: its latest), by the status query, repeated
    on a timeout."""
    row = row or latest_wallet_payment(payment)
    for attempt in range(STATUS_ATTEMPTS):
        try:
            answer = call(method, STATUS, {"paymentID": row.provider_payment_id})
            break
        except WalletTimeout:
            if attempt == STATUS_ATTEMPTS - 1:
                raise
    return outcome_of(answer)


def refund(payment, method, amount, reason, row=None, amount_is_taka=False):
    """Refund `amount` (taka) of a trip bKash paid (`row`: the settled one, or an unapplied one);
    bKash's refund id, WalletRefused with its reason."""
    row = row or latest_wallet_payment(payment)
    trx_id = row and (row.provider_trx_id or payment.provider_trx_id)
    if row is None or row.state not in (WALLET_SETTLED, WALLET_UNAPPLIED) or not trx_id:
        raise WalletRefused("This payment was not paid through bKash's API.")
    if payment.currency != "BDT" and not amount_is_taka:
        raise WalletRefused("bKash refunds taka: refund this payment by hand.")
    answer = call(
        method,
        REFUND,
        {
            "paymentID": row.provider_payment_id,
            "amount": f"{Decimal(amount):.2f}",
            "trxID": trx_id,
            "sku": invoice_number(payment),
            "reason": (reason or "Refund")[:255],
        },
    )
    if answer.get("transactionStatus") != "Completed" or not answer.get("refundTrxID"):
        raise WalletRefused(f"bKash refused the refund: {refusal(answer)}")
    return answer["refundTrxID"]


def refund_status(payment, method, attempt, row):
    """bKash's word on a refund sent without an answer (`attempt`, wallet_refunds): its refundTrxID
    when bKash made it, None when bKash says it has none; WalletUnavailable while unknown.

    bKash's refund status query is the refund call with only paymentID and trxID (v1.2.0-beta); it
    answers the payment's latest refund, so one whose id is already recorded here is not ours.
    """
    answer = call(
        method, REFUND, {"paymentID": row.provider_payment_id, "trxID": payment.provider_trx_id}
    )
    if answer.get("transactionStatus") == "Completed" and answer.get("refundTrxID"):
        ours = (
            answer["refundTrxID"] not in recorded_refund_ids(payment)
            and decimal_or_none(answer.get("amount")) == attempt.amount
        )
        return answer["refundTrxID"] if ours else None
    if (
        answer.get("_http_status") == 200
        and "transactionStatus" not in answer
        and (answer.get("statusCode", SUCCESS) != SUCCESS or answer.get("errorCode"))
    ):
        return None  # bKash answered about this payment: no refund of it
    raise WalletUnavailable(f"bKash did not say whether it refunded: {refusal(answer)}")


def recorded_refund_ids(payment):
    """bKash's refund ids of the payment's refunds recorded here."""
    return set(
        db.session.execute(
            db.select(Refund.provider_refund_id)
            .join(Transaction, Refund.transaction_id == Transaction.id)
            .where(Transaction.payment_id == payment.id, Refund.provider_refund_id.is_not(None))
        ).scalars()
    )


def check_credentials(method):
    """(ok, message): whether bKash grants a token for the method's credentials."""
    try:
        base_url, secrets = opened(method)
        grant_token(method, base_url, secrets)
    except WalletRefused as error:
        return False, error.message
    except WalletUnavailable as error:
        return False, f"bKash could not be reached: {error.message}"
    return True, "bKash granted a token: the credentials work."
