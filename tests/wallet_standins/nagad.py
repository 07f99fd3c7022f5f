"""A local stand-in for Nagad's merchant checkout, written from Nagad's public merchant API and its
sample clients: it opens what the merchant seals with "Nagad's" private key, checks the merchant's
SHA256withRSA signatures, and seals and signs its own answers the same way. Tests drive the
customer's side (pay, cancel, fail) and its faults (a stalled verify, unsigned or forged answers).
"""

import base64
import json
import secrets
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from urllib.parse import urlencode

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from flask import Flask, abort, jsonify, redirect, request

from tests.local_servers import serving

REQUIRED_HEADERS = ("X-KM-Api-Version", "X-KM-IP-V4", "X-KM-Client-Type")


def new_key_pair():
    """A fresh 2048-bit RSA key: (private key, private PEM text, public PEM text)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    public_pem = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    return key, private_pem, public_pem


def bare_base64(pem):
    """A PEM key as Nagad's portal hands keys out: the base64 body without the armour lines."""
    return "".join(line for line in pem.splitlines() if not line.startswith("-----"))


@dataclass
class Checkout:
    """One checkout as Nagad keeps it."""

    reference: str
    order_id: str
    challenge: str
    amount: Decimal | None = None
    callback_url: str | None = None
    info: dict | None = None
    status: str = "Initiated"
    issuer_ref: str | None = None
    cancelled: Decimal = field(default_factory=lambda: Decimal("0.00"))


