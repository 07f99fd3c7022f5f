"""The forwarders' intake over HTTP: each public app's exact request pays a payment claimed at
checkout, and every request it did not send is refused with nothing stored."""

import hashlib
import hmac
import json
import time
from datetime import timedelta, timezone
from decimal import Decimal
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
import requests

from gateway.devices.forwarders import create_forwarder, revoke_forwarder
from gateway.extensions import db
from gateway.sms.models.balance_chain import BalanceChain
from gateway.sms.models.inbound_sms import InboundSms
from gateway.sms.printed_time import printed_day_and_time
from tests.checkout_helpers import bkash, payment, reloaded, submit_trx_id  # noqa: F401 - fixtures
from tests.factories import (
    PaymentFactory,
    PaymentMethodFactory,
    bkash_text,
    paired_device,
    sms_message,
)
from tests.forwarder_apps import (
    ping_event,
    signed,
    sms_received_event,
    sms_to_url_body,
    sms_to_url_headers,
)
from tests.limited_apps import limited_app

TRX = "8N7A6B5C4D"
SAMPLES = Path(__file__).resolve().parents[1] / "data" / "sms_samples.jsonl"


@pytest.fixture
def gateway_phone(brand):
    """An SMS Gateway for Android forwarder: (device, its path, its signing key)."""
    device, credentials = create_forwarder(brand, "android-sms-gateway", "Counter phone")
    return device, path_of(credentials.url), credentials.signing_key


@pytest.fixture
def url_phone(brand):
    """An SMS to URL Forwarder forwarder: (device, its path, its header line)."""
    device, credentials = create_forwarder(brand, "sms-to-url", "Till phone")
    header = f"{credentials.header_name}: {credentials.header_value}"
    return device, path_of(credentials.url), header


def path_of(url):
    """The path of an absolute intake URL (the test client and live server are not BASE_URL)."""
    return "/" + url.split("://", 1)[1].split("/", 1)[1]


def stored():
    return db.session.execute(db.select(InboundSms).order_by(InboundSms.id)).scalars().all()


def test_sms_gateways_request_completes_a_payment_claimed_at_checkout(
    client, live_server, gateway_phone, bkash, payment
):
    device, path, key = gateway_phone
    submit_trx_id(client, payment, bkash, TRX)
    assert reloaded(payment).status == "processing"
    event = sms_received_event(bkash_text("500.00", TRX), recipient="+8801712345678")
    body, headers = signed(event, key)

    answer = requests.post(live_server + path, data=body, headers=headers, timeout=30)

    assert answer.status_code == 200, answer.text
    assert answer.json()["data"]["status"] == "accepted"
    assert reloaded(payment).status == "completed"
    [sms] = stored()
    assert (sms.status, sms.device_id, sms.local_id, sms.sender) == (
        "matched",
        device.id,
        event["id"],
        "bKash",
    )
    assert sms.payment_id == payment.id
    assert reloaded(device).last_sms_at is not None
    # The event's recipient is the wallet the text arrived on: its balance chain is that wallet's,
    # whichever phone forwards its texts (docs/sms-trust.md).
    [chain] = db.session.execute(db.select(BalanceChain)).scalars().all()
    assert (chain.device_id, chain.receiving_number) == (None, "01712345678")


def test_sms_to_urls_request_completes_a_payment_claimed_at_checkout(
    client, live_server, url_phone, bkash, payment
):
    device, path, header = url_phone
    submit_trx_id(client, payment, bkash, TRX)

    answer = requests.post(
        live_server + path,
        data=sms_to_url_body(bkash_text("500.00", TRX)),
        headers=sms_to_url_headers(header),
        timeout=30,
    )

    assert answer.status_code == 200, answer.text
    assert answer.json() == {
        "success": True,
        "data": {"status": "accepted", "server_ref": stored()[0].public_id},
    }
    assert reloaded(payment).status == "completed"
    [sms] = stored()
    assert (sms.status, sms.device_id, sms.payment_id) == ("matched", device.id, payment.id)


