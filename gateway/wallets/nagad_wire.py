"""Nagad's merchant checkout on the wire: RSA sealing and signing, initialize, complete, verify and
the purchase cancel (refund), as Nagad's merchant API documents them. No database here.

Nagad's scheme: every request's `sensitiveData` is the JSON text encrypted (RSA, PKCS#1 v1.5)
with Nagad's public key, and `signature` is SHA256withRSA of the same text by the merchant's
private key; Nagad answers the same way with the roles swapped. The verify answer is plain JSON
fetched by us over TLS, never read from the customer's callback.
"""

import base64
import json
import secrets
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal

import requests
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from gateway.clock import utcnow
from gateway.money import format_amount

API_VERSION = "v-0.2.0"
CLIENT_TYPE = "PC_WEB"
CURRENCY_CODE = "050"  # ISO 4217 numeric for BDT, the only currency Nagad takes
DHAKA = timedelta(hours=6)  # Nagad's datetimes are Bangladesh time, which has no DST
TIMEOUT = (5, 20)  # (connect, read) seconds
VERIFY_ATTEMPTS = 3  # verify is a GET that changes nothing: safe to repeat


class NagadError(Exception):
    """Nagad refused or could not be reached; `reason` is Nagad's code (or ours), `message` is
    safe to show (never a secret)."""

    def __init__(self, reason, message):
        super().__init__(f"{reason}: {message}")
        self.reason = reason
        self.message = message


class NagadUnreachable(NagadError):
    """A timeout or a broken connection: the outcome is unknown, ask again later."""


class NagadAnswerRefused(NagadError):
    """An answer that is not sealed for us or not signed by Nagad's key."""


@dataclass(frozen=True)
class NagadKeys:
    """One merchant's Nagad account: API root, merchant id and the two RSA keys."""

    base_url: str
    merchant_id: str
    merchant_key: rsa.RSAPrivateKey
    wallet_key: rsa.RSAPublicKey

    def __repr__(self):
        return f"NagadKeys(base_url={self.base_url!r}, merchant_id={self.merchant_id!r})"


def _key_bytes(text):
    """PEM bytes of a key pasted as PEM or as Nagad hands it out (bare base64, no armour)."""
    text = (text or "").strip()
    if text.startswith("-----BEGIN"):
        return text.encode(), True
    try:
        return base64.b64decode("".join(text.split()), validate=True), False
    except ValueError as error:
        raise ValueError("not a PEM key nor base64") from error


def load_private_key(text):
    """The merchant's RSA private key from PEM or bare base64 (PKCS#8 or PKCS#1)."""
    data, is_pem = _key_bytes(text)
    try:
        if is_pem:
            key = serialization.load_pem_private_key(data, password=None)
        else:
            key = serialization.load_der_private_key(data, password=None)
    except (ValueError, TypeError) as error:
        raise ValueError("not an RSA private key") from error
    if not isinstance(key, rsa.RSAPrivateKey):
        raise ValueError("not an RSA private key")
    return key


def load_public_key(text):
    """Nagad's RSA public key from PEM or bare base64 (SubjectPublicKeyInfo)."""
    data, is_pem = _key_bytes(text)
    try:
        if is_pem:
            key = serialization.load_pem_public_key(data)
        else:
            key = serialization.load_der_public_key(data)
    except (ValueError, TypeError) as error:
        raise ValueError("not an RSA public key") from error
    if not isinstance(key, rsa.RSAPublicKey):
        raise ValueError("not an RSA public key")
    return key


def load_keys(base_url, merchant_id, merchant_private_key, wallet_public_key):
    """NagadKeys from the stored texts; ValueError names the bad one without echoing it."""
    try:
        merchant_key = load_private_key(merchant_private_key)
    except ValueError as error:
        raise ValueError(f"merchant_private_key: {error}") from None
    try:
        wallet_key = load_public_key(wallet_public_key)
    except ValueError as error:
        raise ValueError(f"wallet_public_key: {error}") from None
    return NagadKeys(base_url.rstrip("/"), str(merchant_id), merchant_key, wallet_key)


