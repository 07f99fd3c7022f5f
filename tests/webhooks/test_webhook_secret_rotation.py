"""Rotating the webhook secret with an overlap: X-Service-Signature (new secret) plus
X-Service-Signature-Previous (old secret) until the overlap ends, so a receiver still holding the
old secret verifies until then, and not after."""

import hashlib
import hmac
import importlib.util
import threading
from datetime import timedelta
from pathlib import Path

import pytest
from freezegun import freeze_time
from werkzeug.wrappers import Response

from gateway.accounts.models.brand import Brand
from gateway.clock import utcnow
from gateway.extensions import db
from gateway.webhooks.deliveries import rotate_webhook_secret, send_test_webhook
from gateway.webhooks.delivery import deliver_webhook
from gateway.webhooks.models.webhook import WebhookDelivery

ROOT = Path(__file__).resolve().parents[2]
DAY = 24 * 3600


def example_receiver():
    """examples/webhook_receiver.py, as a merchant would run it."""
    spec = importlib.util.spec_from_file_location(
        "webhook_receiver", ROOT / "examples" / "webhook_receiver.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def hex_hmac(secret, body):
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


@pytest.fixture
def receiver_with(httpserver, brand):
    """A local receiver that verifies with one secret (answering 401 otherwise), as the brand's
    webhook URL.
    """
    verify = example_receiver().signed_with
    seen = []

    def serve(secret):
        def answer(request):
            seen.append(request)
            ok = verify(secret, request.get_data(), request.headers)
            return Response("OK" if ok else "invalid signature", status=200 if ok else 401)

        httpserver.expect_request("/hooks", method="POST").respond_with_handler(answer)
        brand.webhook_url = httpserver.url_for("/hooks")
        db.session.commit()
        return seen

    return serve


def send_one(brand):
    """A webhook.test event delivered now, over HTTP; the delivery's status afterwards."""
    delivery = send_test_webhook(brand)
    deliver_webhook(delivery.id)
    db.session.expire_all()
    return db.session.get(WebhookDelivery, delivery.id).status


def test_a_receiver_with_the_old_secret_verifies_during_the_overlap_and_not_after(
    brand, receiver_with
):
    old = brand.webhook_secret
    seen = receiver_with(old)
    with freeze_time(utcnow()) as clock:
        new = rotate_webhook_secret(brand)

        assert send_one(brand) == "sent"
        headers, body = seen[-1].headers, seen[-1].get_data()
        assert headers["X-Service-Signature"] == hex_hmac(new, body)
        assert headers["X-Service-Signature-Previous"] == hex_hmac(old, body)

        clock.tick(timedelta(seconds=DAY - 1))
        assert send_one(brand) == "sent"

        clock.tick(timedelta(seconds=2))
        assert send_one(brand) == "pending"
        assert "X-Service-Signature-Previous" not in seen[-1].headers
        assert seen[-1].headers["X-Service-Signature"] == hex_hmac(new, seen[-1].get_data())


def test_a_receiver_updated_to_the_new_secret_verifies_at_once_and_after_the_overlap(
    brand, receiver_with
):
    with freeze_time(utcnow()) as clock:
        receiver_with(rotate_webhook_secret(brand))

        assert send_one(brand) == "sent"
        clock.tick(timedelta(seconds=DAY + 1))
        assert send_one(brand) == "sent"


def test_overlap_zero_drops_the_old_secret_at_once(brand, receiver_with):
    old = brand.webhook_secret
    seen = receiver_with(old)

    rotate_webhook_secret(brand, overlap=0)

    assert send_one(brand) == "pending"
    assert "X-Service-Signature-Previous" not in seen[-1].headers
    assert db.session.get(Brand, brand.id).webhook_secret_previous is None


def test_rotating_twice_keeps_only_the_secret_just_replaced(brand, receiver_with):
    first = brand.webhook_secret
    seen = receiver_with(first)
    second = rotate_webhook_secret(brand)
    third = rotate_webhook_secret(brand)

    assert send_one(brand) == "pending"  # the first secret no longer signs anything
    body = seen[-1].get_data()
    assert seen[-1].headers["X-Service-Signature"] == hex_hmac(third, body)
    assert seen[-1].headers["X-Service-Signature-Previous"] == hex_hmac(second, body)


def test_the_cli_rotation_says_until_when_the_old_secret_signs(runner, brand):
    with freeze_time("2026-11-24 03:00:00"):
        result = runner.invoke(args=["gateway", "rotate-webhook-secret", "--overlap", "3600"])

    assert result.exit_code == 0, result.output
    assert "until 2026-11-24 04:00 UTC" in result.output
    assert result.output.strip().splitlines()[-1] == db.session.get(Brand, brand.id).webhook_secret


def test_a_rotation_in_a_unit_of_work_commits_with_its_audit_row_or_not_at_all(brand):
    from gateway.accounts.models.audit import AuditLog
    from gateway.answer_commit import unit_of_work
    from gateway.panel.audit import record_audit
    from tests.factories import UserFactory

    user, old = UserFactory(brand=brand, role="super_admin"), brand.webhook_secret
    with pytest.raises(RuntimeError), unit_of_work():
        rotate_webhook_secret(brand)
        record_audit(user, "webhook_secret.rotate", brand)
        raise RuntimeError("the page failed after the rotation")
    db.session.expire_all()
    assert db.session.get(Brand, brand.id).webhook_secret == old
    assert db.session.execute(db.select(AuditLog)).scalars().all() == []

    with unit_of_work():
        new = rotate_webhook_secret(brand)
        record_audit(user, "webhook_secret.rotate", brand)
    db.session.expire_all()
    assert (db.session.get(Brand, brand.id).webhook_secret, new) == (new, new)
    assert db.session.execute(db.select(AuditLog.action)).scalars().all() == [
        "webhook_secret.rotate"
    ]


def test_racing_rotations_each_keep_the_secret_they_replaced(app, brand):
    racers, start, news = 6, threading.Barrier(6), []

    def rotate():
        with app.app_context():
            loaded = db.session.get(Brand, brand.id)  # every racer has read the starting secret
            start.wait()
            news.append(rotate_webhook_secret(loaded))
            db.session.remove()

    threads = [threading.Thread(target=rotate) for _ in range(racers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)

    db.session.expire_all()
    final = db.session.get(Brand, brand.id)
    assert len(news) == racers and final.webhook_secret in news
    # The last rotation replaced another racer's secret, never the one all of them started from.
    assert final.webhook_secret_previous in set(news) - {final.webhook_secret}