def test_a_retried_event_is_answered_2xx_and_stored_once(client, gateway_phone, brand):
    device, path, key = gateway_phone
    event = sms_received_event(bkash_text("500.00", TRX))
    first = client.post(path, data=signed(event, key)[0], headers=signed(event, key)[1])
    body, headers = signed(event, key, int(time.time()) + 30)  # the retry: a new timestamp

    again = client.post(path, data=body, headers=headers)

    assert first.status_code == again.status_code == 200
    assert again.get_json()["data"] == {
        "status": "duplicate",
        "server_ref": first.get_json()["data"]["server_ref"],
    }
    assert len(stored()) == 1


def test_a_text_is_stored_as_received_whatever_the_apps_json_escapes(client, gateway_phone, caplog):
    _, path, key = gateway_phone
    text = 'Offer: <b>50% off</b> & more, code="SAVE" — আজই / today\'s deal'
    body, headers = signed(sms_received_event(text, sender="Shop"), key)
    assert b"\\u003c" in body and b"\\u003d" in body  # as Gson sends it

    answer = client.post(path, data=body, headers=headers)

    assert answer.status_code == 200
    [sms] = stored()
    assert (sms.body, sms.sender, sms.status) == (text, "Shop", "unparsed")
    assert key not in caplog.text


def test_a_ping_is_a_heartbeat_and_stores_no_text(client, gateway_phone):
    device, path, key = gateway_phone
    body, headers = signed(ping_event(), key)

    answer = client.post(path, data=body, headers=headers)

    assert answer.status_code == 200 and answer.get_json()["data"] == {"status": "heartbeat"}
    phone = reloaded(device)
    assert phone.last_heartbeat_at is not None and phone.last_sms_at is None
    assert phone.status_json["health"]["status"] == "pass"
    assert stored() == []


@pytest.mark.parametrize("event", ["sms:sent", "sms:delivered", "app:started", "mms:received"])
def test_other_events_are_acknowledged_and_not_stored(client, gateway_phone, event):
    _, path, key = gateway_phone
    body, headers = signed({**sms_received_event("Hello"), "event": event}, key)

    answer = client.post(path, data=body, headers=headers)

    assert answer.status_code == 200 and answer.get_json()["data"] == {"status": "ignored"}
    assert stored() == []


def gateway_refusals():
    """(name, request builder(path, key) -> (path, body, headers), status, code)."""
    text = bkash_text("500.00", TRX)

    def wrong_key(path, key):
        return (path, *signed(sms_received_event(text), key + "x"))

    def unsigned(path, key):
        body, headers = signed(sms_received_event(text), key)
        return path, body, {"Content-Type": headers["Content-Type"]}

    def tampered(path, key):
        body, headers = signed(sms_received_event(text), key)
        return path, body.replace(b"500.00", b"900.00"), headers

    def old(path, key):
        return (path, *signed(sms_received_event(text), key, int(time.time()) - 6 * 60))

    def future(path, key):
        return (path, *signed(sms_received_event(text), key, int(time.time()) + 6 * 60))

    def not_a_number(path, key):
        return (path, *signed(sms_received_event(text), key, "yesterday"))

    def malformed(path, key):
        body, headers = signed(sms_received_event(text), key)
        stamp = headers["X-Timestamp"]
        cut = body[:-5]
        return path, cut, {**headers, "X-Signature": resign(cut, key, stamp)}

    def no_message(path, key):
        event = sms_received_event(text)
        del event["payload"]["message"]
        return (path, *signed(event, key))

    def too_large(path, key):
        return (path, *signed(sms_received_event("x" * (1024 * 1024)), key))

    def unknown(path, key):
        return (path.replace(path.split("/")[3], "00000000-0000-4000-8000-000000000000"),) + (
            signed(sms_received_event(text), key)
        )

    return [
        ("wrong key", wrong_key, 401, "INVALID_SIGNATURE"),
        ("unsigned", unsigned, 401, "MISSING_SIGNATURE"),
        ("tampered body", tampered, 401, "INVALID_SIGNATURE"),
        ("old timestamp", old, 401, "STALE_TIMESTAMP"),
        ("future timestamp", future, 401, "STALE_TIMESTAMP"),
        ("timestamp not a number", not_a_number, 401, "STALE_TIMESTAMP"),
        ("malformed JSON", malformed, 400, "INVALID_JSON"),
        ("no message", no_message, 422, "VALIDATION_ERROR"),
        ("body too large", too_large, 413, "PAYLOAD_TOO_LARGE"),
        ("unknown forwarder", unknown, 404, "FORWARDER_NOT_FOUND"),
    ]


