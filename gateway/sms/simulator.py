"""Trying the gateway without a phone: a simulator device forwards a real provider-format SMS; it is
no phone of the brand (devices.brand_devices.phones).

Live texts (`flask gateway simulate-sms`) never run in production. Test texts (test mode, a test
payment's simulated outcomes) run anywhere: they are stored `livemode` false, through a simulator
device of their own, and pay test payments only (pays.py same_mode).
"""

import uuid
from decimal import Decimal
from zoneinfo import ZoneInfo

import requests
from flask import current_app

from ..answer_commit import commit_work
from ..clock import isoformat, utcnow
from ..devices.crypto import encrypt_payload, open_device_key
from ..devices.models.device import SIMULATOR_PLATFORM, Device
from ..devices.pairing import create_pairing_code, pair_device
from ..devices.tokens import access_token
from ..domain_errors import InvalidState
from ..extensions import db
from .balance_chain import chain_key
from .ingest import ForwardedText, batch_answer, ingest_batch, ingest_texts
from .models.balance_chain import BalanceChain
from .models.inbound_sms import InboundSms
from .parsing import build_sms_text, sender_for

SIMULATOR_ID = "gateway-simulator"
TEST_SIMULATOR_ID = "gateway-test-simulator"  # the device of test mode's texts: a chain of its own
SMS_PATH = "/api/mobile/v1/sms"
IN_PRODUCTION = (
    "The SMS simulator is off in production (APP_ENV=production): a simulated text would complete "
    "real payments with money nobody sent. Try the gateway on a development install, or pay a "
    "small amount for real from your own wallet."
)


class SimulatorRefused(InvalidState):
    """The simulator asked to run in the production profile."""

    code = "SIMULATOR_REFUSED"


def refuse_in_production():
    """Stop here in the production profile, where a simulated text would complete real payments."""
    if current_app.config["APP_ENV"] == "production":
        raise SimulatorRefused(IN_PRODUCTION)


def simulator_device(brand, livemode=True):
    """The brand's simulator device, paired through the normal pairing service the first time; test
    mode's (`livemode` False) is made without a key or tokens instead."""
    if livemode:
        refuse_in_production()
    name = SIMULATOR_ID if livemode else TEST_SIMULATOR_ID
    device = db.session.execute(
        db.select(Device)
        .where(
            Device.brand_id == brand.id,
            Device.device_id == name,
            Device.platform == SIMULATOR_PLATFORM,
            Device.revoked_at.is_(None),
        )
        .order_by(Device.id.desc())
        .limit(1)
    ).scalar_one_or_none()
    if device is None and not livemode:
        # Test mode's texts are handed to ingest_texts in plain text: this device has no key and
        # no tokens, so nothing can ever sign in or forward as it, and pairing it tells nobody.
        device = Device(
            uuid=str(uuid.uuid4()),
            brand_id=brand.id,
            device_id=name,
            name="Gateway test simulator",
            app_version="simulator",
            platform=SIMULATOR_PLATFORM,
            created_at=utcnow(),
        )
        db.session.add(device)
        commit_work()
    elif device is None:
        device, _, _ = pair_device(
            {
                "pairing_code": create_pairing_code(brand),
                "device_id": name,
                "device_name": "Gateway simulator",
                "app_version": "simulator",
                "platform": SIMULATOR_PLATFORM,
            }
        )
    return device


def simulated_text(brand, provider, amount, trx_id, counterparty, balance=None, livemode=True):
    """A provider's incoming-credit text, printed at the brand's local time."""
    when = utcnow().astimezone(ZoneInfo(brand.timezone or "Asia/Dhaka")).replace(tzinfo=None)
    if balance is None:
        # Continue the simulator's balance chain, so a run of simulated credits is not held for
        # review. A TrxID simulated before is the same text again (a duplicate), with the balance it
        # had.
        again = db.session.execute(
            db.select(InboundSms.balance).where(
                InboundSms.brand_id == brand.id,
                InboundSms.provider == provider,
                InboundSms.provider_trx_id == trx_id.upper(),
            )
        ).scalar_one_or_none()
        last = again - amount if again is not None else last_balance(brand, provider, livemode)
        balance = (last if last is not None else Decimal("1000.00")) + amount
    return build_sms_text(provider, amount, trx_id, counterparty, balance, when)


def last_balance(brand, provider, livemode=True):
    """The last balance the simulator phone's texts of this provider printed, or None."""
    device = simulator_device(brand, livemode)
    brand_id, provider, wallet, _, _ = chain_key(brand, device.id, provider)
    return db.session.execute(
        db.select(BalanceChain.balance).where(
            BalanceChain.brand_id == brand_id,
            BalanceChain.provider == provider,
            BalanceChain.wallet == wallet,
        )
    ).scalar_one_or_none()


def forward_as_device(device, provider, text, via="auto"):
    """Encrypt the text with the device's key and POST it to the ingestion endpoint, or without a
    server hand it to the ingestion service directly; (route, status, body), the body as the
    endpoint answers."""
    refuse_in_production()
    message = {
        "local_id": f"sim-{uuid.uuid4().hex[:12]}",
        "sender": sender_for(provider),
        "encrypted_payload": encrypt_payload(
            open_device_key(device.aes_key_sealed, device.uuid), text
        ),
        "received_at": isoformat(utcnow()),
    }
    headers = {"Authorization": f"Bearer {access_token(device)}"}
    base = current_app.config["BASE_URL"]
    if via == "http" or (via == "auto" and server_answers(base)):
        response = requests.post(
            base + SMS_PATH, json={"messages": [message]}, headers=headers, timeout=30
        )
        try:
            body = response.json()
        except ValueError:  # not a gateway answering, or a proxy's error page
            body = None
        return f"HTTP POST {base}{SMS_PATH}", response.status_code, body
    results = ingest_batch(device, [message])
    return (
        f"the ingestion service directly (no server answered at {base})",
        200,
        {"success": True, "data": batch_answer(results)},
    )


def forward_test_text(brand, provider, text):
    """Hand a simulated text of test mode to the ingestion pipeline every forwarded text takes
    (ingest.ingest_texts: parsing, storing once, the balance chain, matching), stored `livemode`
    false from the test simulator device; the text's result {local_id, status, server_ref}.
    """
    device = simulator_device(brand, livemode=False)
    forwarded = ForwardedText(
        local_id=f"test-{uuid.uuid4().hex[:12]}",
        sender=sender_for(provider),
        body=text,
        received_at=utcnow(),
        livemode=False,
    )
    return ingest_texts(device, [forwarded])[0]


def server_answers(base):
    """Whether a gateway is serving at BASE_URL (its health check answers)."""
    try:
        return requests.get(base + "/healthz", timeout=2).ok
    except requests.RequestException:
        return False


def stored_sms(server_ref):
    """The stored SMS a result refers to, with its payment, when this database holds it."""
    if not server_ref:
        return None
    db.session.expire_all()
    return db.session.execute(
        db.select(InboundSms).where(InboundSms.public_id == server_ref)
    ).scalar_one_or_none()