def seal(text, public_key):
    """`text` encrypted for the holder of `public_key` (RSA PKCS#1 v1.5), base64."""
    return base64.b64encode(public_key.encrypt(text.encode(), padding.PKCS1v15())).decode()


def unseal(sealed, private_key):
    """The text inside a base64 RSA PKCS#1 v1.5 ciphertext; ValueError when it is not ours."""
    try:
        return private_key.decrypt(base64.b64decode(sealed, validate=True), padding.PKCS1v15())
    except (ValueError, TypeError) as error:
        raise ValueError("cannot decrypt") from error


def sign(text, private_key):
    """SHA256withRSA (PKCS#1 v1.5) signature of `text`, base64."""
    return base64.b64encode(
        private_key.sign(text.encode(), padding.PKCS1v15(), hashes.SHA256())
    ).decode()


def signature_holds(text, signature, public_key):
    """Whether `signature` is SHA256withRSA of `text` by the key behind `public_key`."""
    if isinstance(text, str):
        text = text.encode()
    try:
        public_key.verify(
            base64.b64decode(signature or "", validate=True),
            text,
            padding.PKCS1v15(),
            hashes.SHA256(),
        )
    except (InvalidSignature, ValueError, TypeError):
        return False
    return True


def sealed_request(fields, keys):
    """(sensitiveData, signature) for `fields`: sealed for Nagad, signed by the merchant."""
    text = json.dumps(fields, separators=(",", ":"))
    return seal(text, keys.wallet_key), sign(text, keys.merchant_key)


def open_answer(answer, keys):
    """The dict inside a sealed, signed answer from Nagad; NagadAnswerRefused otherwise."""
    sealed, signature = answer.get("sensitiveData"), answer.get("signature")
    if not isinstance(sealed, str) or not isinstance(signature, str) or not signature:
        raise NagadAnswerRefused("unsigned_answer", "Nagad's answer is not sealed and signed.")
    try:
        text = unseal(sealed, keys.merchant_key)
    except ValueError:
        raise NagadAnswerRefused(
            "undecryptable_answer", "Nagad's answer is not sealed for this merchant key."
        ) from None
    if not signature_holds(text, signature, keys.wallet_key):
        raise NagadAnswerRefused(
            "bad_signature", "Nagad's answer is not signed by the Nagad public key on file."
        )
    try:
        fields = json.loads(text)
    except ValueError:
        fields = None
    if not isinstance(fields, dict):
        raise NagadAnswerRefused("malformed_answer", "Nagad's sealed answer is not JSON.")
    return fields


def dhaka_datetime(pattern="%Y%m%d%H%M%S"):
    """Now in Bangladesh time, as Nagad writes it."""
    return (utcnow() + DHAKA).strftime(pattern)


def headers(client_ip):
    """The X-KM headers Nagad expects on every call."""
    return {
        "Content-Type": "application/json",
        "Accept": "application/json",
        "X-KM-Api-Version": API_VERSION,
        "X-KM-IP-V4": client_ip or "127.0.0.1",
        "X-KM-Client-Type": CLIENT_TYPE,
    }


