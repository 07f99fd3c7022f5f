"""The public forwarder apps' requests, byte for byte as they build them (read from their source):

- SMS Gateway for Android (capcom6/android-sms-gateway): Gson's JSON of WebHookEventDTO
  {id, webhookId, event, deviceId, payload}, dates as yyyy-MM-dd'T'HH:mm:ss.SSSXXX, signed by
  PayloadSingingPlugin: X-Timestamp (unix seconds) and X-Signature, hex HMAC-SHA256 keyed with the
  signing key's UTF-8 bytes over the body's text followed by the timestamp.
- SMS to URL Forwarder (bogkonstantin/android_income_sms_gateway_webhook): its default template
  with %from%, %text% (StringEscapeUtils.escapeJson), %sentStamp%, %receivedStamp% and %sim%
  replaced, the user's headers from a JSON object, Content-Type application/json; charset=utf-8.
"""

import hashlib
import hmac
import json
import secrets
import time
from datetime import datetime, timedelta, timezone

DHAKA = timezone(timedelta(hours=6))
SMS_GATEWAY_AGENT = "me.capcom.smsgateway/1.60.0"
SMS_TO_URL_TEMPLATE = (
    '{\n  "from":"%from%",\n  "text":"%text%",\n  "sentStamp":%sentStamp%,\n'
    '  "receivedStamp":%receivedStamp%,\n  "sim":"%sim%"\n}'
)


def nano_id():
    """A 21-character NanoId, as the app gives each event."""
    alphabet = "_-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    return "".join(secrets.choice(alphabet) for _ in range(21))


def gson_date(moment):
    """A moment as the app's Gson writes it: 2026-11-28T13:40:10.123+06:00."""
    local = moment.astimezone(DHAKA)
    return local.strftime("%Y-%m-%dT%H:%M:%S.") + f"{local.microsecond // 1000:03d}+06:00"


def sms_received_event(text, sender="bKash", event_id=None, received_at=None, recipient=None):
    """An `sms:received` event as the app serialises it (Gson leaves out null fields)."""
    payload = {
        "messageId": secrets.token_hex(8),
        "sender": sender,
        "simNumber": 1,
        "phoneNumber": sender,
        "message": text,
        "receivedAt": gson_date(received_at or datetime.now(timezone.utc)),
    }
    if recipient is not None:
        payload["recipient"] = recipient
    return {
        "id": event_id or nano_id(),
        "webhookId": "gateway-webhook",
        "event": "sms:received",
        "deviceId": "ffffffffceb0b1db0000018e7e9a63d3",
        "payload": payload,
    }


def ping_event(event_id=None):
    """A `system:ping` event."""
    return {
        "id": event_id or nano_id(),
        "webhookId": "gateway-webhook",
        "event": "system:ping",
        "deviceId": "ffffffffceb0b1db0000018e7e9a63d3",
        "payload": {
            "health": {"status": "pass", "checks": {"battery:level": {"observedValue": 80}}}
        },
    }


def gson_json(value):
    """JSON as Gson writes it by default: compact, non-ASCII as is, and its HTML-safe escapes of
    < > & = ' (these only occur inside strings, so replacing them throughout is exact)."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    for char in "<>&='":
        text = text.replace(char, f"\\u{ord(char):04x}")
    return text


def signed(event, signing_key, timestamp=None):
    """(body bytes, headers) of one event, signed as PayloadSingingPlugin signs it."""
    body = gson_json(event)
    stamp = str(int(time.time()) if timestamp is None else timestamp)
    signature = hmac.new(
        signing_key.encode("utf-8"), (body + stamp).encode("utf-8"), hashlib.sha256
    ).hexdigest()
    return body.encode("utf-8"), {
        "Content-Type": "application/json; charset=UTF-8",
        "User-Agent": SMS_GATEWAY_AGENT,
        "X-Timestamp": stamp,
        "X-Signature": signature,
    }


def escape_json(text):
    """commons-text's escapeJson: quotes, backslash, slash, control and non-ASCII characters."""
    return json.dumps(text, ensure_ascii=True)[1:-1].replace("/", "\\/")


def sms_to_url_body(text, sender="bKash", sent_ms=None, sim="sim1"):
    """The default template filled in as ForwardingConfig.prepareMessage fills it."""
    now_ms = int(time.time() * 1000)
    return (
        SMS_TO_URL_TEMPLATE.replace("%from%", sender)
        .replace("%sentStamp%", str(sent_ms or now_ms - 1500))
        .replace("%receivedStamp%", str(now_ms))
        .replace("%sim%", sim)
        .replace("%text%", escape_json(text))
    ).encode("utf-8")


def sms_to_url_headers(header_line):
    """The app's headers: its default User-agent and the one the merchant typed ('Name: value')."""
    name, _, value = header_line.partition(": ")
    return {
        "Content-Type": "application/json; charset=utf-8",
        "User-agent": "SMS Forwarder App",
        name: value,
    }