def resign(body, key, stamp):
    """A valid signature of any bytes: proves what is refused after the signature is the body."""
    return hmac.new(key.encode(), body + stamp.encode(), hashlib.sha256).hexdigest()


@pytest.mark.parametrize(
    ("build", "status", "code"),
    [case[1:] for case in gateway_refusals()],
    ids=[case[0] for case in gateway_refusals()],
)
def test_sms_gateway_requests_it_did_not_send_are_refused_and_store_nothing(
    client, gateway_phone, build, status, code
):
    device, path, key = gateway_phone
    path, body, headers = build(path, key)

    answer = client.post(path, data=body, headers=headers)

    assert answer.status_code == status, answer.get_data(as_text=True)
    envelope = answer.get_json()
    assert envelope["success"] is False and envelope["code"] == code
    # The message, whichever key the envelope gives it (`error` carries it in the mobile envelope).
    message = envelope["error"] if isinstance(envelope["error"], str) else envelope["message"]
    assert message and key not in answer.get_data(as_text=True)
    assert stored() == []
    assert reloaded(device).last_sms_at is None


def url_refusals():
    """(name, request builder(path, header) -> (path, body, headers), status, code)."""
    text = bkash_text("500.00", TRX)
    body = sms_to_url_body(text)

    def no_header(path, header):
        headers = sms_to_url_headers(header)
        headers.pop(header.split(": ")[0])
        return path, body, headers

    def wrong_secret(path, header):
        return path, body, sms_to_url_headers(header[:-2] + "xy")

    def malformed(path, header):
        return path, body[:-3], sms_to_url_headers(header)

    def no_text(path, header):
        return path, json.dumps({"from": "bKash"}).encode(), sms_to_url_headers(header)

    def empty_text(path, header):
        return path, sms_to_url_body("   "), sms_to_url_headers(header)

    def not_json(path, header):
        return path, b"from=bKash", {**sms_to_url_headers(header), "Content-Type": "text/plain"}

    def too_large(path, header):
        return path, sms_to_url_body("y" * (1024 * 1024)), sms_to_url_headers(header)

    return [
        ("no header", no_header, 401, "MISSING_SECRET"),
        ("wrong secret", wrong_secret, 401, "INVALID_SECRET"),
        ("malformed JSON", malformed, 400, "INVALID_JSON"),
        ("no text", no_text, 422, "VALIDATION_ERROR"),
        ("empty text", empty_text, 422, "VALIDATION_ERROR"),
        ("not JSON", not_json, 415, "UNSUPPORTED_MEDIA_TYPE"),
        ("body too large", too_large, 413, "PAYLOAD_TOO_LARGE"),
    ]


@pytest.mark.parametrize(
    ("build", "status", "code"),
    [case[1:] for case in url_refusals()],
    ids=[case[0] for case in url_refusals()],
)
def test_sms_to_url_requests_it_did_not_send_are_refused_and_store_nothing(
    client, url_phone, build, status, code
):
    device, path, header = url_phone
    path, body, headers = build(path, header)

    answer = client.post(path, data=body, headers=headers)

    assert answer.status_code == status, answer.get_data(as_text=True)
    envelope = answer.get_json()
    assert envelope["success"] is False and envelope["code"] == code
    assert header.split(": ")[1] not in answer.get_data(as_text=True)
    assert stored() == []
    assert reloaded(device).last_sms_at is None