def _answer(response):
    """The JSON body of Nagad's answer, or NagadError with Nagad's reason and message."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if not isinstance(body, dict):
        raise NagadError("bad_answer", f"Nagad answered HTTP {response.status_code} without JSON.")
    if response.status_code >= 400 or ("reason" in body and "sensitiveData" not in body):
        raise NagadError(
            str(body.get("reason") or f"http_{response.status_code}"),
            str(body.get("message") or f"Nagad answered HTTP {response.status_code}."),
        )
    return body


def _call(method, url, client_ip, body=None, timeout=TIMEOUT, params=None):
    """One request to Nagad; NagadUnreachable when the network fails."""
    try:
        response = requests.request(
            method, url, params=params, json=body, headers=headers(client_ip), timeout=timeout
        )
    except requests.Timeout:
        raise NagadUnreachable("timeout", "Nagad did not answer in time.") from None
    except requests.RequestException:
        raise NagadUnreachable("unreachable", "Nagad could not be reached.") from None
    if response.status_code >= 500:
        raise NagadUnreachable(f"http_{response.status_code}", "Nagad answered with an error.")
    return _answer(response)


def new_challenge():
    """The random challenge the initialize call carries (40 hex characters)."""
    return secrets.token_hex(20)


def initialize(keys, order_id, client_ip, timeout=TIMEOUT):
    """Open a checkout for `order_id`: (paymentReferenceId, Nagad's challenge)."""
    challenge = new_challenge()
    now = dhaka_datetime()
    fields = {
        "merchantId": keys.merchant_id,
        "datetime": now,
        "orderId": order_id,
        "challenge": challenge,
    }
    sensitive, signature = sealed_request(fields, keys)
    answer = _call(
        "POST",
        f"{keys.base_url}/api/dfs/check-out/initialize/{keys.merchant_id}/{order_id}",
        client_ip,
        {"dateTime": now, "sensitiveData": sensitive, "signature": signature},
        timeout,
    )
    plain = open_answer(answer, keys)
    reference, server_challenge = plain.get("paymentReferenceId"), plain.get("challenge")
    if not isinstance(reference, str) or not reference or not isinstance(server_challenge, str):
        raise NagadAnswerRefused("malformed_answer", "Nagad's initialize answer lacks a reference.")
    return reference, server_challenge


def complete(keys, reference, order_id, amount, challenge, callback_url, info, client_ip,
             timeout=TIMEOUT):  # fmt: skip
    """Place the order (amount in taka) on an initialized checkout: the URL of Nagad's page."""
    fields = {
        "merchantId": keys.merchant_id,
        "orderId": order_id,
        "currencyCode": CURRENCY_CODE,
        "amount": format_amount(Decimal(amount)),
        "challenge": challenge,
    }
    sensitive, signature = sealed_request(fields, keys)
    answer = _call(
        "POST",
        f"{keys.base_url}/api/dfs/check-out/complete/{reference}",
        client_ip,
        {
            "sensitiveData": sensitive,
            "signature": signature,
            "merchantCallbackURL": callback_url,
            "additionalMerchantInfo": info,
        },
        timeout,
    )
    page = answer.get("callBackUrl")
    if answer.get("status") != "Success" or not isinstance(page, str) or not page:
        raise NagadError(
            str(answer.get("reason") or answer.get("status") or "not_accepted"),
            str(answer.get("message") or "Nagad did not accept the order."),
        )
    return page


def verify(keys, reference, timeout=TIMEOUT, attempts=VERIFY_ATTEMPTS):
    """Nagad's own record of the checkout `reference` (status, amount, orderId,
    issuerPaymentRefNo…); repeated on timeouts, since asking changes nothing."""
    url = f"{keys.base_url}/api/dfs/verify/payment/{reference}"
    for attempt in range(1, attempts + 1):
        try:
            return _call("GET", url, None, None, timeout)
        except NagadUnreachable:
            if attempt == attempts:
                raise
    raise AssertionError("unreachable")  # pragma: no cover


def cancel_purchase(keys, reference, order_id, paid_on, original_amount, cancel_amount,
                    reference_no, message, timeout=TIMEOUT):  # fmt: skip
    """Refund `cancel_amount` of a paid order through Nagad's purchase cancel call; the dict
    Nagad seals in its answer. Not repeated: a lost answer may hide a refund already made."""
    fields = {
        "merchantId": keys.merchant_id,
        "originalRequestDate": paid_on,
        "originalAmount": format_amount(Decimal(original_amount)),
        "cancelAmount": format_amount(Decimal(cancel_amount)),
        "referenceNo": reference_no,
        "referenceMessage": message,
    }
    sensitive, signature = sealed_request(fields, keys)
    answer = _call(
        "POST",
        f"{keys.base_url}/api/dfs/purchase/cancel",
        None,
        {"sensitiveDataCancelRequest": sensitive, "signature": signature},
        timeout,
        params={"paymentRefId": reference, "orderId": order_id},
    )
    return open_answer(answer, keys)
