"""A merchant's webhook receiver: verify the signed timestamp (X-Service-Signature-V1), then read
the payment back.

Run it next to your shop (Flask and requests are its only dependencies; the project's venv has
both):

    WEBHOOK_SECRET=whsec_... GATEWAY_API_KEY=gw_live_... \\
    GATEWAY_API=http://127.0.0.1:5000/api/v1 PORT=8001 .venv/bin/python examples/webhook_receiver.py

It listens on http://127.0.0.1:8001/webhooks (PORT, 8000 when unset); use that address as the
payment's `callback_url` or as the brand's webhook URL. See docs/webhooks.md.
"""

import hashlib
import hmac
import json
import os
import time

import requests
from flask import Flask, request

TOLERANCE = 300  # seconds between the gateway signing a webhook and us accepting it


def signature_is_valid(secret, raw_body, signature):
    """Spec 6.3 steps 1-3: HMAC-SHA256 of the raw bytes, compared in constant time."""
    expected = hmac.new(secret.encode(), raw_body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, signature or "")


def signed_with(secret, raw_body, headers):
    """Our secret made either signature: X-Service-Signature, or X-Service-Signature-Previous while
    the gateway overlaps a secret rotation (so an old secret keeps working until we update it).

    These cover the body only: a captured webhook replayed with a fresh X-Service-Timestamp passes
    them. The receiver below checks X-Service-Signature-V1 instead (v1_is_valid).
    """
    return any(
        signature_is_valid(secret, raw_body, headers.get(name))
        for name in ("X-Service-Signature", "X-Service-Signature-Previous")
        if headers.get(name)
    )


def timestamp_is_fresh(timestamp, now=None):
    """Spec 6.3 step 4: the signing time is within 300 seconds of ours."""
    if not (timestamp or "").isdigit():
        return False
    return abs((now if now is not None else time.time()) - int(timestamp)) <= TOLERANCE


def parse_v1(header):
    """(timestamp, [v1 signatures]) of `t=<unix>,v1=<hex>[,v1=<hex>]`; (None, []) when malformed."""
    timestamp, signatures = None, []
    for part in (header or "").split(","):
        name, _, value = part.strip().partition("=")
        if name == "t" and value.isdigit():
            timestamp = value
        elif name == "v1" and value:
            signatures.append(value)
    return timestamp, signatures


def v1_is_valid(secret, raw_body, header, now=None):
    """'ok', 'invalid signature' or 'stale timestamp' for X-Service-Signature-V1.

    The HMAC covers `<t>.<raw body>`, so the time cannot be changed without the secret; any v1 in
    the header may match (during a secret rotation the gateway adds one made with the old secret).
    """
    timestamp, signatures = parse_v1(header)
    if timestamp is None or not signatures:
        return "invalid signature"
    message = timestamp.encode() + b"." + raw_body
    expected = hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()
    # Every candidate compared, in constant time each: no early exit tells which one matched.
    if not sum(hmac.compare_digest(expected, signature) for signature in signatures):
        return "invalid signature"
    return "ok" if timestamp_is_fresh(timestamp, now) else "stale timestamp"


def read_payment(api_base, api_key, payment_id):
    """Spec 6.3 step 5: the payment as the gateway holds it now, or None if it cannot be read."""
    response = requests.get(
        f"{api_base.rstrip('/')}/payments/{payment_id}",
        headers={"Authorization": f"Bearer {api_key}"},
        timeout=10,
    )
    return response.json()["data"] if response.status_code == 200 else None


def create_receiver(secret, api_base, api_key, fulfil, clock=time.time):
    """The receiving application; `fulfil(payment)` ships the order once the payment is
    confirmed."""
    app = Flask(__name__)
    # Event ids already processed. A webhook may arrive more than once, always with the same event
    # id and X-Service-Delivery: answer 200 to a repeat and do nothing else (keep these in your
    # database).
    handled = set()

    @app.post("/webhooks")
    def webhook():
        raw = request.get_data()  # the raw bytes: never re-serialise parsed JSON before verifying
        verdict = v1_is_valid(secret, raw, request.headers.get("X-Service-Signature-V1"), clock())
        if verdict == "invalid signature":
            return verdict, 401
        if verdict == "stale timestamp":
            return verdict, 400
        event = json.loads(raw)
        if event["id"] in handled:
            return "OK", 200
        if event["event"] == "payment.completed":
            # The webhook only says "look now": the API's answer is what we fulfil on.
            payment = read_payment(api_base, api_key, event["data"]["payment_id"])
            if payment is None:
                return "could not confirm the payment yet", 503  # the gateway retries later
            if payment["status"] == "completed":
                fulfil(payment)  # also check amount and currency against your order here
        handled.add(event["id"])
        return "OK", 200

    return app


if __name__ == "__main__":
    receiver = create_receiver(
        os.environ["WEBHOOK_SECRET"],
        os.environ.get("GATEWAY_API", "http://127.0.0.1:5000/api/v1"),
        os.environ["GATEWAY_API_KEY"],
        fulfil=lambda payment: print(
            f"Fulfil order {payment['reference']}: {payment['amount']} {payment['currency']}"
        ),
    )
    receiver.run(host="127.0.0.1", port=int(os.environ.get("PORT", "8000")))
