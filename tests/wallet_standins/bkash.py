"""A stand-in for bKash's tokenized checkout on a loopback port, written from bKash's public API
documents (and checked against public open-source clients): the token grant and refresh (headers
username and password), create, execute, status and refund (headers Authorization: id token and
X-APP-Key), and the customer's page that sends them back to callbackURL with paymentID and status.

It refuses what bKash refuses: wrong credentials, a missing or expired token (HTTP 401), an amount
that is not a positive number, a second execute, a refund beyond what remains. Knobs for tests:
`customer_msisdn` (the wallet number its answers say paid), `execute_delay` and `refund_delay`
(seconds the execute or refund sleeps before answering), `refund_lost` (a refund that stalls is not
made), `refund_cut` (a refund made, the connection closed with no answer), `grant_delay` (seconds a
grant or refresh takes), `expire_tokens()` and `tamper_amount` (the amount its execute and status
answers claim).
"""

import json
import secrets
import threading
import time
from decimal import Decimal, InvalidOperation
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlsplit

VERSION = "/v1.2.0-beta"
CREDENTIALS = {
    "app_key": "standin-app-key",
    "app_secret": "standin-app-secret",
    "username": "01770618567",
    "password": "standin-password",
}


class BkashStandIn:
    """The server's state: tokens, payments, refunds, and every request it saw (path, headers)."""

    def __init__(self, credentials=CREDENTIALS, token_lifetime=3600):
        self.credentials = dict(credentials)
        self.token_lifetime = token_lifetime
        self.tokens = {}  # id_token -> expires (time.monotonic)
        self.refresh_tokens = set()
        self.payments = {}  # paymentID -> dict
        self.requests = []
        self.execute_delay = 0
        self.refund_delay = 0
        self.refund_lost = False  # a refund that stalls (refund_delay) and is never made
        self.refund_cut = False  # a refund made, the connection closed before its answer
        self.grant_delay = 0  # seconds a grant or refresh takes
        self.tamper_amount = None
        self.customer_msisdn = "01770618575"  # the wallet the customer pays from on the page
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self.handler())
        self.server.daemon_threads = True
        self.origin = f"http://127.0.0.1:{self.server.server_port}"
        self.base_url = self.origin + VERSION
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    def calls(self, path):
        """How many requests reached `path` (e.g. "/tokenized/checkout/token/grant")."""
        return sum(1 for seen, _ in self.requests if seen == VERSION + path)

    def expire_tokens(self):
        """Every id token issued so far stops working, as after its expires_in."""
        with self.lock:
            self.tokens = dict.fromkeys(self.tokens, 0)

    def new_token(self):
        """A fresh id token and refresh token, as the grant and the refresh answer."""
        token, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        self.tokens[token] = time.monotonic() + self.token_lifetime
        self.refresh_tokens.add(refresh)
        return {
            "statusCode": "0000",
            "statusMessage": "Successful",
            "id_token": token,
            "token_type": "Bearer",
            "expires_in": self.token_lifetime,
            "refresh_token": refresh,
        }

    def pay_page(self, payment_id):
        """The customer's bKash page for a payment (what bkashURL opens)."""
        return f"{self.origin}/pay/{payment_id}"

    # --- the API ---

    def grant(self, headers, body):
        if not self.credentials_match(headers, body):
            return 200, {"statusCode": "2001", "statusMessage": "Invalid App Key"}
        return 200, self.new_token()

    def refresh(self, headers, body):
        if not self.credentials_match(headers, body):
            return 200, {"statusCode": "2001", "statusMessage": "Invalid App Key"}
        if body.get("refresh_token") not in self.refresh_tokens:
            return 200, {"statusCode": "2079", "statusMessage": "Invalid refresh token"}
        return 200, self.new_token()

    def credentials_match(self, headers, body):
        return (
            headers.get("username") == self.credentials["username"]
            and headers.get("password") == self.credentials["password"]
            and body.get("app_key") == self.credentials["app_key"]
            and body.get("app_secret") == self.credentials["app_secret"]
        )

    def authorized(self, headers):
        expires = self.tokens.get(headers.get("Authorization"))
        return (
            expires is not None
            and expires > time.monotonic()
            and headers.get("X-APP-Key") == self.credentials["app_key"]
        )

    def create(self, body):
        missing = [
            name
            for name in ("mode", "payerReference", "callbackURL", "amount", "currency", "intent")
            if not body.get(name)
        ]
        if missing or body["mode"] != "0011" or body["currency"] != "BDT":
            return {"statusCode": "2065", "statusMessage": f"Invalid request: {missing or body}"}
        try:
            amount = Decimal(body["amount"])
        except InvalidOperation:
            amount = Decimal(0)
        if amount <= 0 or amount.as_tuple().exponent < -2:
            return {"statusCode": "2008", "statusMessage": "Invalid Amount"}
        payment_id = "TR0011" + secrets.token_hex(8).upper()
        self.payments[payment_id] = {
            "paymentID": payment_id,
            "amount": body["amount"],
            "currency": "BDT",
            "merchantInvoiceNumber": body.get("merchantInvoiceNumber"),
            "payerReference": body["payerReference"],
            "customerMsisdn": None,
            "callbackURL": body["callbackURL"],
            "transactionStatus": "Initiated",
            "trxID": None,
            "authorized": False,
            "refunded": Decimal(0),
        }
        return {
            "statusCode": "0000",
            "statusMessage": "Successful",
            "paymentID": payment_id,
            "bkashURL": self.pay_page(payment_id),
            "callbackURL": body["callbackURL"],
            "amount": body["amount"],
            "intent": "sale",
            "currency": "BDT",
            "paymentCreateTime": time.strftime("%Y-%m-%dT%H:%M:%S:000 GMT+0600"),
            "transactionStatus": "Initiated",
            "merchantInvoiceNumber": body.get("merchantInvoiceNumber"),
        }

    def answer_of(self, payment):
        return {
            "statusCode": "0000",
            "statusMessage": "Successful",
            "paymentID": payment["paymentID"],
            "trxID": payment["trxID"],
            "transactionStatus": payment["transactionStatus"],
            "payerReference": payment["payerReference"],
            "customerMsisdn": payment["customerMsisdn"],
            "amount": self.tamper_amount or payment["amount"],
            "currency": "BDT",
            "intent": "sale",
            "merchantInvoiceNumber": payment["merchantInvoiceNumber"],
        }

    def execute(self, body):
        payment = self.payments.get(body.get("paymentID"))
        if payment is None:
            return {"statusCode": "2023", "statusMessage": "Invalid Payment ID"}
        if payment["transactionStatus"] == "Completed":
            return {"statusCode": "2062", "statusMessage": "The payment has already been completed"}
        if not payment["authorized"]:
            return {"statusCode": "2056", "statusMessage": "Invalid Payment State"}
        payment["transactionStatus"] = "Completed"
        payment["trxID"] = "B" + secrets.token_hex(5).upper()[:9]
        return self.answer_of(payment)

    def status(self, body):
        payment = self.payments.get(body.get("paymentID"))
        if payment is None:
            return {"statusCode": "2023", "statusMessage": "Invalid Payment ID"}
        return self.answer_of(payment)

    def refund(self, body):
        payment = self.payments.get(body.get("paymentID"))
        if payment is None or payment["trxID"] != body.get("trxID"):
            return {"errorCode": "2023", "errorMessage": "Invalid Payment ID"}
        if set(body) == {"paymentID", "trxID"}:
            return self.refund_status(payment)
        if self.refund_lost:
            return {"errorCode": "9999", "errorMessage": "never answered"}  # not refunded
        try:
            amount = Decimal(body.get("amount"))
        except (InvalidOperation, TypeError):
            return {"errorCode": "2008", "errorMessage": "Invalid Amount"}
        if amount <= 0 or payment["refunded"] + amount > Decimal(payment["amount"]):
            return {"errorCode": "2071", "errorMessage": "Refund amount exceeds the paid amount"}
        if not body.get("sku") or not body.get("reason"):
            return {"errorCode": "2065", "errorMessage": "sku and reason are required"}
        payment["refunded"] += amount
        answer = {
            "completedTime": time.strftime("%Y-%m-%dT%H:%M:%S:000 GMT+0600"),
            "transactionStatus": "Completed",
            "originalTrxID": payment["trxID"],
            "refundTrxID": "R" + secrets.token_hex(5).upper()[:9],
            "amount": body["amount"],
            "currency": "BDT",
            "charge": "0.00",
        }
        payment.setdefault("refunds", []).append(answer)
        return answer

    def refund_status(self, payment):
        """The refund status query (the refund call with only paymentID and trxID): the payment's
        latest refund as the refund answered it; without one a refusal (this code is the stand-in's
        own: bKash's documents do not list it)."""
        if not payment.get("refunds"):
            return {"statusCode": "2070", "statusMessage": "No refund found for this transaction"}
        return {"statusCode": "0000", "statusMessage": "Successful", **payment["refunds"][-1]}

    def customer_choice(self, payment_id, choice):
        """The customer on bKash's page pays, cancels or fails: where bKash sends them back."""
        payment = self.payments[payment_id]
        if choice == "success":
            payment["authorized"] = True
            payment["customerMsisdn"] = self.customer_msisdn
        else:
            payment["transactionStatus"] = "Cancelled" if choice == "cancel" else "Failed"
        query = urlencode({"paymentID": payment_id, "status": choice, "signature": "x"})
        return f"{payment['callbackURL']}?{query}"

    def handler(self):
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def send(self, status, body, content_type="application/json", location=None):
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                if location:
                    self.send_header("Location", location)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                path = urlsplit(self.path).path
                if path.startswith("/pay/"):
                    payment_id = path.split("/")[2]
                    payment = standin.payments.get(payment_id)
                    if payment is None:
                        return self.send(404, b"no such payment", "text/plain")
                    buttons = "".join(
                        f'<form method="post" action="/pay/{payment_id}/{choice}">'
                        f'<button id="{choice}">{label}</button></form>'
                        for choice, label in (
                            ("success", "Confirm"),
                            ("cancel", "Cancel"),
                            ("failure", "Fail"),
                        )
                    )
                    page = (
                        f"<html><body><h1>bKash stand-in</h1><p id='amount'>{payment['amount']}"
                        f" BDT</p>{buttons}</body></html>"
                    )
                    return self.send(200, page.encode(), "text/html")
                return self.send(404, {"message": "Not found"})

            def do_POST(self):
                path = urlsplit(self.path).path
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                standin.requests.append((path, dict(self.headers)))
                if path.startswith("/pay/"):
                    _, _, payment_id, choice = path.split("/")
                    with standin.lock:
                        location = standin.customer_choice(payment_id, choice)
                    return self.send(302, b"", "text/plain", location)
                if not path.startswith(VERSION + "/tokenized/checkout/"):
                    return self.send(404, {"message": "Not found"})
                if self.headers.get("Content-Type", "").split(";")[0] != "application/json":
                    return self.send(415, {"message": "Unsupported Media Type"})
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    return self.send(400, {"message": "Bad JSON"})
                endpoint = path.removeprefix(VERSION + "/tokenized/checkout/")
                headers = {k: v for k, v in self.headers.items()}
                if endpoint in ("token/grant", "token/refresh"):
                    time.sleep(standin.grant_delay)  # bKash thinking: racing grants overlap
                    with standin.lock:
                        handler = standin.grant if endpoint == "token/grant" else standin.refresh
                        status, answer = handler(headers, body)
                    return self.send(status, answer)
                if not standin.authorized(headers):
                    return self.send(401, {"message": "Unauthorized"})
                actions = {
                    "create": standin.create,
                    "execute": standin.execute,
                    "payment/status": standin.status,
                    "payment/refund": standin.refund,
                }
                if endpoint not in actions:
                    return self.send(404, {"message": "Not found"})
                with standin.lock:
                    answer = actions[endpoint](body)
                if endpoint == "payment/refund" and standin.refund_cut and "amount" in body:
                    self.close_connection = True  # refunded at bKash, the answer cut off
                    return None
                if endpoint == "execute" and standin.execute_delay:
                    time.sleep(standin.execute_delay)  # done at bKash, the answer late
                if endpoint == "payment/refund" and standin.refund_delay and "amount" in body:
                    time.sleep(standin.refund_delay)  # refunded at bKash, the answer late
                try:
                    return self.send(200, answer)
                except BrokenPipeError:
                    return None  # the caller gave up waiting

        return Handler