def test_a_revoked_forwarder_is_refused_at_once(client, brand, gateway_phone, url_phone):
    gateway, gateway_path, key = gateway_phone
    till, url_path, header = url_phone
    revoke_forwarder(brand, gateway.uuid, "lost phone")
    revoke_forwarder(brand, till.uuid, "lost phone")
    text = bkash_text("500.00", TRX)

    signed_answer = client.post(
        gateway_path,
        data=signed(sms_received_event(text), key)[0],
        headers=signed(sms_received_event(text), key)[1],
    )
    header_answer = client.post(
        url_path, data=sms_to_url_body(text), headers=sms_to_url_headers(header)
    )

    for answer in (signed_answer, header_answer):
        assert answer.status_code == 401
        assert answer.get_json()["code"] == "FORWARDER_REVOKED"
    assert stored() == []


def test_one_forwarders_credentials_do_not_open_anothers_url(client, brand, gateway_phone):
    _, path, _ = gateway_phone
    _, other = create_forwarder(brand, "android-sms-gateway", "Other phone")
    body, headers = signed(sms_received_event(bkash_text("500.00", TRX)), other.signing_key)

    answer = client.post(path, data=body, headers=headers)

    assert answer.status_code == 401 and answer.get_json()["code"] == "INVALID_SIGNATURE"
    assert stored() == []


def test_a_companion_phones_id_is_no_intake_url(client, brand, gateway_phone):
    companion, _, _ = paired_device(brand)
    _, path, key = gateway_phone
    body, headers = signed(sms_received_event(bkash_text()), key)

    answer = client.post(
        path.replace(path.split("/")[3], companion.uuid), data=body, headers=headers
    )

    assert answer.status_code == 404 and answer.get_json()["code"] == "FORWARDER_NOT_FOUND"


def test_the_same_text_through_a_forwarder_and_the_companion_app_is_stored_and_counted_once(
    client, brand, gateway_phone, bkash, payment
):
    device, path, key = gateway_phone
    companion, tokens, aes_key = paired_device(brand)
    submit_trx_id(client, payment, bkash, TRX)
    text = bkash_text("500.00", TRX)

    by_app = client.post(
        "/api/mobile/v1/sms",
        json={"messages": [sms_message(aes_key, text)]},
        headers={"Authorization": f"Bearer {tokens['access_token']}"},
    )
    body, headers = signed(sms_received_event(text), key)
    by_forwarder = client.post(path, data=body, headers=headers)

    assert by_app.get_json()["data"]["accepted"] == 1
    assert by_forwarder.status_code == 200
    assert by_forwarder.get_json()["data"]["status"] == "duplicate"
    [sms] = stored()
    assert (sms.device_id, sms.status, sms.payment_id) == (companion.id, "matched", payment.id)
    assert reloaded(payment).status == "completed"


def test_the_same_text_through_two_forwarders_is_stored_and_counted_once(
    client, gateway_phone, url_phone, bkash, payment
):
    gateway, gateway_path, key = gateway_phone
    _, url_path, header = url_phone
    text = bkash_text("500.00", TRX)
    body, headers = signed(sms_received_event(text), key)

    first = client.post(gateway_path, data=body, headers=headers)
    second = client.post(url_path, data=sms_to_url_body(text), headers=sms_to_url_headers(header))
    submit_trx_id(client, payment, bkash, TRX)

    assert [first.get_json()["data"]["status"], second.get_json()["data"]["status"]] == [
        "accepted",
        "duplicate",
    ]
    [sms] = stored()
    assert (sms.device_id, sms.payment_id) == (gateway.id, payment.id)
    assert reloaded(payment).status == "completed"
    paid = db.session.execute(
        db.select(db.func.count()).select_from(InboundSms).where(InboundSms.status == "matched")
    ).scalar_one()
    assert paid == 1


def test_a_forged_sender_through_a_forwarder_pays_nothing(client, url_phone, bkash, payment):
    _, path, header = url_phone
    submit_trx_id(client, payment, bkash, TRX)

    answer = client.post(
        path,
        data=sms_to_url_body(bkash_text("500.00", TRX), sender="+8801798765432"),
        headers=sms_to_url_headers(header),
    )

    assert answer.status_code == 200
    [sms] = stored()
    assert sms.status != "matched" and sms.payment_id is None
    assert reloaded(payment).status == "processing"