class NagadStandIn:
    """Nagad's side of the protocol for one merchant, behind a real local HTTP server."""

    def __init__(self, merchant_id="683002007104225"):
        self.merchant_id = merchant_id
        self.nagad_key, self.nagad_private_pem, self.nagad_public_pem = new_key_pair()
        self.merchant_key, self.merchant_private_pem, self.merchant_public_pem = new_key_pair()
        self.merchant_public = self.merchant_key.public_key()
        self.checkouts = {}
        self.requests = []  # (method, path, headers dict) of every call
        self.lock = threading.Lock()
        # Faults a test switches on.
        self.verify_stalls = 0  # this many verify calls hang until `release` is set
        self.cancel_stalls = 0  # this many cancels are made, then hang until `release` is set
        self.release = threading.Event()
        self.answer_fault = None  # "unsigned" | "forged" | "foreign" on sealed answers
        self.refuse_refunds = None  # a message Nagad gives when it refuses a cancel
        self.refuse_complete = None  # a message Nagad gives when it refuses an order
        self.origin = None
        self.app = self._build_app()

    # -- crypto as Nagad does it ---------------------------------------------------------------
    def _open(self, sealed, signature):
        """The merchant's fields, or None when not sealed for Nagad or not signed."""
        try:
            text = self.nagad_key.decrypt(base64.b64decode(sealed), padding.PKCS1v15())
            self.merchant_public.verify(
                base64.b64decode(signature), text, padding.PKCS1v15(), hashes.SHA256()
            )
            return json.loads(text)
        except Exception:  # noqa: BLE001 - any flaw is Nagad's "invalid request"
            return None

    def _sealed(self, fields):
        """A sealed, signed answer, or the fault a test asked for."""
        text = json.dumps(fields).encode()
        signer = self.nagad_key
        if self.answer_fault == "forged":
            signer = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        sealed = base64.b64encode(self.merchant_public.encrypt(text, padding.PKCS1v15())).decode()
        signature = base64.b64encode(signer.sign(text, padding.PKCS1v15(), hashes.SHA256()))
        if self.answer_fault == "unsigned":
            return jsonify(sensitiveData=sealed)
        if self.answer_fault == "foreign":  # sealed for some other merchant's key
            other = rsa.generate_private_key(public_exponent=65537, key_size=2048).public_key()
            sealed = base64.b64encode(other.encrypt(text, padding.PKCS1v15())).decode()
        return jsonify(sensitiveData=sealed, signature=signature.decode())

    @staticmethod
    def _refuse(reason, message, status=400):
        return jsonify(reason=reason, message=message), status

    # -- the customer's side -------------------------------------------------------------------
    def callback_for(self, reference, status):
        """The URL Nagad sends the customer back to after `status` on `reference`."""
        with self.lock:
            checkout = self.checkouts[reference]
            if status == "Success":
                checkout.status = "Success"
                checkout.issuer_ref = checkout.issuer_ref or secrets.token_hex(4).upper()
            elif status == "Aborted":
                checkout.status = "Aborted"
            else:
                checkout.status = "Failed"
            args = {
                "merchant": self.merchant_id,
                "order_id": checkout.order_id,
                "payment_ref_id": reference,
                "status": status,
                "status_code": "00_0000_000" if status == "Success" else "50_0026_851",
                "message": "Successful Transaction" if status == "Success" else "Not paid",
            }
            if status == "Success":
                args["issuer_payment_ref"] = checkout.issuer_ref
        return f"{checkout.callback_url}?{urlencode(args)}"

    def reference_for(self, order_prefix=""):
        """The reference of the latest checkout whose order id starts with `order_prefix`."""
        found = [c for c in self.checkouts.values() if c.order_id.startswith(order_prefix)]
        return found[-1].reference

    # -- the API -------------------------------------------------------------------------------
    def _build_app(self):
        app = Flask("nagad-standin")

        @app.before_request
        def record():
            self.requests.append((request.method, request.path, dict(request.headers)))
            if request.path.startswith("/api/") and request.method == "POST":
                if any(not request.headers.get(name) for name in REQUIRED_HEADERS):
                    return self._refuse("InvalidRequest", "Missing X-KM headers")
            return None

        @app.post("/api/dfs/check-out/initialize/<merchant_id>/<order_id>")
        def initialize(merchant_id, order_id):
            body = request.get_json(silent=True) or {}
            fields = self._open(body.get("sensitiveData", ""), body.get("signature", ""))
            if fields is None:
                return self._refuse("InvalidSignature", "Invalid signature or sensitive data")
            if merchant_id != self.merchant_id or fields.get("merchantId") != merchant_id:
                return self._refuse("InvalidMerchant", "Merchant not found")
            if fields.get("orderId") != order_id or not order_id.isalnum() or len(order_id) > 20:
                return self._refuse("InvalidOrderId", "Invalid order id")
            if not fields.get("challenge") or not body.get("dateTime"):
                return self._refuse("InvalidRequest", "Challenge and dateTime are required")
            with self.lock:
                if any(c.order_id == order_id for c in self.checkouts.values()):
                    return self._refuse("DuplicateOrder", "Duplicate order id")
                # Shaped like Nagad's: base64 of "time.merchant.order.random" (about 90 chars).
                stamp = f"{len(self.checkouts):013d}"
                plain = f"{stamp}.{self.merchant_id}.{order_id}.{secrets.token_hex(10)}"
                reference = base64.b64encode(plain.encode()).decode()
                checkout = Checkout(reference, order_id, secrets.token_hex(20))
                self.checkouts[reference] = checkout
            return self._sealed(
                {
                    "paymentReferenceId": reference,
                    "challenge": checkout.challenge,
                    "acceptDateTime": body["dateTime"],
                }
            )

        @app.post("/api/dfs/check-out/complete/<reference>")
        def complete(reference):
            body = request.get_json(silent=True) or {}
            checkout = self.checkouts.get(reference)
            if checkout is None:
                return self._refuse("InvalidPaymentRefId", "Payment reference not found")
            fields = self._open(body.get("sensitiveData", ""), body.get("signature", ""))
            if fields is None:
                return self._refuse("InvalidSignature", "Invalid signature or sensitive data")
            if (
                fields.get("challenge") != checkout.challenge
                or fields.get("orderId") != checkout.order_id
                or fields.get("merchantId") != self.merchant_id
            ):
                return self._refuse("InvalidRequest", "Challenge or order mismatch")
            if self.refuse_complete:
                return self._refuse("TransactionLimitExceeded", self.refuse_complete)
            if fields.get("currencyCode") != "050":
                return self._refuse("InvalidCurrency", "Only BDT (050) is accepted")
            if not body.get("merchantCallbackURL"):
                return self._refuse("InvalidRequest", "merchantCallbackURL is required")
            checkout.amount = Decimal(fields["amount"])
            checkout.callback_url = body["merchantCallbackURL"]
            checkout.info = body.get("additionalMerchantInfo")
            checkout.status = "Ready"
            return jsonify(status="Success", callBackUrl=f"{self.origin}/pay/{reference}")

        @app.get("/pay/<reference>")
        def page(reference):
            checkout = self.checkouts.get(reference) or abort(404)
            return (
                "<!doctype html><title>Nagad</title>"
                f"<p>Pay <span id=amount>{checkout.amount}</span> BDT</p>"
                f'<form method=post action="/pay/{reference}/Success">'
                "<button id=pay>Pay</button></form>"
                f'<form method=post action="/pay/{reference}/Aborted">'
                "<button id=cancel>Cancel</button></form>"
            )

        @app.post("/pay/<reference>/<status>")
        def answer(reference, status):
            if reference not in self.checkouts:
                abort(404)
            return redirect(self.callback_for(reference, status))

        @app.get("/api/dfs/verify/payment/<reference>")
        def verify(reference):
            with self.lock:
                stall = self.verify_stalls > 0
                if stall:
                    self.verify_stalls -= 1
            if stall:
                self.release.wait(30)
            checkout = self.checkouts.get(reference)
            if checkout is None:
                return self._refuse("InvalidPaymentRefId", "Payment reference not found")
            return jsonify(
                merchantId=self.merchant_id,
                orderId=checkout.order_id,
                paymentRefId=reference,
                amount=str(checkout.amount) if checkout.amount is not None else None,
                clientMobileNo="017****1234",
                merchantMobileNo="01711428036",
                orderDateTime="2026-11-28 20:00:00.0",
                issuerPaymentDateTime="2026-11-28 20:01:00.0",
                issuerPaymentRefNo=checkout.issuer_ref,
                additionalMerchantInfo=checkout.info,
                status=checkout.status,
                statusCode="000" if checkout.status == "Success" else "001",
            )

        @app.post("/api/dfs/purchase/cancel")
        def cancel():
            body = request.get_json(silent=True) or {}
            fields = self._open(
                body.get("sensitiveDataCancelRequest", ""), body.get("signature", "")
            )
            if fields is None:
                return self._refuse("InvalidSignature", "Invalid signature or sensitive data")
            checkout = self.checkouts.get(request.args.get("paymentRefId", ""))
            if checkout is None or checkout.order_id != request.args.get("orderId"):
                return self._refuse("InvalidPaymentRefId", "Payment not found")
            if checkout.status != "Success":
                return self._refuse("InvalidTransaction", "Payment is not successful")
            if self.refuse_refunds:
                return self._refuse("CancelNotAllowed", self.refuse_refunds)
            amount = Decimal(fields.get("cancelAmount", "0"))
            if Decimal(fields.get("originalAmount", "0")) != checkout.amount:
                return self._refuse("InvalidAmount", "Original amount mismatch")
            if amount <= 0 or checkout.cancelled + amount > checkout.amount:
                return self._refuse("InvalidAmount", "Cancel amount exceeds the paid amount")
            checkout.cancelled += amount
            with self.lock:
                stall = self.cancel_stalls > 0
                if stall:
                    self.cancel_stalls -= 1
            if stall:
                self.release.wait(30)
            return self._sealed(
                {
                    "merchantId": self.merchant_id,
                    "orderId": checkout.order_id,
                    "originalAmount": str(checkout.amount),
                    "cancelAmount": str(amount),
                    "cancelTrxId": "RF" + secrets.token_hex(4).upper(),
                    "status": "Success",
                }
            )

        return app

    @contextmanager
    def running(self):
        """Serve on a free loopback port; `origin` is the base URL the gateway is given."""
        with serving(self.app) as server:
            self.origin = server.origin
            try:
                yield self
            finally:
                self.release.set()
