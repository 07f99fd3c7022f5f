"""Notification fixtures: a local stand-in for Telegram's Bot API, settings, and running the outbox
inline.
"""

import socket

import pytest

from gateway.clock import utcnow
from gateway.extensions import db
from gateway.notifications.models.notification import MerchantNotification, NotificationDelivery
from gateway.notifications.outbox import OUTBOX
from gateway.notifications.sending import send_notification
from gateway.notifications.settings import update_settings
from gateway.outbox.sweep import due_rows

BOT_TOKEN = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0"
CHAT_ID = "-1001234567890"
SEND_PATH = f"/bot{BOT_TOKEN}/sendMessage"


@pytest.fixture
def telegram(app, httpserver, monkeypatch):
    """pytest-httpserver answering sendMessage as the Bot API does; TELEGRAM_API_BASE points at
    it."""
    httpserver.expect_request(SEND_PATH, method="POST").respond_with_json(
        {"ok": True, "result": {"message_id": 1, "chat": {"id": int(CHAT_ID)}}}
    )
    monkeypatch.setitem(app.config, "TELEGRAM_API_BASE", httpserver.url_for("/").rstrip("/"))
    return httpserver


@pytest.fixture
def closed_port_base(app, monkeypatch, closed_port):
    """TELEGRAM_API_BASE on a loopback port nothing listens on: the receiver is down."""
    monkeypatch.setitem(app.config, "TELEGRAM_API_BASE", f"http://127.0.0.1:{closed_port}")
    return closed_port


def configure(brand, channels=None, **changes):
    """Save a brand's notification settings (Telegram set up unless told) and commit."""
    values = {"telegram_token": BOT_TOKEN, "telegram_chat_id": CHAT_ID, **changes}
    if channels is not None:
        values["channels"] = channels
    update_settings(brand.id, values)
    db.session.commit()


def send_due(now=None):
    """Run every due delivery inline, as the worker would; returns their ids."""
    due = [row.id for row in due_rows(OUTBOX, now or utcnow())]
    db.session.commit()
    for delivery_id in due:
        send_notification(delivery_id)
    return due


def sent_texts(server):
    """The JSON bodies the Telegram stand-in received, in order."""
    return [request.get_json() for request, _ in server.log]


def notifications(brand, event=None):
    """The brand's notifications (of one event), oldest first."""
    query = db.select(MerchantNotification).where(MerchantNotification.brand_id == brand.id)
    if event:
        query = query.where(MerchantNotification.event == event)
    return db.session.execute(query.order_by(MerchantNotification.id)).scalars().all()


def deliveries(brand):
    """The brand's notification deliveries, oldest first."""
    return (
        db.session.execute(
            db.select(NotificationDelivery)
            .where(NotificationDelivery.brand_id == brand.id)
            .order_by(NotificationDelivery.id)
        )
        .scalars()
        .all()
    )
