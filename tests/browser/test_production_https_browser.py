"""The README's production deployment in Chromium over https: a customer pays and comes back to the
shop, a payment link and an invoice take their forms, the owner signs in with two-factor, refunds
and makes a plugin key, and that plugin's customer cancels and is posted back to the shop.

Built as docs/deployment.md builds it: `make_env_file.py`'s environment file (production,
TRUSTED_PROXIES=1) on a PostgreSQL database of this test's own and a Redis of its own,
`deploy/gateway-flask db upgrade` and `gateway bootstrap`, the web unit's gunicorn command, one
`gateway worker`, and the kit's nginx site with a self-signed certificate. Chromium reaches it as
https://pay.example.com on port 443 by its own lights (--host-resolver-rules sends that name to
nginx's loopback port), so Host and Referer are exactly what a shop on its domain sees. The phone
pairs and forwards its texts over the companion API; webhooks go to a real receiver that checks
their signatures.
"""

import json
import os
import re
import shutil
import ssl
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from decimal import Decimal
from urllib.parse import parse_qs, urlsplit

import pyotp
import pytest
from playwright.sync_api import expect

from tests.browser.conftest import PHONE, chromium
from tests.browser.panel_support import DESKTOP
from tests.compat.ipn_receiver import IpnReceiver, header
from tests.factories import bkash_text, sms_message
from tests.faults.harness import Process
from tests.local_servers import free_port
from tests.nginx_support import (
    DOMAIN,
    https,
    nginx_binary,
    nginx_in_front,
    wait_for_port,
    web_command,
)
from tests.redis_server import RedisServer
from tests.services import fresh_postgres, own_postgres_url, unavailable
from tests.test_deploy import DEPLOY, read_env_file
from tests.webhook_support import WebhookReceiver

pytestmark = pytest.mark.browser

ORIGIN = f"https://{DOMAIN}"
SHOP_NAME = "Dhaka Crafts"
OWNER = "owner@dhakacrafts.test"
BKASH = "01712345678"
SHOP_PAGE = b"<!doctype html><title>Dhaka Crafts</title><h1>Back at Dhaka Crafts</h1>"


@dataclass
class Production:
    """What the deployment hands a merchant, and the pieces the test watches."""

    site: dict
    api_key: str
    password: str
    receiver: WebhookReceiver
    shop: IpnReceiver
    phone: dict = field(default_factory=dict)
    balance: Decimal = Decimal("1000.00")

    def api(self, method, path, body=None):
        """The merchant's server calling the API through nginx; returns (status, parsed body)."""
        status, _, raw = https(
            self.site,
            method,
            path,
            body=None if body is None else json.dumps(body),
            headers={
                "Authorization": f"Bearer {self.api_key}",
                "Content-Type": "application/json",
            },
        )
        return status, json.loads(raw)

    def forward(self, trx_id, amount):
        """The shop's phone forwards bKash's credit text over the companion API, as the app does."""
        self.balance += Decimal(amount)
        text = bkash_text(amount=amount, trx_id=trx_id, balance=f"{self.balance:.2f}")
        status, _, raw = https(
            self.site,
            "POST",
            "/api/mobile/v1/sms",
            body=json.dumps({"messages": [sms_message(self.phone["aes_key"], text)]}),
            headers={
                "Authorization": f"Bearer {self.phone['access_token']}",
                "Content-Type": "application/json",
            },
        )
        assert status == 200, raw

    def status_of(self, payment_id):
        status, body = self.api("GET", f"/api/v1/payments/{payment_id}")
        assert status == 200, body
        return body["data"]["status"]

    def shop_url(self, path):
        return self.shop.url.split("/ipn", 1)[0] + path