def test_a_forwarded_text_joins_the_wallets_balance_chain(client, brand, gateway_phone):
    _, path, key = gateway_phone
    brand.sms_chain_mode = "strict"
    db.session.commit()
    texts = [
        bkash_text("500.00", "AAAA111111", balance="1500.00"),
        bkash_text("200.00", "BBBB222222", balance="1700.00"),
    ]
    for text in texts:
        body, headers = signed(sms_received_event(text), key)
        assert client.post(path, data=body, headers=headers).status_code == 200

    rows = stored()
    assert [sms.status for sms in rows] == ["unmatched", "unmatched"]
    assert all(sms.review_reason is None for sms in rows)
    gap = bkash_text("100.00", "CCCC333333", balance="9999.00")
    body, headers = signed(sms_received_event(gap), key)
    assert client.post(path, data=body, headers=headers).status_code == 200
    held = stored()[-1]
    assert held.status == "review" and held.review_reason


def first_incoming_samples():
    """The first real-format incoming credit of each provider (tests/data/sms_samples.jsonl, the
    copy of /work/shared/sms/samples.jsonl): multi-line Nagad, Rocket with a link (`\\/` once
    escaped), bKash and Upay."""
    samples = {}
    with open(SAMPLES, encoding="utf-8") as lines:
        for line in lines:
            sample = json.loads(line)
            if sample["incoming"] and sample["provider"] in ("bkash", "nagad", "rocket", "upay"):
                samples.setdefault(sample["provider"], sample)
    return list(samples.values())


def printed_at(printed):
    """A sample's printed time (Dhaka's wall clock; a date alone, that day's start) as a UTC
    moment."""
    day, moment = printed_day_and_time(printed)
    return (moment or day).replace(tzinfo=ZoneInfo("Asia/Dhaka")).astimezone(timezone.utc)


@pytest.mark.parametrize("app_id", ["android-sms-gateway", "sms-to-url"])
@pytest.mark.parametrize("sample", first_incoming_samples(), ids=lambda sample: sample["provider"])
def test_each_providers_real_text_through_each_app_pays_its_claim(client, brand, app_id, sample):
    device, credentials = create_forwarder(brand, app_id, "Phone")
    path = path_of(credentials.url)
    expected = sample["expected"]
    method = PaymentMethodFactory(brand=brand, provider=sample["provider"])
    # The customer checked out just before paying: a text printed over a day before its payment
    # was created pays nothing by itself (sms/pays.py PRINTED_BEFORE), and the samples are old.
    claimed = PaymentFactory(
        brand=brand,
        amount=Decimal(expected["amount"]),
        created_at=printed_at(expected["time"]) - timedelta(minutes=5),
    )
    submit_trx_id(client, claimed, method, expected["trx_id"])
    if credentials.signing_key:
        body, headers = signed(
            sms_received_event(sample["text"], sample["sender"]), credentials.signing_key
        )
    else:
        header = f"{credentials.header_name}: {credentials.header_value}"
        body = sms_to_url_body(sample["text"], sample["sender"])
        headers = sms_to_url_headers(header)

    answer = client.post(path, data=body, headers=headers)

    assert answer.status_code == 200, answer.get_data(as_text=True)
    [sms] = stored()
    assert sms.body == sample["text"] and sms.sender == sample["sender"]
    assert (sms.status, sms.payment_id) == ("matched", claimed.id)
    assert reloaded(claimed).status == "completed"


def test_the_intake_is_rate_limited_per_address_with_retry_after(app, brand):
    device, credentials = create_forwarder(brand, "sms-to-url", "Till")
    path = path_of(credentials.url)
    with limited_app(app) as limited:
        client = limited.test_client()
        answers = [
            client.post(path, data=b"{}", headers=sms_to_url_headers("X-Forwarder-Secret: wrong"))
            for _ in range(121)
        ]
    assert {answer.status_code for answer in answers[:120]} == {401}
    assert answers[120].status_code == 429
    assert answers[120].get_json()["code"] == "RATE_LIMITED"
    assert int(answers[120].headers["Retry-After"]) >= 1