def gateway_flask_started(env_path, *args):
    """`deploy/gateway-flask …` as an operator types it, started; `last_line` waits for it."""
    return subprocess.Popen(
        [str(DEPLOY / "gateway-flask"), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={"PATH": os.environ["PATH"], "GATEWAY_ENV": str(env_path)},
    )


def gateway_flask(env_path, *args):
    """`deploy/gateway-flask …` run to its end; returns its output, failing on an error."""
    started = gateway_flask_started(env_path, *args)
    out, err = started.communicate(timeout=120)
    assert started.returncode == 0, out + err
    return out


def last_line(started):
    """The last line a started command printed (its key or code), once it exited well."""
    out, err = started.communicate(timeout=120)
    assert started.returncode == 0, out + err
    return out.splitlines()[-1].strip()


def environment_file(directory, database_url, redis_url, upstream):
    """`make env-file`'s file, plus the lines an operator would add by hand for this machine."""
    env_path = directory / "gateway.env"
    made = subprocess.run(
        [sys.executable, str(DEPLOY / "make_env_file.py"), str(env_path)],
        capture_output=True,
        text=True,
        env={
            "PATH": os.environ["PATH"],
            "BASE_URL": ORIGIN,
            "DATABASE_URL": database_url,
            "REDIS_URL": redis_url,
        },
    )
    assert made.returncode == 0, made.stderr
    with env_path.open("a") as extra:
        # The receiver and the shop listen on loopback; gunicorn on a free port with two workers.
        extra.write(
            "ALLOW_PRIVATE_CALLBACKS=true\n"
            f"GUNICORN_BIND=127.0.0.1:{upstream}\nGUNICORN_WORKERS=2\n"
        )
    return env_path


def bootstrapped(env_path):
    """The schema and the first brand, as docs/deployment.md section 4; returns (password, webhook
    secret, API key)."""
    gateway_flask(env_path, "db", "upgrade")
    printed = gateway_flask(
        env_path, "gateway", "bootstrap", "--brand-name", SHOP_NAME, "--email", OWNER,
        "--bkash", BKASH,
    )  # fmt: skip
    lines = printed.splitlines()
    password = re.search(r"^Password:\s+(\S+)$", printed, re.M).group(1)
    secret = lines[lines.index(next(line for line in lines if "Webhook secret" in line)) + 1]
    return password, secret.strip(), lines[-1].strip()


def required_programs():
    """nginx and redis-server (Chromium is checked where it starts); skipped, or failed under CI."""
    nginx_binary()
    if shutil.which("redis-server") is None:
        unavailable("redis-server", FileNotFoundError("redis-server: apt-get install redis-server"))


@pytest.fixture(scope="module")
def production(tmp_path_factory):
    """The whole deployment on loopback; yields a Production once nginx and gunicorn answer."""
    required_programs()
    directory = tmp_path_factory.mktemp("production")
    database_url = own_postgres_url("_https")
    try:
        fresh_postgres(database_url)
    except Exception as error:  # noqa: BLE001 - any failure to reach the server
        unavailable("PostgreSQL", error)
    redis = RedisServer().start()
    processes, receivers = [], []
    try:
        upstream = free_port()
        env_path = environment_file(
            directory, database_url.replace("+psycopg", ""), redis.url, upstream
        )
        password, webhook_secret, api_key = bootstrapped(env_path)
        service_env = {"PATH": os.environ["PATH"], **read_env_file(env_path)}
        processes.append(Process(web_command(), directory / "gunicorn.log", service_env))
        processes.append(
            Process(
                [str(DEPLOY / "gateway-flask"), "gateway", "worker"],
                directory / "worker.log",
                {"PATH": os.environ["PATH"], "GATEWAY_ENV": str(env_path)},
            )
        )
        # The phone's pairing code, printed while the services start.
        pairing = gateway_flask_started(env_path, "gateway", "pair-code")
        receivers.append(WebhookReceiver(webhook_secret))
        tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        with nginx_in_front(directory, upstream) as site:
            tls.load_cert_chain(site["cert"], directory / "privkey.pem")
            receivers.append(IpnReceiver(answer_body=SHOP_PAGE, ssl_context=tls))
            wait_for_port(upstream, processes[0].popen, "gunicorn")
            stack = Production(site, api_key, password, receivers[0], receivers[1])
            stack.phone = paired_phone(stack, last_line(pairing))
            yield stack
            assert stack.receiver.rejected == [], "a webhook failed its signature check"
    finally:
        for receiver in receivers:
            receiver.close()
        for process in reversed(processes):
            process.stop()
        redis.kill()


def paired_phone(stack, code):
    """The shop's phone paired with the code `gateway pair-code` printed; its key and token."""
    status, _, raw = https(
        stack.site,
        "POST",
        "/api/mobile/v1/devices",
        body=json.dumps(
            {
                "pairing_code": code,
                "device_id": uuid.uuid4().hex,
                "device_name": "Shop phone",
                "fingerprint": "install-1",
                "app_version": "1.0.0",
                "platform": "android",
            }
        ),
        headers={"Content-Type": "application/json"},
    )
    assert status == 201, raw
    return json.loads(raw)["data"]


@pytest.fixture(scope="module")
def browser(production):
    """Chromium that finds pay.example.com at nginx's port and takes its self-signed certificate."""
    rule = f"--host-resolver-rules=MAP {DOMAIN} 127.0.0.1:{production.site['https']}"
    with chromium(rule) as launched:
        yield launched


@pytest.fixture
def window(browser):
    """Fresh browser windows (own cookies) that accept the test's certificate: `window(phone)`."""
    contexts = []

    def open_window(phone=True, javascript=True):
        context = browser.new_context(
            ignore_https_errors=True,
            java_script_enabled=javascript,
            **(PHONE if phone else DESKTOP),
        )
        context.set_default_timeout(15_000)
        contexts.append(context)
        return context.new_page()

    yield open_window
    for context in contexts:
        context.close()


def wait_until(predicate, timeout=15):
    """Poll until `predicate()` is true; False if it never was within `timeout` seconds."""
    stop = time.monotonic() + timeout
    while time.monotonic() < stop:
        if predicate():
            return True
        time.sleep(0.2)
    return bool(predicate())


def new_payment(production, reference, amount="500.00", **urls):
    """POST /api/v1/payments as the merchant's server does; returns its data."""
    status, body = production.api(
        "POST",
        "/api/v1/payments",
        {
            "amount": amount,
            "currency": "BDT",
            "reference": reference,
            "customer_name": "Rahim Uddin",
            "callback_url": production.receiver.url,
            "redirect_url": production.shop_url("/thanks"),
            "cancel_url": production.shop_url("/cart"),
            **urls,
        },
    )
    assert status == 201, body
    return body["data"]


def claim(page, trx_id):
    """The customer types the TrxID bKash texted them and says they have paid."""
    expect(page.get_by_text(BKASH).first).to_be_visible()
    page.get_by_label("Transaction ID (TrxID)").first.fill(trx_id)
    page.get_by_role("button", name="I have paid — verify").first.click()
    expect(page.get_by_role("heading", name="Confirming your payment")).to_be_visible()


def events_of(receiver, kind, payment_id):
    """The verified webhooks of one kind about one payment that the receiver holds."""
    return [
        event
        for event in receiver.events()
        if event["event"] == kind and event["data"].get("payment_id") == payment_id
    ]


def test_a_customer_pays_over_https_and_returns_to_the_shop(production, window):
    created = new_payment(production, "ORDER-7001")
    assert created["checkout_url"].startswith(f"{ORIGIN}/checkout/")
    page = window()
    page.goto(created["checkout_url"])
    claim(page, "9C4D7E2F1A")

    production.forward("9C4D7E2F1A", "500.00")
    page.wait_for_url(re.compile(re.escape(production.shop_url("/thanks")) + r"\?"))
    assert parse_qs(urlsplit(page.url).query) == {
        "payment_id": [created["payment_id"]],
        "status": ["completed"],
    }
    assert production.status_of(created["payment_id"]) == "completed"
    [back] = [item for item in production.shop.received if item["path"].startswith("/thanks")]
    assert header(back, "Referer") is None  # the checkout's token never reaches another site
    assert wait_until(
        lambda: events_of(production.receiver, "payment.completed", created["payment_id"])
    )


def test_a_payment_link_and_an_invoice_take_their_forms_over_https(production, window):
    status, body = production.api(
        "POST",
        "/api/v1/payment-links",
        {
            "title": "Nakshi kantha",
            "amount": "750.00",
            "callback_url": production.receiver.url,
            "redirect_url": production.shop_url("/kantha/thanks"),
        },
    )
    assert status == 201, body
    page = window()
    page.goto(body["data"]["url"])
    page.get_by_role("button", name="Continue to payment").click()
    expect(page).to_have_url(re.compile(rf"^{re.escape(ORIGIN)}/checkout/[\w-]+$"))
    claim(page, "7K3M9P2Q5R")
    production.forward("7K3M9P2Q5R", "750.00")
    page.wait_for_url(re.compile(re.escape(production.shop_url("/kantha/thanks")) + r"\?"))
    [payment_id] = parse_qs(urlsplit(page.url).query)["payment_id"]
    assert production.status_of(payment_id) == "completed"
    assert wait_until(lambda: events_of(production.receiver, "payment_link.paid", payment_id))

    status, body = production.api(
        "POST",
        "/api/v1/invoices",
        {
            "customer": {"name": "Sadia Islam", "phone": "+8801912345678"},
            "items": [{"description": "Jamdani saree", "quantity": "1", "unit_price": "4200"}],
        },
    )
    assert status == 201, body
    status, body = production.api(
        "POST", f"/api/v1/invoices/{body['data']['invoice_id']}/send", {"channels": ["sms"]}
    )
    assert status == 200, body
    page.goto(body["data"]["url"])
    page.get_by_role("button", name=re.compile(r"^Pay ")).click()
    expect(page).to_have_url(re.compile(rf"^{re.escape(ORIGIN)}/checkout/[\w-]+$"))
    expect(page.get_by_text("৳4,200.00").first).to_be_visible()
    expect(page.get_by_label("Transaction ID (TrxID)").first).to_be_visible()


def cancel_plugin_payment(production, window, plugin_key):
    """A WooCommerce customer (PipraPay 2, return by POST) cancels at checkout; back at the shop."""
    status, _, raw = https(
        production.site,
        "POST",
        "/api/create-charge",
        body=json.dumps(
            {
                "full_name": "Farhana Akter",
                "email_mobile": "01812345678",
                "amount": "350",
                "currency": "BDT",
                "metadata": {"invoiceid": "WC-88"},
                "redirect_url": production.shop_url("/wc/paid"),
                "cancel_url": production.shop_url("/wc/cancelled"),
                "webhook_url": production.shop_url("/wc/ipn"),
                "return_type": "POST",
            }
        ),
        headers={"mh-piprapay-api-key": plugin_key, "Content-Type": "application/json"},
    )
    assert status == 200, raw
    charge = json.loads(raw)
    page = window(javascript=False)  # the button; with script the form submits itself
    page.goto(charge["pp_url"])
    page.get_by_role("button", name=f"Cancel and return to {SHOP_NAME}").click()
    page.get_by_role("button", name="Continue to the shop").click()
    expect(page.get_by_role("heading", name="Back at Dhaka Crafts")).to_be_visible()
    [back] = [item for item in production.shop.received if item["path"] == "/wc/cancelled"]
    assert back["method"] == "POST" and parse_qs(back["raw"].decode()) == {
        "pp_id": [str(charge["pp_id"])]
    }
    assert header(back, "Referer") is None


def test_the_owner_signs_in_with_two_factor_refunds_and_connects_a_plugin(production, window):
    created = new_payment(production, "ORDER-7004", amount="1250.00")
    customer = window()
    customer.goto(created["checkout_url"])
    claim(customer, "5T8W2X6Y1Z")
    production.forward("5T8W2X6Y1Z", "1250.00")
    assert wait_until(lambda: production.status_of(created["payment_id"]) == "completed")

    page = window(phone=False)
    page.goto(f"{ORIGIN}/panel/sign-in")
    page.get_by_label("E-mail").fill(OWNER)
    page.get_by_label("Password").fill(production.password)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Dashboard", exact=True)).to_be_visible()
    page.get_by_role("link", name="Two-factor sign-in").click()
    page.get_by_role("button", name="Set up two-factor sign-in").click()
    totp = pyotp.TOTP(page.locator("#totp-secret").inner_text().strip())
    page.get_by_role("textbox", name="Code").fill(totp.now())
    page.get_by_role("button", name="Turn on").click()
    expect(page.get_by_role("heading", name="Two-factor sign-in is on")).to_be_visible()

    page.get_by_role("button", name="Sign out").click()
    page.get_by_label("E-mail").fill(OWNER)
    page.get_by_label("Password").fill(production.password)
    page.get_by_role("button", name="Sign in").click()
    # The enrolment spent this 30-second step's code; a code is never taken twice.
    page.get_by_role("textbox", name="Code").fill(totp.at(time.time() + 30))
    page.get_by_role("button", name="Verify").click()
    expect(page.get_by_role("heading", name="Dashboard", exact=True)).to_be_visible()

    page.get_by_role("link", name="Payments", exact=True).click()
    page.get_by_label("Search").fill("ORDER-7004")
    page.get_by_role("button", name="Filter").click()
    page.get_by_role("link", name="ORDER-7004").click()
    page.get_by_label("Amount").fill("300")
    page.get_by_label("Reason").fill("One item out of stock")
    page.get_by_role("button", name="Refund", exact=True).click()
    page.get_by_role("button", name="Yes, record the refund").click()
    expect(page.get_by_text("Refunded ৳ 300.00.", exact=True)).to_be_visible()  # the flash
    status, body = production.api("GET", f"/api/v1/payments/{created['payment_id']}")
    assert Decimal(body["data"]["amount_refunded"]) == Decimal("300.00")
    assert wait_until(
        lambda: events_of(production.receiver, "refund.completed", created["payment_id"])
    )

    page.get_by_role("link", name="Plugins").click()
    page.get_by_label("Label", exact=True).fill("WooCommerce")
    page.get_by_label("Plugin family").select_option("piprapay2")
    page.get_by_role("button", name="Generate key").click()
    plugin_key = page.locator("#new-compat-key").inner_text().strip()
    cancel_plugin_payment(production, window, plugin_key)
